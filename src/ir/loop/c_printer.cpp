// The "equivalent C" printer: PrimFunc → C source for reading (see
// include/minic/ir/loop/c_printer.h). Course module 3.
//
// The C dialect of CWriter (c_writer.h), which walks the statements and expressions:
// this file says what the function's signature, each loop kind and an allocation
// become in plain C. A parallel loop gets `#pragma omp parallel for`; the other kinds a
// comment; an allocation is a C array, `__shared__` in shared memory.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "minic/ir/loop/c_printer.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/c_writer.h"

#include <fmt/format.h>

namespace minic::loop {

namespace {

using namespace c_syntax;

class CPrinter : public CWriter {
 public:
  std::string function(const PrimFunc& f) {
    std::set<const BufferNode*> stored = stored_buffers(f.body);
    std::vector<std::string> params;
    for (const Buffer& param : f.params) {
      std::string qualifier = stored.count(param.get()) ? "" : "const ";
      params.push_back(fmt::format("{}{}* restrict {}", qualifier, c_type(param->dtype),
                                   bind(param.get(), param->name)));
    }
    if (params.empty()) params.push_back("void");
    line(fmt::format("void {}({}) {{", c_identifier(f.name), fmt::join(params, ", ")));
    indented(f.body);
    line("}");
    return std::move(out_);
  }

 private:
  void for_loop(const For* node) override {
    std::string comment;
    switch (node->for_kind) {
      case ForKind::serial: break;
      case ForKind::parallel: line("#pragma omp parallel for"); break;
      case ForKind::vectorized: comment = "vectorized"; break;
      case ForKind::unrolled: comment = "unrolled"; break;
      case ForKind::thread_binding: comment = "bound to " + node->thread_axis; break;
    }
    for (const auto& [key, value] : node->annotations) {
      comment += fmt::format("{}{}={}", comment.empty() ? "" : ", ", key, value);
    }
    c_loop(node, comment);
  }

  void declare_array(const Buffer& buffer) override {
    std::string name = bind(buffer.get(), buffer->name);
    std::string prefix = buffer->scope == MemoryScope::shared ? "__shared__ " : "";
    std::string dims;
    for (int64_t dim : buffer->shape) dims += fmt::format("[{}]", dim);
    std::string scope =
        buffer->scope == MemoryScope::global ? "" : memory_scope_name(buffer->scope);
    std::optional<int64_t> size = span(*buffer);
    std::string length = size ? fmt::format("{}", *size) : "/* more than 2^63 */";
    line(fmt::format("{}{} {}[{}];  // {}{}{}", prefix, c_type(buffer->dtype), name, length, scope,
                     scope.empty() ? "" : " ", dims.empty() ? "a scalar" : dims));
  }
};

}  // namespace

std::string print_c(const PrimFunc& func) { return CPrinter().function(func); }

std::string print_c(const LoopModule& module) {
  std::string text(c_syntax::prelude());
  for (const PrimFunc& func : module.functions) text += "\n" + print_c(func);
  return text;
}

}  // namespace minic::loop
