// Converting one element between element types, as Tensor::cast does.
//
// Course module 2. The rule is C++'s conversion made total: floats to integers truncate
// toward zero and saturate at the integer's range (NaN gives 0, where C++ leaves it
// undefined); anything to bool is `value != 0`; 16-bit floats convert through float. The
// graph's Cast kernel and the loop IR interpreter's Cast both use it, so they agree.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#pragma once

#include "minic/tensor/dtype.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace minic {

template <typename To, typename From>
To convert_element(From value) {
  using FromC = compute_t<From>;
  using ToC = compute_t<To>;
  FromC v = static_cast<FromC>(value);
  if constexpr (std::is_same_v<ToC, bool>) {
    return static_cast<To>(v != FromC{});
  } else if constexpr (std::is_integral_v<ToC> && std::is_floating_point_v<FromC>) {
    if (std::isnan(v)) return To{0};
    constexpr double lo = static_cast<double>(std::numeric_limits<ToC>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<ToC>::max());
    double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<ToC>::lowest();
    if (d >= hi) return std::numeric_limits<ToC>::max();
    return static_cast<To>(static_cast<ToC>(d));
  } else {
    return static_cast<To>(static_cast<ToC>(v));
  }
}

}  // namespace minic
