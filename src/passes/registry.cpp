// Every built-in graph pass, registered by name: one line a pass. Course module 2.
//
// A new pass is one file in src/passes/graph/, its header, and one line here; it then runs
// alone with `minic opt MODEL --passes=NAME`, without touching the default pipeline.
#include "minic/passes/pass_manager.h"

#include "minic/ops/shape_inference.h"
#include "minic/passes/graph/simplify.h"
#include "minic/passes/graph/fold_constants.h"
#include "minic/passes/graph/dce.h"
#include "minic/passes/graph/cse.h"
#include "minic/passes/graph/fold_batchnorm.h"
#include "minic/passes/graph/fold_conv_affine.h"
#include "minic/passes/graph/fuse_gelu.h"
#include "minic/passes/graph/fuse_layernorm.h"
#include "minic/passes/graph/fuse_matmul_bias.h"
#include "minic/passes/graph/fuse_ops.h"
#include "minic/passes/graph/pretranspose_weights.h"

namespace minic {

void register_builtin_passes() {
  PassRegistry::add("simplify", simplify,
                    "algebraic simplification by a table of rewrite rules (x*1 → x, ...)");
  PassRegistry::add("fold-constants", fold_constants,
                    "evaluate nodes whose inputs are all constant, through the reference kernels");
  PassRegistry::add("dce", eliminate_dead_code,
                    "remove nodes and constants whose results are never used");
  PassRegistry::add("cse", eliminate_common_subexpressions,
                    "merge nodes that compute the same op on the same inputs");
  PassRegistry::add("fold-batchnorm", fold_batchnorm,
                    "fold inference BatchNormalization into the Conv or Gemm before it");
  PassRegistry::add("fold-conv-affine", fold_conv_affine,
                    "fold a Mul or Add by a per-channel constant into the Conv before it");
  PassRegistry::add("fuse-gelu", fuse_gelu,
                    "replace the Erf- and Tanh-based GELU subgraphs by one Gelu");
  PassRegistry::add("fuse-layernorm", fuse_layernorm,
                    "replace ReduceMean/Sub/Pow/Sqrt/Div chains by one LayerNormalization");
  PassRegistry::add("fuse-matmul-bias", fuse_matmul_bias,
                    "merge MatMul followed by Add of a bias into one Gemm");
  PassRegistry::add("pretranspose-weights", pretranspose_weights,
                    "store a Gemm's constant B transposed once, so that transB = 0");
  PassRegistry::add("fuse-ops", fuse_operators,
                    "group nodes into fused kernels (fusion kinds and post-dominators)");
  PassRegistry::add("infer-shapes", [](Graph& graph) { infer_shapes(graph); },
                    "re-run shape and type inference over the whole graph");
}

}  // namespace minic
