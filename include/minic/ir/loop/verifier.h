// The loop IR verifier: the rules every PrimFunc keeps between passes.
//
// Course module 3. Node constructors check each node on its own (types, index counts);
// the verifier checks what only the whole function shows:
//   - scopes: every variable used is defined around its use (a loop variable inside its
//     loop, an iteration variable inside its block); a block's body, init and regions use
//     only the block's iteration variables and loops inside the block, never the loops
//     outside it (only its bindings and predicate do); no variable is defined again inside
//     its own scope;
//   - buffers: every buffer used is a parameter, allocated by an enclosing Allocate or
//     by an enclosing block's alloc_buffers, and none is allocated again inside its scope;
//   - bindings: an iteration variable's binding, where its range is known (loops of
//     constant bounds), lies in [0, extent) unless the block has a predicate; a binding
//     that is one loop variable covers the iteration domain exactly (0..extent);
//   - constant indices of loads and stores lie within the buffer's shape, but for loads
//     in an operand of a Select, which runs only when picked (Concat's second input at
//     `v - 1` under `v < 1`, once v is the constant 0);
//   - loops: vectorized loops have a constant extent; thread axes are blockIdx.{x,y,z}
//     or threadIdx.{x,y,z}; no blockIdx loop inside a threadIdx loop;
//   - barriers (Evaluate of Call "barrier") stand alone and only inside threadIdx loops;
//   - a block has an init only if it has a reduction iteration variable.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

// Throws Error naming the function, the innermost block and the reason:
//   invalid loop IR in @matmul, block C: variable i is used inside the block, which sees
//   only its iteration variables (use it in a binding)
void verify_func(const PrimFunc& func);

// verify_func on every function of the module.
void verify_module(const LoopModule& module);

}  // namespace minic::loop
