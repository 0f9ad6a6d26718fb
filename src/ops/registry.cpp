// Every op family of src/ops/, registered in one place. Course module 2.
//
// To add an op: write its file (schema, shape rule, reference kernel, fusion kind) with a
// `register_<file>_ops` function, declare it below and call it from build_registry(). The
// comment names the ops a family registers, and its file where that is not <file>.cpp.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

namespace minic {

// Elementwise and broadcasting
void register_unary_ops(OpRegistry& registry);                // Abs, Exp, Relu, Erf, ...
void register_activation_ops(OpRegistry& registry);           // LeakyRelu, Gelu, Clip, Shrink, ...
void register_binary_ops(OpRegistry& registry);               // Add, Mul, Pow, Equal, And, ...
void register_bitwise_ops(OpRegistry& registry);              // BitwiseAnd, BitwiseNot, ...
void register_variadic_ops(OpRegistry& registry);             // Sum, Mean, Min, Max
void register_select_ops(OpRegistry& registry);               // where.cpp: Where
void register_cast_ops(OpRegistry& registry);                 // Cast, CastLike
void register_bitcast_ops(OpRegistry& registry);              // BitCast
void register_identity_ops(OpRegistry& registry);             // Identity, Dropout

// Data movement and indexing
void register_reshape_ops(OpRegistry& registry);              // Reshape, Flatten, (Un)Squeeze
void register_transpose_ops(OpRegistry& registry);            // Transpose
void register_concat_split_ops(OpRegistry& registry);         // Concat, Split
void register_slice_ops(OpRegistry& registry);                // Slice
void register_gather_ops(OpRegistry& registry);               // Gather, GatherElements
void register_gather_nd_ops(OpRegistry& registry);            // GatherND
void register_scatter_ops(OpRegistry& registry);              // Scatter*, TensorScatter
void register_one_hot_ops(OpRegistry& registry);              // OneHot, EyeLike
void register_expand_tile_ops(OpRegistry& registry);          // Expand, Tile
void register_shape_ops(OpRegistry& registry);                // Shape, Size, ConstantOfShape, Range
void register_pad_ops(OpRegistry& registry);                  // Pad
void register_center_crop_pad_ops(OpRegistry& registry);      // CenterCropPad
void register_trilu_ops(OpRegistry& registry);                // Trilu
void register_depth_space_ops(OpRegistry& registry);          // DepthToSpace, SpaceToDepth
void register_reverse_sequence_ops(OpRegistry& registry);     // ReverseSequence

// Convolution, pooling and images
void register_conv_ops(OpRegistry& registry);                 // Conv, ConvTranspose
void register_conv_nchwc_ops(OpRegistry& registry);           // minic.NchwcConv
void register_nchwc_reorder_ops(OpRegistry& registry);        // minic.ToNchwc, FromNchwc
void register_winograd_ops(OpRegistry& registry);             // minic.WinogradInput, Output
void register_deform_conv_ops(OpRegistry& registry);          // DeformConv
void register_col2im_ops(OpRegistry& registry);               // Col2Im
void register_pool_ops(OpRegistry& registry);                 // MaxPool, AveragePool, Global*Pool
void register_max_unpool_ops(OpRegistry& registry);           // MaxUnpool
void register_resize_ops(OpRegistry& registry);               // Resize
void register_grid_sample_ops(OpRegistry& registry);          // GridSample, AffineGrid
void register_roi_align_ops(OpRegistry& registry);            // RoiAlign
void register_non_max_suppression_ops(OpRegistry& registry);  // NonMaxSuppression

// Normalisation
void register_normalization_ops(OpRegistry& registry);        // BatchNorm, InstanceNorm, LRN
void register_layer_norm_ops(OpRegistry& registry);           // LayerNormalization
void register_normalization_stats_ops(OpRegistry& registry);  // RMSNorm, GroupNorm, LpNorm, MVN

// Linear algebra, reductions and selection
void register_matmul_ops(OpRegistry& registry);               // MatMul, Gemm
void register_matmul_panels_ops(OpRegistry& registry);        // minic.MatMulPanels
void register_einsum_ops(OpRegistry& registry);               // Einsum
void register_det_ops(OpRegistry& registry);                  // Det
void register_reduce_ops(OpRegistry& registry);               // ReduceSum, ReduceMean, ...
void register_softmax_ops(OpRegistry& registry);              // Softmax, LogSoftmax
void register_cumulative_ops(OpRegistry& registry);           // CumSum, CumProd
void register_topk_ops(OpRegistry& registry);                 // TopK
void register_select_values_ops(OpRegistry& registry);        // Compress, NonZero, Unique
void register_loss_ops(OpRegistry& registry);                 // NegativeLogLikelihoodLoss, SCE loss

// Quantisation (course module 7)
void register_quantize_ops(OpRegistry& registry);             // (De)QuantizeLinear, Dynamic...
void register_quantized_linear_ops(OpRegistry& registry);     // MatMul/ConvInteger, QLinear*,
                                                              // minic.*IntegerWords
void register_lookup_table_ops(OpRegistry& registry);         // minic.LookupTable

// Sequence models
void register_attention_ops(OpRegistry& registry);            // Attention
void register_fused_attention_ops(OpRegistry& registry);      // minic.FusedAttention
void register_rotary_embedding_ops(OpRegistry& registry);     // RotaryEmbedding
void register_linear_attention_ops(OpRegistry& registry);     // LinearAttention
void register_causal_conv_ops(OpRegistry& registry);          // CausalConvWithState
void register_rnn_ops(OpRegistry& registry);                  // rnn(_cells).cpp: LSTM, GRU, RNN

// Signals and text
void register_dft_ops(OpRegistry& registry);                  // DFT, STFT
void register_signal_window_ops(OpRegistry& registry);        // signal_windows.cpp: *Window, Mel
void register_tfidf_vectorizer_ops(OpRegistry& registry);     // TfIdfVectorizer

// Control flow: ops whose attributes are graphs
void register_control_flow_ops(OpRegistry& registry);         // If, Loop
void register_scan_ops(OpRegistry& registry);                 // Scan

// custom_op.cpp: adds the custom ops registered before the registry was built.
void add_waiting_custom_ops(OpRegistry& registry);

namespace {

// size: table (a call per op family, by group)
OpRegistry build_registry() {
  OpRegistry registry;
  // Elementwise and broadcasting
  register_unary_ops(registry);
  register_activation_ops(registry);
  register_binary_ops(registry);
  register_bitwise_ops(registry);
  register_variadic_ops(registry);
  register_select_ops(registry);
  register_cast_ops(registry);
  register_bitcast_ops(registry);
  register_identity_ops(registry);

  // Data movement and indexing
  register_reshape_ops(registry);
  register_transpose_ops(registry);
  register_concat_split_ops(registry);
  register_slice_ops(registry);
  register_gather_ops(registry);
  register_gather_nd_ops(registry);
  register_scatter_ops(registry);
  register_one_hot_ops(registry);
  register_expand_tile_ops(registry);
  register_shape_ops(registry);
  register_pad_ops(registry);
  register_center_crop_pad_ops(registry);
  register_trilu_ops(registry);
  register_depth_space_ops(registry);
  register_reverse_sequence_ops(registry);

  // Convolution, pooling and images
  register_conv_ops(registry);
  register_conv_nchwc_ops(registry);
  register_nchwc_reorder_ops(registry);
  register_winograd_ops(registry);
  register_deform_conv_ops(registry);
  register_col2im_ops(registry);
  register_pool_ops(registry);
  register_max_unpool_ops(registry);
  register_resize_ops(registry);
  register_grid_sample_ops(registry);
  register_roi_align_ops(registry);
  register_non_max_suppression_ops(registry);

  // Normalisation
  register_normalization_ops(registry);
  register_layer_norm_ops(registry);
  register_normalization_stats_ops(registry);

  // Linear algebra, reductions and selection
  register_matmul_ops(registry);
  register_matmul_panels_ops(registry);
  register_einsum_ops(registry);
  register_det_ops(registry);
  register_reduce_ops(registry);
  register_softmax_ops(registry);
  register_cumulative_ops(registry);
  register_topk_ops(registry);
  register_select_values_ops(registry);
  register_loss_ops(registry);

  // Quantisation
  register_quantize_ops(registry);
  register_quantized_linear_ops(registry);
  register_lookup_table_ops(registry);

  // Sequence models
  register_attention_ops(registry);
  register_fused_attention_ops(registry);
  register_rotary_embedding_ops(registry);
  register_linear_attention_ops(registry);
  register_causal_conv_ops(registry);
  register_rnn_ops(registry);

  // Signals and text
  register_dft_ops(registry);
  register_signal_window_ops(registry);
  register_tfidf_vectorizer_ops(registry);

  // Control flow
  register_control_flow_ops(registry);
  register_scan_ops(registry);
  return registry;
}

// The one registry: minic's ops, then the custom ones (custom_op.cpp): first those
// registered while the program's statics were built, later any other.
OpRegistry& the_registry() {
  static OpRegistry registry = [] {
    OpRegistry built = build_registry();
    add_waiting_custom_ops(built);
    return built;
  }();
  return registry;
}

}  // namespace

const OpRegistry& op_registry() { return the_registry(); }

void add_to_op_registry(OpSchema schema) { the_registry().add(std::move(schema)); }

}  // namespace minic
