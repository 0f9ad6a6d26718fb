// Einsum: sums of products named by an index equation. Course module 2.
//
//   "ij,jk->ik"    matrix product             "ii->i"    diagonal        "ii->"   trace
//   "bij,bjk->bik" batched matrix product     "ij->ji"   transpose       "i,i"    inner product
//   "...ij,...jk->...ik"  leading batch dimensions written as an ellipsis
// Each letter names an index variable; the terms before "->" label the operands' dimensions,
// the term after it the output's. A letter missing from the output is summed over; a letter
// repeated within one operand walks its diagonal. The dimensions an ellipsis stands for are
// aligned at the right across operands and broadcast as in numpy. Without "->" (the
// implicit form), the output is the ellipsis dimensions followed by the letters that appear
// exactly once, in alphabetical order (upper case before lower case): "ij,jk" = "ij,jk->ik".
//
// The evaluator is one loop nest over all index variables, the output's outermost:
//   for each value of the output variables:
//     for each value of the summed variables:
//       out[output variables] += product over operands of operand[its variables]
// An operand is read through one stride per variable: the sum of the strides of its
// dimensions with that label -- so a repeated label moves along the diagonal -- and 0 for a
// variable it lacks or has as a broadcast dimension of size 1.
//
// Precision: like MatMul, float32 accumulates in float32; float16 and bfloat16 through
// float; integers wrap on overflow (accumulate.h).
//
// The compute rule (module 3) is the same loop nest as loop IR: the output variables are
// the spatial axes of one reduction stage, the summed variables its reduction axes, and the
// value is the product of the operands, each read at the variables of its dimensions (one
// variable twice for a diagonal; index 0 along a dimension of size 1). Steps:
//   1. plan the equation for the operands' shapes, as the kernel does;
//   2. with no summed variable (a transpose, a diagonal, an outer product), one elementwise
//      stage, inlined into its consumers; otherwise a sum over the summed variables;
//   3. for float16 and bfloat16 the product and the sum are in float32, then converted.
// "bij,bjk->bik" of f32[2,3,4] and f32[2,4,5] becomes
//   for i0 in 0..2 { for i1 in 0..3 { for i2 in 0..5 { for k0 in 0..4 {
//     block einsum(v0 = spatial(2) i0, v1 = spatial(3) i1, v2 = spatial(5) i2,
//                  r0 = reduce(4) k0) {
//       init { y[v0, v1, v2] = 0.0 }
//       y[v0, v1, v2] = y[v0, v1, v2] + a[v0, v1, r0] * b[v0, r0, v2]
//     } } } } }
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "accumulate.h"
#include "broadcast.h"
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace minic {

namespace {

// One term of the equation: its letters, and where among them the ellipsis stands (-1 if
// there is none). "a...b" is letters "ab" with the ellipsis at 1.
struct Term {
  std::string letters;
  int64_t ellipsis_at = -1;
};

// The equation, checked and ready to evaluate for particular operand shapes.
struct EinsumPlan {
  Shape loop_shape;                  // the size of each variable, output variables first
  std::vector<Shape> input_strides;  // per operand: its stride for each variable
  Shape output_strides;              // the output's stride for each variable (0 if summed)
  Shape output_shape;
  // Per operand, per dimension: the variable indexing it, or -1 for a dimension of size 1
  // (always index 0, which is how a broadcast dimension is read).
  std::vector<std::vector<int64_t>> input_variables;
};

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Term parse_term(const NodeContext& ctx, std::string_view text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (is_label(text[i])) {
      term.letters.push_back(text[i]);
    } else if (text.substr(i, 3) == "..." && term.ellipsis_at < 0) {
      term.ellipsis_at = static_cast<int64_t>(term.letters.size());
      i += 2;
    } else {
      ctx.fail("equation term '{}' is malformed: use letters and at most one '...'", text);
    }
  }
  return term;
}

// Splits "ij , jk -> ik" into operand terms and the output term (nullopt if implicit).
std::pair<std::vector<Term>, std::optional<Term>> parse_equation(const NodeContext& ctx) {
  std::string equation;
  for (char c : ctx.get_string("equation", "")) {
    if (c != ' ') equation.push_back(c);
  }
  std::string_view lhs = equation;
  std::optional<Term> output;
  if (size_t arrow = equation.find("->"); arrow != std::string::npos) {
    lhs = std::string_view(equation).substr(0, arrow);
    output = parse_term(ctx, std::string_view(equation).substr(arrow + 2));
  }
  std::vector<Term> inputs;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    inputs.push_back(parse_term(ctx, lhs.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return {inputs, output};
}

// The operands' terms, with how many dimensions each operand's ellipsis stands for; the
// widest sets the number of ellipsis variables.
struct Operands {
  std::vector<Term> terms;
  std::optional<Term> output;
  std::vector<int64_t> ellipsis_rank;
  int64_t ellipsis_vars = 0;

  // Calls fn(dim, key) for each dimension of operand t, where key names its variable: a
  // letter, or -1 - e for ellipsis variable e (aligned at the right across operands).
  template <typename Fn>
  void for_each_dim(size_t t, Fn&& fn) const {
    const Term& term = terms[t];
    int64_t dim = 0;
    for (int64_t l = 0; l <= static_cast<int64_t>(term.letters.size()); ++l) {
      if (l == term.ellipsis_at) {
        for (int64_t e = 0; e < ellipsis_rank[t]; ++e) {
          fn(dim++, -1 - static_cast<int>(ellipsis_vars - ellipsis_rank[t] + e));
        }
      }
      if (l < static_cast<int64_t>(term.letters.size())) fn(dim++, int(term.letters[l]));
    }
  }
};

// Step 1: parse the equation and match each term against its operand's rank.
Operands read_operands(const NodeContext& ctx, const std::vector<Shape>& shapes) {
  Operands operands;
  std::tie(operands.terms, operands.output) = parse_equation(ctx);
  const std::vector<Term>& terms = operands.terms;
  if (terms.size() != shapes.size()) {
    ctx.fail("equation '{}' names {} operands but the node has {} inputs",
             ctx.get_string("equation", ""), terms.size(), shapes.size());
  }
  operands.ellipsis_rank.assign(terms.size(), 0);
  for (size_t t = 0; t < terms.size(); ++t) {
    int64_t rank = static_cast<int64_t>(shapes[t].size());
    int64_t letters = static_cast<int64_t>(terms[t].letters.size());
    if (terms[t].ellipsis_at < 0 ? rank != letters : rank < letters) {
      ctx.fail("operand {} has rank {} but its term '{}' labels {} dimensions{}", t, rank,
               terms[t].letters, letters, terms[t].ellipsis_at < 0 ? "" : " plus an ellipsis");
    }
    operands.ellipsis_rank[t] = rank - letters;
    operands.ellipsis_vars = std::max(operands.ellipsis_vars, operands.ellipsis_rank[t]);
  }
  return operands;
}

// The size of each variable (by key, see Operands::for_each_dim), and how many times each
// letter appears across the operands.
struct Variables {
  std::map<int, int64_t> size_of;
  std::map<char, int> occurrences;
};

// Step 2: the size of each letter (equal wherever it appears), and of each ellipsis
// dimension (broadcast).
Variables size_variables(const NodeContext& ctx, const Operands& operands,
                         const std::vector<Shape>& shapes) {
  Variables vars;
  auto note_size = [&](int key, int64_t size, bool broadcasts) {
    auto [it, inserted] = vars.size_of.emplace(key, size);
    if (inserted || it->second == size) return;
    if (broadcasts && (size == 1 || it->second == 1)) {
      it->second = std::max(it->second, size);
      return;
    }
    if (key >= 0) ctx.fail("label '{}' has sizes {} and {}", char(key), it->second, size);
    ctx.fail("the dimensions the ellipsis stands for do not broadcast");
  };
  for (size_t t = 0; t < operands.terms.size(); ++t) {
    const Shape& shape = shapes[t];
    operands.for_each_dim(t, [&](int64_t dim, int key) { note_size(key, shape[dim], key < 0); });
    for (char letter : operands.terms[t].letters) ++vars.occurrences[letter];
  }
  return vars;
}

// Step 3: the output's variables, in order: as the output term names them, or, in the
// implicit form, the ellipsis followed by the letters that appear once.
std::vector<int> output_variables(const NodeContext& ctx, const Operands& operands,
                                  const Variables& vars) {
  std::vector<int> output_keys;
  auto add_ellipsis = [&] {
    for (int e = 0; e < operands.ellipsis_vars; ++e) output_keys.push_back(-1 - e);
  };
  const std::optional<Term>& output = operands.output;
  if (!output) {
    add_ellipsis();
    for (auto [letter, count] : vars.occurrences) {  // std::map: alphabetical, 'A' < 'a'
      if (count == 1) output_keys.push_back(int(letter));
    }
    return output_keys;
  }
  for (int64_t l = 0; l <= static_cast<int64_t>(output->letters.size()); ++l) {
    if (l == output->ellipsis_at) add_ellipsis();
    if (l == static_cast<int64_t>(output->letters.size())) break;
    char letter = output->letters[l];
    if (!vars.occurrences.count(letter)) ctx.fail("output label '{}' labels no operand", letter);
    if (std::count(output->letters.begin(), output->letters.end(), letter) > 1) {
      ctx.fail("output label '{}' appears twice", letter);
    }
    output_keys.push_back(int(letter));
  }
  return output_keys;
}

// Step 4: the loop variables (the output's, then the summed ones), and each operand's and
// the output's strides along them.
EinsumPlan make_plan(const Operands& operands, const std::vector<Shape>& shapes,
                     const Variables& vars, const std::vector<int>& output_keys) {
  std::vector<int> loop_keys = output_keys;
  for (auto [key, size] : vars.size_of) {
    if (std::find(loop_keys.begin(), loop_keys.end(), key) == loop_keys.end()) {
      loop_keys.push_back(key);
    }
  }
  auto position = [&](int key) {
    return std::find(loop_keys.begin(), loop_keys.end(), key) - loop_keys.begin();
  };

  EinsumPlan plan;
  for (int key : loop_keys) plan.loop_shape.push_back(vars.size_of.at(key));
  for (int key : output_keys) plan.output_shape.push_back(vars.size_of.at(key));
  plan.output_strides.assign(loop_keys.size(), 0);
  Shape dense = row_major_strides(plan.output_shape);
  for (size_t i = 0; i < output_keys.size(); ++i) plan.output_strides[i] = dense[i];
  for (size_t t = 0; t < operands.terms.size(); ++t) {
    const Shape& shape = shapes[t];
    Shape strides(loop_keys.size(), 0);
    std::vector<int64_t> variables(shape.size(), -1);
    Shape operand = row_major_strides(shape);
    operands.for_each_dim(t, [&](int64_t dim, int key) {
      // A broadcast dimension of size 1 stays at index 0.
      if (shape[dim] == 1) return;
      strides[position(key)] += operand[dim];
      variables[dim] = position(key);
    });
    plan.input_strides.push_back(std::move(strides));
    plan.input_variables.push_back(std::move(variables));
  }
  return plan;
}

EinsumPlan plan_einsum(const NodeContext& ctx, const std::vector<Shape>& shapes) {
  Operands operands = read_operands(ctx, shapes);
  Variables vars = size_variables(ctx, operands, shapes);
  std::vector<int> output_keys = output_variables(ctx, operands, vars);
  return make_plan(operands, shapes, vars, output_keys);
}

std::vector<TensorType> einsum_shape(const ShapeContext& ctx) {
  std::vector<Shape> shapes;
  DType type = ctx.input_type(0).dtype;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& input = ctx.input_type(i);
    if (input.dtype != type) {
      ctx.fail("input {} is {} but input 0 is {}", i, dtype_name(input.dtype),
               dtype_name(type));
    }
    shapes.push_back(input.shape);
  }
  if (type == DType::boolean) ctx.fail("element type bool is not supported");
  return {{type, plan_einsum(ctx, shapes).output_shape}};
}

// Runs the loop nest of the file comment for elements of type T.
template <typename T>
void evaluate(const KernelContext& ctx, const EinsumPlan& plan, Tensor& out) {
  using A = compute_t<T>;
  std::vector<std::span<const T>> operands;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) operands.push_back(ctx.input(i).values<T>());
  std::vector<A> sums(static_cast<size_t>(out.num_elements()), A(0));
  for_each_index(plan.loop_shape, [&](const Shape& index) {
    A product = A(1);
    for (size_t i = 0; i < operands.size(); ++i) {
      A element = static_cast<A>(operands[i][offset_of(index, plan.input_strides[i])]);
      product = mul_wrapping(product, element);
    }
    size_t at = static_cast<size_t>(offset_of(index, plan.output_strides));
    sums[at] = add_wrapping(sums[at], product);
  });
  auto vo = out.values<T>();
  for (size_t i = 0; i < sums.size(); ++i) vo[i] = static_cast<T>(sums[i]);
}

std::vector<Tensor> einsum_kernel(const KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i).shape());
  EinsumPlan plan = plan_einsum(ctx, shapes);
  Tensor out = ctx.make_output(0);
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ctx.fail("element type bool is not supported");
    } else {
      evaluate<T>(ctx, plan, out);
    }
  });
  return {std::move(out)};
}

// --- compute rule ------------------------------------------------------------------------------

std::vector<ComputeTensor> einsum_compute(const ComputeContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i).shape());
  EinsumPlan plan = plan_einsum(ctx, shapes);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  const size_t output_vars = plan.output_shape.size();
  const Shape summed(plan.loop_shape.begin() + static_cast<int64_t>(output_vars),
                     plan.loop_shape.end());
  // The product of the operands, in the kernel's order, at the loop variables `vars`
  // (output variables first, then summed ones, as in plan.loop_shape).
  auto product = [&](const Indices& vars) {
    loop::Expr value;
    for (size_t t = 0; t < ctx.num_inputs(); ++t) {
      Indices at;
      for (int64_t variable : plan.input_variables[t]) {
        at.push_back(variable < 0 ? index(0) : vars[static_cast<size_t>(variable)]);
      }
      loop::Expr element = cast(acc, ctx.input(t)(at));
      value = t == 0 ? element : value * element;
    }
    return value;
  };
  if (summed.empty()) {
    return {ctx.compute(stage_name(ctx), type,
                        [&](const Indices& i) { return cast(type.dtype, product(i)); })};
  }
  ComputeTensor sum = ctx.reduce(stage_name(ctx), {acc, type.shape}, summed, Reducer::sum,
                                 [&](const Indices& i, const Indices& k) {
    Indices vars = i;
    vars.insert(vars.end(), k.begin(), k.end());
    return product(vars);
  });
  if (acc == type.dtype) return {sum};
  return {ctx.compute(stage_name(ctx) + "_cast", type,
                      [&](const Indices& i) { return cast(type.dtype, sum(i)); })};
}

}  // namespace

void register_einsum_ops(OpRegistry& registry) {
  // A contraction like MatMul: a heavy op whose elementwise consumers can join its loop nest.
  registry.add({.name = "Einsum",
                .min_opset = 12,
                .min_inputs = 1,
                .max_inputs = 64,  // variadic; a bound keeps a malformed node from looking sane
                .fusion = FusionKind::out_fusable,
                .shape_rule = einsum_shape,
                .kernel = einsum_kernel,
                .compute = einsum_compute});
}

}  // namespace minic
