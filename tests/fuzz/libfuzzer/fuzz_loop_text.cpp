// libFuzzer target: the loop IR text parser (.mloop, include/minic/ir/loop/parser.h).
// Course module 2 (the chapter of the fuzzers); the loop IR is module 3.
//
// Parses the bytes as loop IR text. A module that parses has every name bound where it is
// used, so parser.h promises that it round-trips: print it, parse the print (which must
// not fail), print again, and the prints must be equal. Then the verifier runs on it
// (its Error is a refusal). minic::Error is a refusal; anything else is a finding
// (fuzz_target.h).
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_target.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minic;
  constexpr const char* kTarget = "loop_text";
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run_guarded(kTarget, text, [&] {
    loop::LoopModule module = loop::parse_loop_module(text, "<fuzz>");
    const std::string printed = loop::print_module(module);
    loop::LoopModule again =
        fuzz::must_succeed(kTarget, "the printed module does not parse back",
                           [&] { return loop::parse_loop_module(printed, "<printed>"); });
    const std::string printed_again = loop::print_module(again);
    if (printed_again != printed) {
      fuzz::finding(kTarget, "print(parse(print(module))) differs from print(module)",
                    "first print:\n" + printed + "\nsecond print:\n" + printed_again);
    }
    loop::verify_module(module);
  });
  return 0;
}
