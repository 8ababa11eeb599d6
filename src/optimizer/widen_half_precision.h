// Half-precision nodes run in float: the CPU provider has fast float kernels
// for every op, and float16/bfloat16 ones for few (and those convert each
// element as they go: a float16 MatMul's half kernel took minutes on BERT
// where the float one takes 0.1 s), so it claims a float16 or bfloat16 node
// it can run in float (ExecutionProvider::capability) and, once placement
// is done, makes every such node placed on it a float node here
// (ExecutionProvider::adapt_placed_nodes):
//
//   - each half input is read through its float twin: a constant is
//     widened once, here, at session creation; any other value through a
//     Cast to float, made once per value however many nodes read it;
//   - each half output becomes a float value, and a Cast back to the half
//     type makes the original value for whoever still reads it (a graph
//     output, a node left in half precision).
//
// A node that reads a value a widened node made reads the float one
// directly, so a chain of widened nodes (Conv -> Relu -> Conv) runs in
// float end to end, without the Cast pair between each two: the Casts back
// to half that no one reads are dead and go with the dead nodes. That
// skips the rounding to half precision between ops, so the results are as
// close to float's as the inputs allow, like ONNX Runtime's cast insertion.
#pragma once

#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

// What the provider can run, asked per node.
struct HalfPrecisionQueries {
  // Whether it runs `node` with its half inputs (and outputs) in float.
  bool (*runs_widened)(const void* context, const Graph& graph, const Node& node);
  const void* context;
};

// Whether `node` may be widened at all: it reads or makes a float16 or
// bfloat16 tensor and its result does not depend on a half type named in
// an attribute or made at random (Cast, ConstantOfShape, EyeLike, the
// random ops, the quantization ops), nor runs a subgraph.
bool widenable(const Graph& graph, const Node& node);

// Widens the widenable nodes placed on `placement` that it can run in float
// (see above). `widened` counts them.
Status widen_half_precision(Graph& graph, int placement, const HalfPrecisionQueries& queries, int* widened);

}  // namespace sy
