// Small helpers the fusion and layout passes share: who reads a value,
// what a constant holds, new names and new constants.
//
// The passes call Graph::link_subgraph_inputs() first, so that a value read
// from inside an If/Loop body counts as a consumer and is never fused away.
#pragma once

#include <string>
#include <vector>

#include "model/graph.h"
#include "schema/fused.h"

namespace sy::rewrite {

// Whether a rewrite may touch `node`: always before placement; while one
// provider's rewrites run (Graph::rewrite_scope), only its nodes. A pattern
// never spans two providers, so no node changes hands by being fused.
bool in_scope(const Graph& graph, const Node& node);

// The node producing `v`, or nullptr for inputs, constants, removed nodes
// and nodes outside the rewrite scope.
Node* producer(Graph& graph, ValueId v);

// True when `v` is read by exactly one live node (through any number of its
// inputs) and is not a graph output: a pass may then fold that reader and
// the producer into one node without anyone else losing the value.
bool has_single_consumer(const Graph& graph, ValueId v);
// The single live consumer of `v` (see has_single_consumer), or nullptr;
// nullptr too when it is outside the rewrite scope.
Node* single_consumer(Graph& graph, ValueId v);

// True for an ai.onnx node of `op_type`.
bool is_op(const Node& node, const char* op_type);
// True for a live com.switchyard node of `op_type` (schema/fused.h).
bool is_switchyard_op(const Node& node, const char* op_type);
// True for a Conv or a FusedConv (a Conv with an epilogue or layouts).
bool is_conv(const Node& node);
// FusedConv's residual, input 3, is there.
bool has_residual(const Node& node);

// Turns `node` into the com.switchyard op `op_type` (FusedConv, ...) at
// version 1, keeping its inputs, outputs and attributes, and makes sure
// the graph imports the domain, so that a saved model reads back. A node
// of that op already stays as it is.
void make_switchyard_op(Graph& graph, Node& node, const char* op_type);

// The value of a one-element tensor of a floating-point type, as a double.
bool tensor_scalar(const Tensor& t, double* value);
// The bounds of a Clip node (attributes before opset 11, constant scalar
// inputs since; an absent one is infinite), when they are known now.
bool clip_bounds(const Graph& graph, const Node& clip, float* lo, float* hi);
// The value of a one-element floating-point constant `v` whose rank is 0
// or at most that of `like`, so that an element-wise op of `like` and `v`
// has `like`'s shape (a fusion replacing the op must not change the
// output's shape). False otherwise, and for a constant of rank >= 1 when
// `like`'s rank is not known.
bool constant_scalar(const Graph& graph, ValueId v, ValueId like, double* value);
// The elements of an int64 constant of rank 0 or 1 (axes, shapes, Trilu's
// k). False when `v` is not one.
bool int64_constant(const Graph& graph, ValueId v, std::vector<int64_t>* out);
// The factor `node` multiplies `x` by: 1/c for Div(x, c), c for Mul(x, c)
// or Mul(c, x), c a finite non-zero scalar constant (constant_scalar());
// 0 when `node` is not such a scaling of `x`.
double scale_by_constant(const Graph& graph, const Node& node, ValueId x);
// constant_scalar() within a relative 1e-5 of `expected` (exporters write
// sqrt(2) and the like rounded to float), or the rounding of a float16
// (1e-3) or bfloat16 (8e-3) constant.
bool constant_near(const Graph& graph, ValueId v, ValueId like, double expected);

// `producer` takes over the output of `consumer`, its single reader that a
// fusion folded into it, and `consumer` is removed. The output's producer
// link is moved too, so the rest of the same rewrite can trace it back.
void absorb_consumer(Graph& graph, Node& producer, Node& consumer);

// A new int, float, string or ints attribute, for the fused ops'
// attributes and rewritten permutations.
Attribute int_attribute(const char* name, int64_t value);
Attribute ints_attribute(const char* name, std::vector<int64_t> values);
Attribute float_attribute(const char* name, float value);
Attribute string_attribute(const char* name, const std::string& value);

// For a node with two inputs, the one that is not `known`; kNoValue when
// neither is `known` or the node does not have exactly two inputs.
ValueId other_input(const Node& node, ValueId known);

// A value name not used in the graph yet: `base`, else `base_1`, `base_2`...
std::string unique_value_name(const Graph& graph, const std::string& base);

// Adds a constant value holding `tensor` under a new unique name.
ValueId add_constant(Graph& graph, const std::string& base_name, Tensor tensor);

// The loop of the fusion passes: links subgraph reads, then offers each live
// node in the rewrite scope, in file order, to `rewrite_one`, which returns true when it rewrote
// the graph there; `count` goes up by one per rewrite. After each rewrite
// the producer/consumer links are rebuilt, because later matches count
// consumers. `rewrite_one` may add values but not nodes (it holds a
// reference into graph.nodes).
void rewrite_each_node(Graph& graph, bool (*rewrite_one)(Graph&, Node&), int* count);

// Points every reader of `from` at `to` (explicit inputs only; callers make
// sure no subgraph reads `from`).
void replace_uses(Graph& graph, ValueId from, ValueId to);

}  // namespace sy::rewrite
