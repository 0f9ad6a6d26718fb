// Exercise m3-rms-norm: the compute rule of RMSNormalization. Course module 3.
//
// exercises/m3-rms-norm/README.md gives the task; this file is where it is done. The rule
// is registered for the op already (the last line), so minic lowers every
// RMSNormalization node through it: as given, it refuses (ctx.no_rule), minic runs the
// node on its reference kernel (src/ops/normalization_stats.cpp), and the exercise's
// tests fail.
//
//   Y = X / sqrt(mean over the axes from `axis` on of X^2 + epsilon) * Scale
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "minic/ops/compute.h"

namespace minic {
namespace {

std::vector<ComputeTensor> rms_norm_compute(const ComputeContext& ctx) {
  // The rule goes here: read X and Scale (ctx.input), the attributes axis and epsilon
  // (ctx.get_int, ctx.get_float), and return Y's stages (ctx.reduce, ctx.compute).
  ctx.no_rule("its compute rule is exercise m3-rms-norm's, not written yet");
}

}  // namespace

MINIC_REGISTER_COMPUTE_RULE("RMSNormalization", rms_norm_compute);

}  // namespace minic
