// Tensor types and host tensors: shapes, strides, reading elements as numbers, and casts
// (include/minic/tensor/tensor.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#include "minic/tensor/tensor.h"

#include "minic/tensor/element_cast.h"

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

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[offset + d]) return false;
  }
  return true;
}

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

namespace {

// A double truncated toward zero, saturating at int64's range; NaN gives 0.
int64_t truncate_to_int64(double value) {
  if (std::isnan(value)) return 0;
  constexpr double kLimit = 0x1.0p63;
  if (value >= kLimit) return std::numeric_limits<int64_t>::max();
  if (value < -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

}  // namespace

double Tensor::as_double(int64_t index) const {
  MINIC_CHECK(index >= 0 && index < num_elements());
  if (is_storage_only(dtype())) {
    return low_precision_to_float(dtype(), static_cast<uint8_t>(bytes_[index]));
  }
  return visit_dtype(dtype(), [&]<typename T>() {
    return static_cast<double>(static_cast<compute_t<T>>(values<T>()[index]));
  });
}

int64_t Tensor::as_int64(int64_t index) const {
  MINIC_CHECK(index >= 0 && index < num_elements());
  if (is_low_precision_int(dtype())) {
    return low_precision_to_int(dtype(), static_cast<uint8_t>(bytes_[index]));
  }
  if (is_storage_only(dtype())) return truncate_to_int64(as_double(index));
  return visit_dtype(dtype(), [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(values<T>()[index]);
    } else {
      return truncate_to_int64(static_cast<double>(static_cast<compute_t<T>>(values<T>()[index])));
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
  if (is_storage_only(dtype())) {
    for (int64_t i = 0; i < num_elements(); ++i) result[i] = as_double(i);
    return result;
  }
  // The type once, then a plain loop (a model's weights are millions of elements).
  visit_dtype(dtype(), [&]<typename T>() {
    std::span<const T> elements = values<T>();
    for (size_t i = 0; i < elements.size(); ++i) {
      result[i] = static_cast<double>(static_cast<compute_t<T>>(elements[i]));
    }
  });
  return result;
}

namespace {

// To a storage-only type: integers keep their low bits in the storage-only integers; all
// else converts from double.
Tensor cast_to_storage_only(const Tensor& input, DType to, const CastOptions& options) {
  Tensor result(to, input.shape());
  DType from = input.dtype();
  bool from_integer = is_int(from) || is_low_precision_int(from) || from == DType::boolean;
  bool wrap_integers = from_integer && is_low_precision_int(to);
  std::span<std::byte> out = result.bytes();
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    uint8_t bits = wrap_integers ? int_to_low_precision(to, input.as_int64(i))
                                 : float_to_low_precision(to, input.as_double(i),
                                                          options.saturate, options.round_mode);
    out[i] = std::byte{bits};
  }
  return result;
}

// From a storage-only type to a computable one: through an int64 or double tensor, each of
// which holds every storage-only value exactly.
Tensor cast_from_storage_only(const Tensor& input, DType to) {
  if (is_low_precision_int(input.dtype())) {
    return Tensor::from_vector<int64_t>(input.shape(), input.to_int64_vector()).cast(to);
  }
  return Tensor::from_vector<double>(input.shape(), input.to_double_vector()).cast(to);
}

}  // namespace

Tensor Tensor::cast(DType to) const { return cast(to, CastOptions{}); }

Tensor Tensor::cast(DType to, const CastOptions& options) const {
  if (is_storage_only(to) && to == dtype()) return *this;  // bits as they are, NaNs included
  if (is_storage_only(to)) return cast_to_storage_only(*this, to, options);
  if (is_storage_only(dtype())) return cast_from_storage_only(*this, to);
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
