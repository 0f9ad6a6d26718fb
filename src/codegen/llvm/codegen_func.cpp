// Loop IR functions → LLVM functions: entry points, loops, parallel outlining, storage.
// Course module 6.
//
// A PrimFunc `f(A, B, C)` becomes two functions:
//   f(ptr %args)                       the exported entry: loads args[0..2] and calls
//   f.body(ptr noalias %A, ..., %C)    the loop nest, each buffer a noalias, aligned,
//                                      dereferenceable pointer
// O3 inlines the body into the entry and keeps what noalias said as alias metadata, so the
// vectoriser needs no run-time overlap checks.
//
// A parallel loop `parallel for i in min..+extent { S }` is outlined in three steps:
//   1. collect what S uses from outside: the buffers and variables bound around the loop;
//   2. emit f.parallel.N.body(buffers..., variables..., min, begin, end), the loop over
//      [min + begin, min + end) with S inside, and f.parallel.N(closure, begin, end), which
//      unpacks the closure (a struct of those values) and calls it;
//   3. in place of the loop: fill a closure on the stack and call
//      minic_parallel_for(f.parallel.N, closure, extent) (LlvmOptions::parallel_for).
// Inside S a parallel loop runs serially.
//
// Storage: a buffer of at most options.max_stack_bytes is an alloca in the entry block (64
// bytes aligned, made once however often its scope runs); a larger one is aligned_alloc'd
// when its scope starts and freed when it ends.
//
// Chapter: docs/module6-llvm-cpu.md#1-one-calling-convention
#include "codegen.h"
#include "target.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <set>
#include <unordered_set>
#include <utility>

namespace minic::codegen::llvm_backend {

using namespace minic::loop;

namespace {

constexpr int64_t kStorageAlignment = 64;  // a cache line (and the widest vector, zmm)

// The elements a buffer spans through its strides (the interpreter's storage_size).
int64_t storage_elements(const BufferNode& buffer) {
  int64_t last = 0;
  for (size_t d = 0; d < buffer.shape.size(); ++d) {
    if (buffer.shape[d] == 0) return 0;
    last += (buffer.shape[d] - 1) * buffer.strides[d];
  }
  return last + 1;
}

// What a parallel loop's body uses that is bound outside it, in order of first use.
class Captures : public IRVisitor {
 public:
  Captures(const std::unordered_map<const Var*, llvm::Value*>& vars,
           const std::unordered_map<const BufferNode*, llvm::Value*>& buffers)
      : outer_vars_(vars), outer_buffers_(buffers) {}

  std::vector<const Var*> vars;
  std::vector<Buffer> buffers;

  void visit_Var(const Var* node) override {
    if (outer_vars_.count(node) && seen_vars_.insert(node).second) vars.push_back(node);
  }
  void visit_Load(const Load* node) override {
    use(node->buffer);
    IRVisitor::visit_Load(node);
  }
  void visit_Store(const Store* node) override {
    use(node->buffer);
    IRVisitor::visit_Store(node);
  }

 private:
  void use(const Buffer& buffer) {
    if (outer_buffers_.count(buffer.get()) && seen_buffers_.insert(buffer.get()).second) {
      buffers.push_back(buffer);
    }
  }
  const std::unordered_map<const Var*, llvm::Value*>& outer_vars_;
  const std::unordered_map<const BufferNode*, llvm::Value*>& outer_buffers_;
  std::unordered_set<const Var*> seen_vars_;
  std::unordered_set<const BufferNode*> seen_buffers_;
};

void verify(llvm::Function* function, const std::string& func_name) {
  std::string message;
  llvm::raw_string_ostream stream(message);
  if (llvm::verifyFunction(*function, &stream)) {
    internal_fail("LLVM rejects the code made for @{} ({}): {}",
                  func_name, function->getName().str(), stream.str());
  }
}

}  // namespace

CodeGen::CodeGen(llvm::Module& module, const LlvmOptions& options)
    : context_(module.getContext()),
      module_(module),
      builder_(module.getContext()),
      options_(options),
      features_(feature_string(cpu_of(options))) {
  if (options_.fast_math) {
    builder_.setFastMathFlags(llvm::FastMathFlags::getFast());
  } else {
    // Contraction only: a * b + c may become one fused multiply-add (one rounding instead
    // of two), as C compilers do by default (FP_CONTRACT). Nothing is reassociated.
    llvm::FastMathFlags contract;
    contract.setAllowContract(true);
    builder_.setFastMathFlags(contract);
  }
}

// --- helpers --------------------------------------------------------------------------------

llvm::Type* CodeGen::value_type(DataType type) {
  llvm::Type* element = nullptr;
  switch (type.dtype) {
    case DType::f32: element = builder_.getFloatTy(); break;
    case DType::f64: element = builder_.getDoubleTy(); break;
    case DType::f16: element = builder_.getHalfTy(); break;
    case DType::bf16: element = builder_.getBFloatTy(); break;
    case DType::boolean: element = builder_.getInt1Ty(); break;
    default:
      if (!is_int(type.dtype)) {
        error("type " + std::string(dtype_name(type.dtype)) +
              " is storage-only: no kernel computes in it");
      }
      element = builder_.getIntNTy(static_cast<unsigned>(dtype_size(type.dtype) * 8));
  }
  return type.lanes == 1 ? element : llvm::FixedVectorType::get(element, type.lanes);
}

llvm::Type* CodeGen::memory_type(DType dtype) {
  return dtype == DType::boolean ? builder_.getInt8Ty() : value_type({dtype, 1});
}

llvm::Value* CodeGen::splat(llvm::Value* scalar, int lanes) {
  return lanes == 1 ? scalar : builder_.CreateVectorSplat(static_cast<unsigned>(lanes), scalar);
}

llvm::Value* CodeGen::splat_like(llvm::Value* scalar, llvm::Value* like) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(like->getType());
  return vector ? splat(scalar, static_cast<int>(vector->getNumElements())) : scalar;
}

llvm::Value* CodeGen::i64(int64_t value) { return builder_.getInt64(static_cast<uint64_t>(value)); }

void CodeGen::error(const std::string& reason) const {
  std::string where = blocks_.empty() ? "" : ", block " + blocks_.back();
  fail("LLVM backend, @{}{}: {}", func_name_, where, reason);
}

llvm::Function* CodeGen::make_function(const std::string& name, llvm::FunctionType* type,
                                       bool exported) {
  auto linkage = exported ? llvm::Function::ExternalLinkage : llvm::Function::PrivateLinkage;
  llvm::Function* function = llvm::Function::Create(type, linkage, name, module_);
  if (function->getName() != name) {
    fail("LLVM backend: two functions are named @{}", name);
  }
  function->addFnAttr(llvm::Attribute::NoUnwind);
  const CpuTarget& cpu = options_.target.cpu();
  function->addFnAttr("target-cpu", cpu.cpu);
  function->addFnAttr("target-features", features_);
  // The target's widest vectors: without it, LLVM prefers 256-bit vectors on most AVX-512
  // CPUs (sapphirerapids, znver4), and the schedules' vector tiles are sized for zmm.
  function->addFnAttr("prefer-vector-width", std::to_string(cpu.vector_bytes * 8));
  return function;
}

// --- functions ------------------------------------------------------------------------------

void CodeGen::emit_func(const PrimFunc& func) {
  verify_func(func);
  func_name_ = func.name;
  parallel_functions_ = 0;
  vars_.clear();
  buffers_.clear();
  inputs_.clear();
  prefetch_ = {};
  const std::set<const BufferNode*> stored = stored_buffers(func.body);
  for (const Buffer& param : func.params) {
    if (!stored.count(param.get())) inputs_.insert(param.get());
    if (is_storage_only(param->dtype)) {
      error("parameter " + param->name + " is " + std::string(dtype_name(param->dtype)) +
            ", which no kernel computes in");
    }
  }
  llvm::Type* pointer = builder_.getPtrTy();
  auto* entry_type = llvm::FunctionType::get(builder_.getVoidTy(), {pointer}, false);
  llvm::Function* entry = make_function(kernel_symbol(func.name), entry_type, true);
  std::vector<llvm::Type*> param_types(func.params.size(), pointer);
  auto* body_type = llvm::FunctionType::get(builder_.getVoidTy(), param_types, false);
  llvm::Function* body = make_function(func.name + ".body", body_type, false);

  // The entry: args[i] → parameter i of the body.
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", entry));
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < func.params.size(); ++i) {
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(pointer, entry->getArg(0), i);
    args.push_back(builder_.CreateAlignedLoad(pointer, slot, llvm::Align(8), func.params[i]->name));
  }
  builder_.CreateCall(body, args);
  builder_.CreateRetVoid();
  verify(entry, func.name);

  // The body, with what the caller promises about each buffer.
  for (size_t i = 0; i < func.params.size(); ++i) {
    const BufferNode& param = *func.params[i];
    llvm::Argument* arg = body->getArg(static_cast<unsigned>(i));
    arg->setName(param.name);
    arg->addAttr(llvm::Attribute::NoAlias);
    int alignment = options_.param_alignment;
    if (alignment <= 0) alignment = dtype_size(param.dtype);
    arg->addAttr(llvm::Attribute::getWithAlignment(context_, llvm::Align(alignment)));
    int64_t bytes = storage_elements(param) * dtype_size(param.dtype);
    if (bytes > 0) arg->addAttr(llvm::Attribute::getWithDereferenceableBytes(context_, bytes));
    buffers_[&param] = arg;
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", body));
  emit(func.body);
  builder_.CreateRetVoid();
  verify(body, func.name);
}

void CodeGen::emit_counted_loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                                llvm::MDNode* metadata,
                                const std::function<void(llvm::Value*)>& body) {
  // preheader → header: i = phi(begin, i + 1); i < end ? body : exit
  //             body ... → latch: i + 1 → header (the back edge carries `metadata`)
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, name + ".header", function);
  auto* body_block = llvm::BasicBlock::Create(context_, name + ".body", function);
  auto* latch = llvm::BasicBlock::Create(context_, name + ".latch");
  auto* exit = llvm::BasicBlock::Create(context_, name + ".exit");
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* counter = builder_.CreatePHI(builder_.getInt64Ty(), 2, name);
  counter->addIncoming(begin, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(counter, end), body_block, exit);
  builder_.SetInsertPoint(body_block);
  body(counter);
  builder_.CreateBr(latch);
  latch->insertInto(function);
  builder_.SetInsertPoint(latch);
  llvm::Value* next = builder_.CreateAdd(counter, i64(1), name + ".next", false, true);
  counter->addIncoming(next, latch);
  llvm::Instruction* back_edge = builder_.CreateBr(header);
  if (metadata) back_edge->setMetadata(llvm::LLVMContext::MD_loop, metadata);
  exit->insertInto(function);
  builder_.SetInsertPoint(exit);
}

llvm::MDNode* CodeGen::loop_metadata(ForKind kind) {
  llvm::Metadata* hint = nullptr;
  if (kind == ForKind::unrolled) {
    hint = llvm::MDNode::get(context_, {llvm::MDString::get(context_, "llvm.loop.unroll.full")});
  } else if (kind == ForKind::vectorized) {
    hint = llvm::MDNode::get(
        context_, {llvm::MDString::get(context_, "llvm.loop.vectorize.enable"),
                   llvm::ConstantAsMetadata::get(builder_.getTrue())});
  }
  if (!hint) return nullptr;
  // A loop ID is a distinct node whose first operand is itself.
  llvm::MDNode* id = llvm::MDNode::getDistinct(context_, {nullptr, hint});
  id->replaceOperandWith(0, id);
  return id;
}

CodeGen::ParallelClosure CodeGen::parallel_closure(const For* node) {
  Captures captures(vars_, buffers_);
  captures.visit(node->body);
  ParallelClosure closure;
  closure.buffers = captures.buffers;
  closure.vars = captures.vars;
  closure.fields.assign(captures.buffers.size(), builder_.getPtrTy());
  for (const Var* captured : captures.vars) closure.fields.push_back(value_type(captured->type));
  closure.fields.push_back(builder_.getInt64Ty());  // the loop's min
  closure.type = llvm::StructType::get(context_, closure.fields);
  return closure;
}

void CodeGen::emit_parallel_body(const For* node, const ParallelClosure& closure,
                                 llvm::Function* body) {
  llvm::IRBuilderBase::InsertPointGuard guard(builder_);
  auto outer_vars = std::move(vars_);
  auto outer_buffers = std::move(buffers_);
  vars_.clear();
  buffers_.clear();
  unsigned arg = 0;
  for (const Buffer& buffer : closure.buffers) {
    llvm::Argument* value = body->getArg(arg++);
    value->setName(buffer->name);
    value->addAttr(llvm::Attribute::NoAlias);
    buffers_[buffer.get()] = value;
  }
  for (const Var* captured : closure.vars) {
    body->getArg(arg)->setName(captured->name);
    vars_[captured] = body->getArg(arg++);
  }
  llvm::Value* min = body->getArg(arg++);
  llvm::Value* begin = body->getArg(arg++);
  llvm::Value* end = body->getArg(arg++);
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", body));
  const Var* var = node->var.as<Var>();
  ++parallel_depth_;
  // The enclosing function's loop positions are its values, not this function's.
  PrefetchState outer = prefetch_;
  prefetch_.share = {};
  prefetch_.step = {};
  emit_counted_loop(builder_.CreateAdd(min, begin, "", false, true),
                    builder_.CreateAdd(min, end, "", false, true), var->name, nullptr,
                    [&](llvm::Value* counter) { emit_loop_body(node, min, counter); });
  prefetch_ = std::move(outer);
  --parallel_depth_;
  builder_.CreateRetVoid();
  verify(body, func_name_);
  vars_ = std::move(outer_vars);
  buffers_ = std::move(outer_buffers);
}

void CodeGen::emit_parallel_task(const ParallelClosure& closure, llvm::Function* body,
                                 llvm::Function* task) {
  llvm::IRBuilderBase::InsertPointGuard guard(builder_);
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", task));
  std::vector<llvm::Value*> values;
  for (unsigned field = 0; field < closure.fields.size(); ++field) {
    llvm::Value* slot = builder_.CreateStructGEP(closure.type, task->getArg(0), field);
    values.push_back(builder_.CreateLoad(closure.fields[field], slot));
  }
  values.push_back(task->getArg(1));
  values.push_back(task->getArg(2));
  builder_.CreateCall(body, values);
  builder_.CreateRetVoid();
  verify(task, func_name_);
}

void CodeGen::emit_parallel_call(const For* node, const ParallelClosure& closure,
                                 llvm::Function* task, const std::string& name) {
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry_builder(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::Value* pointer = entry_builder.CreateAlloca(closure.type, nullptr, name + ".closure");
  std::vector<llvm::Value*> values;
  for (const Buffer& buffer : closure.buffers) values.push_back(buffers_.at(buffer.get()));
  for (const Var* captured : closure.vars) values.push_back(vars_.at(captured));
  values.push_back(emit(node->min));
  for (unsigned field = 0; field < closure.fields.size(); ++field) {
    builder_.CreateStore(values[field], builder_.CreateStructGEP(closure.type, pointer, field));
  }
  llvm::FunctionCallee parallel_for =
      module_.getOrInsertFunction("minic_parallel_for", builder_.getVoidTy(), builder_.getPtrTy(),
                                  builder_.getPtrTy(), builder_.getInt64Ty());
  builder_.CreateCall(parallel_for, {task, pointer, emit(node->extent)});
}

void CodeGen::emit_parallel_for(const For* node) {
  // 1. What the body uses from outside.
  ParallelClosure closure = parallel_closure(node);
  // 2. The outlined body and the task the pool calls (both made before either is filled,
  //    so that the module lists them first and the declarations the body needs after).
  llvm::Type* pointer = builder_.getPtrTy();
  llvm::Type* index = builder_.getInt64Ty();
  std::vector<llvm::Type*> body_params = closure.fields;
  body_params.push_back(index);  // begin
  body_params.push_back(index);  // end
  std::string name = fmt::format("{}.parallel.{}", func_name_, parallel_functions_++);
  llvm::Function* body = make_function(
      name + ".body", llvm::FunctionType::get(builder_.getVoidTy(), body_params, false), false);
  llvm::Function* task = make_function(
      name, llvm::FunctionType::get(builder_.getVoidTy(), {pointer, index, index}, false), false);
  emit_parallel_body(node, closure, body);
  emit_parallel_task(closure, body, task);
  // 3. Fill the closure and hand the range to the pool.
  emit_parallel_call(node, closure, task, name);
}

// --- storage --------------------------------------------------------------------------------

llvm::Value* CodeGen::emit_storage(const Buffer& buffer, bool& heap) {
  int64_t elements = storage_elements(*buffer);
  int64_t bytes = elements * dtype_size(buffer->dtype);
  llvm::Type* element = memory_type(buffer->dtype);
  heap = bytes > options_.max_stack_bytes;
  if (!heap) {
    llvm::Function* function = builder_.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry_builder(&function->getEntryBlock(),
                                    function->getEntryBlock().begin());
    llvm::AllocaInst* slot = entry_builder.CreateAlloca(
        llvm::ArrayType::get(element, static_cast<uint64_t>(elements)), nullptr, buffer->name);
    slot->setAlignment(llvm::Align(kStorageAlignment));
    return slot;
  }
  // aligned_alloc wants a size that is a multiple of the alignment.
  int64_t rounded = (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  llvm::FunctionCallee aligned_alloc = module_.getOrInsertFunction(
      "aligned_alloc", builder_.getPtrTy(), builder_.getInt64Ty(), builder_.getInt64Ty());
  return builder_.CreateCall(aligned_alloc, {i64(kStorageAlignment), i64(rounded)}, buffer->name);
}

void CodeGen::emit_free(llvm::Value* pointer) {
  llvm::FunctionCallee free = module_.getOrInsertFunction("free", builder_.getVoidTy(),
                                                          builder_.getPtrTy());
  builder_.CreateCall(free, {pointer});
}

// --- the module -----------------------------------------------------------------------------

std::unique_ptr<llvm::Module> build_module(const LoopModule& module, const LlvmOptions& options,
                                           llvm::LLVMContext& context) {
  auto result = std::make_unique<llvm::Module>("minic", context);
  CodeGen codegen(*result, options);
  for (const PrimFunc& func : module.functions) codegen.emit_func(func);
  std::string message;
  llvm::raw_string_ostream stream(message);
  if (llvm::verifyModule(*result, &stream)) {
    internal_fail("LLVM rejects the module: {}", stream.str());
  }
  return result;
}

}  // namespace minic::codegen::llvm_backend
