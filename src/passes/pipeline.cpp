// minic's default pipelines, in order: the graph passes, then the loop passes. Course
// modules 2 and 4.
//
// Read top to bottom. The graph pipeline cleans up what exporters leave behind, folds what
// is known before running, recognises decomposed ops, then groups what remains into fused
// kernels. The loop pipeline takes each kernel, after its schedule, to what code generation
// wants: plain loops, small staging buffers, one-dimensional memory, vector code, and
// on the GPU the barriers between threads that share memory.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/passes/pipeline.h"

namespace minic {

const std::vector<std::string>& default_pipeline() {
  static const std::vector<std::string> pipeline = {
      "simplify",          // Identity, inference Dropout, x*1, x+0, Reshape∘Reshape, ...
      "qdq-to-integer",    // Conv/MatMul on dequantised int8 → the integer op, then DQ
      "cancel-qdq",        // Reshape/Transpose on the integers; Q(DQ(q)) → q
      "expand-recurrent",  // LSTM, GRU, RNN → projections and a Scan over their cell
      "fold-constants",    // ConstantOfShape, Shape of static shapes, shape arithmetic
      "simplify",          // rules that apply once shapes and constants are folded
      "lookup-tables",     // 8-bit → 8-bit elementwise chains → a 256-entry table
      "cse",               // one node for each distinct computation
      "fold-batchnorm",    // BatchNormalization into the Conv/Gemm before it
      "fold-conv-affine",  // per-channel Mul/Add into the Conv before it
      "fuse-gelu",         // x * 0.5 * (1 + erf(x / sqrt 2)) → Gelu
      "fuse-layernorm",    // mean/variance/normalise chains → LayerNormalization
      "fuse-attention",    // CPU: MatMul, scale, mask, Softmax, MatMul → FusedAttention
      "fuse-matmul-bias",  // MatMul + Add(bias) → Gemm
      "fold-constants",    // the folded weights of the passes above
      "pretranspose-weights",  // Gemm's constant B stored [K, N]: rows read in order
      "blocked-layout",    // CPU: convolution chains in blocks of channels (NCHWc)
      "winograd",          // CPU: 3x3 stride-1 convolutions by Winograd's minimal filtering
      "pack-int8-weights", // CPU: int8 weights in VNNI's words, packed at compile time
      "pack-matmul-weights",  // CPU: a constant B in the panels the GEMM tile reads
      "dce",               // whatever is no longer used
      "fuse-ops",          // fusion groups: each becomes one kernel
  };
  return pipeline;
}

namespace loop {

const std::vector<std::string>& default_loop_pipeline() {
  static const std::vector<std::string> pipeline = {
      "lower-blocks",     // blocks → plain loops, ifs and allocations
      "compact-buffers",  // staging buffers shrunk to their tiles: accumulators in registers
      "partition-loops",  // split tails cut off: the register tiles free of guards
      "unroll-loops",     // unrolled loops → copies of their body
      "flatten-buffers",  // buffers one-dimensional: (p / W) * W + p % W, to simplify to p
      "simplify",         // index arithmetic simplified with the loop bounds
      "vectorize-loops",  // vectorized loops → vector code (ramp, broadcast)
      "insert-barriers",  // GPU: a barrier where threads share a shared buffer's elements
  };
  return pipeline;
}

}  // namespace loop
}  // namespace minic
