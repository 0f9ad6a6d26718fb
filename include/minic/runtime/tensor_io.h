// Reading and writing tensors: numpy .npy files and ONNX TensorProto .pb files.
//
// Course module 1. `minic run` reads inputs and writes outputs with these.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/tensor/tensor.h"

#include <string>

namespace minic {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);

// By extension: .npy as numpy, anything else as a TensorProto.
Tensor read_tensor_file(const std::string& path);

}  // namespace minic
