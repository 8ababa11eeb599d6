// Version adapters: ai.onnx nodes of opsets 1 to 6 rewritten, at load
// time, into the op versions the kernels run (6 or 7 mostly), so that a
// kernel sees one form of each op. What changed between those versions is
// either an attribute that no longer means anything at inference
// (consumed_inputs, is_test, output_sequence, Gemm's broadcast) or a form
// that the newer version writes differently:
//   - Add/Sub/Mul/Div/Pow/And/Or/Xor/Equal/Greater/Less with broadcast=1
//     and an axis: B is aligned at that axis of A; numpy broadcasting
//     aligns it at the end, so B gets trailing 1-dims (a reshaped constant,
//     or an Unsqueeze);
//   - PRelu-1/6: a [C] slope is per channel; it gets trailing 1-dims too;
//   - Cast-1's `to` is a type name; Concat-1's axis defaults to 1;
//     Reshape-1's shape, Split-1's split input, Tile-1's tiles and axis
//     inputs and Upsample-1's height_scale/width_scale become the newer
//     inputs or attributes.
// Each adapted node is listed in Graph::version_adaptations, which
// `switchyard inspect` prints.
#pragma once

#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

// Adapts node `id` when it is an old ai.onnx version with an adapter; a
// no-op otherwise. Run during type inference, just before the node's own
// inference: the adapters that need an input's rank read it from the
// types inferred so far. A node added for the adaptation (an Unsqueeze)
// gets its output type here. An error names the node when an adapter
// cannot apply (a rank that is unknown, an input that must be constant).
Status adapt_old_version(Graph& graph, NodeId id);

}  // namespace sy
