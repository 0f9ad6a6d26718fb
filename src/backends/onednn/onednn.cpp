// oneDNN as an external back end: convolutions and GEMMs by Intel's library. Course
// module 6 (bring your own codegen).
//
// The back end claims, on a CPU target, the nodes oneDNN has a primitive for, with the
// epilogue as the primitive's post-op:
//   - a Conv of one 2-D image batch (NCHW, f32; any strides, pads, dilations and groups),
//     with its bias, alone or fused with what follows it: an Add of a tensor of its output's
//     shape (a residual: the sum post-op, which adds to what the output holds, so the
//     residual is copied there first) and a Relu;
//   - a MatMul or Gemm of 2-D f32 matrices (alpha = beta = 1, A not transposed, a bias of
//     one value per column), alone or fused with a Relu after it.
// It leaves out the graph passes that would turn its convolutions into minic's own forms
// (blocked-layout, winograd): oneDNN chooses its own layouts.
//
// Compiling a node makes a oneDNN primitive for its shapes, letting the library pick the
// memory layout it runs fastest in (format_tag::any), and a call that reorders the input
// from NCHW into that layout, runs the primitive and reorders the result back; constant
// weights are reordered once, at compile time. oneDNN runs on its own OpenMP threads
// (OMP_NUM_THREADS sets how many), not on the model's thread pool.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#include "minic/backends/backend.h"

#include "minic/support/error.h"

#include <dnnl.hpp>

#include <memory>
#include <mutex>
#include <optional>

namespace minic {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

memory::dims dims_of(const Value* value) {
  return memory::dims(value->type.shape.begin(), value->type.shape.end());
}

std::vector<int64_t> ints(const Node& node, const char* name, std::vector<int64_t> fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end()) return fallback;
  if (const auto* values = std::get_if<std::vector<int64_t>>(&it->second)) return *values;
  if (const auto* value = std::get_if<int64_t>(&it->second)) return {*value};
  return fallback;
}

// What a claimed node asks of oneDNN: the primitive's op, its operands' kernel argument
// indices and the Relu after it.
struct Job {
  const Node* op = nullptr;  // the Conv, MatMul or Gemm
  bool relu = false;
  int src = -1, weights = -1, bias = -1, dst = -1;
  int residual = -1;  // a Conv's Add: the other operand
  const Value* weights_value = nullptr;
  std::optional<PlainGemm> gemm;  // a MatMul's or Gemm's form
};

// The node's job if oneDNN takes it, else nullopt.
std::optional<Job> job_of(const Node& node) {
  const std::vector<const Node*> ops = body_ops(node);
  if (ops.empty() || ops.size() > 3 || node.outputs().size() != 1) return std::nullopt;
  Job job;
  job.op = ops[0];
  const Node& op = *ops[0];
  const Value* bias = op.inputs().size() > 2 ? op.input(2) : nullptr;
  if (op.op == "Conv") {
    if (!is_f32(op.input(0), 4) || !is_f32(op.input(1), 4)) return std::nullopt;
    auto pad = op.attributes.find("auto_pad");
    if (pad != op.attributes.end() && std::get<std::string>(pad->second) != "NOTSET") {
      return std::nullopt;
    }
    if (bias && !is_f32(bias, 1)) return std::nullopt;
  } else if (std::optional<PlainGemm> gemm = plain_gemm(op)) {
    job.gemm = *gemm;
    bias = gemm->bias;
  } else {
    return std::nullopt;
  }
  const Value* result = op.output(0);
  size_t next = 1;
  if (op.op == "Conv" && next < ops.size() && ops[next]->op == "Add") {
    const Node& add = *ops[next++];
    const Value* other = add.input(0) == result ? add.input(1) : add.input(0);
    if (other == result || other->type != result->type) return std::nullopt;
    if (add.input(0) != result && add.input(1) != result) return std::nullopt;
    job.residual = argument_index(node, other);
    if (job.residual < 0) return std::nullopt;
    result = add.output(0);
  }
  if (next < ops.size()) {
    if (ops[next]->op != "Relu" || ops[next]->input(0) != result) return std::nullopt;
    job.relu = true;
    result = ops[next++]->output(0);
  }
  if (next != ops.size()) return std::nullopt;
  job.src = argument_index(node, op.input(0));
  job.weights = argument_index(node, op.input(1));
  job.weights_value = op.input(1);
  job.bias = bias ? argument_index(node, bias) : -1;
  job.dst = argument_index(node, result);
  if (job.src < 0 || job.weights < 0 || job.dst < 0 || (bias && job.bias < 0)) return std::nullopt;
  return job;
}

// A primitive with what runs it: memory in the layouts it chose, the reorders between
// those and the caller's, and the weights already reordered where they are constant.
struct Compiled {
  dnnl::primitive primitive;
  memory::desc src_user, src_inner, weights_user, weights_inner, dst_user, dst_inner, bias;
  std::optional<memory> weights_reordered;  // constant weights, in weights_inner
  bool has_bias = false;
};

class OneDnn : public ExternalBackend {
 public:
  bool claims(const Node& node, int, const Target& target) const override {
    return target.is_cpu() && job_of(node).has_value();
  }

  runtime::KernelCall compile(const Node& node, int, const Target&) override {
    std::optional<Job> job = job_of(node);
    if (!job) fail("{}: oneDNN takes a Conv, MatMul or Gemm (with a Relu) only", node.describe());
    auto compiled = std::make_shared<Compiled>(job->gemm ? gemm(*job) : convolution(*job));
    return [this, compiled, job = *job](void** args) { run(*compiled, job, args); };
  }

  std::string describe(const Node& node, int) const override {
    std::optional<Job> job = job_of(node);
    if (!job) return "";
    return fmt::format("oneDNN {}{}{}", job->gemm ? "matmul" : "convolution",
                       job->residual >= 0 ? " with a residual (sum post-op)" : "",
                       job->relu ? (job->residual >= 0 ? " and a Relu" : " with a Relu post-op")
                                 : "");
  }

  // Its kernels read convolutions in NCHW and a matrix product's B as ONNX stores it, and
  // attention's two products stay MatMul nodes that it may take.
  std::vector<std::string> skip_passes() const override {
    return {"blocked-layout", "winograd", "pack-matmul-weights", "fuse-attention"};
  }

 private:
  // The epilogue as post-ops: the residual's sum, then the Relu.
  dnnl::primitive_attr attributes(const Job& job) const {
    dnnl::post_ops post;
    if (job.residual >= 0) post.append_sum(1.0f);
    if (job.relu) post.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);
    return attr;
  }

  Compiled convolution(const Job& job) {
    const Node& conv = *job.op;
    const Value* x = conv.input(0);
    const Value* w = conv.input(1);
    const int64_t groups = ints(conv, "group", {1})[0];
    memory::dims weights = dims_of(w);
    Compiled c;
    c.src_user = memory::desc(dims_of(x), dt::f32, tag::nchw);
    c.dst_user = memory::desc(dims_of(conv.output(0)), dt::f32, tag::nchw);
    if (groups > 1) {
      weights = {groups, weights[0] / groups, weights[1], weights[2], weights[3]};
      c.weights_user = memory::desc(weights, dt::f32, tag::goihw);
    } else {
      c.weights_user = memory::desc(weights, dt::f32, tag::oihw);
    }
    c.has_bias = job.bias >= 0;
    if (c.has_bias) c.bias = memory::desc({w->type.shape[0]}, dt::f32, tag::x);
    std::vector<int64_t> pads = ints(conv, "pads", {0, 0, 0, 0});
    std::vector<int64_t> dilations = ints(conv, "dilations", {1, 1});
    memory::dims dilates = {dilations[0] - 1, dilations[1] - 1};  // oneDNN counts the gaps
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(dims_of(x), dt::f32, tag::any), memory::desc(weights, dt::f32, tag::any),
        c.has_bias ? c.bias : memory::desc(),
        memory::desc(dims_of(conv.output(0)), dt::f32, tag::any),
        ints(conv, "strides", {1, 1}), dilates, {pads[0], pads[1]}, {pads[2], pads[3]});
    dnnl::convolution_forward::primitive_desc pd(desc, attributes(job), engine_);
    c.src_inner = pd.src_desc();
    c.weights_inner = pd.weights_desc();
    c.dst_inner = pd.dst_desc();
    c.primitive = dnnl::convolution_forward(pd);
    reorder_constant_weights(c, job);
    return c;
  }

  Compiled gemm(const Job& job) {
    const PlainGemm& gemm = *job.gemm;
    const int64_t n = gemm.n;
    const int64_t k = gemm.k;
    Compiled c;
    c.src_user = c.src_inner = memory::desc({gemm.m, k}, dt::f32, tag::ab);
    c.weights_user = memory::desc({k, n}, dt::f32, gemm.transpose_b ? tag::ba : tag::ab);
    c.dst_user = c.dst_inner = memory::desc({gemm.m, n}, dt::f32, tag::ab);
    c.has_bias = job.bias >= 0;
    if (c.has_bias) c.bias = memory::desc({1, n}, dt::f32, tag::ab);
    dnnl::matmul::desc desc(c.src_inner, memory::desc({k, n}, dt::f32, tag::any),
                            c.has_bias ? c.bias : memory::desc(), c.dst_inner);
    dnnl::matmul::primitive_desc pd(desc, attributes(job), engine_);
    c.weights_inner = pd.weights_desc();
    c.primitive = dnnl::matmul(pd);
    reorder_constant_weights(c, job);
    return c;
  }

  void reorder_constant_weights(Compiled& c, const Job& job) {
    if (!job.weights_value->is_constant()) return;
    const Tensor& weights = *job.weights_value->constant;
    memory user(c.weights_user, engine_, const_cast<std::byte*>(weights.bytes().data()));
    memory inner(c.weights_inner, engine_);
    dnnl::stream stream(engine_);
    dnnl::reorder(user, inner).execute(stream, user, inner);
    stream.wait();
    c.weights_reordered = inner;
  }

  // `from` (in `from_desc`, at `data`) as memory in `to_desc`: the same memory where the
  // layouts agree, else a reorder into fresh memory.
  memory in_layout(void* data, const memory::desc& from_desc, const memory::desc& to_desc,
                   dnnl::stream& stream) const {
    memory user(from_desc, engine_, data);
    if (from_desc == to_desc) return user;
    memory inner(to_desc, engine_);
    dnnl::reorder(user, inner).execute(stream, user, inner);
    return inner;
  }

  void run(const Compiled& c, const Job& job, void** args) const {
    dnnl::stream stream(engine_);  // one a call: steps may run side by side
    memory src = in_layout(args[job.src], c.src_user, c.src_inner, stream);
    memory weights = c.weights_reordered
                         ? *c.weights_reordered
                         : in_layout(args[job.weights], c.weights_user, c.weights_inner, stream);
    memory dst_user(c.dst_user, engine_, args[job.dst]);
    memory dst = c.dst_user == c.dst_inner ? dst_user : memory(c.dst_inner, engine_);
    if (job.residual >= 0) {  // the sum post-op adds to what dst holds: the residual
      memory residual(c.dst_user, engine_, args[job.residual]);
      dnnl::reorder(residual, dst).execute(stream, residual, dst);
    }
    std::unordered_map<int, memory> operands = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (c.has_bias) operands[DNNL_ARG_BIAS] = memory(c.bias, engine_, args[job.bias]);
    c.primitive.execute(stream, operands);
    if (!(c.dst_user == c.dst_inner)) dnnl::reorder(dst, dst_user).execute(stream, dst, dst_user);
    stream.wait();
  }

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
};

}  // namespace

MINIC_REGISTER_BACKEND("onednn", OneDnn,
                       "Intel's oneDNN library: Conv, MatMul and Gemm (+ bias, Relu) as its "
                       "primitives");

}  // namespace minic
