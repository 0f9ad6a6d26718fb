// Placeholder: the `fuse-matmul-bias` pass is being written.
#include "minic/passes/graph/fuse_matmul_bias.h"

namespace minic {

void fuse_matmul_bias(Graph& graph) {}

}  // namespace minic
