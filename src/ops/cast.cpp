// Placeholder: the ops of this family are being written.
#include "minic/ops/op.h"

namespace minic {

void register_cast_ops(OpRegistry& registry) {}

}  // namespace minic
