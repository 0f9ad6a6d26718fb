// Every op family of src/ops/, registered in one place. Course module 2.
//
// To add an op: write its file (schema, shape rule, reference kernel, fusion kind) with a
// `register_..._ops` function, declare it below and call it from build_registry().
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

namespace minic {

void register_unary_ops(OpRegistry& registry);        // unary.cpp: Abs, Exp, Relu, Erf, ...
void register_activation_ops(OpRegistry& registry);   // activation.cpp: LeakyRelu, Gelu, Clip, ...
void register_binary_ops(OpRegistry& registry);       // binary.cpp: Add, Mul, Pow, Equal, And, ...
void register_bitwise_ops(OpRegistry& registry);      // bitwise.cpp: BitwiseAnd, BitwiseNot, ...
void register_variadic_ops(OpRegistry& registry);     // variadic.cpp: Sum, Mean, Min, Max
void register_select_ops(OpRegistry& registry);       // where.cpp: Where
void register_cast_ops(OpRegistry& registry);         // cast.cpp: Cast, CastLike
void register_identity_ops(OpRegistry& registry);     // identity.cpp: Identity, Dropout
void register_reshape_ops(OpRegistry& registry);      // reshape.cpp: Reshape, Flatten, Squeeze, Unsqueeze
void register_transpose_ops(OpRegistry& registry);    // transpose.cpp: Transpose
void register_concat_split_ops(OpRegistry& registry); // concat_split.cpp: Concat, Split
void register_slice_ops(OpRegistry& registry);        // slice.cpp: Slice
void register_gather_ops(OpRegistry& registry);       // gather.cpp: Gather, GatherElements
void register_gather_nd_ops(OpRegistry& registry);    // gather_nd.cpp: GatherND
void register_scatter_ops(OpRegistry& registry);      // scatter.cpp: Scatter*, TensorScatter
void register_one_hot_ops(OpRegistry& registry);      // one_hot.cpp: OneHot, EyeLike
void register_expand_tile_ops(OpRegistry& registry);  // expand_tile.cpp: Expand, Tile
void register_shape_ops(OpRegistry& registry);        // shape.cpp: Shape, Size, ConstantOfShape, Range
void register_pad_ops(OpRegistry& registry);          // pad.cpp: Pad
void register_trilu_ops(OpRegistry& registry);        // trilu.cpp: Trilu
void register_depth_space_ops(OpRegistry& registry);  // depth_space.cpp: DepthToSpace, SpaceToDepth
void register_conv_ops(OpRegistry& registry);         // conv.cpp: Conv, ConvTranspose
void register_pool_ops(OpRegistry& registry);         // pool.cpp: MaxPool, AveragePool, Global*Pool
void register_normalization_ops(OpRegistry& registry);// normalization.cpp: BatchNorm, InstanceNorm, LRN
void register_layer_norm_ops(OpRegistry& registry);   // layer_norm.cpp: LayerNormalization
void register_normalization_stats_ops(OpRegistry& registry); // normalization_stats.cpp: RMSNormalization, ...
void register_resize_ops(OpRegistry& registry);       // resize.cpp: Resize
void register_matmul_ops(OpRegistry& registry);       // matmul.cpp: MatMul, Gemm
void register_einsum_ops(OpRegistry& registry);       // einsum.cpp: Einsum
void register_reduce_ops(OpRegistry& registry);       // reduce.cpp: ReduceSum, ReduceMean, ...
void register_softmax_ops(OpRegistry& registry);      // softmax.cpp: Softmax, LogSoftmax
void register_non_max_suppression_ops(OpRegistry& registry);  // non_max_suppression.cpp
void register_linear_attention_ops(OpRegistry& registry);    // linear_attention.cpp
void register_causal_conv_ops(OpRegistry& registry);         // causal_conv.cpp: CausalConvWithState
void register_deform_conv_ops(OpRegistry& registry);  // deform_conv.cpp: DeformConv
void register_tfidf_vectorizer_ops(OpRegistry& registry);  // tfidf_vectorizer.cpp
void register_loss_ops(OpRegistry& registry);         // loss.cpp: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_grid_sample_ops(OpRegistry& registry);  // grid_sample.cpp: GridSample, AffineGrid
void register_col2im_ops(OpRegistry& registry);       // col2im.cpp: Col2Im
void register_roi_align_ops(OpRegistry& registry);    // roi_align.cpp: RoiAlign
void register_max_unpool_ops(OpRegistry& registry);   // max_unpool.cpp: MaxUnpool
void register_center_crop_pad_ops(OpRegistry& registry); // center_crop_pad.cpp: CenterCropPad
void register_det_ops(OpRegistry& registry);          // det.cpp: Det
void register_topk_ops(OpRegistry& registry);         // topk.cpp: TopK
void register_cumulative_ops(OpRegistry& registry);   // cumulative.cpp: CumSum, CumProd
void register_select_values_ops(OpRegistry& registry); // select_values.cpp: Compress, NonZero, Unique
void register_reverse_sequence_ops(OpRegistry& registry); // reverse_sequence.cpp: ReverseSequence
void register_rnn_ops(OpRegistry& registry);          // rnn.cpp, rnn_cells.cpp: LSTM, GRU, RNN
void register_attention_ops(OpRegistry& registry);    // attention.cpp: Attention
void register_rotary_embedding_ops(OpRegistry& registry);  // rotary_embedding.cpp: RotaryEmbedding
void register_dft_ops(OpRegistry& registry);          // dft.cpp: DFT, STFT
void register_signal_window_ops(OpRegistry& registry);// signal_windows.cpp: Hann-, Hamming-, BlackmanWindow, MelWeightMatrix
void register_bitcast_ops(OpRegistry& registry);      // bitcast.cpp: BitCast

namespace {

OpRegistry build_registry() {
  OpRegistry registry;
  register_unary_ops(registry);
  register_activation_ops(registry);
  register_binary_ops(registry);
  register_bitwise_ops(registry);
  register_variadic_ops(registry);
  register_select_ops(registry);
  register_cast_ops(registry);
  register_identity_ops(registry);
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
  register_trilu_ops(registry);
  register_depth_space_ops(registry);
  register_conv_ops(registry);
  register_pool_ops(registry);
  register_normalization_ops(registry);
  register_layer_norm_ops(registry);
  register_normalization_stats_ops(registry);
  register_resize_ops(registry);
  register_matmul_ops(registry);
  register_einsum_ops(registry);
  register_reduce_ops(registry);
  register_softmax_ops(registry);
  register_non_max_suppression_ops(registry);
  register_linear_attention_ops(registry);
  register_causal_conv_ops(registry);
  register_deform_conv_ops(registry);
  register_tfidf_vectorizer_ops(registry);
  register_loss_ops(registry);
  register_grid_sample_ops(registry);
  register_col2im_ops(registry);
  register_roi_align_ops(registry);
  register_max_unpool_ops(registry);
  register_center_crop_pad_ops(registry);
  register_det_ops(registry);
  register_topk_ops(registry);
  register_cumulative_ops(registry);
  register_select_values_ops(registry);
  register_reverse_sequence_ops(registry);
  register_rnn_ops(registry);
  register_attention_ops(registry);
  register_rotary_embedding_ops(registry);
  register_dft_ops(registry);
  register_signal_window_ops(registry);
  register_bitcast_ops(registry);
  return registry;
}

}  // namespace

const OpRegistry& op_registry() {
  static const OpRegistry registry = build_registry();
  return registry;
}

}  // namespace minic
