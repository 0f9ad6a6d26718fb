// Placeholder: the `fold-batchnorm` pass is being written.
#include "minic/passes/graph/fold_batchnorm.h"

namespace minic {

void fold_batchnorm(Graph& graph) {}

}  // namespace minic
