// minic-conformance's command line. See conformance.h.
#include "conformance.h"

#include "minic/runtime/cuda_driver.h"

#include <CLI/CLI.hpp>

using namespace conformance;

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE (tests/onnx/CMakeLists.txt)

int main(int argc, char** argv) {
  CLI::App app{"Runs ONNX's backend node tests and the light models through minic's "
               "reference interpreter or compiled", "minic-conformance"};
  app.require_subcommand(1);

  NodeOptions node;
  CLI::App* node_command = app.add_subcommand("node", "Run the backend node test cases in DIR");
  node_command->add_option("dir", node.dir, "Folder of cases (each with model.onnx)")->required();
  node_command->add_option("--cases", node.cases,
                           "Run the cases this list names (node_cases.tsv), each of which "
                           "must be in DIR; default: every case in DIR");
  node_command->add_option("--filter", node.filter, "Run only cases whose name contains this");
  node_command->add_option("--expected", node.expected,
                           "List of cases that must pass; exit 1 if one fails");
  node_command->add_option("--write-expected", node.write_expected,
                           "Write the list of passing cases to this file");
  node_command->add_flag("--verbose", node.verbose, "Print every output's comparison and time");
  node_command->add_option("--passes", node.passes,
                           "Graph passes to run after import: 'default' (the default "
                           "pipeline), 'none' (the default) or a,b,c");
  node_command
      ->add_option("--backend", node.backend,
                   "interp (the default), llvm, cuda (on the GPU), emulate (the GPU schedules "
                   "on the loop interpreter) or nvrtc (the CUDA C compiled for sm_90 and "
                   "sm_90a, no spills)")
      ->check(CLI::IsMember({"interp", "llvm", "cuda", "emulate", "nvrtc"}));
  node_command->add_option("--target", node.target,
                           "The target to compile for (default: this machine's CPU; 'cuda' "
                           "for cuda, emulate and nvrtc)");

  std::string light_dir;
  CLI::App* light_command =
      app.add_subcommand("light-models", "Run light_*.onnx in DIR on arange inputs");
  light_command->add_option("dir", light_dir, "Folder of light_*.onnx models")->required();
  std::string light_passes = "none";
  light_command->add_option("--passes", light_passes,
                            "Graph passes to run after import: 'default' (the default "
                            "pipeline; then ConstantOfShape, BatchNormalization, Dropout and "
                            "Identity must all be gone), 'none' (the default) or a,b,c");
  std::string light_backend = "interp";
  light_command
      ->add_option("--backend", light_backend,
                   "interp (the default), llvm, cuda, emulate or nvrtc")
      ->check(CLI::IsMember({"interp", "llvm", "cuda", "emulate", "nvrtc"}));
  std::string light_target;
  light_command->add_option("--target", light_target,
                            "The target to compile for ('llvm': this machine's CPU, the "
                            "default; 'llvm -mcpu=x86-64-v3': AVX2; 'cuda', the default for "
                            "cuda, emulate and nvrtc)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  // On the GPU: without a CUDA driver there is nothing to run; ctest counts it skipped.
  const std::string backend = node_command->parsed() ? node.backend : light_backend;
  if (backend == "cuda" && !cuda_driver_version()) {
    fmt::print("skipped: --backend cuda needs a GPU, and there is no CUDA driver here\n");
    return kSkipped;
  }
  try {
    if (node_command->parsed()) return run_node_tests(node);
    Target target = light_target.empty() ? default_target(light_backend) : parse_target(light_target);
    return run_light_models(light_dir, light_passes, light_backend, target);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
