// The math intrinsics of the loop IR (Call) → LLVM IR. Course module 6.
//
// The interpreter computes every intrinsic in double and rounds the result to the
// expression's type (src/ir/loop/interp_eval.cpp). The compiled code does the same where
// that costs little, and uses the exact instruction where one exists:
//   fabs floor ceil round sqrt   LLVM intrinsics in the value's own type: these are exact
//                                (correctly rounded), so they agree with the interpreter;
//                                round is llvm.roundeven (half to even, like nearbyint)
//   exp sigmoid erf (f32)        straight-line code in f32 below, no calls, so a vector
//                                holds 16 lanes of it (AVX-512); within 2 f32 ulps (erf:
//                                3), but exp is 0 below -87 (the subnormal results, under
//                                1.7e-38, flushed)
//   tanh (f32)                   straight-line code in double below: (e - 1) / (e + 1)
//                                loses digits near 0 that f32 could not spare; accurate to
//                                a few double ulps, below one f32 ulp
//   pow (f32), exponent a        products of x, sqrt x and sqrt sqrt x (below): no calls,
//   constant quarter in [-4, 4]  vectorised; within 3 f32 ulps (LRN's x^0.75, x^2, x^-0.5)
//   log pow                      llvm.log / llvm.pow on double (libm calls, one a lane)
//   tanh and erf of f64          libm's tanh / erf, one call a lane (their f32 forms lose
//                                relative precision near 0 that f64 would show)
//   sin cos tan asin acos atan   libm's double functions, one call a lane: simple and
//   sinh cosh asinh acosh atanh  correctly rounded to f32 in practice, but not vectorised
//   shift_left shift_right       shl / lshr on the unsigned integer itself, selecting 0
//                                where the amount is the bit width or more (LLVM's
//                                shifts give poison there; select keeps it unused)
//   acc + dot4_u8i8(a, b)        AVX-512 VNNI's vpdpbusd (llvm.x86.avx512.vpdpbusd.512) on
//                                16 lanes where the target has avx512vnni, the 256- and
//                                128-bit forms on 8 and 4 lanes with avxvnni or
//                                avx512vnni + avx512vl; elsewhere the four byte products
//                                by shifts, masks and multiplies (emit_dot4)
//
// exp(x) in three steps (the textbook method):
//   1. x = n ln2 + r with n = round(x / ln2), so |r| <= ln2 / 2; ln2 is split in two parts
//      (ln2_hi has trailing zero bits, so n * ln2_hi is exact) to keep r accurate;
//   2. e^r by its Taylor polynomial to degree 12 in double (the first term left out is
//      below 2e-16 relative for |r| <= 0.35), to degree 7 in f32 (below 6e-9, a tenth of
//      an f32 ulp), in Horner form;
//   3. e^x = e^r * 2^n, the power built from its exponent bits, in two halves so that
//      results near overflow and (in double) in the subnormal range come out right. In f32,
//      x below -87 gives 0 (kExpFlushBelow): the subnormal results there, below 1.7e-38,
//      would cost a microcode assist each on x86 without flush-to-zero.
//
// erf(x) of f64 is libm's. Of f32, with |x| clamped to 4 (beyond it erf rounds to +-1):
//   - below |x| = 0.75, the Maclaurin series 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)),
//     9 terms (the first left out is below 1e-9);
//   - above, 1 - erfc(|x|) with erfc z = t e^(-z^2 + P(t)), t = 1 / (1 + z/2) and P the
//     degree-8 polynomial fitted by least squares to log(erfc(z) / t) + z^2 at 4000 points
//     of [0.75, 4.5] (kErfcFit; relative error below 1e-8 on [0.75, 4]), erf being at
//     least 0.7 there so that erfc's error stays below an ulp of it.
//
// pow(x, c) of f32 with c = k/4 a constant, |k| <= 16: x^c = x^w * (sqrt x)^a * (sqrt sqrt x)^b
// with |k| = 4w + 2a + b, x^w by repeated squaring, then 1 / x^|c| where k < 0. sqrt is
// correctly rounded and each product adds half an ulp. Where the power has a fraction
// (a or b), x = -inf is read as +inf and -0 as +0, as pow does (sqrt would give NaN and
// -0); a negative x gives NaN through sqrt, as pow does.
//
//   y = exp(x)  (f32)  →  %d = fpext float %x to double; ... ; %y = fptrunc double %e to float
//
// Chapter: docs/module6-llvm-cpu.md#2-expressions-statements-intrinsics
#include "codegen.h"

#include "minic/support/error.h"

#include <llvm/IR/IntrinsicsX86.h>

#include <cmath>
#include <optional>

namespace minic::codegen::llvm_backend {

using namespace minic::loop;

namespace {

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2High = 6.93147180369123816490e-01;  // ln 2 to 32 bits
constexpr double kLn2Low = 1.90821492927058770002e-10;   // ln 2 - kLn2High
constexpr int kExpDegree = 12;
constexpr float kLn2HighF32 = 0.693359375f;     // ln 2 to 9 bits: n * it is exact in f32
constexpr float kLn2LowF32 = -2.12194440e-4f;   // ln 2 - kLn2HighF32
constexpr int kExpDegreeF32 = 7;
// f32 e^x is computed as 0 below this: e^-87 = 1.6e-38, just above the smallest normal f32
// (1.2e-38), so no step of the computation is subnormal.
constexpr float kExpFlushBelow = -87.0f;
constexpr int kMaxQuarterPower = 16;  // pow by roots for exponents k/4 with |k| up to this
constexpr double kErfClamp = 4.0;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kErfSeriesBelow = 0.75;
constexpr int kErfSeriesTerms = 9;
// P(t) = sum_k kErfcFit[k] t^k (see erf above).
constexpr double kErfcFit[] = {-1.2650641597465146, 0.9917837226154766, 0.44006048833997813,
                               -0.2054225312394866, 0.6894555324108513, -1.3930413749915767,
                               0.977724567439382,   -0.22367098039874198, -0.01204114509428801};

// The intrinsics computed by libm's double function of the same name.
bool is_libm_function(const std::string& name) {
  static const char* const kNames[] = {"sin",  "cos",  "tan",   "asin",  "acos", "atan",
                                       "sinh", "cosh", "asinh", "acosh", "atanh"};
  for (const char* candidate : kNames) {
    if (name == candidate) return true;
  }
  return false;
}

// k where `exponent` is the constant k/4 (in every lane) with |k| <= kMaxQuarterPower.
std::optional<int> constant_quarters(llvm::Value* exponent) {
  auto* constant = llvm::dyn_cast<llvm::Constant>(exponent);
  if (constant && constant->getType()->isVectorTy()) constant = constant->getSplatValue();
  auto* value = llvm::dyn_cast_or_null<llvm::ConstantFP>(constant);
  if (!value) return std::nullopt;
  double quarters = value->getValueAPF().convertToFloat() * 4.0;
  if (quarters != std::round(quarters) || std::fabs(quarters) > kMaxQuarterPower) {
    return std::nullopt;
  }
  return static_cast<int>(quarters);
}

}  // namespace

llvm::Value* CodeGen::emit_dot4(llvm::Value* acc, const Call* node) {
  auto& B = builder_;
  llvm::Value* a = emit(node->args[0]);
  llvm::Value* b = emit(node->args[1]);
  const int lanes = node->type.lanes;
  const Target& target = options_.target;
  const bool vl = target.has_feature("avxvnni") ||
                  (target.has_feature("avx512vnni") && target.has_feature("avx512vl"));
  // The widest instruction whose lanes divide the vector's; a longer vector (a tile of two
  // vectors) is done in pieces of that width, put back together after.
  std::optional<llvm::Intrinsic::ID> vnni;
  int width = 0;
  if (lanes % 16 == 0 && target.has_feature("avx512vnni")) {
    vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    width = 16;
  } else if (lanes % 8 == 0 && vl) {
    vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    width = 8;
  } else if (lanes % 4 == 0 && vl) {
    vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    width = 4;
  }
  if (vnni && lanes == width) return B.CreateIntrinsic(*vnni, {}, {acc, a, b});
  if (vnni) {
    auto piece = [&](llvm::Value* v, int first) {
      std::vector<int> mask(static_cast<size_t>(width));
      for (int lane = 0; lane < width; ++lane) mask[lane] = first + lane;
      return B.CreateShuffleVector(v, mask);
    };
    llvm::Value* result = nullptr;
    for (int first = 0; first < lanes; first += width) {
      llvm::Value* part =
          B.CreateIntrinsic(*vnni, {}, {piece(acc, first), piece(a, first), piece(b, first)});
      // Widen the piece to the whole vector and place its lanes.
      std::vector<int> mask(static_cast<size_t>(lanes));
      for (int lane = 0; lane < lanes; ++lane) {
        bool mine = lane >= first && lane < first + width;
        mask[lane] = mine ? lanes + (lane - first) : lane;
      }
      std::vector<int> widen(static_cast<size_t>(lanes));
      for (int lane = 0; lane < lanes; ++lane) widen[lane] = lane < width ? lane : -1;
      llvm::Value* wide = B.CreateShuffleVector(part, widen);
      result = B.CreateShuffleVector(result ? result : acc, wide, mask);
    }
    return result;
  }
  // Byte t of a, zero-extended, times byte t of b, sign-extended (shifted to the top, then
  // arithmetically back down), added in turn.
  llvm::Type* type = a->getType();
  auto constant = [&](uint64_t value) { return llvm::ConstantInt::get(type, value); };
  for (int t = 0; t < 4; ++t) {
    llvm::Value* a_byte = B.CreateAnd(B.CreateLShr(a, constant(8 * t)), constant(0xff));
    llvm::Value* b_byte = B.CreateAShr(B.CreateShl(b, constant(24 - 8 * t)), constant(24));
    acc = B.CreateAdd(acc, B.CreateMul(a_byte, b_byte));
  }
  return acc;
}

// round(a / b) for a conversion to an integer of 32 bits or fewer, which saturates (a
// quantisation: cast(round(x / s) + z)), b one value in every lane, without a vector
// division where the target fuses multiply-adds: a vector division takes 10-16 cycles of
// an x86 core, a multiply-add half of one. With y = 1 / b (one division of the
// splat, hoisted), q = a y is within an ulp of a / b, the remainder a - b q is exact as
// fma(-b, q, a), and c = fma(r, y, q) is a / b correctly rounded (Markstein's theorem)
// where y is normal and the remainder does not underflow. Where it does (|a| below about
// 2^-100) c may differ from a / b in its last bit, but both are far below 1/2 and round to
// the same zero; where c is not finite (a / b overflows, a is infinite or NaN) q is
// taken, which saturates as a / b does. Run against roundeven(a / b) for every float a
// and 21 scales, the rounded values agree but where the quotient overflows, where both
// saturate. A scale outside [2^-126, 2^126] (y not normal) divides, in a branch taken or
// not for the whole kernel.
llvm::Value* CodeGen::emit_round_of_quotient(const loop::Div* quotient) {
  auto& B = builder_;
  llvm::Value* a = emit(quotient->a);
  llvm::Value* b = emit(quotient->b);
  llvm::IRBuilderBase::FastMathFlagGuard exact(B);
  B.clearFastMathFlags();  // each operation rounded as written
  llvm::Type* type = a->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  auto fma = [&](llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {x, y, z});
  };
  auto fabs = [&](llvm::Value* x) { return B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); };
  llvm::Value* scale = B.CreateExtractElement(fabs(b), uint64_t{0});
  llvm::Value* normal = B.CreateAnd(
      B.CreateFCmpOGE(scale, llvm::ConstantFP::get(scale->getType(), 0x1p-126)),
      B.CreateFCmpOLE(scale, llvm::ConstantFP::get(scale->getType(), 0x1p126)));
  llvm::Value* y = B.CreateFDiv(constant(1.0), b);
  llvm::Value* q = B.CreateFMul(a, y);
  llvm::Value* c = fma(fma(B.CreateFNeg(b), q, a), y, q);
  llvm::Value* fast = B.CreateSelect(B.CreateFCmpOLE(fabs(c), constant(0x1.fffffep127)), c, q);
  llvm::BasicBlock* from_fast = B.GetInsertBlock();
  llvm::Function* function = from_fast->getParent();
  auto* divide = llvm::BasicBlock::Create(context_, "quotient.divide", function);
  auto* done = llvm::BasicBlock::Create(context_, "quotient.done", function);
  B.CreateCondBr(normal, done, divide);
  B.SetInsertPoint(divide);
  llvm::Value* divided = B.CreateFDiv(a, b);
  B.CreateBr(done);
  B.SetInsertPoint(done);
  llvm::PHINode* result = B.CreatePHI(type, 2);
  result->addIncoming(fast, from_fast);
  result->addIncoming(divided, divide);
  return B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, result);
}

llvm::Value* CodeGen::emit_call(const Call* node) {
  const std::string& name = node->name;
  DType dtype = node->type.dtype;
  std::vector<llvm::Value*> args;
  auto& B = builder_;
  if (name == "dot4_u8i8") {
    return emit_dot4(llvm::ConstantInt::get(value_type(node->type), 0), node);
  }
  if (name == "shift_left" || name == "shift_right") {
    if (!is_unsigned_int(dtype)) {
      error("intrinsic " + name + " of " + type_name(node->type) + ": shifts take unsigned "
            "integers");
    }
    for (const Expr& arg : node->args) args.push_back(emit(arg));
    llvm::Type* type = args[0]->getType();
    llvm::Value* shifted = name == "shift_left" ? B.CreateShl(args[0], args[1])
                                                : B.CreateLShr(args[0], args[1]);
    unsigned bits = type->getScalarSizeInBits();
    llvm::Value* too_far = B.CreateICmpUGE(args[1], llvm::ConstantInt::get(type, bits));
    return B.CreateSelect(too_far, llvm::ConstantInt::get(type, 0), shifted);
  }
  if (!is_float(dtype)) {
    error("intrinsic " + name + " of " + type_name(node->type) + ": intrinsics take floats");
  }
  for (const Expr& arg : node->args) args.push_back(emit(arg));
  auto exact = [&](llvm::Intrinsic::ID id) { return B.CreateUnaryIntrinsic(id, args[0]); };
  if (dtype == DType::f32 && name == "exp") return emit_exp_f32(args[0]);
  if (dtype == DType::f32 && name == "pow") {
    if (std::optional<int> quarters = constant_quarters(args[1])) {
      return emit_power_by_roots(args[0], *quarters);
    }
  }
  if (dtype == DType::f32 && name == "sigmoid") {
    // e = e^-|x| never overflows: sigmoid x = 1 / (1 + e) for x >= 0, e / (1 + e) below.
    llvm::Value* x = args[0];
    llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
    llvm::Value* e = emit_exp_f32(B.CreateFNeg(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)));
    llvm::Value* positive = B.CreateFDiv(one, B.CreateFAdd(one, e));
    llvm::Value* zero = llvm::ConstantFP::get(x->getType(), 0.0);
    return B.CreateSelect(B.CreateFCmpOLT(x, zero), B.CreateFMul(e, positive), positive);
  }
  if (name == "fabs") return exact(llvm::Intrinsic::fabs);
  if (name == "floor") return exact(llvm::Intrinsic::floor);
  if (name == "ceil") return exact(llvm::Intrinsic::ceil);
  if (name == "round") return exact(llvm::Intrinsic::roundeven);
  if (name == "sqrt") return exact(llvm::Intrinsic::sqrt);

  // The rest in double, rounded once to the type at the end.
  llvm::Type* type = value_type(node->type);
  llvm::Type* double_type = value_type({DType::f64, node->type.lanes});
  auto widen = [&](llvm::Value* value) {
    return dtype == DType::f64 ? value : B.CreateFPExt(value, double_type);
  };
  llvm::Value* x = widen(args[0]);
  llvm::Value* result = nullptr;
  if (name == "exp") {
    result = emit_exp_f64(x);
  } else if (name == "sigmoid") {
    llvm::Value* one = llvm::ConstantFP::get(double_type, 1.0);
    result = B.CreateFDiv(one, B.CreateFAdd(one, emit_exp_f64(B.CreateFNeg(x))));
  } else if (name == "tanh") {
    result = dtype == DType::f64 ? emit_libm_call("tanh", x) : emit_tanh_f64(x);
  } else if (name == "erf" && dtype == DType::f64) {
    result = emit_libm_call("erf", x);
  } else if (name == "erf") {
    // In f32 (f16 and bf16 widened to it), rounded once to the type.
    llvm::Type* f32 = value_type({DType::f32, node->type.lanes});
    llvm::Value* erf = emit_erf_f32(dtype == DType::f32 ? args[0] : B.CreateFPExt(args[0], f32));
    return dtype == DType::f32 ? erf : emit_float_narrow(erf, type);
  } else if (name == "log") {
    result = B.CreateUnaryIntrinsic(llvm::Intrinsic::log, x);
  } else if (name == "pow") {
    result = B.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, widen(args[1]));
  } else if (is_libm_function(name)) {
    result = emit_libm_call(name.c_str(), x);
  } else {
    error("the LLVM backend has no intrinsic '" + name + "'");
  }
  return dtype == DType::f64 ? result : emit_float_narrow(result, type);
}

llvm::Value* CodeGen::emit_exp_f64(llvm::Value* x) {
  auto& B = builder_;
  llvm::Type* type = x->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  // Beyond these e^x is inf or 0 in double; clamping keeps n in range. NaN passes through
  // the comparisons (they are false) and is put back at the end.
  llvm::Value* clamped = B.CreateSelect(B.CreateFCmpOGT(x, constant(710.0)), constant(710.0), x);
  clamped = B.CreateSelect(B.CreateFCmpOLT(clamped, constant(-746.0)), constant(-746.0), clamped);
  llvm::Value* is_nan = B.CreateFCmpUNO(x, x);
  clamped = B.CreateSelect(is_nan, constant(0.0), clamped);
  // 1. x = n ln2 + r
  llvm::Value* n = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                          B.CreateFMul(clamped, constant(kLog2E)));
  llvm::Value* r = B.CreateFSub(clamped, B.CreateFMul(n, constant(kLn2High)));
  r = B.CreateFSub(r, B.CreateFMul(n, constant(kLn2Low)));
  // 2. e^r = 1 + r (1 + r (1/2 + r (1/6 + ...)))
  std::vector<double> coefficients(kExpDegree + 1);
  coefficients[0] = 1.0;
  for (int k = 1; k <= kExpDegree; ++k) coefficients[k] = coefficients[k - 1] / k;
  llvm::Value* p = constant(coefficients[kExpDegree]);
  for (int k = kExpDegree - 1; k >= 0; --k) {
    p = B.CreateFAdd(B.CreateFMul(p, r), constant(coefficients[k]));
  }
  // 3. 2^n = 2^n1 * 2^n2 with n1 = floor(n / 2): each half is a normal double.
  llvm::Type* int_type = type->getWithNewType(B.getInt64Ty());
  llvm::Value* n_int = B.CreateFPToSI(n, int_type);
  llvm::Value* n1 = B.CreateAShr(n_int, llvm::ConstantInt::get(int_type, 1));
  llvm::Value* n2 = B.CreateSub(n_int, n1);
  auto power_of_two = [&](llvm::Value* exponent) {
    llvm::Value* biased = B.CreateAdd(exponent, llvm::ConstantInt::get(int_type, 1023));
    return B.CreateBitCast(B.CreateShl(biased, llvm::ConstantInt::get(int_type, 52)), type);
  };
  llvm::Value* result = B.CreateFMul(B.CreateFMul(p, power_of_two(n1)), power_of_two(n2));
  return B.CreateSelect(is_nan, x, result);
}

llvm::Value* CodeGen::emit_exp_f32(llvm::Value* x) {
  auto& B = builder_;
  llvm::Type* type = x->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  // Above 89 e^x is inf in f32 (and 2^n stays a product of two normal halves). Below
  // kExpFlushBelow the result is 0: computing a subnormal result (or one that underflows)
  // costs a microcode assist of a hundred cycles or more on x86 cores without
  // flush-to-zero, and an attention mask's -10000 sends half a softmax's row there.
  llvm::Value* clamped = B.CreateSelect(B.CreateFCmpOGT(x, constant(89.0)), constant(89.0), x);
  llvm::Value* flushed = B.CreateFCmpOLT(x, constant(kExpFlushBelow));
  clamped = B.CreateSelect(flushed, constant(kExpFlushBelow), clamped);
  llvm::Value* is_nan = B.CreateFCmpUNO(x, x);
  clamped = B.CreateSelect(is_nan, constant(0.0), clamped);
  // 1. x = n ln2 + r, with fused multiply-adds
  auto fma = [&](llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {a, b, c});
  };
  llvm::Value* n = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                          B.CreateFMul(clamped, constant(kLog2E)));
  llvm::Value* minus_n = B.CreateFNeg(n);
  llvm::Value* r = fma(minus_n, constant(kLn2HighF32), clamped);
  r = fma(minus_n, constant(kLn2LowF32), r);
  // 2. e^r by Taylor to degree 7
  std::vector<double> coefficients(kExpDegreeF32 + 1);
  coefficients[0] = 1.0;
  for (int k = 1; k <= kExpDegreeF32; ++k) coefficients[k] = coefficients[k - 1] / k;
  llvm::Value* p = constant(coefficients[kExpDegreeF32]);
  for (int k = kExpDegreeF32 - 1; k >= 0; --k) p = fma(p, r, constant(coefficients[k]));
  // 3. 2^n = 2^n1 * 2^n2, each half a normal f32
  llvm::Type* int_type = type->getWithNewType(B.getInt32Ty());
  llvm::Value* n_int = B.CreateFPToSI(n, int_type);
  llvm::Value* n1 = B.CreateAShr(n_int, llvm::ConstantInt::get(int_type, 1));
  llvm::Value* n2 = B.CreateSub(n_int, n1);
  auto power_of_two = [&](llvm::Value* exponent) {
    llvm::Value* biased = B.CreateAdd(exponent, llvm::ConstantInt::get(int_type, 127));
    return B.CreateBitCast(B.CreateShl(biased, llvm::ConstantInt::get(int_type, 23)), type);
  };
  llvm::Value* result = B.CreateFMul(B.CreateFMul(p, power_of_two(n1)), power_of_two(n2));
  result = B.CreateSelect(flushed, constant(0.0), result);
  return B.CreateSelect(is_nan, x, result);
}

llvm::Value* CodeGen::emit_power_by_roots(llvm::Value* x, int quarters) {
  auto& B = builder_;
  llvm::Type* type = x->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  const int count = std::abs(quarters);
  llvm::Value* result = nullptr;
  auto times = [&](llvm::Value* factor) {
    result = result ? B.CreateFMul(result, factor) : factor;
  };
  // With a fraction, x = -inf reads as +inf and -0 as +0 throughout (pow's answers there);
  // a negative x still gives NaN through sqrt.
  const bool fraction = count % 4 != 0;
  llvm::Value* base = x;
  if (fraction) {
    llvm::Value* is_minus_inf = B.CreateFCmpOEQ(x, constant(-INFINITY));
    base = B.CreateSelect(is_minus_inf, constant(INFINITY), B.CreateFAdd(x, constant(0.0)));
  }
  // x^w, w = count / 4, by squaring: x^w = prod of x^(2^i) over the set bits i of w.
  llvm::Value* square = base;
  for (int whole = count / 4; whole > 0; whole >>= 1) {
    if (whole & 1) times(square);
    if (whole > 1) square = B.CreateFMul(square, square);
  }
  if (fraction) {
    llvm::Value* root = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, base);
    if (count % 4 >= 2) times(root);
    if (count % 2 == 1) times(B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, root));
  }
  if (!result) return constant(1.0);  // x^0 is 1, NaN included
  return quarters < 0 ? B.CreateFDiv(constant(1.0), result) : result;
}

llvm::Value* CodeGen::emit_tanh_f64(llvm::Value* x) {
  // tanh |x| = (e - 1) / (e + 1) with e = exp(2 |x|), then x's sign. Below 1e-8 the
  // subtraction would lose the digits f32 needs, and tanh x = x there to f32 precision;
  // above 20 tanh is 1 in double, and clamping keeps e finite.
  auto& B = builder_;
  llvm::Type* type = x->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  llvm::Value* a = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* clamped = B.CreateSelect(B.CreateFCmpOGT(a, constant(20.0)), constant(20.0), a);
  llvm::Value* e = emit_exp_f64(B.CreateFMul(clamped, constant(2.0)));
  llvm::Value* t = B.CreateFDiv(B.CreateFSub(e, constant(1.0)), B.CreateFAdd(e, constant(1.0)));
  t = B.CreateSelect(B.CreateFCmpOLT(a, constant(1e-8)), a, t);
  return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, x);
}

llvm::Value* CodeGen::emit_erf_f32(llvm::Value* x) {
  auto& B = builder_;
  llvm::Type* type = x->getType();
  auto constant = [&](double value) { return llvm::ConstantFP::get(type, value); };
  auto fma = [&](llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {a, b, c});
  };
  // |x| at most kErfClamp; NaN passes (the comparison is false).
  llvm::Value* a = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  a = B.CreateSelect(B.CreateFCmpOGT(a, constant(kErfClamp)), constant(kErfClamp), a);
  llvm::Value* u = B.CreateFMul(a, a);
  // The series: a * sum_n c_n u^n, c_n = 2/sqrt(pi) (-1)^n / (n! (2n+1)), in Horner form.
  std::vector<double> series(kErfSeriesTerms);
  double factorial = 1.0;
  for (int n = 0; n < kErfSeriesTerms; ++n) {
    if (n > 0) factorial *= n;
    series[n] = kTwoOverSqrtPi * (n % 2 == 0 ? 1.0 : -1.0) / (factorial * (2 * n + 1));
  }
  llvm::Value* sum = constant(series.back());
  for (int n = kErfSeriesTerms - 2; n >= 0; --n) sum = fma(sum, u, constant(series[n]));
  llvm::Value* small = B.CreateFMul(a, sum);
  // 1 - erfc(a), erfc a = t e^(-a^2 + P(t)). The division may be a reciprocal estimate
  // refined by a Newton step (arcp, and ninf: its divisor is 1 to 3; on x86, rcp14 and
  // two multiply-adds, where a vector division takes several times as long): an ulp or
  // two of t is a fraction of an ulp of erf, erfc being at most 0.43 times erf there.
  llvm::Value* t = B.CreateFDiv(constant(1.0), fma(a, constant(0.5), constant(1.0)));
  if (auto* division = llvm::dyn_cast<llvm::Instruction>(t)) {
    llvm::FastMathFlags flags;
    flags.setAllowReciprocal();
    flags.setNoInfs();
    division->setFastMathFlags(flags);
  }
  const int degree = static_cast<int>(std::size(kErfcFit)) - 1;
  llvm::Value* p = constant(kErfcFit[degree]);
  for (int k = degree - 1; k >= 0; --k) p = fma(p, t, constant(kErfcFit[k]));
  llvm::Value* erfc = B.CreateFMul(t, emit_exp_f32(B.CreateFSub(p, u)));
  llvm::Value* large = B.CreateFSub(constant(1.0), erfc);
  llvm::Value* result =
      B.CreateSelect(B.CreateFCmpOLT(a, constant(kErfSeriesBelow)), small, large);
  return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
}

llvm::Value* CodeGen::emit_libm_call(const char* name, llvm::Value* x) {
  auto& B = builder_;
  llvm::Type* scalar_type = B.getDoubleTy();
  llvm::FunctionCallee function = module_.getOrInsertFunction(name, scalar_type, scalar_type);
  if (auto* declared = llvm::dyn_cast<llvm::Function>(function.getCallee())) {
    // Like clang with -fno-math-errno: a pure function, free to hoist and to remove.
    declared->setDoesNotAccessMemory();
    declared->setDoesNotThrow();
    declared->setWillReturn();
  }
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vector) return B.CreateCall(function, {x});
  llvm::Value* result = llvm::PoisonValue::get(vector);
  for (unsigned lane = 0; lane < vector->getNumElements(); ++lane) {
    llvm::Value* value = B.CreateCall(function, {B.CreateExtractElement(x, lane)});
    result = B.CreateInsertElement(result, value, lane);
  }
  return result;
}

}  // namespace minic::codegen::llvm_backend
