// compile_model: the pipeline from an imported graph to a runnable model, as one list of
// calls (the steps of include/minic/driver/compile.h), one function per step. Course
// module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "minic/driver/compile.h"

#include "compiled_bodies.h"
#include "cuda_code.h"
#include "execution_plan.h"
#include "shared_library.h"
#include "minic/autotune/database.h"
#include "minic/autotune/task.h"
#include "minic/codegen/llvm.h"
#include "minic/lower/lower.h"
#include "minic/ops/custom_op.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/cuda_driver.h"
#include "minic/runtime/device.h"
#include "minic/runtime/thread_pool.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/schedule/trace.h"
#include "minic/support/error.h"

#include <chrono>
#include <optional>
#include <set>

namespace minic {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The kernels of a graph: one kernel per node that lowers, each named uniquely, and one
// function per workload: kernels of one workload (the same loops over buffers of the same
// shapes, as the tuning database keys them: autotune::workload_key) share the function
// of the first of them, which is scheduled and compiled once. ResNet-50's 58 kernels are
// 33 functions.
struct LoweredKernels {
  loop::LoopModule module;                         // the functions, in graph order
  std::map<const Node*, std::string> kernel_of;    // the others run their reference kernel
  std::map<std::string, std::string> function_of;  // kernel name → its function's name
  std::vector<HandWrittenKernel> hand_written;     // not lowered: their ops' CUDA kernels
};

// What the profile and the compile summary call the steps that run a custom op's own CUDA
// kernel (as they name an external back end).
constexpr const char* kHandWritten = "custom CUDA";

// Step 2: lower every node (lower_graph). A node it skips -- an op without a compute rule,
// or a form of one that its rule does not cover (MaxPool's Indices output, a storage-only
// type: NoComputeRule) -- runs its reference kernel; every other node has the kernel
// lower_graph gave it, in graph order, whose workload's first kernel is its function.
// Not lowered: the nodes an external back end claimed, and on a CUDA target those whose op
// brings its own CUDA kernel (each its own function, of its node's kernel name).
LoweredKernels lower_kernels(const Graph& graph, const Target& target,
                             const Partition& partition) {
  LoweredKernels kernels;
  std::set<const Node*> external;
  for (const auto& [node, backend] : partition.claimed) external.insert(node);
  for (const Node* node : graph.nodes()) {
    if (!runs_own_cuda_kernel(*node, target) || external.count(node)) continue;
    external.insert(node);
    const std::string name = kernel_name(*node);
    kernels.kernel_of[node] = name;
    kernels.function_of[name] = name;
    kernels.hand_written.push_back({node, name});
  }
  std::vector<const Node*> skipped;
  loop::LoopModule lowered = lower_graph(graph, target, &skipped, external);
  const std::set<const Node*> reference(skipped.begin(), skipped.end());
  std::map<std::string, std::string> function_of_workload;
  size_t next = 0;
  for (const Node* node : graph.nodes()) {
    if (reference.count(node) || external.count(node)) continue;
    loop::PrimFunc& func = lowered.functions[next++];
    kernels.kernel_of[node] = func.name;
    auto [first, added] = function_of_workload.emplace(autotune::workload_key(func), func.name);
    kernels.function_of[func.name] = first->second;
    if (added) kernels.module.functions.push_back(std::move(func));
  }
  return kernels;
}

// Step 3 for one kernel: the schedule of its workload's best record for `target`
// (Database::best: the fastest finalist, else the fastest record) when there is one,
// else the default rules. A record whose trace does not replay
// (TraceError: written by another version of minic, or edited by hand) is counted and
// passed over, so that a stale database never stops a model from compiling.
loop::PrimFunc schedule_kernel(loop::PrimFunc func, const autotune::Database* records,
                               const Target& target, CompileStats& stats) {
  if (records) {
    std::optional<autotune::TuningRecord> best =
        records->best(autotune::workload_key(func), target);
    if (best) {
      try {
        schedule::Schedule schedule(func);
        schedule.replay(schedule::parse_trace(best->trace, "the record of " + func.name));
        ++stats.tuned_kernels;
        return schedule.func();
      } catch (const schedule::TraceError&) {
        ++stats.failed_records;
      }
    }
  }
  return schedule::default_schedule(std::move(func), target);
}

// Step 3: schedule every kernel, by its record (options.records, read once) or the
// default rules; with `options.schedule` off, the kernels stay as lowered.
void schedule_kernels(loop::LoopModule& kernels, const CompileOptions& options,
                      CompileStats& stats) {
  if (!options.schedule) return;
  std::optional<autotune::Database> records;
  if (!options.records.empty()) records = autotune::Database::load(options.records);
  stats.records = options.records;
  for (loop::PrimFunc& func : kernels.functions) {
    func = schedule_kernel(std::move(func), records ? &*records : nullptr, options.target,
                           stats);
  }
}

// Step 5: the kernels as native code, made by LLVM or loaded from the kernel library
// that `minic compile` wrote (options.kernel_library).
std::unique_ptr<codegen::CompiledModule> generate_code(const loop::LoopModule& kernels,
                                                       const CompileOptions& options,
                                                       CompileStats& stats) {
  auto start = Clock::now();
  std::unique_ptr<codegen::CompiledModule> code;
  if (options.kernel_library.empty()) {
    codegen::LlvmOptions llvm_options;
    llvm_options.target = options.target;
    llvm_options.opt_level = options.opt_level;
    llvm_options.fast_math = options.fast_math;
    // Only the arena is 64-byte aligned; inputs, outputs and constants are Tensors, whose
    // storage has the allocator's alignment. So the code may assume one element's
    // alignment.
    llvm_options.param_alignment = 0;
    llvm_options.parallel_for = &minic_parallel_for;  // on the device's pool (device.h)
    code = codegen::compile_llvm(kernels, llvm_options);
  } else {
    std::vector<std::string> kernel_names;
    for (const loop::PrimFunc& func : kernels.functions) kernel_names.push_back(func.name);
    code = load_kernel_library(options.kernel_library, kernel_names);
  }
  stats.codegen_ms = ms_since(start);
  return code;
}

// The calls of the compiled kernels, by name: LLVM's entry points, or for a CUDA target the
// emulated kernels (a kernel the CUDA back end refused has none: it runs its reference
// kernel).
using KernelCalls = std::map<std::string, runtime::KernelCall>;

KernelCalls llvm_calls(const codegen::CompiledModule& code) {
  KernelCalls calls;
  for (const std::string& name : code.function_names()) calls[name] = code.find(name);
  return calls;
}

// On `gpu` (its module loaded), or emulated where it is null. A kernel the back end refused
// has no call: its node runs its reference kernel. Nor has, emulated, a custom op's
// hand-written kernel (the interpreter runs loop IR, not CUDA C). Where there is no driver
// and no emulation the model cannot run (CompiledModel says why), but its plan is still
// the GPU's, to describe: the hand-written kernels' calls are never made.
KernelCalls cuda_calls(const LoweredKernels& kernels, const CudaProgram& program,
                       runtime::CudaDevice* gpu, bool emulate) {
  KernelCalls calls;
  if (gpu) {
    for (const codegen::CudaFunction& function : program.module.functions) {
      calls[function.name] = gpu_kernel_call(*gpu, function);
    }
    return calls;
  }
  for (const loop::PrimFunc& func : kernels.module.functions) {
    if (!program.refused.count(func.name)) calls[func.name] = emulated_kernel_call(func);
  }
  for (const HandWrittenKernel& kernel : kernels.hand_written) {
    if (emulate || program.refused.count(kernel.function)) continue;
    calls[kernel.function] = [](void**) { internal_fail("a CUDA kernel called without a GPU"); };
  }
  return calls;
}

// GPU 0 with the program's cubin loaded (its PTX where the cubin is for another
// architecture), or null where there is no CUDA driver.
std::unique_ptr<runtime::CudaDevice> open_gpu(const CudaProgram& program) {
  if (!cuda_driver_version()) return nullptr;
  std::unique_ptr<runtime::CudaDevice> gpu = runtime::CudaDevice::open();
  try {
    gpu->load_module(program.binary->cubin);
  } catch (const Error&) {
    gpu->load_module(program.binary->ptx);
  }
  return gpu;
}

// Step 6: the execution plan, a step per node: the call of the external back end that
// claimed it, its compiled kernel, or its reference kernel where it did not lower (or its
// kernel has no call).
runtime::ExecutionPlan plan_execution(const Graph& graph, const LoweredKernels& kernels,
                                      const KernelCalls& calls, Partition& partition,
                                      const Target& target, CompileStats& stats,
                                      std::shared_ptr<BodyEvaluator> bodies = nullptr) {
  std::map<const Node*, runtime::PlanStep> steps;
  std::set<std::string> reference_ops;
  for (const Node* node : graph.nodes()) {
    runtime::PlanStep step;
    step.op = node->op;
    if (auto claimed = partition.claimed.find(node); claimed != partition.claimed.end()) {
      step.kernel = kernel_name(*node);
      step.backend = partition.names[claimed->second];
      step.call = partition.backends[claimed->second]->compile(*node, graph.opset, target);
      ++stats.backend_kernels[step.backend];
      steps[node] = std::move(step);
      continue;
    }
    auto it = kernels.kernel_of.find(node);
    auto call = it == kernels.kernel_of.end() ? calls.end()
                                              : calls.find(kernels.function_of.at(it->second));
    if (call != calls.end()) {
      step.kernel = it->second;
      step.function = call->first;
      step.call = call->second;
      if (runs_own_cuda_kernel(*node, target)) {
        step.backend = kHandWritten;
        ++stats.backend_kernels[step.backend];
      } else {
        ++stats.compiled_kernels;
      }
    } else {
      step.kernel = kernel_name(*node);
      step.compiled = false;
      step.call = reference_kernel_call(*node, graph.opset, bodies);
      reference_ops.insert(node->op);
    }
    steps[node] = std::move(step);
  }
  runtime::ExecutionPlan plan = build_execution_plan(graph, steps);
  stats.kernels = static_cast<int>(plan.steps.size());
  stats.functions = static_cast<int>(kernels.module.functions.size());
  stats.reference_ops.assign(reference_ops.begin(), reference_ops.end());
  return plan;
}

}  // namespace

CompiledModel::CompiledModel(Graph graph, loop::LoopModule kernels,
                             std::unique_ptr<codegen::CompiledModule> code,
                             runtime::ExecutionPlan plan, std::unique_ptr<runtime::Device> device,
                             CompileStats stats, Target target)
    : graph_(std::move(graph)),
      kernels_(std::move(kernels)),
      code_(std::move(code)),
      executor_(std::move(plan), std::move(device)),
      stats_(std::move(stats)),
      target_(std::move(target)) {}

CompiledModel::~CompiledModel() = default;

void CompiledModel::set_cuda(CudaProgram program, std::string cannot_run) {
  cuda_ = std::move(program);
  cannot_run_ = std::move(cannot_run);
}

int CompiledModel::compiled_bodies() const { return bodies_ ? bodies_->compiled() : 0; }

std::vector<std::string> CompiledModel::backend_reports() const {
  std::vector<std::string> reports;
  if (!backends_) return reports;
  for (const std::unique_ptr<ExternalBackend>& backend : backends_->backends) {
    std::string report = backend->report();
    if (!report.empty()) reports.push_back(std::move(report));
  }
  return reports;
}

const codegen::CompiledModule& CompiledModel::code() const {
  if (!code_) fail("the model was compiled for {}: it has CUDA code, not LLVM code", target_.str());
  return *code_;
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs,
                                       std::vector<runtime::StepProfile>* profile) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& input : inputs) pointers.push_back(&input);
  return run_in_place(pointers, profile);
}

std::vector<Tensor> CompiledModel::run_in_place(std::span<const Tensor* const> inputs,
                                                std::vector<runtime::StepProfile>* profile) {
  std::vector<runtime::TensorView> views;
  for (const Tensor* input : inputs) views.push_back({&input->type(), input->bytes().data()});
  return run_views(views, profile);
}

std::vector<Tensor> CompiledModel::run_views(std::span<const runtime::TensorView> inputs,
                                             std::vector<runtime::StepProfile>* profile) {
  if (!cannot_run_.empty()) fail("{}", cannot_run_);
  if (!checked_target_ && target_.is_cpu()) {
    codegen::check_runs_here(target_);
    checked_target_ = true;
  }
  return executor_.run_views(inputs, profile);
}

namespace {

// Step 5 for a CUDA target, then step 6 and the model: the CUDA program (compiled by
// NVRTC unless emulated), the plan, and the device: GPU 0 with the cubin loaded, or the
// host for the emulated kernels (or, with no CUDA driver, a model that says it cannot run).
std::unique_ptr<CompiledModel> finish_cuda_model(Graph graph, LoweredKernels kernels,
                                                 std::shared_ptr<Partition> partition,
                                                 const CompileOptions& options,
                                                 CompileStats& stats, Clock::time_point start) {
  auto codegen_start = Clock::now();
  CudaProgram program = generate_cuda_code(kernels.module, kernels.hand_written, graph.opset,
                                           options.target, !options.emulate);
  stats.codegen_ms = ms_since(codegen_start);
  std::unique_ptr<runtime::CudaDevice> gpu = options.emulate ? nullptr : open_gpu(program);
  runtime::ExecutionPlan plan =
      plan_execution(graph, kernels, cuda_calls(kernels, program, gpu.get(), options.emulate),
                     *partition, options.target, stats);
  std::string cannot_run;
  if (!options.emulate && !gpu) {
    cannot_run = fmt::format("target {}: no CUDA driver (libcuda.so.1) on this machine, so the "
                             "kernels cannot run here; `minic compile` writes them, and "
                             "--emulate runs their GPU schedules on the loop interpreter",
                             options.target.str());
  }
  std::unique_ptr<runtime::Device> device;
  if (gpu) {
    device = std::move(gpu);
  } else {
    device = std::make_unique<runtime::HostDevice>(options.threads);
  }
  stats.compile_ms = ms_since(start);
  auto model = std::make_unique<CompiledModel>(std::move(graph), std::move(kernels.module),
                                               nullptr, std::move(plan), std::move(device),
                                               std::move(stats), options.target);
  model->set_cuda(std::move(program), std::move(cannot_run));
  model->set_backends(std::move(partition));
  return model;
}

}  // namespace

std::unique_ptr<CompiledModel> compile_model(Graph graph, const CompileOptions& options) {
  auto start = Clock::now();
  if (options.emulate && !options.target.is_cuda()) {
    fail("--emulate runs the GPU schedules of a CUDA target; target {} is a CPU",
         options.target.str());
  }
  CompileStats stats;
  auto partition = std::make_shared<Partition>(options.backends);        // external back ends
  run_passes(graph, partition->passes_to_run(options.graph_passes),      // 1. graph passes
             options.target);
  partition->claim(graph, options.target);                               //    their nodes
  LoweredKernels kernels = lower_kernels(graph, options.target, *partition);  // 2. lowering
  schedule_kernels(kernels.module, options, stats);                      // 3. scheduling
  run_passes(kernels.module, options.loop_passes, options.loop_pass_options);  // 4. loop passes
  if (options.target.is_cuda()) {                                        // 5-6. for the GPU
    return finish_cuda_model(std::move(graph), std::move(kernels), std::move(partition),
                             options, stats, start);
  }
  auto code = generate_code(kernels.module, options, stats);             // 5. code generation
  // 6. (The bodies of control-flow nodes compile when they first run, for the types they
  // are given then.)
  auto bodies = std::make_shared<CompiledBodies>(options);
  runtime::ExecutionPlan plan = plan_execution(graph, kernels, llvm_calls(*code), *partition,
                                               options.target, stats, bodies);
  stats.compile_ms = ms_since(start);
  auto model = std::make_unique<CompiledModel>(
      std::move(graph), std::move(kernels.module), std::move(code), std::move(plan),
      std::make_unique<runtime::HostDevice>(options.threads), std::move(stats), options.target);
  model->set_bodies(std::move(bodies));
  model->set_backends(std::move(partition));
  return model;
}

}  // namespace minic
