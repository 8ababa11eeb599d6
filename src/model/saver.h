// Model saving: Graph IR -> ONNX bytes, the reverse of loader.h. Used for
// SessionOptions::optimized_model_path, to write the graph as the optimizer
// left it.
//
// What is written:
// - live nodes in topological order, with their attributes and subgraphs;
// - graph inputs and outputs with their types, value_info for every other
//   value whose type is known, and the constants nodes read as initializers
//   (`overridable` adds initializers that are also graph inputs);
// - the model's opset imports and metadata.
//
// The optimizer's fused ops (FusedConv, FusedMatMul: schema/fused.cc) are
// written as they are, in the com.switchyard domain, and an ai.onnx op
// newer than the model's imported opset (a Gelu fused into an opset-17
// model) is written in that domain under its ai.onnx op name; either way
// com.switchyard is imported at version 1. The ONNX checker accepts such
// nodes (it does not check custom domains); resolve() reads the fused ops
// back as they are and turns the others back into the ai.onnx ops. Other
// runtimes cannot run them, as ONNX Runtime's optimized files need ONNX
// Runtime.
//
// Everything goes into one protobuf message, so the file is limited to
// 2 GiB; larger models are refused with an error.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/graph.h"
#include "schema/fused.h"
#include "switchyard/status.h"

namespace sy {

// The domain written for nodes ai.onnx cannot express at the model's opset.
inline constexpr const char* kSavedFusedDomain = kSwitchyardDomain;

// The serialized ModelProto of `model` (its metadata and opsets) with the
// graph `graph`.
Result<std::string> model_to_bytes(const Model& model, const Graph& graph,
                                   const std::vector<std::pair<ValueId, Tensor>>& overridable = {});

// Writes model_to_bytes() to `path`.
Status save_model(const Model& model, const Graph& graph, const std::string& path,
                  const std::vector<std::pair<ValueId, Tensor>>& overridable = {});

}  // namespace sy
