// Arithmetic helpers for the reference kernels that add up many products: MatMul, Gemm,
// Einsum and the reductions.
//
// Course module 2. C++ leaves the overflow of signed integers undefined, while ONNX Runtime
// (and every machine minic targets) wraps integer sums modulo 2^bits. These helpers give
// that wrapping behaviour without undefined behaviour: signed integers are added and
// multiplied as their unsigned counterparts, whose overflow C++ defines, and converted back
// (a conversion C++20 defines as two's complement). For floating-point types they are the
// ordinary + and *.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include <type_traits>

namespace minic {

template <typename A>
A add_wrapping(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // decltype(a + b) is at least int, so U is at least unsigned int: no promotion back to
    // a signed type can happen.
    using U = std::make_unsigned_t<decltype(a + b)>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename A>
A mul_wrapping(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<decltype(a * b)>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

}  // namespace minic
