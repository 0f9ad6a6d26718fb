// Arrays in and out of minic through the buffer protocol (arrays.h). Course module 8.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "arrays.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace minic::python {
namespace {

// An element type as the buffer protocol spells it (struct module format characters) and
// as numpy names it.
struct BufferType {
  DType dtype;
  const char* format;  // what TensorBuffer lends
  const char* numpy;
};

constexpr BufferType kBufferTypes[] = {
    {DType::f32, "f", "float32"}, {DType::f64, "d", "float64"}, {DType::f16, "e", "float16"},
    {DType::i8, "b", "int8"},     {DType::i16, "h", "int16"},   {DType::i32, "i", "int32"},
    {DType::i64, "q", "int64"},   {DType::u8, "B", "uint8"},    {DType::u16, "H", "uint16"},
    {DType::u32, "I", "uint32"},  {DType::u64, "Q", "uint64"},  {DType::boolean, "?", "bool"},
};

const BufferType& buffer_type(DType dtype) {
  for (const BufferType& type : kBufferTypes) {
    if (type.dtype == dtype) return type;
  }
  fail("element type {} has no numpy type: the Python API passes f16, f32, f64, the "
       "integers and bool",
       dtype_name(dtype));
}

// The element type a buffer's format and item size describe in native byte order; null
// for any other (a big-endian array, a structured dtype). 'l' and 'L' are C longs, the
// 8-byte integers of numpy on Linux.
const BufferType* element_type(const py::buffer_info& info) {
  std::string format = info.format;
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) {
    format.erase(0, 1);
  }
  if (format == "l" && info.itemsize == 8) format = "q";
  if (format == "L" && info.itemsize == 8) format = "Q";
  for (const BufferType& type : kBufferTypes) {
    if (format == type.format && info.itemsize == dtype_size(type.dtype)) return &type;
  }
  return nullptr;
}

std::string shape_text(const py::buffer_info& info) {
  return fmt::format("[{}]", fmt::join(info.shape, ","));
}

// Error unless `info` has `type`'s element type and shape.
void check_type(const py::buffer_info& info, const TensorType& type, const std::string& what) {
  const BufferType& expected = buffer_type(type.dtype);
  const BufferType* given = element_type(info);
  if (given != &expected) {
    fail("{} must be {}, given an array of {} {} (convert it with .astype(numpy.{}))", what,
         type_string(type), given ? given->numpy : "format '" + info.format + "'",
         shape_text(info), expected.numpy);
  }
  bool same_shape = info.ndim == type.rank();
  for (py::ssize_t d = 0; same_shape && d < info.ndim; ++d) {
    same_shape = info.shape[static_cast<size_t>(d)] == type.shape[static_cast<size_t>(d)];
  }
  if (!same_shape) {
    fail("{} must be {}, given an array of shape {}", what, type_string(type), shape_text(info));
  }
}

// True if the buffer can be read in place: row-major without gaps, aligned to its elements.
bool readable_in_place(const py::buffer_info& info) {
  py::ssize_t stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    const auto axis = static_cast<size_t>(d);
    if (info.shape[axis] != 1 && info.strides[axis] != stride) return false;
    stride *= info.shape[axis];
  }
  return reinterpret_cast<std::uintptr_t>(info.ptr) %
             static_cast<std::uintptr_t>(info.itemsize) == 0;
}

// Copies the elements of a strided buffer into `out` in row-major order, axis by axis.
void copy_strided(const py::buffer_info& info, size_t axis, const std::byte* from,
                  std::byte*& out) {
  if (axis == static_cast<size_t>(info.ndim)) {
    std::memcpy(out, from, static_cast<size_t>(info.itemsize));
    out += info.itemsize;
    return;
  }
  for (py::ssize_t i = 0; i < info.shape[axis]; ++i) {
    copy_strided(info, axis + 1, from + i * info.strides[axis], out);
  }
}

Tensor copy_to_tensor(const py::buffer_info& info, const TensorType& type) {
  Tensor tensor(type);
  std::byte* out = tensor.bytes().data();
  if (tensor.num_elements() > 0) {
    copy_strided(info, 0, static_cast<const std::byte*>(info.ptr), out);
  }
  return tensor;
}

// What numpy.asarray reads: a Tensor's bytes, lent through the buffer protocol.
struct TensorBuffer {
  Tensor tensor;
};

}  // namespace

void bind_arrays(py::module_& m) {
  py::class_<TensorBuffer>(m, "TensorBuffer", py::buffer_protocol(),
                           "A result tensor's bytes, lent to numpy without a copy")
      .def_buffer([](TensorBuffer& buffer) {
        const Tensor& tensor = buffer.tensor;
        const auto itemsize = static_cast<py::ssize_t>(dtype_size(tensor.dtype()));
        std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
        std::vector<py::ssize_t> strides(shape.size());
        py::ssize_t stride = itemsize;
        for (size_t d = shape.size(); d-- > 0;) {
          strides[d] = stride;
          stride *= shape[d];
        }
        return py::buffer_info(buffer.tensor.bytes().data(), itemsize,
                               buffer_type(tensor.dtype()).format,
                               static_cast<py::ssize_t>(shape.size()), shape, strides);
      });
}

py::object to_array(Tensor tensor) {
  buffer_type(tensor.dtype());  // Error before anything is made for a type numpy lacks
  py::object buffer = py::cast(TensorBuffer{std::move(tensor)});
  return py::module_::import("numpy").attr("asarray")(buffer);
}

py::list to_arrays(std::vector<Tensor> tensors) {
  py::list arrays;
  for (Tensor& tensor : tensors) arrays.append(to_array(std::move(tensor)));
  return arrays;
}

Tensor to_tensor(const py::buffer& buffer, const TensorType& type, const std::string& what) {
  py::buffer_info info = buffer.request();
  check_type(info, type, what);
  return copy_to_tensor(info, type);
}

InputArrays::InputArrays(const std::vector<py::buffer>& buffers,
                         const std::vector<Value*>& inputs) {
  if (buffers.size() != inputs.size()) {
    fail("the model takes {} input{}, given {}", inputs.size(), inputs.size() == 1 ? "" : "s",
         buffers.size());
  }
  types_.reserve(inputs.size());  // views_ point at these: no reallocation
  buffers_.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    types_.push_back(inputs[i]->type);
    buffers_.push_back(buffers[i].request());
    const py::buffer_info& info = buffers_.back();
    check_type(info, types_.back(), fmt::format("input '{}'", inputs[i]->name()));
    if (readable_in_place(info)) {
      views_.push_back({&types_.back(), static_cast<const std::byte*>(info.ptr)});
    } else {
      copies_.push_back(copy_to_tensor(info, types_.back()));
      views_.push_back({&types_.back(), copies_.back().bytes().data()});
    }
  }
}

std::vector<Tensor> InputArrays::tensors() const {
  std::vector<Tensor> tensors;
  for (const runtime::TensorView& view : views_) {
    Tensor tensor(*view.type);
    if (tensor.num_elements() > 0) {
      std::memcpy(tensor.bytes().data(), view.data, tensor.bytes().size());
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

}  // namespace minic::python
