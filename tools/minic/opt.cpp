// `minic opt MODEL.onnx|FILE.mgraph [--passes a,b,c] ...`: graph passes, and the graph IR
// as text. Course module 2.
//
// Reads an ONNX model (imported: static shapes, inferred types, verified) or a graph in
// the text form (parsed, types re-inferred, verified), runs graph passes -- the default
// pipeline (src/passes/pipeline.cpp), a list given with --passes, or none -- and prints
// the graph's text form, which parses back to the same graph. The pass manager's
// options show what each pass did: --print-ir-after, --print-ir-after-change,
// --time-passes; --verify-each=numeric runs the interpreter on random inputs before the
// passes and after each one, and names the first pass that changes an output.
//
// `--emit loops` (course module 3) prints, instead of the graph, every kernel of the
// optimised graph lowered to loop IR (src/ops/lower.cpp) as one .mloop module. Kernels
// with an op that has no compute rule are left out, and named on stderr, so that the
// module still parses back.
//
// `--emit scheduled|llvm|asm` (course modules 4 and 6) compiles the optimised graph as
// `minic run` does (include/minic/driver/compile.h) and prints every compiled kernel after
// its default schedule and the loop passes (loop IR), as optimised LLVM IR, or as the
// host's assembly.
#include "commands.h"
#include "graph_input.h"
#include "run_inputs.h"

#include "minic/codegen/llvm.h"
#include "minic/driver/compile.h"
#include "minic/ir/graph_text.h"
#include "minic/ir/loop/printer.h"
#include "minic/ops/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace minic::cli {
namespace {

struct OptOptions {
  std::string input;
  std::vector<std::string> input_shapes;  // "NAME=1x3x224x224"
  std::string passes = "default";         // "default", "none", or "a,b,c"
  std::vector<std::string> print_ir_after;
  bool print_ir_after_change = false;
  bool time_passes = false;
  std::string verify_each = "structural";  // "structural" or "numeric"
  bool list_passes = false;
  std::string output;
  bool elide_constants = false;
  std::string emit = "graph";  // "graph", "loops", "scheduled", "llvm" or "asm"
};

// The numeric check of --verify-each=numeric: the graph's outputs on fixed random inputs
// before any pass, compared after each pass with the same tolerance as `minic run`.
class NumericCheck {
 public:
  explicit NumericCheck(const Graph& graph) {
    std::mt19937_64 random(0);
    for (const Value* input : graph.inputs()) {
      inputs_.push_back(fill_tensor(input->type, Fill::random, random));
    }
    expected_ = interpret(graph, inputs_);
  }

  void operator()(const std::string& pass, const Graph& graph) const {
    std::vector<Tensor> outputs = interpret(graph, inputs_);
    for (size_t k = 0; k < outputs.size(); ++k) {
      TensorComparison comparison = compare_tensors(outputs[k], expected_[k], Tolerance{});
      if (!comparison.ok()) {
        fail("pass '{}' changed output {} (%{}): {}", pass, k, graph.outputs()[k]->name(),
             describe(comparison));
      }
    }
  }

 private:
  std::vector<Tensor> inputs_;
  std::vector<Tensor> expected_;
};

void print_pass_list() {
  fmt::print("passes (default pipeline: {}):\n", fmt::join(default_pipeline(), ","));
  for (const PassInfo* pass : PassRegistry::all()) {
    fmt::print("  {:<18} {}\n", pass->name, pass->summary);
  }
}

int run_opt(const OptOptions& options) {
  if (options.list_passes) {
    print_pass_list();
    return 0;
  }
  if (options.input.empty()) fail("opt needs a MODEL.onnx or FILE.mgraph");
  const std::vector<std::string> emits = {"graph", "loops", "scheduled", "llvm", "asm"};
  if (std::find(emits.begin(), emits.end(), options.emit) == emits.end()) {
    fail("--emit takes {}, not '{}'", fmt::join(emits, ", "), options.emit);
  }
  if (options.verify_each != "structural" && options.verify_each != "numeric") {
    fail("--verify-each takes 'structural' or 'numeric', not '{}'", options.verify_each);
  }
  Graph graph = read_graph_file(options.input, options.input_shapes);

  PassManagerOptions pass_options;
  pass_options.print_ir_after = options.print_ir_after;
  pass_options.print_ir_after_change = options.print_ir_after_change;
  pass_options.time_passes = options.time_passes;
  pass_options.print = [](const std::string& text) { fmt::print(stderr, "{}", text); };
  std::shared_ptr<NumericCheck> numeric;
  if (options.verify_each == "numeric") {
    numeric = std::make_shared<NumericCheck>(graph);
    pass_options.after_each = [numeric](const std::string& pass, const Graph& g) {
      (*numeric)(pass, g);
    };
  }
  run_passes(graph, parse_pass_list(options.passes), pass_options);

  std::string text;
  if (options.emit == "loops") {
    std::vector<const Node*> skipped;
    text = loop::print_module(lower_graph(graph, &skipped));
    for (const Node* node : skipped) {
      fmt::print(stderr, "note: {} is not lowered: an op of it has no compute rule\n",
                 node->describe());
    }
  } else if (options.emit == "scheduled" || options.emit == "llvm" || options.emit == "asm") {
    CompileOptions compile_options;
    compile_options.graph_passes = {};  // run above
    std::unique_ptr<CompiledModel> model = compile_model(std::move(graph), compile_options);
    if (options.emit == "scheduled") {
      text = loop::print_module(model->kernels());
    } else {
      text = options.emit == "llvm" ? model->code().llvm_ir() : model->code().assembly();
    }
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
  sub->add_option("--input-shape", options->input_shapes,
                  "Size of an input with symbolic dimensions: NAME=1x3x224x224");
  sub->add_option("--passes", options->passes,
                  "Passes to run, comma-separated; 'default' (the default pipeline) or 'none'");
  sub->add_option("--print-ir-after", options->print_ir_after,
                  "Print the graph (on stderr) after this pass, or after 'all'");
  sub->add_flag("--print-ir-after-change", options->print_ir_after_change,
                "With --print-ir-after: print only when the pass changed the graph");
  sub->add_flag("--time-passes", options->time_passes, "Print how long each pass took");
  sub->add_option("--verify-each", options->verify_each,
                  "After each pass: 'structural' (the verifier, always on) or 'numeric' "
                  "(also compare outputs with the interpreter on random inputs)")
      ->expected(0, 1)
      ->default_str("structural");
  sub->add_flag("--list-passes", options->list_passes, "List the passes and exit");
  sub->add_option("-o,--output", options->output, "Write the text here instead of stdout");
  sub->add_option("--emit", options->emit,
                  "What to print: 'graph' (the graph IR), 'loops' (every kernel lowered to "
                  "loop IR, one module; kernels with an op that has no compute rule are left "
                  "out and named on stderr), 'scheduled' (the compiled kernels after their "
                  "default schedules and the loop passes), 'llvm' (their LLVM IR, optimised) "
                  "or 'asm' (their assembly)")
      ->default_str("graph");
  sub->add_flag("--elide-constants", options->elide_constants,
                "Summarise large constants (the text then does not parse back)");
  return {sub, [options] { return run_opt(*options); }};
}

}  // namespace minic::cli
