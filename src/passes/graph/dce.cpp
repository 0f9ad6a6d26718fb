// Placeholder: the `dce` pass is being written.
#include "minic/passes/graph/dce.h"

namespace minic {

void eliminate_dead_code(Graph& graph) {}

}  // namespace minic
