// Arrays and minic's tensors: which element types they share, and how each crosses
// without a copy where it can. Course module 8.
//
// Both ways go through Python's buffer protocol, not numpy's C API: every numpy (1.x and
// 2.x) implements the protocol, while the numpy support of Debian's pybind11 (2.10) reads
// numpy 1's structures. Out: a result Tensor is moved into a TensorBuffer, a Python object
// that lends its bytes through the protocol, and numpy.asarray makes an array over them
// that keeps the TensorBuffer alive; no byte is copied. In: a buffer that is C-contiguous,
// of the input's element type and aligned to it is read in place (runtime::TensorView);
// another layout (a transposed view, a slice with steps) is copied into a Tensor first. A
// buffer of another element type or shape is an Error naming the input: minic does not
// cast behind the caller's back (nor does ONNX Runtime).
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/runtime/executor.h"
#include "minic/tensor/tensor.h"

#include <pybind11/pybind11.h>

#include <deque>
#include <span>
#include <string>
#include <vector>

namespace minic::python {

namespace py = pybind11;

// Registers TensorBuffer with the module.
void bind_arrays(py::module_& m);

// A numpy array owning `tensor`, over its bytes. Error for element types numpy has none of
// (bf16 and the storage-only types).
py::object to_array(Tensor tensor);
py::list to_arrays(std::vector<Tensor> tensors);

// `buffer`, which must be of `type`, as a Tensor (a copy). `what` names it in errors.
Tensor to_tensor(const py::buffer& buffer, const TensorType& type, const std::string& what);

// The inputs of one run, one buffer per value of `inputs` (a graph's inputs), each viewed
// in place or copied (see above). Holds the buffers and the copies for as long as it lives.
class InputArrays {
 public:
  InputArrays(const std::vector<py::buffer>& buffers, const std::vector<Value*>& inputs);
  std::span<const runtime::TensorView> views() const { return views_; }
  // The inputs as Tensors (copies): for what reads Tensors only.
  std::vector<Tensor> tensors() const;

 private:
  std::vector<py::buffer_info> buffers_;  // each holds its buffer until released
  std::vector<TensorType> types_;
  std::deque<Tensor> copies_;             // a deque: growing it moves no Tensor
  std::vector<runtime::TensorView> views_;
};

}  // namespace minic::python
