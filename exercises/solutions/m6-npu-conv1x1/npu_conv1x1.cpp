// Exercise m6-npu-conv1x1, solved: the toy NPU's pattern for 1x1 convolutions. Course
// module 6.
//
// With one image, a 1x1 convolution of stride 1 without padding is a GEMM, with no data
// moved: Y [Co, H*W] = W [Co, Ci] . X [Ci, H*W], each read as it lies in NCHW (the [1, Ci,
// H, W] input is [Ci, H*W] row-major, the [Co, Ci, 1, 1] weights [Co, Ci], the output
// [Co, H*W]). The bias has one value per output channel: per row of Y.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#include "minic/backends/toy_npu.h"

#include <algorithm>

namespace minic {
namespace {

// The attribute `name` of `node` is absent or every one of its values is `value`.
bool all_or_absent(const Node& node, const char* name, int64_t value) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end()) return true;
  const auto* values = std::get_if<std::vector<int64_t>>(&it->second);
  if (values) {
    return std::all_of(values->begin(), values->end(), [&](int64_t v) { return v == value; });
  }
  const auto* single = std::get_if<int64_t>(&it->second);
  return single && *single == value;
}

std::optional<NpuGemm> conv1x1_pattern(const Node& node) {
  const std::vector<const Node*> ops = body_ops(node);
  if (ops.empty() || ops.size() > 2 || ops[0]->op != "Conv") return std::nullopt;
  const Node& conv = *ops[0];
  const Value* x = conv.input(0);
  const Value* w = conv.input(1);
  const Value* bias = conv.inputs().size() > 2 ? conv.input(2) : nullptr;
  if (!is_f32(x, 4) || !is_f32(w, 4) || x->type.shape[0] != 1) return std::nullopt;
  if (w->type.shape[2] != 1 || w->type.shape[3] != 1) return std::nullopt;
  if (!all_or_absent(conv, "strides", 1) || !all_or_absent(conv, "pads", 0) ||
      !all_or_absent(conv, "dilations", 1) || !all_or_absent(conv, "group", 1)) {
    return std::nullopt;
  }
  NpuGemm job;
  job.m = w->type.shape[0];
  job.k = w->type.shape[1];
  job.n = x->type.shape[2] * x->type.shape[3];
  job.bias_per_row = true;
  const Value* result = conv.output(0);
  if (ops.size() == 2) {
    if (ops[1]->op != "Relu" || ops[1]->input(0) != result) return std::nullopt;
    job.relu = true;
    result = ops[1]->output(0);
  }
  job.a = argument_index(node, w);
  job.b = argument_index(node, x);
  job.bias = bias ? argument_index(node, bias) : -1;
  job.y = argument_index(node, result);
  if (job.a < 0 || job.b < 0 || job.y < 0 || (bias && job.bias < 0)) return std::nullopt;
  return job;
}

}  // namespace

MINIC_REGISTER_NPU_PATTERN("conv1x1", conv1x1_pattern);

}  // namespace minic
