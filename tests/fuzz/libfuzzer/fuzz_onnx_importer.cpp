// libFuzzer target: the ONNX frontend (include/minic/frontend/onnx.h). Course module 2.
//
// The frontend reads models from files (external data is looked for beside the model),
// so the bytes are written to model.onnx in a fresh temporary folder of this process's
// own, where no other file lies. Then, as `minic inspect` and `minic opt` do:
//   1. summarize_onnx reads it (it must work even on models minic cannot import);
//   2. import_onnx imports it;
//   3. on success, the graph is verified and must round-trip through the graph text
//      (graph_round_trip.h);
//   4. the parsed print is typed again from scratch (infer_shapes) and verified: the
//      shape rules must accept the graph they produced, and give the same types.
// minic::Error is a refusal; anything else is a finding (fuzz_target.h).
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "graph_round_trip.h"
#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"

namespace {

constexpr const char* kTarget = "onnx_importer";

// The path of model.onnx in this process's temporary folder, made on first use and
// removed when the process exits.
const std::string& model_path() {
  static const std::string path = [] {
    std::string folder = (std::filesystem::temp_directory_path() / "minic-fuzz-onnx-XXXXXX");
    if (mkdtemp(folder.data()) == nullptr) minic::fuzz::finding(kTarget, "mkdtemp failed");
    static const std::string to_remove = folder;
    std::atexit([] { std::filesystem::remove_all(to_remove); });
    return folder + "/model.onnx";
  }();
  return path;
}

void write_model(const uint8_t* data, size_t size) {
  std::ofstream out(model_path(), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) minic::fuzz::finding(kTarget, "cannot write the model file", model_path());
}

// Step 4: the imported graph's print, parsed and typed again, has the same print.
void require_same_types_again(const minic::Graph& graph) {
  using namespace minic;
  const std::string printed = print_graph(graph);
  Graph again = fuzz::must_succeed(kTarget, "the printed graph does not parse back",
                                   [&] { return parse_graph(printed, "<printed>"); });
  fuzz::must_succeed(kTarget, "the imported graph does not type again", [&] {
    infer_shapes(again);
    verify_graph(again);
    return 0;
  });
  const std::string printed_again = print_graph(again);
  if (printed_again != printed) {
    fuzz::finding(kTarget, "typing the imported graph again changes it",
                  "imported:\n" + printed + "\ntyped again:\n" + printed_again);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minic;
  write_model(data, size);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::run_guarded(kTarget, bytes, [&] { summarize_onnx(model_path()); });
  fuzz::run_guarded(kTarget, bytes, [&] {
    Graph graph = import_onnx(model_path());
    fuzz::must_succeed(kTarget, "the imported graph does not verify", [&] {
      verify_graph(graph);
      return 0;
    });
    fuzz::require_graph_round_trip(kTarget, graph);
    require_same_types_again(graph);
  });
  return 0;
}
