// Placeholder: the `simplify` pass is being written.
#include "minic/passes/graph/simplify.h"

namespace minic {

void simplify(Graph& graph) {}

}  // namespace minic
