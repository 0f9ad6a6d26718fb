#include "minic/ir/tensor.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace minic {

int64_t num_elements(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

Shape row_major_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

std::string type_string(const TensorType& type) {
  return fmt::format("{}{}", dtype_name(type.dtype), shape_string(type.shape));
}

void check_shape(const Shape& shape, DType dtype, const std::string& what) {
  if (static_cast<int64_t>(shape.size()) > kMaxRank) {
    fail("{}: rank {} is more than minic supports ({})", what, shape.size(), kMaxRank);
  }
  int64_t bytes = dtype_size(dtype);
  for (int64_t dim : shape) {
    if (dim < 0) fail("{}: negative dimension {} in shape {}", what, dim, shape_string(shape));
    if (dim > 0 && bytes > kMaxTensorBytes / dim) {
      fail("{}: shape {} of {} is absurdly large (over {} bytes)", what, shape_string(shape),
           dtype_name(dtype), kMaxTensorBytes);
    }
    bytes *= dim;
  }
}

Tensor::Tensor(TensorType type) : type_(std::move(type)) {
  check_shape(type_.shape, type_.dtype, "tensor");
  bytes_.resize(static_cast<size_t>(type_.num_bytes()));
}

double Tensor::as_double(int64_t index) const {
  MINIC_CHECK(index >= 0 && index < num_elements());
  return visit_dtype(dtype(), [&]<typename T>() {
    return static_cast<double>(static_cast<compute_t<T>>(values<T>()[index]));
  });
}

int64_t Tensor::as_int64(int64_t index) const {
  MINIC_CHECK(index >= 0 && index < num_elements());
  return visit_dtype(dtype(), [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(values<T>()[index]);
    } else {
      double value = static_cast<double>(static_cast<compute_t<T>>(values<T>()[index]));
      if (std::isnan(value)) return 0;
      return static_cast<int64_t>(value);
    }
  });
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> result(static_cast<size_t>(num_elements()));
  for (int64_t i = 0; i < num_elements(); ++i) result[i] = as_int64(i);
  return result;
}

std::vector<double> Tensor::to_double_vector() const {
  std::vector<double> result(static_cast<size_t>(num_elements()));
  for (int64_t i = 0; i < num_elements(); ++i) result[i] = as_double(i);
  return result;
}

namespace {

// Converts one element as C++ would, but without undefined behaviour: NaN and
// out-of-range floats going to an integer type saturate (NaN gives 0).
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

}  // namespace

Tensor Tensor::cast(DType to) const {
  Tensor result(to, shape());
  visit_dtype(dtype(), [&]<typename From>() {
    visit_dtype(to, [&]<typename To>() {
      auto in = values<From>();
      auto out = result.values<To>();
      for (size_t i = 0; i < in.size(); ++i) out[i] = convert_element<To, From>(in[i]);
    });
  });
  return result;
}

Tensor Tensor::reshaped(Shape shape) const {
  MINIC_CHECK(minic::num_elements(shape) == num_elements());
  Tensor result = *this;
  result.type_.shape = std::move(shape);
  return result;
}

bool Tensor::identical(const Tensor& other) const {
  return type_ == other.type_ && bytes_ == other.bytes_;
}

}  // namespace minic
