// Reading and writing tensors: numpy .npy files and ONNX TensorProto .pb files.
//
// Course module 8 (deployment). `minic run` reads inputs and writes outputs with these.
#pragma once

#include "minic/tensor/tensor.h"

#include <string>

namespace minic {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);

// By extension: .npy as numpy, anything else as a TensorProto.
Tensor read_tensor_file(const std::string& path);

}  // namespace minic
