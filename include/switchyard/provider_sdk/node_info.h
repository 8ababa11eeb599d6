// NodeInfo: the node a provider is asked to claim or to make a kernel for,
// read through the host's ABI table (sy_host_api's node_* entries). Part of
// the provider SDK (see axis.h): the table lookup (kernel_table.h) and
// every kernel's creation read a node through it, so attribute defaults,
// omitted inputs and the wording of errors are the same in every provider.
//
// Valid while the core's sy_node is: during supports() and create_kernel().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/provider_abi.h"
#include "switchyard/provider_sdk/status.h"
#include "switchyard/provider_sdk/tensor_view.h"

namespace sy::provider_sdk {

class NodeInfo {
 public:
  NodeInfo(const sy_host_api* host, const sy_node* node) : host_(host), node_(node) {}

  std::string op_type() const { return host_->node_op_type(node_); }
  // "" for ai.onnx.
  std::string domain() const { return host_->node_domain(node_); }
  std::string name() const { return host_->node_name(node_); }
  // The version of the op's schema the node resolved to.
  int since_version() const { return host_->node_since_version(node_); }
  // Counts include omitted optional inputs and outputs.
  int num_inputs() const { return host_->node_num_inputs(node_); }
  int num_outputs() const { return host_->node_num_outputs(node_); }

  // The static type of input or output i: false when it is omitted or not
  // a tensor. An unknown rank is -1, an unknown dim -1; data is null.
  bool input_type(int i, TensorView& type) const { return host_->node_input_type(node_, i, &type.t) != 0; }
  bool output_type(int i, TensorView& type) const { return host_->node_output_type(node_, i, &type.t) != 0; }
  // Input i's dtype number; 0 when it is omitted or its type is unknown.
  int32_t input_dtype(int i) const {
    TensorView t;
    return input_type(i, t) ? t.t.dtype : 0;
  }
  bool has_input(int i) const {
    TensorView t;
    return i < num_inputs() && input_type(i, t);
  }
  // Input i's value when it is a constant: host memory, valid for the
  // session's life, for prepacking at creation.
  bool constant_input(int i, TensorView& value) const { return host_->node_constant_input(node_, i, &value.t) != 0; }

  // Attributes: the value when present with that type, else the default
  // (or an empty list).
  int64_t attr_int(const char* name, int64_t default_value) const {
    int64_t v = 0;
    return host_->node_attr_int(node_, name, &v) ? v : default_value;
  }
  float attr_float(const char* name, float default_value) const {
    float v = 0;
    return host_->node_attr_float(node_, name, &v) ? v : default_value;
  }
  std::vector<int64_t> attr_ints(const char* name) const {
    const int64_t* p = nullptr;
    size_t n = 0;
    return host_->node_attr_ints(node_, name, &p, &n) ? std::vector<int64_t>(p, p + n) : std::vector<int64_t>();
  }
  // Whether the ints attribute is there at all (an empty list is there).
  bool has_attr_ints(const char* name) const {
    const int64_t* p = nullptr;
    size_t n = 0;
    return host_->node_attr_ints(node_, name, &p, &n) != 0;
  }
  std::vector<float> attr_floats(const char* name) const {
    const float* p = nullptr;
    size_t n = 0;
    return host_->node_attr_floats(node_, name, &p, &n) ? std::vector<float>(p, p + n) : std::vector<float>();
  }
  std::string attr_string(const char* name, const std::string& default_value) const {
    const char* p = nullptr;
    size_t n = 0;
    return host_->node_attr_string(node_, name, &p, &n) ? std::string(p, n) : default_value;
  }
  // A tensor attribute (host memory, valid for the session's life).
  bool attr_tensor(const char* name, TensorView& value) const {
    return host_->node_attr_tensor(node_, name, &value.t) != 0;
  }
  // A fingerprint of the model, stable across sessions on the same file,
  // for caches kept on disk.
  std::string model_key() const { return host_->node_model_key(node_); }

  // "node 'x' (Op)", for messages.
  std::string describe() const { return host_->node_describe(node_); }
  // An invalid attribute or input: the node is wrong, not just unsupported,
  // and the session fails naming it.
  Status error(const std::string& message) const { return invalid_graph(describe() + ": " + message); }
  // Valid but not handled here: the node falls through to the next
  // provider with this reason.
  Status unsupported(const std::string& message) const { return not_implemented(message); }

  const sy_host_api* host() const { return host_; }
  const sy_node* node() const { return node_; }

 private:
  const sy_host_api* host_;
  const sy_node* node_;
};

}  // namespace sy::provider_sdk
