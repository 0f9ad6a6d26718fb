// Post-training quantisation: a float model rewritten in the QDQ format, with scales chosen
// from calibration runs. What `minic quantize` does (tools/minic/quantize.cpp).
//
// Course module 7. quantize_graph takes a float graph and calibration inputs:
//   1. the ops to quantise: every Conv, MatMul and Gemm (without transA) computing in
//      float32 whose op is not excluded;
//   2. calibration: the graph runs on every calibration input with each activation those
//      ops read (input 0, and a MatMul's B when it is not a constant) as an extra output;
//      the extremes and a sample of each one's values are kept, and a calibration method
//      (calibration.h) chooses its range from them: its minimum and maximum (minmax), the
//      values at the given percentile from each end (percentile: a few outliers no longer
//      stretch the range that every other value loses resolution to), or the clipping
//      threshold whose quantised distribution is closest to the values' own (entropy: the
//      least KL divergence, TensorRT's calibration);
//   3. parameters: activations uint8, asymmetric: the range widened to hold 0, scale =
//      range / 255, zero point = round(-low / scale); weights int8, symmetric (zero point
//      0): scale = max |w| / 127, per output channel or for the whole tensor;
//   4. the rewrite: each activation goes through QuantizeLinear and DequantizeLinear before
//      the ops that read it, and each weight becomes an int8 constant and a
//      DequantizeLinear. The result is a standard QDQ model: ONNX Runtime runs it, and
//      minic's qdq-to-integer pass turns its ops into int8 kernels.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#pragma once

#include "minic/ir/graph/graph.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace minic {

struct QuantizeOptions {
  std::string method = "minmax";  // a calibration method's name (calibration.h)
  double percentile = 99.99;     // the percentile method's: the range keeps this % of values
  bool per_channel = false;      // weights: one scale per output channel
  std::vector<std::string> exclude;  // ops to leave in float ("Gemm")
};

// Runs a graph on one set of inputs (one per graph input, in order) and gives its outputs.
// The CLI compiles the graph; a test may interpret it.
using GraphRunner =
    std::function<std::vector<Tensor>(const Graph& graph, const std::vector<Tensor>& inputs)>;

// One quantised tensor, for the report: what it is, the range its parameters cover, and
// the error quantisation introduces: the root mean square of (dequantised - original) over
// that of the original (on the calibration runs for an activation, on the weights).
struct QuantizedTensor {
  std::string name;
  bool weight = false;
  double low = 0;
  double high = 0;
  std::vector<double> scales;  // one, or one per channel
  int64_t zero_point = 0;      // the activation's (weights: 0)
  double relative_error = 0;
};

struct QuantizeResult {
  std::unique_ptr<Graph> graph;  // the QDQ graph, types inferred
  std::vector<QuantizedTensor> tensors;
  int quantized_ops = 0;
  std::vector<std::string> notes;  // what the options could not have, and why
};

// Quantises `graph` (not changed) with the ranges of `calibration` (sets of inputs, one
// tensor per graph input). Throws Error for a graph whose opset has no QuantizeLinear
// (below 10), no calibration input, or a calibration method that does not exist.
QuantizeResult quantize_graph(const Graph& graph,
                              const std::vector<std::vector<Tensor>>& calibration,
                              const QuantizeOptions& options, const GraphRunner& run);

}  // namespace minic
