// Attention's attributes, sizes and input checks, shared by attention_shape.cpp (the
// checks and the shape rule) and attention.cpp (the op and its reference kernel).
//
// Course module 2. See attention.cpp for what the op computes.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/op.h"

#include <array>
#include <optional>
#include <vector>

namespace minic {

// Input positions, as in the ONNX schema.
enum AttentionInput : size_t { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpadKvSeqlen };

// What qk_matmul_output holds.
enum class QkOutputMode : int64_t { score = 0, capped = 1, biased = 2, softmax = 3 };

struct AttentionAttributes {
  bool is_causal = false;
  std::optional<double> scale;  // absent: 1 / sqrt(head_size)
  double softcap = 0;           // 0: no softcap
  QkOutputMode qk_output = QkOutputMode::score;
  std::optional<int64_t> q_num_heads;
  std::optional<int64_t> kv_num_heads;

  // The attributes, checked (softmax_precision is checked and not kept: see attention.cpp).
  static AttentionAttributes read(const NodeContext& ctx);
};

// The sizes of one Attention node.
struct AttentionDims {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_sequence = 0;
  int64_t kv_sequence = 0;
  int64_t past = 0;        // past_sequence_length, 0 without a cache
  int64_t head_size = 0;   // of Q and K
  int64_t v_head_size = 0;
  bool three_d = false;    // Q, K, V are [batch, sequence, hidden]

  int64_t total() const { return past + kv_sequence; }
};

// The types of the node's 7 inputs, null where one is omitted.
using AttentionInputTypes = std::array<const TensorType*, 7>;

// Checks the inputs' element types and shapes against each other and the attributes, and
// returns the sizes they give; ctx.fail()s naming what does not fit.
AttentionDims check_attention_inputs(const NodeContext& ctx, const AttentionAttributes& a,
                                     const AttentionInputTypes& inputs);

// The shape rule: Y, present_key, present_value and qk_matmul_output, as many as the node
// defines.
std::vector<TensorType> attention_shape(const ShapeContext& ctx);

}  // namespace minic
