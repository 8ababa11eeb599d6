// Model loading: ONNX bytes -> Model (Graph IR plus metadata).
//
// The result is not resolved: op versions, schemas and inferred types are
// filled in by resolve(), which the session runs after loading.
//
// Conventions of the produced Graph:
// - graph.inputs lists the graph inputs that are not initializers. An input
//   that is also an initializer (an overridable initializer) stays an
//   initializer, has Value::is_graph_input set, and is not in graph.inputs.
// - Sparse initializers are made dense.
// - A subgraph (If/Loop/Scan body) has Graph::parent set. Each name it uses
//   from an enclosing graph appears in its values with is_outer_scope set,
//   and so in every graph between it and the one defining the name.
// - Nodes without a name get "<op_type>_<index>".
// - Tensors with external data view into the memory-mapped data file when
//   aligned (copy-on-write mapping: writes stay private, but passes should
//   clone() before modifying an initializer, which may also be shared).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "model/external_data.h"
#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

// The newest ONNX IR version this build reads (13, since ONNX 1.20). Models
// with a newer one are refused; every older one (1 and up) is read.
inline constexpr int64_t kNewestIrVersion = 13;

// Reads an .onnx file (memory-mapped when large). External data locations
// are resolved inside the file's folder. Errors: kNoSuchFile for a missing
// file, kInvalidProtobuf for bytes that are not a model (or a truncated
// one), kInvalidGraph for a model that parses but is malformed.
// `mode`: whether external data stays mapped or is copied.
Result<Model> load_model(const std::string& path, ExternalDataMode mode = ExternalDataMode::kMap);

// Parses a model held in memory. A model with external data needs
// `external_data_dir`, the folder its locations are relative to; without
// one such a model is refused.
Result<Model> load_model_from_bytes(const void* data, size_t size, const std::string& external_data_dir = "",
                                    ExternalDataMode mode = ExternalDataMode::kMap);

}  // namespace sy
