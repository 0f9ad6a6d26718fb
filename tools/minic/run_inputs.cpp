// Inputs and outputs of `minic run`. Course module 1.
//
// Random inputs are reproducible: one std::mt19937_64 seeded with --seed (0 by default)
// draws every element of every filled input in graph-input order, and the numbers are
// made from its raw 64-bit output (not from std::uniform_*_distribution, whose results
// differ between standard libraries), so the same command gives the same inputs anywhere.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "run_inputs.h"

#include "minic/runtime/tensor_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace minic::cli {
namespace {

bool is_input(const std::vector<OnnxValueInfo>& inputs, const std::string& name) {
  return std::any_of(inputs.begin(), inputs.end(),
                     [&](const OnnxValueInfo& input) { return input.name == name; });
}

std::string input_names(const std::vector<OnnxValueInfo>& inputs) {
  std::vector<std::string> names;
  for (const OnnxValueInfo& input : inputs) names.push_back(input.name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

Shape parse_shape(const std::string& text, const std::string& argument) {
  Shape shape;
  if (text.empty()) return shape;
  size_t start = 0;
  while (true) {
    size_t end = text.find('x', start);
    size_t stop = end == std::string::npos ? text.size() : end;
    std::string_view dim(text.data() + start, stop - start);
    int64_t size = -1;
    auto [last, error] = std::from_chars(dim.data(), dim.data() + dim.size(), size);
    if (error != std::errc() || last != dim.data() + dim.size() || size < 0) {
      fail("--input-shape '{}': '{}' is not a dimension (write NAME=1x3x224x224)", argument,
           dim);
    }
    shape.push_back(size);
    if (end == std::string::npos) return shape;
    start = end + 1;
  }
}

bool is_number(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

}  // namespace

std::map<std::string, std::string> bind_input_files(const std::vector<std::string>& arguments,
                                                    const std::vector<OnnxValueInfo>& inputs) {
  std::map<std::string, std::string> bound;
  std::vector<std::string> positional;
  for (const std::string& argument : arguments) {
    size_t equals = argument.find('=');
    std::string name = argument.substr(0, equals);
    // A path may itself contain '=': only a graph input's name before it binds by name.
    if (equals == std::string::npos ||
        (!is_input(inputs, name) && std::filesystem::exists(argument))) {
      positional.push_back(argument);
      continue;
    }
    if (!is_input(inputs, name)) {
      fail("--input '{}': the model has no input named '{}' (inputs: {})", argument, name,
           input_names(inputs));
    }
    if (bound.count(name)) fail("--input: input '{}' is given twice", name);
    bound[name] = argument.substr(equals + 1);
  }
  size_t next = 0;
  for (const std::string& path : positional) {
    while (next < inputs.size() && bound.count(inputs[next].name)) ++next;
    if (next == inputs.size()) {
      fail("--input '{}': more inputs given than the model takes ({}: {})", path, inputs.size(),
           input_names(inputs));
    }
    bound[inputs[next].name] = path;
  }
  return bound;
}

std::map<std::string, Tensor> read_input_files(const std::vector<std::string>& arguments,
                                               const std::vector<OnnxValueInfo>& inputs) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, path] : bind_input_files(arguments, inputs)) {
    tensors[name] = read_tensor_file(path);
  }
  return tensors;
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& arguments,
                                                const std::vector<OnnxValueInfo>& inputs) {
  std::map<std::string, Shape> shapes;
  for (const std::string& argument : arguments) {
    size_t equals = argument.find('=');
    if (equals == std::string::npos) {
      fail("--input-shape '{}': write NAME=1x3x224x224", argument);
    }
    std::string name = argument.substr(0, equals);
    if (!is_input(inputs, name)) {
      fail("--input-shape '{}': the model has no input named '{}' (inputs: {})", argument, name,
           input_names(inputs));
    }
    shapes[name] = parse_shape(argument.substr(equals + 1), argument);
  }
  return shapes;
}

void check_inputs_are_sized(const std::string& model, const std::vector<OnnxValueInfo>& inputs,
                            const std::map<std::string, Tensor>& given,
                            const std::map<std::string, Shape>& shapes) {
  for (const OnnxValueInfo& input : inputs) {
    if (!input.is_tensor) fail("{}: {}", model, not_a_tensor_message(input, "input"));
    for (const std::string& dim : input.dims) {
      if (dim.starts_with('-') && dim != "-1" && is_number(dim.substr(1))) {
        fail("{}: input '{}' has negative dimension {} (shape {}[{}])", model, input.name, dim,
             input.dtype, fmt::join(input.dims, ","));
      }
    }
    if (given.count(input.name) || shapes.count(input.name)) continue;
    if (!input.rank_known) {
      fail("{}: input '{}' has no shape in the model; give it with --input-shape {}=1x3x224x224 "
           "(its real sizes) or its value with --input {}=FILE",
           model, input.name, input.name, input.name);
    }
    if (std::all_of(input.dims.begin(), input.dims.end(), is_number)) continue;
    std::vector<std::string> example;
    for (const std::string& dim : input.dims) example.push_back(is_number(dim) ? dim : "1");
    fail("{}: input '{}' has shape {}[{}] with symbolic dimensions; give its shape with "
         "--input-shape {}={} or its value with --input {}=FILE",
         model, input.name, input.dtype, fmt::join(input.dims, ","), input.name,
         fmt::join(example, "x"), input.name);
  }
}

Tensor fill_tensor(const TensorType& type, Fill fill, std::mt19937_64& random) {
  // The storage-only types (float8, int4, ...) have no C++ element type: fill a wide
  // tensor by the same rule and convert it.
  if (is_storage_only(type.dtype)) {
    DType wide = is_low_precision_int(type.dtype) ? DType::i64 : DType::f64;
    return fill_tensor(TensorType{wide, type.shape}, fill, random).cast(type.dtype);
  }
  Tensor tensor(type);
  visit_dtype(type.dtype, [&]<typename T>() {
    for (T& element : tensor.values<T>()) {
      if (fill == Fill::zeros) {
        element = T(0);
      } else if (fill == Fill::ones) {
        element = T(1);
      } else if constexpr (std::is_same_v<T, bool>) {
        element = (random() >> 63) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        element = static_cast<T>(random() % 3);
      } else {
        // The top 53 bits as a double in [0, 1), mapped to [-1, 1).
        double unit = static_cast<double>(random() >> 11) * 0x1.0p-53;
        element = T(static_cast<compute_t<T>>(2 * unit - 1));
      }
    }
  });
  return tensor;
}

std::string preview_values(const Tensor& tensor, int count) {
  std::vector<std::string> shown;
  int64_t n = std::min<int64_t>(count, tensor.num_elements());
  for (int64_t i = 0; i < n; ++i) {
    const DType dtype = tensor.dtype();
    if (dtype == DType::boolean) {
      shown.push_back(tensor.as_int64(i) ? "true" : "false");
    } else if (dtype == DType::u64) {
      shown.push_back(fmt::format("{}", tensor.values<uint64_t>()[i]));
    } else if (is_int(dtype) || is_low_precision_int(dtype)) {
      shown.push_back(fmt::format("{}", tensor.as_int64(i)));
    } else {
      shown.push_back(fmt::format("{:.6g}", tensor.as_double(i)));
    }
  }
  if (n < tensor.num_elements()) shown.push_back("...");
  return fmt::format("[{}]", fmt::join(shown, ", "));
}

std::vector<std::string> expected_output_files(const std::vector<std::string>& arguments,
                                               size_t num_outputs) {
  namespace fs = std::filesystem;
  if (arguments.size() == 1 && fs::is_directory(arguments[0])) {
    std::vector<std::string> files;
    for (size_t k = 0; k < num_outputs; ++k) {
      fs::path directory(arguments[0]);
      fs::path pb = directory / fmt::format("output_{}.pb", k);
      fs::path npy = directory / fmt::format("output_{}.npy", k);
      if (fs::exists(pb)) {
        files.push_back(pb.string());
      } else if (fs::exists(npy)) {
        files.push_back(npy.string());
      } else {
        fail("--compare: '{}' has neither output_{}.pb nor output_{}.npy", arguments[0], k, k);
      }
    }
    return files;
  }
  if (arguments.size() != num_outputs) {
    fail("--compare: {} files given for a model with {} outputs (give one per output, in "
         "order, or a directory)",
         arguments.size(), num_outputs);
  }
  return arguments;
}

}  // namespace minic::cli
