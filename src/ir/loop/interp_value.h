// Values and memory of the loop IR interpreter (interpreter.h): internal to src/ir/loop.
//
// Course module 3. A Value is what an expression evaluates to: one Scalar per lane. A
// Storage is the memory of one buffer: a parameter's host tensor, or an allocation.
//
// Scalars hold every element type exactly: integers as int64 bits (u64 as its two's
// complement bits, narrower types sign- or zero-extended), bools as 0 or 1, and floats as
// the double holding their exact value (every f32, f16 and bf16 value is a double).
// get<T> and make_scalar<T> convert between a Scalar and compute_t<T>, the C++ type
// arithmetic on T is done in; make_scalar rounds to T (a float result to f16, ...).
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/tensor/tensor.h"

#include <array>
#include <memory>
#include <type_traits>
#include <vector>

namespace minic::loop::interp {

// One lane. Which member holds it follows the type of the expression it belongs to.
union Scalar {
  int64_t i;
  double f;
};

template <typename T>
inline constexpr bool is_16bit_float = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The lane as compute_t<T>.
template <typename T>
compute_t<T> get(Scalar s) {
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    return static_cast<compute_t<T>>(s.f);
  } else if constexpr (std::is_same_v<T, bool>) {
    return s.i != 0;
  } else {
    return static_cast<T>(s.i);
  }
}

// A lane holding `value` rounded to T.
template <typename T>
Scalar make_scalar(compute_t<T> value) {
  Scalar s;
  if constexpr (is_16bit_float<T>) {
    s.f = static_cast<float>(T(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    s.f = value;
  } else if constexpr (std::is_same_v<T, bool>) {
    s.i = value ? 1 : 0;
  } else {
    s.i = static_cast<int64_t>(value);
  }
  return s;
}

// The lanes of one expression's value. Up to kInlineLanes lanes live in the object
// itself, so evaluating scalars and short vectors allocates nothing. The lanes start
// uninitialised (zeroing them doubled the interpreter's run time): whoever makes a Value
// writes every lane before anyone reads it.
class Value {
 public:
  explicit Value(DataType type) : type_(type) {
    if (type.lanes > kInlineLanes) heap_.resize(static_cast<size_t>(type.lanes));
  }

  DataType type() const { return type_; }
  int lanes() const { return type_.lanes; }
  Scalar& operator[](int lane) { return type_.lanes > kInlineLanes ? heap_[lane] : inline_[lane]; }
  const Scalar& operator[](int lane) const {
    return type_.lanes > kInlineLanes ? heap_[lane] : inline_[lane];
  }
  // Lane `lane` of a vector, or the only lane of a scalar (which stands for all lanes).
  const Scalar& lane_or_scalar(int lane) const { return (*this)[type_.lanes == 1 ? 0 : lane]; }

 private:
  static constexpr int kInlineLanes = 16;
  DataType type_;
  std::array<Scalar, kInlineLanes> inline_;
  std::vector<Scalar> heap_;
};

// The memory of one buffer: `size` elements of the buffer's dtype, in `bytes`.
struct Storage {
  Buffer buffer;
  std::span<std::byte> bytes;
  int64_t size = 0;
  // Local buffers of a GPU thread are private to it; the interpreter watches every other
  // buffer for data races between the threads of a block.
  bool thread_private = false;
  std::vector<std::byte> owned;  // an allocation's bytes (empty for a parameter)

  // A new allocation for `buffer`, filled with a pattern that shows reads before writes:
  // NaN for floats, the byte 0xA5 repeated for integers and bools.
  static std::unique_ptr<Storage> allocate(const Buffer& buffer);
  // A parameter's storage: the host tensor's own bytes (the tensor must match `buffer`).
  static std::unique_ptr<Storage> wrap(const Buffer& buffer, Tensor& tensor);

  // Element `offset` (0 <= offset < size; the caller checks).
  Scalar read(int64_t offset) const;
  // Writes element `offset`; returns true if its bytes changed.
  bool write(int64_t offset, Scalar value);
};

// The number of elements a buffer of this shape and these strides spans.
int64_t storage_size(const BufferNode& buffer);

}  // namespace minic::loop::interp
