// minic.LookupTable: a function of an 8-bit value, as its table of 256 results.
//
// Course module 7. An 8-bit integer takes 256 values, so any function of one such value
// is a table of 256 entries. The `lookup-tables` pass
// (src/passes/graph/lookup_tables.cpp) computes such tables for the elementwise chains of
// a QDQ model that read one 8-bit tensor and end in a QuantizeLinear, and replaces each
// chain by
//
//   Y = minic.LookupTable(X, Table)    Y[i] = Table[X[i] - lowest]
//
// X is uint8 (lowest 0) or int8 (lowest -128); Table is a 1-D tensor of 256 elements of
// any type, which Y has, in X's shape. Each output element reads the input element at its
// own position and a constant, so the op fuses as a broadcast op (into a GEMM's epilogue,
// say): Table is a constant where the pass makes the op, never a fused producer's result.
//
// Chapter: docs/module7-quantisation.md#lookup-tables-for-8-bit-functions
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <cstring>

namespace minic {

namespace {

// The index of value `x` of an 8-bit type in the table: its distance from the lowest.
int64_t lowest_of(DType dtype) { return dtype == DType::i8 ? -128 : 0; }

std::vector<TensorType> lookup_table_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& table = ctx.input_type(1);
  if (x.dtype != DType::u8 && x.dtype != DType::i8) {
    ctx.fail("X is {}; it must be uint8 or int8", type_string(x));
  }
  if (table.rank() != 1 || table.shape[0] != 256) {
    ctx.fail("Table is {}; it must have 256 elements, one per value of X", type_string(table));
  }
  return {{table.dtype, x.shape}};
}

std::vector<Tensor> lookup_table_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& table = ctx.input(1);
  Tensor y = ctx.make_output(0);
  const int64_t lowest = lowest_of(x.dtype());
  const size_t size = static_cast<size_t>(dtype_size(table.dtype()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t entry = x.as_int64(i) - lowest;
    std::memcpy(y.bytes().data() + i * size, table.bytes().data() + entry * size, size);
  }
  return single_output(std::move(y));
}

std::vector<ComputeTensor> lookup_table_compute(const ComputeContext& ctx) {
  const int64_t lowest = lowest_of(ctx.input(0).dtype());
  return {ctx.compute("lookup", ctx.output_type(0), [&](const Indices& i) {
    loop::Expr entry = cast(DType::i64, ctx.input(0)(i));
    if (lowest != 0) entry = entry - index(lowest);
    return ctx.input(1)({entry});
  })};
}

}  // namespace

void register_lookup_table_ops(OpRegistry& registry) {
  registry.add({.name = "minic.LookupTable",
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::broadcast,
                .shape_rule = lookup_table_shape,
                .kernel = lookup_table_kernel,
                .compute = lookup_table_compute});
}

}  // namespace minic
