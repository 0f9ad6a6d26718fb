// `minic opt MODEL.onnx|FILE.mgraph [--passes a,b,c] ...`: graph passes, and the graph IR
// as text. Course module 2.
//
// Reads an ONNX model (imported: static shapes, inferred types, verified) or a graph in
// the text form (parsed, types re-inferred, verified), runs graph passes -- the default
// pipeline (src/passes/pipeline.cpp), a list given with --passes, or none -- and prints
// the graph's text form, which parses back to the same graph. The pass manager's flags
// (pass_flags.h) show what each pass did: --print-ir-after, --print-ir-after-change,
// --time-passes; --verify-each=numeric runs the interpreter on random inputs before the
// passes and after each one, and names the first pass that changes a result.
//
// `--emit onnx -o OUT.onnx` writes the graph as an ONNX model instead
// (src/frontend/onnx_writer.cpp), which ONNX Runtime runs and minic imports back to the
// same graph. It runs graph passes only when --passes names them: the default pipeline
// ends in fused nodes, which ONNX cannot hold.
//
// `--emit loops` (course module 3) prints, instead of the graph, every kernel of the
// optimised graph lowered to loop IR (src/lower/lower.cpp) as one .mloop module, after the
// loop passes --loop-passes names (none by default). Kernels with an op that has no
// compute rule are left out, and named on stderr, so that the module still parses back.
//
// `--emit scheduled|llvm|asm` (course modules 4 and 6) compiles the optimised graph as
// `minic run` does (include/minic/driver/compile.h) and prints every compiled kernel after
// its default schedule and the loop passes (loop IR), as optimised LLVM IR, or as
// assembly: all for this machine's CPU or the one --target names. The loop passes are the
// default loop pipeline unless --loop-passes names others.
//
// With a CUDA target (`--target cuda`, course module 6), `--emit scheduled` shows the GPU
// schedules, `--emit cuda` the CUDA C of every kernel (one program, as NVRTC compiles it),
// `--emit ptx` NVRTC's PTX and `--emit sass` the cubin's machine code (through cuobjdump,
// when it is installed). Kernels the CUDA back end refuses are named on stderr.
//
// The pass flags apply to every pass that runs: the graph passes, then the loop passes.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#include "commands.h"
#include "common_options.h"
#include "graph_input.h"
#include "pass_flags.h"

#include "minic/codegen/llvm.h"
#include "minic/driver/compile.h"
#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/loop/printer.h"
#include "minic/lower/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace minic::cli {
namespace {

struct OptOptions {
  std::string input;
  CommonOptions common;  // --input-shape, --passes, --target
  bool passes_given = false;  // --passes on the command line (else, for --emit onnx, none)
  // Loop passes: "default", "none" or "a,b,c"; unset, none after lowering (--emit loops)
  // and the default loop pipeline after scheduling (--emit scheduled|llvm|asm).
  std::optional<std::string> loop_passes;
  PassFlags pass_flags;
  bool list_passes = false;
  std::string output;
  bool elide_constants = false;
  std::string emit = "graph";  // "graph", "onnx", "loops", "scheduled", "llvm", "asm", ...
};

void print_pass_list() {
  for (PassKind kind : {PassKind::graph, PassKind::loop}) {
    const std::vector<std::string>& pipeline =
        kind == PassKind::graph ? default_pipeline() : loop::default_loop_pipeline();
    fmt::print("{}{} passes (default pipeline: {}):\n", kind == PassKind::graph ? "" : "\n",
               pass_kind_name(kind), fmt::join(pipeline, ","));
    for (const PassInfo* pass : PassRegistry::all(kind)) {
      fmt::print("  {:<22} {}\n", pass->name, pass->summary);
    }
  }
}

// --emit loops: every kernel lowered, then the loop passes of --loop-passes (none unless
// asked for).
std::string lowered_kernels(const Graph& graph, const Target& target,
                            const OptOptions& options) {
  std::vector<const Node*> skipped;
  loop::LoopModule kernels = lower_graph(graph, target, &skipped);
  for (const Node* node : skipped) {
    fmt::print(stderr, "note: {} is not lowered: an op of it has no compute rule\n",
               node->describe());
  }
  run_passes(kernels, parse_loop_pass_list(options.loop_passes.value_or("none")),
             loop_pass_options(options.pass_flags));
  return loop::print_module(kernels);
}

// --emit scheduled|llvm|asm: the graph compiled as `minic run` compiles it, the loop passes
// (the default loop pipeline unless --loop-passes says otherwise) under the pass flags.
std::string compiled_kernels(Graph graph, const Target& target, const OptOptions& options) {
  CompileOptions compile_options;
  compile_options.target = target;
  compile_options.graph_passes = {};  // run already
  compile_options.loop_passes = parse_loop_pass_list(options.loop_passes.value_or("default"));
  compile_options.loop_pass_options = loop_pass_options(options.pass_flags);
  // The CUDA C needs no NVRTC: compile as for --emulate, which leaves it out.
  compile_options.emulate = target.is_cuda() && options.emit != "ptx" && options.emit != "sass";
  std::unique_ptr<CompiledModel> model = compile_model(std::move(graph), compile_options);
  if (const CudaProgram* cuda = model->cuda()) {
    for (const auto& [kernel, reason] : cuda->refused) {
      fmt::print(stderr, "kernel {} runs its reference kernel: {}\n", kernel, reason);
    }
    if (options.emit == "cuda") return cuda->module.source;
    if (options.emit == "ptx") return cuda->binary->ptx;
    if (options.emit == "sass") return codegen::disassemble_cubin(*cuda->binary);
  }
  if (options.emit == "scheduled") return loop::print_module(model->kernels());
  return options.emit == "llvm" ? model->code().llvm_ir() : model->code().assembly();
}

int run_opt(const OptOptions& options) {
  if (options.list_passes) {
    print_pass_list();
    return 0;
  }
  if (options.input.empty()) fail("opt needs a MODEL.onnx or FILE.mgraph");
  const std::vector<std::string> emits = {"graph", "onnx", "loops", "scheduled", "llvm",
                                          "asm",   "cuda", "ptx",   "sass"};
  if (std::find(emits.begin(), emits.end(), options.emit) == emits.end()) {
    fail("--emit takes {}, not '{}'", fmt::join(emits, ", "), options.emit);
  }
  if (options.loop_passes && (options.emit == "graph" || options.emit == "onnx")) {
    fail("--loop-passes needs --emit loops, scheduled, llvm, asm, cuda, ptx or sass");
  }
  if (options.emit == "onnx" && (options.output.empty() || options.output == "-")) {
    fail("--emit onnx writes a binary protobuf file, not text: give it with -o OUT.onnx");
  }
  Graph graph = read_graph_file(options.input, options.common.input_shapes);
  const Target target = options.common.parsed_target();
  const bool cuda_emit = options.emit == "cuda" || options.emit == "ptx" || options.emit == "sass";
  if (options.emit == "llvm" || options.emit == "asm") {
    require_cpu_target(target, "opt --emit " + options.emit);
  }
  if (cuda_emit && !target.is_cuda()) {
    fail("--emit {} needs a CUDA target (--target cuda)", options.emit);
  }
  const bool no_passes = options.emit == "onnx" && !options.passes_given;
  run_passes(graph, parse_pass_list(no_passes ? "none" : options.common.passes), target,
             graph_pass_options(options.pass_flags));

  if (options.emit == "onnx") {
    export_onnx(graph, options.output);
    return 0;
  }
  std::string text;
  if (options.emit == "loops") {
    text = lowered_kernels(graph, target, options);
  } else if (options.emit != "graph") {
    text = compiled_kernels(std::move(graph), target, options);
  } else {
    GraphPrintOptions print_options;
    print_options.elide_large_constants = options.elide_constants;
    text = print_graph(graph, print_options);
  }
  if (options.output.empty() || options.output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  write_file(options.output, text);
  return 0;
}

}  // namespace

Command add_opt_command(CLI::App& app) {
  auto options = std::make_shared<OptOptions>();
  CLI::App* sub = app.add_subcommand(
      "opt", "Run graph passes on an ONNX model or a .mgraph file and print the graph IR");
  sub->add_option("input", options->input, "MODEL.onnx or FILE.mgraph");
  add_common_options(sub, options->common,
                     {CommonOption::input_shape, CommonOption::passes, CommonOption::target,
                      CommonOption::custom_ops});
  sub->add_option("--loop-passes", options->loop_passes,
                  "Loop passes to run on the kernels, comma-separated, 'default' or 'none': "
                  "with --emit loops after lowering (default none), otherwise after the "
                  "schedules (default: the default loop pipeline)");
  add_pass_flags(*sub, options->pass_flags);
  sub->add_flag("--list-passes", options->list_passes,
                "List the graph passes and the loop passes, and exit");
  sub->add_option("-o,--output", options->output,
                  "Write the text here instead of stdout (--emit onnx: the model file)");
  sub->add_option("--emit", options->emit,
                  "What to print: 'graph' (the graph IR), 'onnx' (the graph as an ONNX model, "
                  "written to the file -o names, after the passes --passes names, none by "
                  "default; fused nodes and minic's own ops are refused), "
                  "'loops' (every kernel lowered to "
                  "loop IR, one module; kernels with an op that has no compute rule are left "
                  "out and named on stderr), 'scheduled' (the compiled kernels after their "
                  "default schedules and the loop passes), 'llvm' (their LLVM IR, optimised), "
                  "'asm' (their assembly), or with --target cuda 'cuda' (their CUDA C), 'ptx' "
                  "or 'sass' (NVRTC's PTX and cubin, the latter through cuobjdump)")
      ->default_str("graph");
  sub->add_flag("--elide-constants", options->elide_constants,
                "Summarise large constants (the text then does not parse back)");
  return {sub, [options, sub] {
            options->passes_given = sub->count("--passes") > 0;
            return run_opt(*options);
          }};
}

}  // namespace minic::cli
