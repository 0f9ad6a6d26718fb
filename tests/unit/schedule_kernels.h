// Hand-written loop IR kernels that the schedule tests transform: a GEMM, a convolution, a
// row reduction, a softmax, an elementwise chain and a layout change, each as .mloop text. Course module 4.
//
// Shared by the schedule tests (the randomised differential test runs every kernel of
// kScheduleKernels); new kernels are appended. Every kernel is small enough for the
// loop interpreter to run many times.
#pragma once

#include <vector>

namespace minic::schedule::test {

// C = A * B, 64 x 48 x 32.
inline const char* const kGemmKernel = R"(func @gemm(A: f32[64,32], B: f32[32,48], C: f32[64,48]) {
  for i in 0..64 {
    for j in 0..48 {
      for k in 0..32 {
        block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

// C = A * B, 64 x 64 x 64: square, so that every tile divides (the autotuner tests).
inline const char* const kGemm64Kernel = R"(func @gemm(A: f32[64,64], B: f32[64,64], C: f32[64,64]) {
  for i in 0..64 {
    for j in 0..64 {
      for k in 0..64 {
        block C(vi = spatial(64) i, vj = spatial(64) j, vk = reduce(64) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

// A 3x3 convolution, stride 1, no padding, NCHW: 3 channels of 8x8 in, 4 of 6x6 out.
inline const char* const kConv2dKernel = R"(func @conv2d(X: f32[1,3,8,8], W: f32[4,3,3,3], Y: f32[1,4,6,6]) {
  for n in 0..1 {
    for f in 0..4 {
      for y in 0..6 {
        for x in 0..6 {
          for c in 0..3 {
            for r in 0..3 {
              for s in 0..3 {
                block Y(vn = spatial(1) n, vf = spatial(4) f, vy = spatial(6) y, vx = spatial(6) x, vc = reduce(3) c, vr = reduce(3) r, vs = reduce(3) s) {
                  reads(X[vn, vc, vy + vr, vx + vs], W[vf, vc, vr, vs], Y[vn, vf, vy, vx]) writes(Y[vn, vf, vy, vx])
                  init { Y[vn, vf, vy, vx] = 0.0 }
                  Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + X[vn, vc, vy + vr, vx + vs] * W[vf, vc, vr, vs]
                }
              }
            }
          }
        }
      }
    }
  }
}
)";

// The sum of each row of a 16 x 24 matrix.
inline const char* const kRowSumKernel = R"(func @row_sum(X: f32[16,24], S: f32[16]) {
  for i in 0..16 {
    for k in 0..24 {
      block S(vi = spatial(16) i, vk = reduce(24) k) {
        reads(X[vi, vk], S[vi]) writes(S[vi])
        init { S[vi] = 0.0 }
        S[vi] = S[vi] + X[vi, vk]
      }
    }
  }
}
)";

// Softmax of each row of an 8 x 16 matrix: three blocks (the row maximum, the sum of
// exponentials, the quotient) in one row loop.
inline const char* const kSoftmaxKernel = R"(func @softmax(X: f32[8,16], Y: f32[8,16]) {
  alloc M: f32[8] {
    alloc E: f32[8] {
      for i in 0..8 {
        for j in 0..16 {
          block row_max(vi = spatial(8) i, vj = reduce(16) j) {
            reads(X[vi, vj], M[vi]) writes(M[vi])
            init { M[vi] = -inf }
            M[vi] = max(M[vi], X[vi, vj])
          }
        }
        for j in 0..16 {
          block row_sum(vi = spatial(8) i, vj = reduce(16) j) {
            reads(X[vi, vj], M[vi], E[vi]) writes(E[vi])
            init { E[vi] = 0.0 }
            E[vi] = E[vi] + exp(X[vi, vj] - M[vi])
          }
        }
        for j in 0..16 {
          block normalize(vi = spatial(8) i, vj = spatial(16) j) {
            reads(X[vi, vj], M[vi], E[vi]) writes(Y[vi, vj])
            Y[vi, vj] = exp(X[vi, vj] - M[vi]) / E[vi]
          }
        }
      }
    }
  }
}
)";

// D = max(A + B, 0) * 2 - A over 32 x 24, one block and loop nest per step.
inline const char* const kElementwiseKernel = R"(func @chain(A: f32[32,24], B: f32[32,24], D: f32[32,24]) {
  alloc T: f32[32,24] {
    alloc U: f32[32,24] {
      for i in 0..32 {
        for j in 0..24 {
          block add(vi = spatial(32) i, vj = spatial(24) j) {
            reads(A[vi, vj], B[vi, vj]) writes(T[vi, vj])
            T[vi, vj] = A[vi, vj] + B[vi, vj]
          }
        }
      }
      for i in 0..32 {
        for j in 0..24 {
          block relu_scale(vi = spatial(32) i, vj = spatial(24) j) {
            reads(T[vi, vj]) writes(U[vi, vj])
            U[vi, vj] = max(T[vi, vj], 0.0) * 2.0
          }
        }
      }
      for i in 0..32 {
        for j in 0..24 {
          block sub(vi = spatial(32) i, vj = spatial(24) j) {
            reads(U[vi, vj], A[vi, vj]) writes(D[vi, vj])
            D[vi, vj] = U[vi, vj] - A[vi, vj]
          }
        }
      }
    }
  }
}
)";

struct ScheduleKernel {
  const char* name;
  const char* text;
  // True if small-integer inputs give results exact in f32 (sums of products): outputs
  // then compare exactly whatever the order of a reduction. Softmax sums exponentials,
  // whose rounding depends on the order.
  bool exact;
};

// A layout change out of blocks of 16 channels (minic.FromNchwc): the input is read in
// memory order along the channels' lanes, floormod(c, 16), not along the innermost loop.
inline const char* const kFromBlocksKernel = R"(func @from_blocks(X: f32[1,2,4,20,16], Y: f32[1,32,4,20]) {
  for n in 0..1 {
    for c in 0..32 {
      for h in 0..4 {
        for w in 0..20 {
          block Y(vn = spatial(1) n, vc = spatial(32) c, vh = spatial(4) h, vw = spatial(20) w) {
            reads(X[vn, floordiv(vc, 16), vh, vw, floormod(vc, 16)]) writes(Y[vn, vc, vh, vw])
            Y[vn, vc, vh, vw] = X[vn, floordiv(vc, 16), vh, vw, floormod(vc, 16)]
          }
        }
      }
    }
  }
}
)";

// A grouped pointwise convolution (3 groups of 2 input and 8 output channels) over 4 x 8
// positions, with its bias and Relu: the GEMM rule splits its output channels by group
// (split_groups), and folds the epilogue into the tile's copy-out.
inline const char* const kGroupedConvKernel = R"(func @grouped(x: f32[1,6,4,8], w: f32[24,2,1,1], b: f32[24], y: f32[1,24,4,8]) {
  alloc conv: f32[1,24,32] {
    for i0 in 0..1 {
      for i1 in 0..24 {
        for i2 in 0..32 {
          for k0 in 0..2 {
            block conv(v0 = spatial(1) i0, v1 = spatial(24) i1, v2 = spatial(32) i2, r0 = reduce(2) k0) {
              reads(conv[v0, v1, v2], x[v0, floordiv(v1, 8) * 2 + r0, floordiv(v2, 8), floormod(v2, 8)], w[v1, r0, 0, 0]) writes(conv[v0, v1, v2])
              init { conv[v0, v1, v2] = 0.0 }
              conv[v0, v1, v2] = conv[v0, v1, v2] + x[v0, floordiv(v1, 8) * 2 + r0, floordiv(v2, 8), floormod(v2, 8)] * w[v1, r0, 0, 0]
            }
          }
        }
      }
    }
    for i0 in 0..1 {
      for i1 in 0..24 {
        for i2 in 0..4 {
          for i3 in 0..8 {
            block relu(v0 = spatial(1) i0, v1 = spatial(24) i1, v2 = spatial(4) i2, v3 = spatial(8) i3) {
              reads(conv[v0, v1, v2 * 8 + v3], b[v1]) writes(y[v0, v1, v2, v3])
              y[v0, v1, v2, v3] = max(conv[v0, v1, v2 * 8 + v3] + b[v1], 0.0)
            }
          }
        }
      }
    }
  }
}
)";

inline const std::vector<ScheduleKernel> kScheduleKernels = {
    {"gemm", kGemmKernel, true},
    {"conv2d", kConv2dKernel, true},
    {"row_sum", kRowSumKernel, true},
    {"softmax", kSoftmaxKernel, false},
    {"chain", kElementwiseKernel, true},
    {"from_blocks", kFromBlocksKernel, true},
    {"grouped", kGroupedConvKernel, true},
};

}  // namespace minic::schedule::test

// --- kernels of the block and memory primitives (schedule_blocks_test.cpp) ----------------

namespace minic::schedule::test {

// A GEMM tiled by hand: C = A * B, 32 x 24 x 16, i and j split by 8, k by 4, in the order
// i.0, j.0, k.0, i.1, j.1, k.1.
inline const char* const kTiledGemmKernel = R"(func @tiled(A: f32[32,16], B: f32[16,24], C: f32[32,24]) {
  for i.0 in 0..4 {
    for j.0 in 0..3 {
      for k.0 in 0..4 {
        for i.1 in 0..8 {
          for j.1 in 0..8 {
            for k.1 in 0..4 {
              block C(vi = spatial(32) i.0 * 8 + i.1, vj = spatial(24) j.0 * 8 + j.1, vk = reduce(16) k.0 * 4 + k.1) {
                reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
                init { C[vi, vj] = 0.0 }
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
              }
            }
          }
        }
      }
    }
  }
}
)";

// B = 2 A, C = B + 1, D = C * B: an intermediate with two consumers.
inline const char* const kTwoConsumerKernel = R"(func @two_consumers(A: f32[16,8], D: f32[16,8]) {
  alloc B: f32[16,8] {
    alloc C: f32[16,8] {
      for i in 0..16 {
        for j in 0..8 {
          block B(vi = spatial(16) i, vj = spatial(8) j) {
            reads(A[vi, vj]) writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * 2.0
          }
        }
      }
      for i in 0..16 {
        for j in 0..8 {
          block C(vi = spatial(16) i, vj = spatial(8) j) {
            reads(B[vi, vj]) writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + 1.0
          }
        }
      }
      for i in 0..16 {
        for j in 0..8 {
          block D(vi = spatial(16) i, vj = spatial(8) j) {
            reads(C[vi, vj], B[vi, vj]) writes(D[vi, vj])
            D[vi, vj] = C[vi, vj] * B[vi, vj]
          }
        }
      }
    }
  }
}
)";

// A bias add followed by a ReLU epilogue.
inline const char* const kBiasReluKernel = R"(func @bias_relu(X: f32[16,8], bias: f32[8], Y: f32[16,8]) {
  alloc T: f32[16,8] {
    for i in 0..16 {
      for j in 0..8 {
        block T(vi = spatial(16) i, vj = spatial(8) j) {
          reads(X[vi, vj], bias[vj]) writes(T[vi, vj])
          T[vi, vj] = X[vi, vj] + bias[vj]
        }
      }
    }
    for i in 0..16 {
      for j in 0..8 {
        block Y(vi = spatial(16) i, vj = spatial(8) j) {
          reads(T[vi, vj]) writes(Y[vi, vj])
          Y[vi, vj] = max(T[vi, vj], 0.0)
        }
      }
    }
  }
}
)";

// A matmul into an intermediate, then a ReLU: an epilogue whose producer is a reduction.
inline const char* const kMatmulReluKernel = R"(func @matmul_relu(A: f32[8,4], B: f32[4,8], Y: f32[8,8]) {
  alloc T: f32[8,8] {
    for i in 0..8 {
      for j in 0..8 {
        for k in 0..4 {
          block T(vi = spatial(8) i, vj = spatial(8) j, vk = reduce(4) k) {
            reads(A[vi, vk], B[vk, vj], T[vi, vj]) writes(T[vi, vj])
            init { T[vi, vj] = 0.0 }
            T[vi, vj] = T[vi, vj] + A[vi, vk] * B[vk, vj]
          }
        }
      }
    }
    for i in 0..8 {
      for j in 0..8 {
        block Y(vi = spatial(8) i, vj = spatial(8) j) {
          reads(T[vi, vj]) writes(Y[vi, vj])
          Y[vi, vj] = max(T[vi, vj], 0.0)
        }
      }
    }
  }
}
)";

// A two-point stencil: B = 2 A, then C[v] = B[v] + B[v + 1] for 63 outputs, C's loop split
// by 8 with a guard (63 is not a multiple of 8).
inline const char* const kStencilKernel = R"(func @stencil(A: f32[64], C: f32[63]) {
  alloc B: f32[64] {
    for i in 0..64 {
      block B(v = spatial(64) i) {
        reads(A[v]) writes(B[v])
        B[v] = A[v] * 2.0
      }
    }
    for i.0 in 0..8 {
      for i.1 in 0..8 {
        block C(v = spatial(63) i.0 * 8 + i.1) where (i.0 * 8 + i.1 < 63) {
          reads(B[v:+2]) writes(C[v])
          C[v] = B[v] + B[v + 1]
        }
      }
    }
  }
}
)";

}  // namespace minic::schedule::test
