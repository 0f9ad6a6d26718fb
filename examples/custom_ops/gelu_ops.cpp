// A plugin of custom operators: GELU and its tanh approximation in the domain com.example.
// Course module 8: docs/module8-deployment.md#6-custom-operators.
//
//   com.example.Gelu(X)            Y = 0.5 X (1 + erf(X / sqrt(2)))
//   com.example.FastGelu(X, bias)  Z = X + bias (bias optional, 1-D, along the last axis)
//                                  Y = 0.5 Z (1 + tanh(sqrt(2 / pi) (Z + 0.044715 Z^3)))
//
// The same formulas as ONNX Runtime's contrib ops com.microsoft.Gelu and FastGelu, so a
// model can be checked against ONNX Runtime running its own (tests/models/custom_op_ort.py).
// Each op brings what include/minic/ops/custom_op.h asks for: a shape rule, a reference
// kernel (in double, the oracle) and a compute rule (the formula on loop IR expressions),
// with which it fuses with its neighbours and compiles like a built-in op; and a CUDA
// kernel written by hand, which a CUDA target runs as given, as ONNX Runtime runs its
// contrib ops' own CUDA kernels. The build makes
// it a shared library (examples/custom_ops/CMakeLists.txt), loaded with
//
//   minic run model.onnx --custom-ops build/examples/custom_ops/libminic_gelu_ops.so
//
// It uses only minic's public headers; its references to minic's functions are resolved
// against the program that loads it (the minic executable, or the Python module).
#include "minic/ops/compute.h"
#include "minic/ops/custom_op.h"

#include <cmath>
#include <numbers>

namespace {

using minic::ComputeContext;
using minic::ComputeTensor;
using minic::DType;
using minic::Indices;
using minic::KernelContext;
using minic::ShapeContext;
using minic::Tensor;
using minic::TensorType;
namespace loop = minic::loop;

// X is f32; a bias, where given, is f32 with one value per element of X's last axis.
std::vector<TensorType> gelu_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::f32) ctx.fail("X is {}, not f32", minic::type_string(x));
  if (ctx.num_inputs() > 1 && ctx.has_input(1)) {
    const TensorType& bias = ctx.input_type(1);
    if (bias.dtype != DType::f32 || bias.rank() != 1 || x.rank() == 0 ||
        bias.shape[0] != x.shape.back()) {
      ctx.fail("bias is {}; it must be f32[{}], one value per element of X's last axis",
               minic::type_string(bias), x.rank() == 0 ? 0 : x.shape.back());
    }
  }
  return {x};
}

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); }
double fast_gelu(double z) {
  return 0.5 * z * (1.0 + std::tanh(kSqrt2OverPi * (z + kCubic * z * z * z)));
}

// The reference kernel of either op: `formula` on X (+ bias), element by element.
std::vector<Tensor> gelu_kernel(const KernelContext& ctx, double (*formula)(double)) {
  const Tensor& x = ctx.input(0);
  const Tensor* bias = ctx.num_inputs() > 1 && ctx.has_input(1) ? &ctx.input(1) : nullptr;
  Tensor y = ctx.make_output(0);
  std::span<const float> in = x.values<float>();
  std::span<float> out = y.values<float>();
  const size_t row = x.rank() == 0 ? 1 : static_cast<size_t>(x.shape().back());
  for (size_t i = 0; i < in.size(); ++i) {
    double z = in[i] + (bias ? bias->values<float>()[i % row] : 0.0f);
    out[i] = static_cast<float>(formula(z));
  }
  return minic::single_output(std::move(y));
}

// The element Z of X (+ bias) at indices `i`, as a loop IR expression.
loop::Expr biased(const ComputeContext& ctx, const Indices& i) {
  loop::Expr z = ctx.input(0)(i);
  if (ctx.num_inputs() > 1 && ctx.has_input(1)) z = z + ctx.input(1)({i.back()});
  return z;
}

loop::Expr f32(double value) { return minic::constant(DType::f32, value); }

std::vector<ComputeTensor> gelu_compute(const ComputeContext& ctx) {
  return {ctx.compute("gelu", ctx.output_type(0), [&](const Indices& i) {
    loop::Expr x = biased(ctx, i);
    return f32(0.5) * x * (f32(1.0) + minic::call("erf", {x * f32(1.0 / std::numbers::sqrt2)}));
  })};
}

std::vector<ComputeTensor> fast_gelu_compute(const ComputeContext& ctx) {
  return {ctx.compute("fast_gelu", ctx.output_type(0), [&](const Indices& i) {
    loop::Expr z = biased(ctx, i);
    loop::Expr inner = f32(kSqrt2OverPi) * (z + f32(kCubic) * z * z * z);
    return f32(0.5) * z * (f32(1.0) + minic::call("tanh", {inner}));
  })};
}

// The hand-written CUDA kernels: one thread per element (a grid-stride loop, so that any
// grid covers any n), the formulas in float. NVRTC compiles them without headers: the
// program's prelude gives int64_t, and erff and tanhf are CUDA's.
constexpr const char* kGeluCuda = R"(
extern "C" __global__ void example_gelu_f32(const float* x, float* y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}
)";

constexpr const char* kFastGeluCuda = R"(
__device__ __forceinline__ float example_fast_gelu(float z) {
  const float inner = 0.7978845608028654f * (z + 0.044715f * z * z * z);
  return 0.5f * z * (1.0f + tanhf(inner));
}

extern "C" __global__ void example_fast_gelu_f32(const float* x, float* y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = example_fast_gelu(x[i]);
  }
}

extern "C" __global__ void example_fast_gelu_bias_f32(const float* x, const float* bias,
                                                      float* y, int64_t n, int64_t row) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = example_fast_gelu(x[i] + bias[i % row]);
  }
}
)";

// FastGelu's launch: the elementwise one, of the kernel with a bias (and the row length
// after n) where the node has one.
minic::CudaKernelSource fast_gelu_cuda() {
  minic::CudaKernelSource cuda =
      minic::elementwise_cuda_kernel(kFastGeluCuda, "example_fast_gelu_f32");
  cuda.launch = [plain = cuda.launch](const minic::NodeContext& ctx) {
    minic::CudaKernelLaunch launch = plain(ctx);
    if (ctx.num_inputs() > 1 && ctx.has_input(1)) {
      const minic::Node& node = ctx.node();
      if (node.inputs()[0] == node.inputs()[1]) {
        ctx.fail("X and bias are one value; the CUDA kernel takes them as two buffers");
      }
      launch.kernel = "example_fast_gelu_bias_f32";
      launch.scalars.push_back(node.inputs()[1]->type.shape[0]);
    }
    return launch;
  };
  return cuda;
}

minic::OpSchema gelu_schema() {
  minic::OpSchema schema;
  schema.name = "com.example.Gelu";
  schema.fusion = minic::FusionKind::elementwise;
  schema.shape_rule = gelu_shape;
  schema.kernel = [](const KernelContext& ctx) { return gelu_kernel(ctx, gelu); };
  schema.compute = gelu_compute;
  schema.cuda = minic::elementwise_cuda_kernel(kGeluCuda, "example_gelu_f32");
  return schema;
}

minic::OpSchema fast_gelu_schema() {
  minic::OpSchema schema;
  schema.name = "com.example.FastGelu";
  schema.max_inputs = 2;
  schema.fusion = minic::FusionKind::broadcast;  // the bias broadcasts along the rows
  schema.shape_rule = gelu_shape;
  schema.kernel = [](const KernelContext& ctx) { return gelu_kernel(ctx, fast_gelu); };
  schema.compute = fast_gelu_compute;
  schema.cuda = fast_gelu_cuda();
  return schema;
}

}  // namespace

MINIC_REGISTER_CUSTOM_OP(gelu_schema);
MINIC_REGISTER_CUSTOM_OP(fast_gelu_schema);
