// Compiling a model: the whole pipeline as one list of calls.
//
// Course module 1 (putting it together). compile_model takes an imported graph to a
// model that runs natively, one call per step (src/driver/compile_model.cpp):
//
//   1. graph passes     run_passes        options.graph_passes       src/passes/graph
//   2. lowering         lower_kernels     lower_node per node        src/lower (ops' rules)
//   3. scheduling       schedule_kernels  a record's, or the default src/schedule/rules
//   4. loop passes      run_passes        options.loop_passes        src/passes/loop
//   5. code generation  generate_code     compile_llvm on the module src/codegen/llvm
//                       (CUDA target)     generate_cuda_code         src/codegen/cuda
//   6. planning         plan_execution    steps, buffers, memory     src/driver/execution_plan.cpp
//
// and the model runs its plan on a host device with options.threads threads
// (src/runtime/device.cpp): the thread count belongs to the model, not to the process.
// For a CUDA target the kernels run on GPU 0 (src/runtime/cuda_device.cpp) or, with
// options.emulate, on the loop interpreter on the host.
// Every stage that depends on the machine takes CompileOptions::target, made once: the
// lowering, the default rules, the tuning records' key and code generation.
// A node whose op has no compute rule, or whose form of it its rule does not cover
// (NoComputeRule), runs the reference kernel of its op instead (the plan says which;
// `minic run --profile` shows it); any other error while lowering is an error of
// compile_model naming the node. The driver sits at the end of the pipeline and may use
// every area above it; nothing but the CLI, tests and benchmarks uses it.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/backends/backend.h"
#include "minic/codegen/cuda.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/executor.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace minic {

class CompiledBodies;  // src/driver/compiled_bodies.h

struct CompileOptions {
  // The machine to compile for (include/minic/target/target.h): the host's CPU, or what
  // `--target` names (driver/target.h). Code for a CPU this machine lacks features of
  // compiles but does not run here; so does CUDA code where there is no CUDA driver.
  Target target = codegen::host_target();
  // With a CUDA target: run the kernels' GPU schedules on the loop interpreter (thread
  // block by thread block, races checked) instead of the GPU, and leave out NVRTC.
  bool emulate = false;
  // Graph passes to run first, by name (none: the graph as given).
  std::vector<std::string> graph_passes = default_pipeline();
  // Apply the default CPU schedules (src/schedule/rules); without, kernels stay as
  // lowered (naive loop nests).
  bool schedule = true;
  // Loop passes to run on every kernel after its schedule, by name, and what the pass
  // manager prints, times and checks around them (`minic opt --emit scheduled`'s flags).
  std::vector<std::string> loop_passes = loop::default_loop_pipeline();
  PassManagerOptions<loop::LoopModule> loop_pass_options;
  // LLVM: the optimisation level, and fast-math (reassociating float reductions).
  int opt_level = 3;
  bool fast_math = false;
  // Threads for parallel loops: 0 means every core. The model's device owns a pool of
  // this many threads; nothing global changes.
  int threads = 0;
  // A kernel library written by save_compiled_model for this model: its kernels are
  // loaded (dlopen) instead of generated again. Empty: generate them with LLVM.
  std::string kernel_library;
  // A tuning database (JSON Lines, include/minic/autotune/database.h; empty: none). A
  // kernel whose workload has a successful record for `target` gets the schedule of the
  // record Database::best chooses (the fastest finalist, else the fastest record; its
  // trace, replayed); the others, and any whose trace does not replay, get the default
  // schedule. Used only with `schedule`.
  std::string records;
  // External back ends by name (include/minic/backends/backend.h), offered every node after
  // the graph passes in this order; the nodes they claim they compile, and the passes they
  // skip are left out of graph_passes. Empty: minic compiles everything.
  std::vector<std::string> backends;
};

// The kernels of a model compiled for a CUDA target (src/driver/cuda_code.cpp).
struct CudaProgram {
  codegen::CudaModule module;                 // the CUDA C and its launches
  std::optional<codegen::CudaBinary> binary;  // NVRTC's cubin and PTX (none with emulate)
  std::map<std::string, std::string> refused;  // kernel → why the back end refused it; its
                                               // node runs its reference kernel
};

// How the compile went: what the CLI and benchmarks report.
struct CompileStats {
  int kernels = 0;           // steps of the plan
  int compiled_kernels = 0;  // of which compiled (the others run reference kernels)
  int functions = 0;         // the compiled kernels' functions: one per workload
  double compile_ms = 0;     // all of compile_model
  double codegen_ms = 0;     // of which LLVM
  std::vector<std::string> reference_ops;  // ops run by reference kernels, sorted, unique
  std::string records;       // the tuning database used (CompileOptions::records)
  int tuned_kernels = 0;     // compiled kernels scheduled by a record
  int failed_records = 0;    // records whose trace did not replay (default schedule used)
  std::map<std::string, int> backend_kernels;  // steps run by each external back end, and
                                               // by custom ops' CUDA ("custom CUDA")
};

class CompiledModel {
 public:
  // The plan is loaded onto `device`, which runs every step of it.
  CompiledModel(Graph graph, loop::LoopModule kernels,
                std::unique_ptr<codegen::CompiledModule> code, runtime::ExecutionPlan plan,
                std::unique_ptr<runtime::Device> device, CompileStats stats, Target target);
  // A model compiled for a CUDA target: its CUDA program. `cannot_run`, if not empty, says
  // why it cannot run here (no CUDA driver); run() is then that Error.
  void set_cuda(CudaProgram program, std::string cannot_run);
  ~CompiledModel();

  // The graph after the graph passes: its inputs and outputs are the model's.
  const Graph& graph() const { return graph_; }
  // The loop IR of every compiled kernel, scheduled: what --emit loops prints.
  const loop::LoopModule& kernels() const { return kernels_; }
  // The LLVM code of a model compiled for a CPU (Error for a CUDA target).
  const codegen::CompiledModule& code() const;
  // The CUDA program of a model compiled for a CUDA target (null for a CPU).
  const CudaProgram* cuda() const { return cuda_ ? &*cuda_ : nullptr; }
  const CompileStats& stats() const { return stats_; }
  const runtime::ExecutionPlan& plan() const { return executor_.plan(); }
  // What runs the plan: the host CPU with the model's thread pool.
  const runtime::Device& device() const { return executor_.device(); }
  // The target the kernels were compiled for.
  const Target& target() const { return target_; }

  // How many control-flow bodies (If, Loop, Scan) have run as compiled code so far: each
  // compiles the first time it runs (src/driver/compiled_bodies.h).
  int compiled_bodies() const;
  void set_bodies(std::shared_ptr<const CompiledBodies> bodies) { bodies_ = std::move(bodies); }
  // The external back ends whose calls the plan makes: kept while the model lives.
  void set_backends(std::shared_ptr<Partition> backends) { backends_ = std::move(backends); }
  // What each external back end's runs have cost so far (ExternalBackend::report).
  std::vector<std::string> backend_reports() const;
  // Runs the model; Error if its code cannot run on this machine (codegen::check_runs_here).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          std::vector<runtime::StepProfile>* profile = nullptr);
  // The same on tensors held elsewhere, read in place.
  std::vector<Tensor> run_in_place(std::span<const Tensor* const> inputs,
                                   std::vector<runtime::StepProfile>* profile = nullptr);
  // The same on memory that is not a Tensor's (runtime::TensorView).
  std::vector<Tensor> run_views(std::span<const runtime::TensorView> inputs,
                                std::vector<runtime::StepProfile>* profile = nullptr);

 private:
  Graph graph_;
  loop::LoopModule kernels_;
  std::unique_ptr<codegen::CompiledModule> code_;
  runtime::Executor executor_;
  CompileStats stats_;
  Target target_;
  std::optional<CudaProgram> cuda_;
  std::string cannot_run_;
  bool checked_target_ = false;  // the first run checked that the code runs here
  std::shared_ptr<const CompiledBodies> bodies_;  // null for a CUDA target
  std::shared_ptr<Partition> backends_;            // the external back ends' calls
};

// Compiles `graph` (as imported, with static shapes) for options.target.
std::unique_ptr<CompiledModel> compile_model(Graph graph, const CompileOptions& options = {});

// Ahead-of-time compilation (`minic compile MODEL -o DIR`): writes into `dir`
//   model.onnx             a copy of the model (its weights, and the graph the plan is
//                          built from again when the directory is loaded)
//   kernels.o              every compiled kernel, an object file for options.target
//   libminic_kernels.so    the same as a shared library (linked with the C compiler `cc`)
//   kernels.h              a C header: one `void NAME(void** args)` per kernel, with its
//                          buffers in order
//   minic_runtime.c        a serial minic_parallel_for, for C programs that link the kernels
//   model.h, model.c,      where every step is compiled code: the whole model as one C
//   weights.bin            call (minic_model_init, minic_model_run), built into the library
//   records.jsonl          with options.records: a copy of the tuning database, so that
//                          loading makes the same schedules (the library's kernels)
//   minic_model.json       what minic reads back: the files, the graph passes, the target,
//                          the kernels
// `model` must have been compiled from `onnx_path` with `options`.
void save_compiled_model(const CompiledModel& model, const std::string& onnx_path,
                         const std::string& dir, const CompileOptions& options);

// Ahead-of-time compilation for a CUDA target (src/driver/aot_cuda.cpp): writes into `dir`
// model.onnx, kernels.cu (the CUDA C), kernels.sm_XX.ptx and kernels.sm_XX.cubin (NVRTC's
// output for the target's architecture) and cuda_launches.json (each function's scratch
// buffers and launches). Error if the model was not compiled by NVRTC for a CUDA target.
void save_cuda_model(const CompiledModel& model, const std::string& onnx_path,
                     const std::string& dir);

// True if `dir` holds a model written by save_compiled_model.
bool is_compiled_model_dir(const std::string& dir);

// Loads a directory written by save_compiled_model: imports its model.onnx, runs the same
// passes, lowering and schedules for its target (with its records.jsonl, if any), and
// takes the kernels from its library. Error if the directory is incomplete or the library
// does not hold the kernels the model needs.
std::unique_ptr<CompiledModel> load_compiled_model(const std::string& dir, int threads = 0);

}  // namespace minic
