// Int8 tensors in words of four bytes and back (include/minic/ops/int8_words.h). Course
// module 7.
//
// Chapter: docs/module7-quantisation.md#3-int8-kernels-on-vnni
#include "minic/ops/int8_words.h"

#include "minic/support/error.h"

#include <vector>

namespace minic {
namespace {

// The tensor seen as [outer, length, inner] around `axis`.
struct AxisView {
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
};

AxisView view_around(const Shape& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < axis; ++d) v.outer *= shape[d];
  v.length = shape[axis];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) v.inner *= shape[d];
  return v;
}

}  // namespace

Tensor pack_words(const Tensor& q, int64_t axis) {
  MINIC_CHECK((q.dtype() == DType::i8 || q.dtype() == DType::u8) && axis >= 0 &&
              axis < q.rank());
  const AxisView v = view_around(q.shape(), axis);
  const int64_t words = (v.length + 3) / 4;
  Shape shape = q.shape();
  shape[axis] = words;
  Tensor result(DType::i32, shape);  // zero-filled: the bytes past the end stay 0
  const std::byte* from = q.bytes().data();
  std::byte* to = result.bytes().data();
  // Byte t of word w along the axis is element 4 w + t, the first in the lowest bits: the
  // word's bytes in memory on the little-endian machines minic compiles for.
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t k = 0; k < v.length; ++k) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t word = (o * words + k / 4) * v.inner + i;
        to[word * 4 + k % 4] = from[(o * v.length + k) * v.inner + i];
      }
    }
  }
  return result;
}

Tensor unpack_words(const Tensor& words, int64_t axis, int64_t length, DType type) {
  MINIC_CHECK(words.dtype() == DType::i32 && (type == DType::i8 || type == DType::u8) &&
              axis >= 0 && axis < words.rank() && (length + 3) / 4 == words.shape()[axis]);
  const AxisView v = view_around(words.shape(), axis);
  Shape shape = words.shape();
  shape[axis] = length;
  Tensor result(type, shape);
  const std::byte* from = words.bytes().data();
  std::byte* to = result.bytes().data();
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t k = 0; k < length; ++k) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t word = (o * v.length + k / 4) * v.inner + i;
        to[(o * length + k) * v.inner + i] = from[word * 4 + k % 4];
      }
    }
  }
  return result;
}

Tensor column_sums(const Tensor& q) {
  MINIC_CHECK(q.rank() == 2 && (q.dtype() == DType::i8 || q.dtype() == DType::u8));
  const int64_t rows = q.shape()[0];
  const int64_t columns = q.shape()[1];
  std::vector<int32_t> sums(static_cast<size_t>(columns), 0);
  for (int64_t k = 0; k < rows; ++k) {
    for (int64_t j = 0; j < columns; ++j) {
      sums[j] += static_cast<int32_t>(q.as_int64(k * columns + j));
    }
  }
  return Tensor::from_vector<int32_t>({columns}, sums);
}

Tensor weight_sums(const Tensor& w) {
  MINIC_CHECK(w.rank() >= 1 && (w.dtype() == DType::i8 || w.dtype() == DType::u8));
  const int64_t channels = w.shape()[0];
  const int64_t per_channel = channels > 0 ? w.num_elements() / channels : 0;
  std::vector<int32_t> sums(static_cast<size_t>(channels), 0);
  for (int64_t m = 0; m < channels; ++m) {
    for (int64_t i = 0; i < per_channel; ++i) {
      sums[m] += static_cast<int32_t>(w.as_int64(m * per_channel + i));
    }
  }
  return Tensor::from_vector<int32_t>({channels}, sums);
}

}  // namespace minic
