// Loop IR expressions → LLVM IR values. Course module 6.
//
// Each expression kind maps to the LLVM instructions that compute it with the
// interpreter's rules (src/ir/loop/interp_eval.cpp):
//   - integers wrap (plain add/sub/mul); Div and Mod truncate (sdiv/srem), FloorDiv and
//     FloorMod correct the truncated result toward negative infinity; a divisor that is
//     not a known constant is guarded, because x86 traps on x / 0 and on INT_MIN / -1
//     where the interpreter wraps (the interpreter reports x / 0; compiled code gives 0);
//   - Min and Max of floats are llvm.minimum / llvm.maximum, which propagate NaN as the
//     interpreter does; comparisons are ordered (false on NaN) except NE;
//   - Cast from float to integer is truncating, saturating, NaN gives 0, exactly
//     Tensor::cast's rule: llvm.fptosi.sat / fptoui.sat, but to signed 8, 16 or 32 bits
//     and unsigned 8 or 16 a clamp in floating point and an exact fptosi (vector code;
//     LLVM expands the .sat intrinsics lane by lane on x86); anything to bool is `!= 0`;
//   - Select with a scalar condition evaluates only the operand it picks when an operand
//     loads memory (the select may guard an out-of-bounds load), as C's ?: does.
// Buffer accesses (emit_address below): the indices are flattened through the buffer's
// strides; a vector access whose lanes are consecutive elements (a Ramp of stride 1 in a
// dimension of stride 1) is one vector load or store, any other a gather or scatter.
//
//   Z[ramp(i * 8, 1, 8)] = X[ramp(i * 8, 1, 8)] + broadcast(1.0, 8)
//   →  %p = getelementptr inbounds float, ptr %X, i64 %o
//      %x = load <8 x float>, ptr %p, align 4
//      %z = fadd <8 x float> %x, <float 1.0, ...>
//      store <8 x float> %z, ptr %q, align 4
//
// Chapter: docs/module6-llvm-cpu.md#2-expressions-statements-intrinsics
#include "codegen.h"

#include "minic/ir/loop/analysis.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace minic::codegen::llvm_backend {

using namespace minic::loop;

namespace {

// The value of an integer constant, scalar or broadcast.
std::optional<int64_t> constant_int(const Expr& expr) {
  if (const IntImm* imm = expr.as<IntImm>()) return imm->value;
  if (const Broadcast* broadcast = expr.as<Broadcast>()) return constant_int(broadcast->value);
  return std::nullopt;
}

}  // namespace

llvm::Value* CodeGen::emit(const Expr& expr) {
  switch (expr.kind()) {
    case ExprKind::IntImm: {
      llvm::Type* type = value_type(expr.type());
      unsigned bits = type->getIntegerBitWidth();
      llvm::APInt value(64, static_cast<uint64_t>(expr.as<IntImm>()->value), true);
      if (bits == 1) return builder_.getInt1(!value.isZero());
      return llvm::ConstantInt::get(context_, bits < 64 ? value.trunc(bits) : value);
    }
    case ExprKind::FloatImm:
      return llvm::ConstantFP::get(value_type(expr.type()), expr.as<FloatImm>()->value);
    case ExprKind::Var: {
      auto it = vars_.find(expr.as<Var>());
      if (it == vars_.end()) error("variable " + expr.as<Var>()->name + " has no value here");
      return it->second;
    }
#define MINIC_BINARY_CASE(Node) \
  case ExprKind::Node:          \
    return emit_binary(expr, expr.as<Node>()->a, expr.as<Node>()->b);
      MINIC_BINARY_CASE(Add) MINIC_BINARY_CASE(Sub) MINIC_BINARY_CASE(Mul)
      MINIC_BINARY_CASE(Div) MINIC_BINARY_CASE(Mod) MINIC_BINARY_CASE(FloorDiv)
      MINIC_BINARY_CASE(FloorMod) MINIC_BINARY_CASE(Min) MINIC_BINARY_CASE(Max)
      MINIC_BINARY_CASE(EQ) MINIC_BINARY_CASE(NE) MINIC_BINARY_CASE(LT) MINIC_BINARY_CASE(LE)
      MINIC_BINARY_CASE(GT) MINIC_BINARY_CASE(GE) MINIC_BINARY_CASE(And) MINIC_BINARY_CASE(Or)
#undef MINIC_BINARY_CASE
    case ExprKind::Not:
      return builder_.CreateNot(emit(expr.as<Not>()->a));
    case ExprKind::Select:
      return emit_select(expr.as<Select>());
    case ExprKind::Cast:
      return emit_cast(expr.as<Cast>());
    case ExprKind::Load:
      return emit_load(expr.as<Load>());
    case ExprKind::Call:
      return emit_call(expr.as<Call>());
    case ExprKind::Ramp: {
      // base + stride * <0, 1, ..., lanes-1>
      const Ramp* ramp = expr.as<Ramp>();
      std::vector<uint64_t> iota(static_cast<size_t>(ramp->lanes));
      for (size_t lane = 0; lane < iota.size(); ++lane) iota[lane] = lane;
      llvm::Value* steps = llvm::ConstantDataVector::get(context_, iota);
      llvm::Value* stride = splat(emit(ramp->stride), ramp->lanes);
      return builder_.CreateAdd(splat(emit(ramp->base), ramp->lanes),
                                builder_.CreateMul(stride, steps));
    }
    case ExprKind::Broadcast: {
      const Broadcast* broadcast = expr.as<Broadcast>();
      return splat(emit(broadcast->value), broadcast->lanes);
    }
  }
  error("unknown expression kind");
}

llvm::Value* CodeGen::emit_binary(const Expr& expr, const Expr& a_expr, const Expr& b_expr) {
  // acc + dot4_u8i8(x, y): one instruction where the target has one (codegen_math.cpp).
  if (expr.kind() == ExprKind::Add) {
    for (auto [acc, term] : {std::pair{a_expr, b_expr}, std::pair{b_expr, a_expr}}) {
      const Call* call = term.as<Call>();
      if (call && call->name == "dot4_u8i8") return emit_dot4(emit(acc), call);
    }
  }
  llvm::Value* a = emit(a_expr);
  llvm::Value* b = emit(b_expr);
  DType dtype = a_expr.type().dtype;
  bool floating = is_float(dtype);
  bool is_signed = is_signed_int(dtype);
  bool boolean = dtype == DType::boolean;
  auto& B = builder_;
  switch (expr.kind()) {
    case ExprKind::Add: return floating ? B.CreateFAdd(a, b) : B.CreateAdd(a, b);
    case ExprKind::Sub: return floating ? B.CreateFSub(a, b) : B.CreateSub(a, b);
    case ExprKind::Mul: return floating ? B.CreateFMul(a, b) : B.CreateMul(a, b);
    case ExprKind::Div:
      if (floating) return B.CreateFDiv(a, b);
      return emit_integer_division(expr.kind(), dtype, a, b, b_expr);
    case ExprKind::Mod:
      if (floating) return B.CreateFRem(a, b);  // fmod
      return emit_integer_division(expr.kind(), dtype, a, b, b_expr);
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod:
      return emit_integer_division(expr.kind(), dtype, a, b, b_expr);
    case ExprKind::Min:
      if (floating) return B.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, b);
      if (boolean) return B.CreateAnd(a, b);
      return B.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin,
                                     a, b);
    case ExprKind::Max:
      if (floating) return B.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, b);
      if (boolean) return B.CreateOr(a, b);
      return B.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax,
                                     a, b);
    case ExprKind::EQ: return floating ? B.CreateFCmpOEQ(a, b) : B.CreateICmpEQ(a, b);
    case ExprKind::NE: return floating ? B.CreateFCmpUNE(a, b) : B.CreateICmpNE(a, b);
    case ExprKind::LT:
      if (floating) return B.CreateFCmpOLT(a, b);
      return is_signed ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b);
    case ExprKind::LE:
      if (floating) return B.CreateFCmpOLE(a, b);
      return is_signed ? B.CreateICmpSLE(a, b) : B.CreateICmpULE(a, b);
    case ExprKind::GT:
      if (floating) return B.CreateFCmpOGT(a, b);
      return is_signed ? B.CreateICmpSGT(a, b) : B.CreateICmpUGT(a, b);
    case ExprKind::GE:
      if (floating) return B.CreateFCmpOGE(a, b);
      return is_signed ? B.CreateICmpSGE(a, b) : B.CreateICmpUGE(a, b);
    case ExprKind::And: return B.CreateAnd(a, b);
    case ExprKind::Or: return B.CreateOr(a, b);
    default: break;
  }
  error(std::string("unexpected binary node ") + expr_kind_name(expr.kind()));
}

llvm::Value* CodeGen::emit_integer_division(ExprKind kind, DType dtype, llvm::Value* a,
                                            llvm::Value* b, const Expr& divisor) {
  auto& B = builder_;
  bool is_signed = is_signed_int(dtype);
  bool quotient = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
  llvm::Type* type = a->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* one = llvm::ConstantInt::get(type, 1);
  std::optional<int64_t> constant = constant_int(divisor);
  bool guarded = !constant || *constant == 0 || (is_signed && *constant == -1);
  llvm::Value* is_zero = nullptr;
  llvm::Value* is_minus_one = nullptr;
  if (guarded) {
    // Divide by 1 instead of 0 or -1, and put the right result in afterwards.
    is_zero = B.CreateICmpEQ(b, zero);
    llvm::Value* bad = is_zero;
    if (is_signed) {
      is_minus_one = B.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(type));
      bad = B.CreateOr(is_zero, is_minus_one);
    }
    b = B.CreateSelect(bad, one, b);
  }
  llvm::Value* q = is_signed ? B.CreateSDiv(a, b) : B.CreateUDiv(a, b);
  llvm::Value* r = is_signed ? B.CreateSRem(a, b) : B.CreateURem(a, b);
  llvm::Value* result = quotient ? q : r;
  bool floor = kind == ExprKind::FloorDiv || kind == ExprKind::FloorMod;
  if (floor && is_signed) {
    // Truncation rounded up exactly when the remainder is nonzero with the divisor's
    // opposite sign: then floor is one less, and the floored remainder is r + b.
    llvm::Value* opposite = B.CreateICmpNE(B.CreateICmpSLT(r, zero), B.CreateICmpSLT(b, zero));
    llvm::Value* round_down = B.CreateAnd(B.CreateICmpNE(r, zero), opposite);
    result = kind == ExprKind::FloorDiv ? B.CreateSub(q, B.CreateZExt(round_down, type))
                                        : B.CreateSelect(round_down, B.CreateAdd(r, b), r);
  }
  if (is_minus_one) result = B.CreateSelect(is_minus_one, quotient ? B.CreateNeg(a) : zero, result);
  if (is_zero) result = B.CreateSelect(is_zero, zero, result);
  return result;
}

llvm::Value* CodeGen::emit_select(const Select* node) {
  llvm::Value* condition = emit(node->condition);
  bool guards_memory = reads_memory(node->true_value) || reads_memory(node->false_value);
  if (node->condition.type().lanes > 1 || !guards_memory) {
    return builder_.CreateSelect(condition, emit(node->true_value), emit(node->false_value));
  }
  // if (condition) { t = ... } else { f = ... }; phi(t, f)
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  auto* then_block = llvm::BasicBlock::Create(context_, "select.true", function);
  auto* else_block = llvm::BasicBlock::Create(context_, "select.false", function);
  auto* merge_block = llvm::BasicBlock::Create(context_, "select.end", function);
  builder_.CreateCondBr(condition, then_block, else_block);
  builder_.SetInsertPoint(then_block);
  llvm::Value* if_true = emit(node->true_value);
  llvm::BasicBlock* true_end = builder_.GetInsertBlock();
  builder_.CreateBr(merge_block);
  builder_.SetInsertPoint(else_block);
  llvm::Value* if_false = emit(node->false_value);
  llvm::BasicBlock* false_end = builder_.GetInsertBlock();
  builder_.CreateBr(merge_block);
  builder_.SetInsertPoint(merge_block);
  llvm::PHINode* phi = builder_.CreatePHI(if_true->getType(), 2);
  phi->addIncoming(if_true, true_end);
  phi->addIncoming(if_false, false_end);
  return phi;
}

llvm::Value* CodeGen::emit_quantized(const Expr& value) {
  // The quotient of round(a / b) for a vector a and b one value in every lane.
  auto quotient = [&](const Expr& e) -> const Div* {
    const auto* round = e.as<Call>();
    const auto* div = round && round->name == "round" ? round->args[0].as<Div>() : nullptr;
    return div && div->b.as<Broadcast>() && options_.target.has_feature("fma") ? div : nullptr;
  };
  if (const Div* div = quotient(value)) return emit_round_of_quotient(div);
  const auto* sum = value.as<Add>();
  if (const Div* div = sum ? quotient(sum->a) : nullptr) {
    return builder_.CreateFAdd(emit_round_of_quotient(div), emit(sum->b));
  }
  return emit(value);
}

llvm::Value* CodeGen::emit_cast(const Cast* node) {
  DType from = node->value.type().dtype;
  DType to = node->type.dtype;
  // A quantisation, cast<int>(round(x / s) + z), saturates to the integer type's range.
  const bool quantized = from == DType::f32 && node->type.lanes > 1 && !is_float(to) &&
                         to != DType::boolean && dtype_size(to) <= 4;
  llvm::Value* value = quantized ? emit_quantized(node->value) : emit(node->value);
  llvm::Type* type = value_type(node->type);
  auto& B = builder_;
  if (from == to) return value;
  if (to == DType::boolean) {
    llvm::Value* zero = llvm::Constant::getNullValue(value->getType());
    return is_float(from) ? B.CreateFCmpUNE(value, zero) : B.CreateICmpNE(value, zero);
  }
  if (from == DType::boolean) {
    return is_float(to) ? B.CreateUIToFP(value, type) : B.CreateZExt(value, type);
  }
  if (is_float(from) && is_float(to)) {
    // Between f16 and bf16 (both 16 bits) through f32, as Tensor::cast does.
    if (dtype_size(from) == 2 && dtype_size(to) == 2) {
      value = B.CreateFPExt(value, value_type({DType::f32, node->type.lanes}));
      return emit_float_narrow(value, type);
    }
    return dtype_size(to) > dtype_size(from) ? B.CreateFPExt(value, type)
                                             : emit_float_narrow(value, type);
  }
  if (is_float(from)) {
    if (dtype_size(from) == 2) {
      value = B.CreateFPExt(value, value_type({DType::f32, node->type.lanes}));
    }
    if (dtype_size(to) < 4 || to == DType::i32) {
      // To 8, 16 or 32-bit signed: NaN made 0 and the value clamped to the type's range in
      // floating point, then an exact conversion through int32. The same values as
      // fptoui.sat and fptosi.sat, which LLVM expands lane by lane with branches on x86;
      // this stays vector code (a quantisation's final cast, an exact float sum made
      // int32). INT32_MAX has no float: the clamp stops at the largest float below 2^31,
      // and a value at or above 2^31 is made INT32_MAX after the conversion.
      const bool is_signed = is_signed_int(to);
      const int bits = 8 * dtype_size(to);
      llvm::Type* float_type = value->getType();
      const bool is_f32 = float_type->getScalarType()->isFloatTy();
      double low = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
      double high = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
      if (bits == 32 && is_f32) high = std::nextafter(std::ldexp(1.0f, 31), 0.0f);
      llvm::Value* above =
          B.CreateFCmpOGE(value, llvm::ConstantFP::get(float_type, std::ldexp(1.0, 31)));
      llvm::Value* is_nan = B.CreateFCmpUNO(value, value);
      value = B.CreateSelect(is_nan, llvm::ConstantFP::get(float_type, 0.0), value);
      // No NaN is left, so the clamps are plain compares and selects (one vmaxps and one
      // vminps on x86, where maxnum and minnum would check for NaN again).
      llvm::Value* low_value = llvm::ConstantFP::get(float_type, low);
      llvm::Value* high_value = llvm::ConstantFP::get(float_type, high);
      value = B.CreateSelect(B.CreateFCmpOLT(value, low_value), low_value, value);
      value = B.CreateSelect(B.CreateFCmpOGT(value, high_value), high_value, value);
      llvm::Value* wide = B.CreateFPToSI(value, value_type({DType::i32, node->type.lanes}));
      if (bits < 32) return B.CreateTrunc(wide, type);
      return B.CreateSelect(above, llvm::ConstantInt::get(type, (int64_t{1} << 31) - 1), wide);
    }
    auto intrinsic = is_signed_int(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return B.CreateIntrinsic(intrinsic, {type, value->getType()}, {value});
  }
  if (is_float(to)) {
    return is_signed_int(from) ? B.CreateSIToFP(value, type) : B.CreateUIToFP(value, type);
  }
  return B.CreateIntCast(value, type, is_signed_int(from));
}

llvm::Value* CodeGen::emit_float_narrow(llvm::Value* value, llvm::Type* type) {
  auto& B = builder_;
  if (!type->getScalarType()->isBFloatTy()) return B.CreateFPTrunc(value, type);
  // To bfloat16 in integer arithmetic, as BFloat16(float) does (src/tensor/dtype.cpp): an
  // fptrunc to bfloat would be a call to __truncsfbf2 on CPUs without AVX512-BF16, which
  // neither the JIT nor a plain link finds. A double is rounded to float first, as there.
  llvm::Type* f32 = value->getType()->getWithNewType(B.getFloatTy());
  if (!value->getType()->getScalarType()->isFloatTy()) value = B.CreateFPTrunc(value, f32);
  llvm::Type* i32 = f32->getWithNewType(B.getInt32Ty());
  auto constant = [&](uint32_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value* bits = B.CreateBitCast(value, i32);
  llvm::Value* upper = B.CreateLShr(bits, constant(16));
  // Round to nearest even: add 0x7fff, plus 1 when the kept part is odd.
  llvm::Value* rounding = B.CreateAdd(constant(0x7fff), B.CreateAnd(upper, constant(1)));
  llvm::Value* rounded = B.CreateLShr(B.CreateAdd(bits, rounding), constant(16));
  // A NaN stays a quiet NaN.
  llvm::Value* is_nan = B.CreateICmpUGT(B.CreateAnd(bits, constant(0x7fffffff)),
                                        constant(0x7f800000));
  llvm::Value* result = B.CreateSelect(is_nan, B.CreateOr(upper, constant(0x40)), rounded);
  llvm::Type* i16 = f32->getWithNewType(B.getInt16Ty());
  return B.CreateBitCast(B.CreateTrunc(result, i16), type);
}

namespace {

// Adds `term` to an i64 sum that may still be empty (null). The sums are offsets of
// elements inside a buffer, so they do not overflow (nsw).
llvm::Value* add_term(llvm::IRBuilder<>& builder, llvm::Value* sum, llvm::Value* term) {
  return sum ? builder.CreateAdd(sum, term, "", false, true) : term;
}

}  // namespace

CodeGen::Address CodeGen::emit_address(const Buffer& buffer, const std::vector<Expr>& indices,
                                       int lanes) {
  // The flat offset is scalar + lane * lane_stride + other: `scalar` sums the scalar
  // indices (and the bases of Ramps, the values of Broadcasts) times their strides,
  // `lane_stride` the Ramps' strides, `other` any other vector index.
  auto found = buffers_.find(buffer.get());
  if (found == buffers_.end()) error("buffer " + buffer->name + " is not allocated here");
  auto& B = builder_;
  llvm::Value* scalar = nullptr;
  llvm::Value* lane_stride = nullptr;
  llvm::Value* other = nullptr;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t stride = buffer->strides[d];
    auto scaled = [&](llvm::Value* value) {
      if (stride == 1) return value;
      return B.CreateMul(value, splat_like(i64(stride), value), "", false, true);
    };
    const Expr& index = indices[d];
    if (index.type().lanes == 1) {
      scalar = add_term(B, scalar, scaled(emit(index)));
    } else if (const Ramp* ramp = index.as<Ramp>()) {
      scalar = add_term(B, scalar, scaled(emit(ramp->base)));
      lane_stride = add_term(B, lane_stride, scaled(emit(ramp->stride)));
    } else if (const Broadcast* broadcast = index.as<Broadcast>()) {
      scalar = add_term(B, scalar, scaled(emit(broadcast->value)));
    } else {
      other = add_term(B, other, scaled(emit(index)));
    }
  }
  if (!scalar) scalar = i64(0);
  llvm::Type* element = memory_type(buffer->dtype);
  Address address;
  auto* constant_stride = llvm::dyn_cast_or_null<llvm::ConstantInt>(lane_stride);
  bool consecutive = !other && constant_stride && constant_stride->isOne();
  if (lanes == 1 || consecutive) {
    address.pointer = B.CreateInBoundsGEP(element, found->second, scalar);
    return address;
  }
  std::vector<uint64_t> iota(static_cast<size_t>(lanes));
  for (size_t lane = 0; lane < iota.size(); ++lane) iota[lane] = lane;
  llvm::Value* offsets = splat(scalar, lanes);
  if (lane_stride) {
    llvm::Value* steps = llvm::ConstantDataVector::get(context_, iota);
    offsets = B.CreateAdd(offsets, B.CreateMul(splat(lane_stride, lanes), steps));
  }
  if (other) offsets = B.CreateAdd(offsets, other);
  address.lane_pointers = B.CreateInBoundsGEP(element, found->second, offsets);
  return address;
}

// Inside a loop annotated prefetch_ahead, a vector load of an input may be followed by
// prefetches (codegen_prefetch.cpp).
llvm::Value* CodeGen::emit_load(const Load* node) {
  int lanes = node->type.lanes;
  DType dtype = node->buffer->dtype;
  llvm::Type* element = memory_type(dtype);
  llvm::Align align(static_cast<uint64_t>(dtype_size(dtype)));
  Address address = emit_address(node->buffer, node->indices, lanes);
  llvm::Type* type = lanes == 1 ? element : llvm::FixedVectorType::get(element, lanes);
  llvm::Value* value = nullptr;
  if (address.pointer) {
    value = builder_.CreateAlignedLoad(type, address.pointer, align);
    if (prefetch_.ahead > 0) emit_prefetches(node, element, address.pointer);
  } else {
    value = builder_.CreateMaskedGather(type, address.lane_pointers, align);
  }
  // Bools are bytes in memory: any nonzero byte is true, as the interpreter reads them.
  if (dtype == DType::boolean) {
    value = builder_.CreateICmpNE(value, llvm::Constant::getNullValue(type));
  }
  return value;
}

void CodeGen::emit_store(const Store* node) {
  llvm::Value* value = emit(node->value);
  int lanes = node->value.type().lanes;
  DType dtype = node->buffer->dtype;
  llvm::Type* element = memory_type(dtype);
  llvm::Align align(static_cast<uint64_t>(dtype_size(dtype)));
  if (dtype == DType::boolean) {
    llvm::Type* bytes = lanes == 1 ? element : llvm::FixedVectorType::get(element, lanes);
    value = builder_.CreateZExt(value, bytes);
  }
  Address address = emit_address(node->buffer, node->indices, lanes);
  if (address.pointer) {
    builder_.CreateAlignedStore(value, address.pointer, align);
  } else {
    // Lanes storing to one element store in lane order: the last one stays, as in the
    // interpreter.
    builder_.CreateMaskedScatter(value, address.lane_pointers, align);
  }
}

}  // namespace minic::codegen::llvm_backend
