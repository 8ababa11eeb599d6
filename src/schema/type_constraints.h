// The spec's type constraints on a node's inputs (op_versions.inc, from the
// spec's "Inputs" and "Type Constraints" blocks): each input's type must be
// one its type variable accepts, and inputs that share a variable must have
// the same type. Kernels choose their code by input 0's type and read the
// others as that type, so a model whose Conv has a float X and a float8 W
// would be read past its buffers without this check.
#pragma once

#include "model/graph.h"
#include "schema/op_versions.h"
#include "switchyard/status.h"

namespace sy {

// An InvalidGraph status naming the node, the input, its type and what the
// spec accepts; OK when every input of a known type fits. Inputs whose type
// is not (fully) known yet are not checked.
Status check_input_types(const Graph& graph, const Node& node, const OpVersion& spec);

}  // namespace sy
