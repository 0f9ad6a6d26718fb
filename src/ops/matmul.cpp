// MatMul and Gemm: matrix products. Course module 2 (the graph op) and module 3 (the loop
// nest every CPU and GPU schedule of a matrix product starts from).
//
// MatMul follows numpy.matmul. Operands of rank 2 or more are stacks of matrices: the last
// two dimensions are the matrix, the leading ones are batch dimensions, broadcast against
// each other as in Add. A 1-D operand is promoted to a matrix -- A of shape [K] to [1, K],
// B of shape [K] to [K, 1] -- and the dimension added is removed from the result:
//   [2,3,4] x [4,5] -> [2,3,5]      [4] x [2,4,5] -> [2,5]      [4] x [4] -> []
//
// Gemm is the 2-D product of BLAS: Y = alpha * A' * B' + beta * C, where A' is A or its
// transpose (transA), B' is B or its transpose (transB), and the optional C is broadcast
// one way to Y's shape [M, N]: a bias of shape [N], [1, N], [M, 1] or a scalar.
//
// The kernel multiplies one pair of matrices with the loop order i-k-j,
//   for i: for k: for j: C[i, j] += A[i, k] * B[k, j]
// so that the inner loop walks a row of B and a row of C contiguously. When B is stored
// transposed (Gemm with transB = 1: how PyTorch exports nn.Linear, and so VGG-19's fully
// connected layers of 25088 x 4096), a row of B' is a column in memory, and the contiguous
// order is instead i-j-k: a dot product of a row of A with a row of the stored B. Both
// orders add the products for each C[i, j] in the same order, k = 0, 1, ..., K - 1, so
// they give bit-identical results.
//
// Precision: float32 products are accumulated in float32. That is what ONNX Runtime's MLAS
// kernels and the kernels minic compiles do, so the reference computes the same arithmetic
// the compiled code is checked against (with double, the oracle would disagree with every
// float32 implementation by the rounding of float32 itself), and the float32 inner loop
// vectorises. float16 and bfloat16 are computed through float; integers wrap on overflow
// (accumulate.h).
//
// Compute rules (course module 3): the textbook reduction over k, accumulated as the
// kernels do (f32 for f16 and bf16, in the element type otherwise):
//   out[b..., i, j] = sum over k of A[b..., i, k] * B[b..., k, j]
// Gemm's alpha * product + beta * C is one elementwise stage after the reduction.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "matmul.h"

#include "accumulate.h"
#include "broadcast.h"
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <cmath>

namespace minic {

namespace {

// The element types ONNX allows for MatMul and Gemm.
void check_matmul_types(const ShapeContext& ctx, std::initializer_list<size_t> inputs) {
  DType first = ctx.input_type(0).dtype;
  for (size_t index : inputs) {
    if (!ctx.has_input(index)) continue;
    DType type = ctx.input_type(index).dtype;
    if (type != first) {
      ctx.fail("input {} is {} but input 0 is {}; they must have the same element type", index,
               dtype_name(type), dtype_name(first));
    }
  }
  switch (first) {
    case DType::f32: case DType::f64: case DType::f16: case DType::bf16:
    case DType::i32: case DType::i64: case DType::u32: case DType::u64:
      return;
    default:
      ctx.fail("element type {} is not supported (float, double, float16, bfloat16, int32, "
               "int64, uint32, uint64 are)", dtype_name(first));
  }
}

// C (m x n, accumulator type A) = A (m x k) times B (k x n), all row-major. With
// `b_transposed`, `b` holds B's transpose, n x k row-major. See the file comment for the
// two loop orders.
template <typename T, typename A>
void multiply_matrices(const T* a, const T* b, bool b_transposed, A* c, int64_t m, int64_t k,
                       int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    const T* a_row = a + i * k;
    A* c_row = c + i * n;
    if (!b_transposed) {
      for (int64_t j = 0; j < n; ++j) c_row[j] = A(0);
      for (int64_t p = 0; p < k; ++p) {
        A a_ip = static_cast<A>(a_row[p]);
        const T* b_row = b + p * n;
        for (int64_t j = 0; j < n; ++j) {
          c_row[j] = add_wrapping(c_row[j], mul_wrapping(a_ip, static_cast<A>(b_row[j])));
        }
      }
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const T* b_row = b + j * k;
        A sum = A(0);
        for (int64_t p = 0; p < k; ++p) {
          sum = add_wrapping(sum, mul_wrapping(static_cast<A>(a_row[p]), static_cast<A>(b_row[p])));
        }
        c_row[j] = sum;
      }
    }
  }
}

// --- MatMul ---------------------------------------------------------------------------------

}  // namespace

MatMulShapes matmul_shapes(const NodeContext& ctx, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    ctx.fail("inputs must have rank 1 or more; got A {} and B {}", shape_string(a),
             shape_string(b));
  }
  MatMulShapes s;
  // A 1-D A is a row [1, K]; a 1-D B is a column [K, 1].
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  s.m = a2[a2.size() - 2];
  s.k = a2[a2.size() - 1];
  s.n = b2[b2.size() - 1];
  int64_t b_k = b2[b2.size() - 2];
  if (s.k != b_k) {
    ctx.fail("inner dimensions do not match: A {} has K = {} but B {} has K = {}",
             shape_string(a), s.k, shape_string(b), b_k);
  }
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  s.batch = broadcast_shapes(ctx, {s.a_batch, s.b_batch});
  s.output = s.batch;
  if (a.size() > 1) s.output.push_back(s.m);
  if (b.size() > 1) s.output.push_back(s.n);
  return s;
}

Tensor matmul_reference(const NodeContext& ctx, const Tensor& a, const Tensor& b) {
  MatMulShapes s = matmul_shapes(ctx, a.shape(), b.shape());
  Tensor out(a.dtype(), s.output);
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ctx.fail("element type bool is not supported");
    } else {
      using A = compute_t<T>;
      // Each batch index picks one matrix of A and one of B (broadcast_strides counts in
      // matrices here, as the batch shapes leave the two matrix dimensions out).
      Shape a_strides = broadcast_strides(s.a_batch, s.batch);
      Shape b_strides = broadcast_strides(s.b_batch, s.batch);
      auto va = a.values<T>();
      auto vb = b.values<T>();
      auto vo = out.values<T>();
      std::vector<A> product(static_cast<size_t>(s.m * s.n));
      int64_t matrix = 0;
      for_each_index(s.batch, [&](const Shape& index) {
        const T* a_matrix = va.data() + offset_of(index, a_strides) * s.m * s.k;
        const T* b_matrix = vb.data() + offset_of(index, b_strides) * s.k * s.n;
        multiply_matrices(a_matrix, b_matrix, false, product.data(), s.m, s.k, s.n);
        T* out_matrix = vo.data() + matrix * s.m * s.n;
        for (size_t i = 0; i < product.size(); ++i) out_matrix[i] = static_cast<T>(product[i]);
        ++matrix;
      });
    }
  });
  return out;
}

MatMulOperandIndices matmul_operand_indices(const MatMulShapes& s, int64_t a_rank,
                                            int64_t b_rank, const Indices& i,
                                            const loop::Expr& k) {
  const size_t batch = s.batch.size();
  Indices batch_index(i.begin(), i.begin() + batch);
  MatMulOperandIndices at;
  at.a = broadcast_indices(batch_index, s.a_batch);
  if (a_rank > 1) at.a.push_back(i[batch]);
  at.a.push_back(k);
  at.b = broadcast_indices(batch_index, s.b_batch);
  at.b.push_back(k);
  if (b_rank > 1) at.b.push_back(i.back());
  return at;
}

ComputeTensor to_output_type(const ComputeContext& ctx, const ComputeTensor& sum) {
  const TensorType& type = ctx.output_type(0);
  if (sum.dtype() == type.dtype) return sum;
  return ctx.compute(stage_name(ctx) + "_cast", type,
                     [&](const Indices& i) { return cast(type.dtype, sum(i)); });
}

namespace {

std::vector<TensorType> matmul_shape(const ShapeContext& ctx) {
  check_matmul_types(ctx, {1});
  const TensorType& a = ctx.input_type(0);
  MatMulShapes s = matmul_shapes(ctx, a.shape, ctx.input_type(1).shape);
  return {{a.dtype, s.output}};
}

std::vector<Tensor> matmul_kernel(const KernelContext& ctx) {
  return single_output(matmul_reference(ctx, ctx.input(0), ctx.input(1)));
}

// --- Gemm -----------------------------------------------------------------------------------

struct GemmShapes {
  int64_t m = 0, k = 0, n = 0;
};

GemmShapes gemm_shapes(const NodeContext& ctx, const Shape& a, const Shape& b,
                       const Shape* c) {
  if (a.size() != 2 || b.size() != 2) {
    ctx.fail("A and B must be matrices (rank 2); got A {} and B {}", shape_string(a),
             shape_string(b));
  }
  bool trans_a = ctx.get_int("transA", 0) != 0;
  bool trans_b = ctx.get_int("transB", 0) != 0;
  GemmShapes s;
  s.m = trans_a ? a[1] : a[0];
  s.k = trans_a ? a[0] : a[1];
  int64_t b_k = trans_b ? b[1] : b[0];
  s.n = trans_b ? b[0] : b[1];
  if (s.k != b_k) {
    ctx.fail("inner dimensions do not match: A {} (transA={}) has K = {} but B {} (transB={}) "
             "has K = {}", shape_string(a), trans_a ? 1 : 0, s.k, shape_string(b),
             trans_b ? 1 : 0, b_k);
  }
  if (c) {
    // One-way broadcast: C's dimensions, aligned at the end, are 1 or Y's.
    Shape y = {s.m, s.n};
    bool fits = c->size() <= 2;
    for (size_t i = 0; fits && i < c->size(); ++i) {
      int64_t dim = (*c)[c->size() - 1 - i];
      fits = dim == 1 || dim == y[1 - i];
    }
    if (!fits) {
      ctx.fail("C {} does not broadcast to the output shape {}", shape_string(*c),
               shape_string(y));
    }
  }
  return s;
}

std::vector<TensorType> gemm_shape(const ShapeContext& ctx) {
  check_matmul_types(ctx, {1, 2});
  const TensorType& a = ctx.input_type(0);
  const Shape* c = ctx.has_input(2) ? &ctx.input_type(2).shape : nullptr;
  GemmShapes s = gemm_shapes(ctx, a.shape, ctx.input_type(1).shape, c);
  if (is_int(a.dtype)) {
    // Integer Gemm scales by alpha and beta in integer arithmetic.
    for (const char* name : {"alpha", "beta"}) {
      float value = ctx.get_float(name, 1.0f);
      if (value != std::trunc(value) || std::abs(value) > 1e9f) {
        ctx.fail("{} = {} must be a whole number for an integer Gemm", name, value);
      }
    }
  }
  return {{a.dtype, {s.m, s.n}}};
}

// alpha or beta in the accumulator type (shape inference checked that integer ones are
// whole numbers).
template <typename A>
A gemm_scale(float value) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<int64_t>(value));
  } else {
    return static_cast<A>(value);
  }
}

std::vector<Tensor> gemm_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  GemmShapes s = gemm_shapes(ctx, a.shape(), b.shape(), c ? &c->shape() : nullptr);
  bool trans_a = ctx.get_int("transA", 0) != 0;
  bool trans_b = ctx.get_int("transB", 0) != 0;
  Tensor out = ctx.make_output(0);
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ctx.fail("element type bool is not supported");
    } else {
      using A = compute_t<T>;
      // A transposed A is copied into row-major order once: it is the small operand (the
      // activations), and the kernel then needs only B's two layouts.
      auto va = a.values<T>();
      std::vector<T> a_transposed;
      const T* a_data = va.data();
      if (trans_a) {
        a_transposed.resize(va.size());
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t p = 0; p < s.k; ++p) a_transposed[i * s.k + p] = va[p * s.m + i];
        }
        a_data = a_transposed.data();
      }
      std::vector<A> product(static_cast<size_t>(s.m * s.n));
      multiply_matrices(a_data, b.values<T>().data(), trans_b, product.data(), s.m, s.k, s.n);

      A alpha = gemm_scale<A>(ctx.get_float("alpha", 1.0f));
      A beta = gemm_scale<A>(ctx.get_float("beta", 1.0f));
      Shape c_strides = c ? broadcast_strides(c->shape(), {s.m, s.n}) : Shape{0, 0};
      std::span<const T> vc = c ? c->values<T>() : std::span<const T>();
      auto vo = out.values<T>();
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          A y = mul_wrapping(alpha, product[i * s.n + j]);
          if (c) {
            A bias = static_cast<A>(vc[i * c_strides[0] + j * c_strides[1]]);
            y = add_wrapping(y, mul_wrapping(beta, bias));
          }
          vo[i * s.n + j] = static_cast<T>(y);
        }
      }
    }
  });
  return {std::move(out)};
}

// --- compute rules ------------------------------------------------------------------------------

std::vector<ComputeTensor> matmul_compute(const ComputeContext& ctx) {
  const ComputeTensor& a = ctx.input(0);
  const ComputeTensor& b = ctx.input(1);
  MatMulShapes s = matmul_shapes(ctx, a.shape(), b.shape());
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  ComputeTensor sum = ctx.reduce("matmul", {acc, type.shape}, {s.k}, Reducer::sum,
                                 [&](const Indices& i, const Indices& k) {
    MatMulOperandIndices at = matmul_operand_indices(s, a.rank(), b.rank(), i, k[0]);
    return cast(acc, a(at.a)) * cast(acc, b(at.b));
  });
  return {to_output_type(ctx, sum)};
}

std::vector<ComputeTensor> gemm_compute(const ComputeContext& ctx) {
  const ComputeTensor& a = ctx.input(0);
  const ComputeTensor& b = ctx.input(1);
  const ComputeTensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  GemmShapes s = gemm_shapes(ctx, a.shape(), b.shape(), c ? &c->shape() : nullptr);
  const bool trans_a = ctx.get_int("transA", 0) != 0;
  const bool trans_b = ctx.get_int("transB", 0) != 0;
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  ComputeTensor product = ctx.reduce("gemm", {acc, type.shape}, {s.k}, Reducer::sum,
                                     [&](const Indices& i, const Indices& k) {
    loop::Expr x = trans_a ? a({k[0], i[0]}) : a({i[0], k[0]});
    loop::Expr y = trans_b ? b({i[1], k[0]}) : b({k[0], i[1]});
    return cast(acc, x) * cast(acc, y);
  });
  const double alpha = ctx.get_float("alpha", 1.0f);
  const double beta = ctx.get_float("beta", 1.0f);
  if (alpha == 1.0 && !c) return {to_output_type(ctx, product)};
  // y = alpha * product + beta * C, each factor left out where it is 1.
  return {ctx.compute("gemm_bias", type, [&](const Indices& i) {
    loop::Expr y = product(i);
    if (alpha != 1.0) y = constant(acc, alpha) * y;
    if (c) {
      loop::Expr bias = cast(acc, (*c)(broadcast_indices(i, c->shape())));
      y = y + (beta != 1.0 ? constant(acc, beta) * bias : bias);
    }
    return cast(type.dtype, y);
  })};
}

}  // namespace

void register_matmul_ops(OpRegistry& registry) {
  registry.add({.name = "MatMul",
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::out_fusable,
                .shape_rule = matmul_shape,
                .kernel = matmul_kernel,
                .compute = matmul_compute});
  // Gemm before opset 7 broadcast C only when its `broadcast` attribute said so.
  registry.add({.name = "Gemm",
                .min_opset = 7,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::out_fusable,
                .shape_rule = gemm_shape,
                .kernel = gemm_kernel,
                .compute = gemm_compute});
}

}  // namespace minic
