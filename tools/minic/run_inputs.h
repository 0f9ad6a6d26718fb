// Inputs and outputs of `minic run`: binding --input files to graph inputs, parsing
// --input-shape, filling the inputs that were not given, and finding --compare files.
// Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/frontend/onnx.h"

#include <map>
#include <random>
#include <string>
#include <vector>

namespace minic::cli {

enum class Fill { random, zeros, ones };

// Binds `--input` arguments to graph inputs (in `inputs`' order): "NAME=PATH" binds by
// name; a plain "PATH" binds to the first input not bound otherwise. Returns name → path.
std::map<std::string, std::string> bind_input_files(const std::vector<std::string>& arguments,
                                                    const std::vector<OnnxValueInfo>& inputs);

// The --input files read, bound to `inputs` as bind_input_files binds them: name → tensor.
std::map<std::string, Tensor> read_input_files(const std::vector<std::string>& arguments,
                                               const std::vector<OnnxValueInfo>& inputs);

// Parses `--input-shape NAME=1x3x224x224` arguments into name → shape ("NAME=" is a scalar).
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& arguments,
                                                const std::vector<OnnxValueInfo>& inputs);

// Throws an Error naming `model` (the file) with a hint if an input that is neither given
// nor shaped on the command line has a symbolic or unknown dimension, or no shape at all;
// and without a hint if an input has a negative dimension other than -1 (which exporters
// write for a dynamic one).
void check_inputs_are_sized(const std::string& model, const std::vector<OnnxValueInfo>& inputs,
                            const std::map<std::string, Tensor>& given,
                            const std::map<std::string, Shape>& shapes);

// A tensor of `type` filled as asked. Random: uniform in [-1, 1) for floats, 0..2 for
// integers, false/true for bool, drawn from `random` in row-major order.
Tensor fill_tensor(const TensorType& type, Fill fill, std::mt19937_64& random);

// "[1.5, -2, 0.25, ...]": the first `count` elements.
std::string preview_values(const Tensor& tensor, int count);

// The expected outputs named by `--compare`: one directory holding output_K.pb or
// output_K.npy for K = 0..num_outputs-1, or one file per output in order.
std::vector<std::string> expected_output_files(const std::vector<std::string>& arguments,
                                               size_t num_outputs);

}  // namespace minic::cli
