// minic's default graph pipeline, in order. Course module 2.
//
// Read top to bottom: clean up what exporters leave behind, fold what is known before
// running, recognise decomposed ops, then group what remains into fused kernels.
#include "minic/passes/pass_manager.h"

namespace minic {

const std::vector<std::string>& default_pipeline() {
  static const std::vector<std::string> pipeline = {
      "simplify",          // Identity, inference Dropout, x*1, x+0, Reshape∘Reshape, ...
      "fold-constants",    // ConstantOfShape, Shape of static shapes, shape arithmetic
      "simplify",          // rules that apply once shapes and constants are folded
      "cse",               // one node for each distinct computation
      "fold-batchnorm",    // BatchNormalization into the Conv/Gemm before it
      "fold-conv-affine",  // per-channel Mul/Add into the Conv before it
      "fuse-gelu",         // x * 0.5 * (1 + erf(x / sqrt 2)) → Gelu
      "fuse-layernorm",    // mean/variance/normalise chains → LayerNormalization
      "fuse-matmul-bias",  // MatMul + Add(bias) → Gemm
      "fold-constants",    // the folded weights of the passes above
      "pretranspose-weights",  // Gemm's constant B stored [K, N]: rows read in order
      "dce",               // whatever is no longer used
      "fuse-ops",          // fusion groups: each becomes one kernel
  };
  return pipeline;
}

}  // namespace minic
