// Features: a fixed-length vector of numbers that describes one scheduled kernel.
//
// Course module 5. The cost model cannot read loop IR; it reads these. They are computed
// from the kernel after the loop pipeline (what the code generator sees), so that a
// schedule's effects -- a buffer shrunk to a tile, a loop made vector code -- show:
//   - work: float operations, loads and stores per call (log2);
//   - loops: how many, and the product of extents of serial, parallel, vectorised and
//     unrolled loops; the innermost loop's extent; the widest vector;
//   - memory: for the statement that does the most work and the statements of its loop
//     body (the rows of an unrolled register tile), the bytes their accesses touch inside
//     each of the enclosing loops, innermost first (the footprint at each level of the
//     nest, which decides what stays in L1, L2, L3); the stride of their accesses in the
//     innermost loop; arithmetic intensity (float operations per byte touched);
//   - buffers: the bytes allocated inside the function (staging buffers) and how many.
// Every value is finite; counts and sizes are log2(1 + x), so features of a small and a
// large kernel are on one scale.
//
//   std::vector<float> f = extract_features(lowered_and_scheduled);
//   f.size() == feature_names().size()
//
// Chapter: docs/module5-autotuning.md#3-features
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>
#include <vector>

namespace minic::autotune {

// The name of every feature, in vector order.
const std::vector<std::string>& feature_names();

// The features of `func`, a scheduled kernel after the loop pipeline
// (loop::default_loop_pipeline()).
std::vector<float> extract_features(const loop::PrimFunc& func);

// Runs the loop pipeline on a scheduled kernel and extracts its features.
std::vector<float> features_of_scheduled(const loop::PrimFunc& scheduled);

}  // namespace minic::autotune
