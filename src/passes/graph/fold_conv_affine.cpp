// Placeholder: the `fold-conv-affine` pass is being written.
#include "minic/passes/graph/fold_conv_affine.h"

namespace minic {

void fold_conv_affine(Graph& graph) {}

}  // namespace minic
