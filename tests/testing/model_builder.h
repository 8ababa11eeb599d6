// ModelBuilder: writes small ONNX models in memory, for tests that go
// through the loader and a Session rather than a hand-built Graph.
//
//   ModelBuilder b(17);
//   b.input("x", DataType::kFloat, {"batch", 4});
//   b.initializer("w", make_tensor<float>({4}, {1, 2, 3, 4}));
//   b.node("Add", {"x", "w"}, {"y"});
//   b.output("y", DataType::kFloat, {"batch", 4});
//   std::string bytes = b.build();
//   auto session = Session::create_from_bytes(bytes.data(), bytes.size());
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/data_type.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace onnx {
class GraphProto;
}

namespace sy::testing {

class ModelBuilder;

// One declared dimension: a number or a symbol. Implicit on purpose, so that
// {"batch", 4} reads like the shape it is.
struct DimSpec {
  DimSpec(int v) : value(v) {}                   // NOLINT(google-explicit-constructor)
  DimSpec(int64_t v) : value(v) {}               // NOLINT(google-explicit-constructor)
  DimSpec(const char* s) : symbol(s) {}          // NOLINT(google-explicit-constructor)
  DimSpec(std::string s) : symbol(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  int64_t value = -1;
  std::string symbol;  // used when value < 0; both empty: an unknown dim
};

// One node attribute.
struct AttrSpec {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kTensor, kGraph };
  AttrSpec(std::string n, int v) : name(std::move(n)), kind(Kind::kInt), i(v) {}
  AttrSpec(std::string n, int64_t v) : name(std::move(n)), kind(Kind::kInt), i(v) {}
  AttrSpec(std::string n, float v) : name(std::move(n)), kind(Kind::kFloat), f(v) {}
  AttrSpec(std::string n, const char* v) : name(std::move(n)), kind(Kind::kString), s(v) {}
  AttrSpec(std::string n, std::string v) : name(std::move(n)), kind(Kind::kString), s(std::move(v)) {}
  AttrSpec(std::string n, std::vector<int64_t> v) : name(std::move(n)), kind(Kind::kInts), ints(std::move(v)) {}
  AttrSpec(std::string n, std::vector<float> v) : name(std::move(n)), kind(Kind::kFloats), floats(std::move(v)) {}
  AttrSpec(std::string n, Tensor v) : name(std::move(n)), kind(Kind::kTensor), t(std::move(v)) {}
  // A subgraph (If branches, Loop bodies): the builder's inputs, outputs,
  // initializers and nodes; names it does not define come from outside.
  AttrSpec(std::string n, const ModelBuilder& body);

  std::string name;
  Kind kind;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  Tensor t;
  std::shared_ptr<const ModelBuilder> g;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) : opset_(opset) {}

  // A graph input with a declared shape.
  ModelBuilder& input(const std::string& name, DataType dtype, std::vector<DimSpec> dims);
  // A graph input whose rank is not declared.
  ModelBuilder& input_without_shape(const std::string& name, DataType dtype);
  // A graph output; `dims` may be empty for a scalar.
  ModelBuilder& output(const std::string& name, DataType dtype, std::vector<DimSpec> dims);
  ModelBuilder& output_without_shape(const std::string& name, DataType dtype);
  // A constant. With `also_input`, it is listed among the graph inputs as
  // well, which makes it an overridable initializer.
  ModelBuilder& initializer(const std::string& name, const Tensor& value, bool also_input = false);
  // A node; the name defaults to "<op>_<index>".
  ModelBuilder& node(const std::string& op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::vector<AttrSpec> attrs = {}, std::string name = "");
  // A node of another domain than ai.onnx (com.switchyard's FusedConv ...);
  // the model imports the domain only through opset_import().
  ModelBuilder& domain_node(const std::string& domain, const std::string& op_type, std::vector<std::string> inputs,
                            std::vector<std::string> outputs, std::vector<AttrSpec> attrs = {},
                            std::string name = "");
  // Imports `domain` at `version`, besides ai.onnx at the builder's opset.
  ModelBuilder& opset_import(const std::string& domain, int64_t version);

  // The serialized ModelProto.
  std::string build() const;
  // Writes build() to `path`.
  Status save(const std::string& path) const;

 private:
  void fill_graph(onnx::GraphProto* graph) const;

  struct ValueSpec {
    std::string name;
    DataType dtype;
    bool has_shape;
    std::vector<DimSpec> dims;
  };
  struct NodeSpec {
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<AttrSpec> attrs;
    std::string name;
    std::string domain;
  };
  struct InitSpec {
    std::string name;
    Tensor value;
  };

  int64_t opset_;
  std::vector<std::pair<std::string, int64_t>> other_opsets_;
  std::vector<ValueSpec> inputs_;
  std::vector<ValueSpec> outputs_;
  std::vector<InitSpec> initializers_;
  std::vector<NodeSpec> nodes_;
};

}  // namespace sy::testing
