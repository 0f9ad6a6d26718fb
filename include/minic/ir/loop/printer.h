// The text form of the loop IR (.mloop): printing. The parser is parser.h.
//
// Course module 3. One statement a line, nested statements indented two spaces; a
// student can read it beside the equivalent C (c_printer.h) and write it by hand:
//
//   func @matmul(A: f32[128,64], B: f32[64,256], C: f32[128,256]) {
//     for i in 0..128 {
//       for j in 0..256 {
//         for k in 0..64 {
//           block C(vi = spatial(128) i, vj = spatial(256) j, vk = reduce(64) k) {
//             reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
//             init { C[vi, vj] = 0.0 }
//             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
//           }
//         }
//       }
//     }
//   }
//
// The pieces:
//   - A buffer is declared `NAME: f32[128,64]` (a scalar `f32[]`), then `strides[72,1]`
//     when its strides are not row-major, then its scope when not global (`shared`,
//     `local`): as a parameter, in `alloc S: f32[32,32] shared { ... }` (Allocate), or as
//     `alloc_buffer S: f32[4] local` at the top of a block (its alloc_buffers).
//   - Loops: `for i in 0..128 { }`, with a kind before (`parallel for`, `vectorized for`,
//     `unrolled for`) or a GPU axis after (`for tx in 0..32 bind(threadIdx.x) { }`), and
//     annotations before the body (`for i in 0..8 {unroll_step=4} { }`). `lo..hi` is the
//     constant range [lo, hi); a loop whose bounds are not both constants is written
//     `for j in MIN..+EXTENT`.
//   - A block: `block NAME(v = spatial(EXTENT) BINDING, ...)`, then `where (PREDICATE)`
//     and `{annotations}` when it has them, and in its body, in order: `alloc_buffer`
//     lines, `reads(...)` and `writes(...)` (each only when not empty), `init { ... }`,
//     the body. A region names one range per dimension: `A[vi, 0:64, k * 4:+4]`, where `e`
//     alone is the range [e, e+1), `lo:hi` a constant range, `min:+extent` any other.
//   - Statements: `A[i, j] = VALUE` (Store), `if (C) { } else { }`, a call alone for an
//     Evaluate of a call (`barrier()`), `evaluate EXPR` for any other Evaluate.
//   - Expressions, loosest first: `||`, `&&`, comparisons (`==`, `!=`, `<`, `<=`, `>`,
//     `>=`; never chained), `+ -`, `* / %` (Div and Mod truncate as in C), `!`; then
//     loads `A[i, j]`, calls of intrinsics `exp(x)`, `min(a, b)`, `max(a, b)`,
//     `floordiv(a, b)`, `floormod(a, b)`, `select(c, a, b)`, `cast<f16>(x)`,
//     `ramp(base, stride, lanes)`, `broadcast(x, lanes)`. A call whose arguments do not
//     give its type names it: `barrier<f32>()` (`barrier()` is i64). Parentheses appear
//     only where the precedence needs them.
//   - Immediates of the default types print plain: `3` (i64), `1.5` (f32, always with a
//     `.` or an exponent), `true`; others carry their type: `3i32`, `1.5f64`, `inff64`.
//     A float prints at its type's precision (FloatImm holds a double; an f32 immediate
//     shows the f32 value the kernel computes with), in the shortest digits that read
//     back to that value; every NaN prints as `nan`. A `-` before a number belongs to the
//     literal (`a - -3`): the IR has no negation node.
//   - A name outside [A-Za-z_][A-Za-z0-9_]* (parts joined by single dots, as in `i.0`) or
//     equal to a keyword is quoted: `"conv1/W"[i]`.
//   - Variables and buffers are bound by the loops, blocks, allocations and parameters
//     around them. When a binding would hide another of the same name, the printer adds
//     a suffix (`i_1`), so every name in the text means one thing.
//
// For a function whose variables and buffers are all bound (a loop, block, allocation
// or parameter declares each before its use), print(parse(print(f))) == print(f).
// The output is deterministic.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>

namespace minic::loop {

// One expression, variables and buffers by their own names.
std::string print_expr(const Expr& expr);
// A statement and what it holds, at indentation 0, each line ending in '\n'.
std::string print_stmt(const Stmt& stmt);
std::string print_func(const PrimFunc& func);
// The functions, one blank line between two.
std::string print_module(const LoopModule& module);

}  // namespace minic::loop
