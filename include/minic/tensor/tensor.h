// Tensor types and host tensors.
//
// Course module 2. A TensorType is an element type and a static shape: minic compiles
// for fixed shapes, so every dimension is a known, non-negative number. A Tensor is a
// TensorType with its elements in row-major order on the host; it is what constants
// hold and what the reference kernels read and write.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#pragma once

#include "minic/tensor/dtype.h"
#include "minic/tensor/low_precision.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace minic {

using Shape = std::vector<int64_t>;

// The number of elements of a shape (1 for a scalar, the empty shape).
int64_t num_elements(const Shape& shape);
// "[1,3,224,224]"
std::string shape_string(const Shape& shape);
// Row-major strides in elements.
Shape row_major_strides(const Shape& shape);
// True if `from` broadcasts to `to` by numpy's rules without changing `to`: aligned at the
// last axis, each extent of `from` is 1 or the one of `to` ([128] and [1,4,1,128] to
// [1,4,128,128]).
bool broadcasts_to(const Shape& from, const Shape& to);

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t num_elements() const { return minic::num_elements(shape); }
  int64_t num_bytes() const { return num_elements() * dtype_size(dtype); }
  bool operator==(const TensorType&) const = default;
};

// "f32[1,3,224,224]"; a scalar prints as "f32[]".
std::string type_string(const TensorType& type);

// Limits that keep a malformed model from asking for absurd allocations. The libFuzzer
// build (CMake's MINIC_LIBFUZZER) lowers the byte limit to 256 MiB with
// MINIC_MAX_TENSOR_BYTES: under the fuzzer's 4 GiB memory limit, a tensor within the
// usual one (a 16 GiB splat constant is 50 bytes of graph text) would be reported as
// running out of memory instead of reaching the error that a tensor over the limit gets.
#ifndef MINIC_MAX_TENSOR_BYTES
#define MINIC_MAX_TENSOR_BYTES (int64_t{1} << 36)  // 64 GiB
#endif
inline constexpr int64_t kMaxRank = 16;
inline constexpr int64_t kMaxTensorBytes = MINIC_MAX_TENSOR_BYTES;

// Throws Error (prefixed with `what`) if a shape has a negative dimension, too many
// dimensions or too many bytes for `dtype`.
void check_shape(const Shape& shape, DType dtype, const std::string& what);

// How Tensor::cast converts to the storage-only types: ONNX Cast's attributes.
struct CastOptions {
  bool saturate = true;                  // float8: overflow and infinities become +-max
  RoundMode round_mode = RoundMode::up;  // f8e8m0: which power of two a value goes to
};

// Allocates a tensor's elements at an address that is a multiple of 64 bytes: a cache
// line, and the widest vector (AVX-512). Compiled kernels read constants and inputs where
// they are; a vector load from a tensor only malloc's 16 bytes apart from a line splits
// across two lines, which halves the speed of a kernel that streams its weights.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}

  T* allocate(size_t count) {
    return static_cast<T*>(::operator new(count * sizeof(T), kAlignment));
  }
  void deallocate(T* pointer, size_t) { ::operator delete(pointer, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

class Tensor {
 public:
  Tensor() = default;
  // A zero-filled tensor of the given type.
  explicit Tensor(TensorType type);
  Tensor(DType dtype, Shape shape) : Tensor(TensorType{dtype, std::move(shape)}) {}

  // A tensor of element type T from values (their count must match the shape).
  template <typename T>
  static Tensor from_values(Shape shape, std::span<const T> values) {
    Tensor tensor(dtype_of<T>(), std::move(shape));
    MINIC_CHECK(static_cast<int64_t>(values.size()) == tensor.num_elements());
    std::copy(values.begin(), values.end(), tensor.values<T>().begin());
    return tensor;
  }
  // (Copies element by element, so that std::vector<bool>, which has no contiguous
  // storage, works too.)
  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    Tensor tensor(dtype_of<T>(), std::move(shape));
    MINIC_CHECK(static_cast<int64_t>(values.size()) == tensor.num_elements());
    std::copy(values.begin(), values.end(), tensor.values<T>().begin());
    return tensor;
  }
  // A rank-0 tensor holding one value.
  template <typename T>
  static Tensor scalar(T value) {
    return from_values<T>({}, std::span<const T>(&value, 1));
  }

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t rank() const { return type_.rank(); }
  int64_t num_elements() const { return type_.num_elements(); }

  // The elements as a typed span; T must be the tensor's element type. A storage-only type
  // has no C++ type: its elements are bytes(), one a byte (see low_precision.h).
  template <typename T>
  std::span<T> values() {
    MINIC_CHECK(dtype_of<T>() == type_.dtype);
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<size_t>(num_elements())};
  }
  template <typename T>
  std::span<const T> values() const {
    MINIC_CHECK(dtype_of<T>() == type_.dtype);
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<size_t>(num_elements())};
  }

  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  // Element `index` (row-major) converted to double / int64: for shape arithmetic,
  // printing and comparisons in tests. Every element type, storage-only ones included.
  double as_double(int64_t index) const;
  int64_t as_int64(int64_t index) const;
  // All elements converted to int64 (for tensors that carry shapes, axes, indices).
  std::vector<int64_t> to_int64_vector() const;
  std::vector<double> to_double_vector() const;

  // A copy with element type `to`, each element converted as by a C++ cast (floats to
  // ints truncate toward zero; NaN to int gives 0).
  // Casts to or from a storage-only type go through double (or int64 from integers to the
  // storage-only integers) and follow low_precision.h, with `options` for saturation and
  // rounding.
  Tensor cast(DType to) const;
  Tensor cast(DType to, const CastOptions& options) const;
  // The same elements viewed with another shape of the same element count.
  Tensor reshaped(Shape shape) const;

  // True if types are equal and every byte is equal.
  bool identical(const Tensor& other) const;

 private:
  TensorType type_;
  std::vector<std::byte, CacheLineAllocator<std::byte>> bytes_;
};

}  // namespace minic
