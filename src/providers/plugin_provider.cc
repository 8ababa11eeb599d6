#include "providers/plugin_provider.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/logging.h"
#include "model/fingerprint.h"

// The ABI's opaque handles, as the core defines them.
struct sy_node {
  const sy::Graph* graph;
  const sy::Node* node;
  std::string description;
  std::string model_key;
};

struct sy_kernel_context {
  sy::KernelContext* ctx;
  // In kernel_prepare: the inputs' shapes only; nothing may be allocated.
  bool preparing = false;
  void* state = nullptr;  // what kernel_prepare made, for ctx_state()
};

struct sy_partition {
  const sy::Graph* graph;
  const sy::PartitionToCompile* part;
  std::vector<sy_node> nodes;
};

namespace sy {
namespace {

constexpr size_t kMessageSize = 1024;

// Fills an ABI tensor from a core tensor. False when it cannot be
// expressed (rank above SY_MAX_RANK, a sequence).
bool to_abi(const Tensor& t, sy_tensor& out) {
  if (!t.is_tensor() || t.shape().rank() > SY_MAX_RANK) return false;
  out.dtype = static_cast<int32_t>(t.dtype());
  out.rank = static_cast<int32_t>(t.shape().rank());
  for (size_t i = 0; i < t.shape().rank(); ++i) out.dims[i] = t.shape()[i];
  out.data = const_cast<void*>(t.raw_data());
  out.device = {static_cast<int32_t>(t.device().type), t.device().id};
  return true;
}

bool type_to_abi(const ValueType& type, sy_tensor& out) {
  if (!type.is_tensor()) return false;
  out = sy_tensor{};
  out.dtype = static_cast<int32_t>(type.dtype);
  out.rank = -1;
  if (type.has_shape && type.rank() <= SY_MAX_RANK) {
    out.rank = static_cast<int32_t>(type.rank());
    for (size_t i = 0; i < type.rank(); ++i) out.dims[i] = type.dims[i].is_known() ? type.dims[i].value : -1;
  }
  return true;
}

// ---- sy_host_api entries ----

const char* node_op_type(const sy_node* n) { return n->node->op_type.c_str(); }
const char* node_domain(const sy_node* n) { return n->node->domain.c_str(); }
const char* node_name(const sy_node* n) { return n->node->name.c_str(); }
const char* node_describe(const sy_node* n) { return n->description.c_str(); }
int32_t node_since_version(const sy_node* n) { return n->node->since_version; }
int32_t node_num_inputs(const sy_node* n) { return static_cast<int32_t>(n->node->inputs.size()); }
int32_t node_num_outputs(const sy_node* n) { return static_cast<int32_t>(n->node->outputs.size()); }

int node_input_type(const sy_node* n, int32_t i, sy_tensor* type) {
  if (i < 0 || !n->node->has_input(static_cast<size_t>(i))) return 0;
  return type_to_abi(n->graph->values[static_cast<size_t>(n->node->inputs[static_cast<size_t>(i)])].type, *type);
}

int node_output_type(const sy_node* n, int32_t i, sy_tensor* type) {
  if (i < 0 || static_cast<size_t>(i) >= n->node->outputs.size() || n->node->outputs[static_cast<size_t>(i)] == kNoValue)
    return 0;
  return type_to_abi(n->graph->values[static_cast<size_t>(n->node->outputs[static_cast<size_t>(i)])].type, *type);
}

int node_constant_input(const sy_node* n, int32_t i, sy_tensor* value) {
  if (i < 0 || !n->node->has_input(static_cast<size_t>(i))) return 0;
  const Tensor* t = n->graph->constant(n->node->inputs[static_cast<size_t>(i)]);
  return t != nullptr && to_abi(*t, *value) ? 1 : 0;
}

const Attribute* find_attr(const sy_node* n, const char* name, AttributeType type) {
  const Attribute* a = n->node->attr(name);
  return a != nullptr && a->type == type ? a : nullptr;
}

int node_attr_int(const sy_node* n, const char* name, int64_t* value) {
  const Attribute* a = find_attr(n, name, AttributeType::kInt);
  if (a) *value = a->i;
  return a != nullptr;
}
int node_attr_float(const sy_node* n, const char* name, float* value) {
  const Attribute* a = find_attr(n, name, AttributeType::kFloat);
  if (a) *value = a->f;
  return a != nullptr;
}
int node_attr_ints(const sy_node* n, const char* name, const int64_t** values, size_t* count) {
  const Attribute* a = find_attr(n, name, AttributeType::kInts);
  if (a) {
    *values = a->ints.data();
    *count = a->ints.size();
  }
  return a != nullptr;
}
int node_attr_floats(const sy_node* n, const char* name, const float** values, size_t* count) {
  const Attribute* a = find_attr(n, name, AttributeType::kFloats);
  if (a) {
    *values = a->floats.data();
    *count = a->floats.size();
  }
  return a != nullptr;
}
int node_attr_string(const sy_node* n, const char* name, const char** value, size_t* size) {
  const Attribute* a = find_attr(n, name, AttributeType::kString);
  if (a) {
    *value = a->s.data();
    *size = a->s.size();
  }
  return a != nullptr;
}
int node_attr_tensor(const sy_node* n, const char* name, sy_tensor* value) {
  const Attribute* a = find_attr(n, name, AttributeType::kTensor);
  return a != nullptr && to_abi(a->t, *value) ? 1 : 0;
}
const char* node_model_key(const sy_node* n) { return n->model_key.c_str(); }

const char* value_name(const Graph& graph, ValueId v) {
  return v == kNoValue ? "" : graph.values[static_cast<size_t>(v)].name.c_str();
}
const char* node_input_name(const sy_node* n, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= n->node->inputs.size()) return "";
  return value_name(*n->graph, n->node->inputs[static_cast<size_t>(i)]);
}
const char* node_output_name(const sy_node* n, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= n->node->outputs.size()) return "";
  return value_name(*n->graph, n->node->outputs[static_cast<size_t>(i)]);
}

int32_t partition_num_nodes(const sy_partition* p) { return static_cast<int32_t>(p->nodes.size()); }
const sy_node* partition_node(const sy_partition* p, int32_t i) {
  return i >= 0 && static_cast<size_t>(i) < p->nodes.size() ? &p->nodes[static_cast<size_t>(i)] : nullptr;
}
int32_t partition_num_inputs(const sy_partition* p) { return static_cast<int32_t>(p->part->inputs.size()); }
int32_t partition_num_outputs(const sy_partition* p) { return static_cast<int32_t>(p->part->outputs.size()); }

// A partition's input or output value: its name, its static type, and its
// data when it is a constant.
int partition_value(const sy_partition* p, const std::vector<ValueId>& values, int32_t i, const char** name,
                    sy_tensor* type) {
  if (i < 0 || static_cast<size_t>(i) >= values.size()) return 0;
  const ValueId v = values[static_cast<size_t>(i)];
  *name = value_name(*p->graph, v);
  if (!type_to_abi(p->graph->values[static_cast<size_t>(v)].type, *type)) return 0;
  const Tensor* constant = p->graph->constant(v);
  if (constant != nullptr && constant->raw_data() != nullptr) to_abi(*constant, *type);
  return 1;
}
int partition_input(const sy_partition* p, int32_t i, const char** name, sy_tensor* type) {
  return partition_value(p, p->part->inputs, i, name, type);
}
int partition_output(const sy_partition* p, int32_t i, const char** name, sy_tensor* type) {
  return partition_value(p, p->part->outputs, i, name, type);
}

int32_t ctx_num_inputs(sy_kernel_context* c) { return static_cast<int32_t>(c->ctx->num_inputs()); }
int ctx_input(sy_kernel_context* c, int32_t i, sy_tensor* tensor) {
  const Tensor* t = i >= 0 ? c->ctx->input(static_cast<size_t>(i)) : nullptr;
  return t != nullptr && to_abi(*t, *tensor) ? 1 : 0;
}
int32_t ctx_num_outputs(sy_kernel_context* c) { return static_cast<int32_t>(c->ctx->num_outputs()); }
int ctx_output_requested(sy_kernel_context* c, int32_t i) { return c->ctx->output_requested(static_cast<size_t>(i)); }

int ctx_allocate_output(sy_kernel_context* c, int32_t i, int32_t dtype, int32_t rank, const int64_t* dims,
                        sy_tensor* tensor, char* error, size_t error_size) {
  auto fail = [&](const Status& st) {
    std::snprintf(error, error_size, "%s", st.message().c_str());
    return static_cast<int>(st.code());
  };
  if (c->preparing)
    return fail(invalid_argument(c->ctx->node().describe() + ": the provider asked for an output in kernel_prepare, "
                                 "which sees shapes only"));
  if (i < 0 || static_cast<size_t>(i) >= c->ctx->num_outputs() || rank < 0 || rank > SY_MAX_RANK ||
      !is_valid_data_type(dtype))
    return fail(invalid_argument(c->ctx->node().describe() + ": bad output request from the provider (output " +
                                 std::to_string(i) + ", rank " + std::to_string(rank) + ")"));
  Result<Tensor*> out = c->ctx->allocate_output(static_cast<size_t>(i), static_cast<DataType>(dtype),
                                                Shape(std::span<const int64_t>(dims, static_cast<size_t>(rank))));
  if (!out.ok()) return fail(out.status());
  to_abi(**out, *tensor);
  return 0;
}

void* ctx_scratch(sy_kernel_context* c, size_t bytes) {
  if (c->preparing) return nullptr;  // kernel_prepare sees shapes only
  Result<void*> p = c->ctx->scratch(bytes);
  return p.ok() ? *p : nullptr;
}

void* ctx_state(sy_kernel_context* c) { return c->state; }

void host_log(int level, const char* message) {
  const auto severity = static_cast<LogSeverity>(level < 0 ? 0 : (level > 3 ? 3 : level));
  log_message(severity, LogSeverity::kVerbose, "provider", message);
}

const sy_host_api kHostApi = {
    SY_PROVIDER_ABI_VERSION, sizeof(sy_host_api),
    node_op_type, node_domain, node_name, node_describe, node_since_version, node_num_inputs, node_num_outputs,
    node_input_type, node_output_type, node_constant_input, node_attr_int, node_attr_float, node_attr_ints,
    node_attr_floats, node_attr_string, node_attr_tensor, node_model_key,
    ctx_num_inputs, ctx_input, ctx_num_outputs, ctx_output_requested, ctx_allocate_output, ctx_scratch,
    host_log,
    node_input_name, node_output_name,
    partition_num_nodes, partition_node, partition_num_inputs, partition_num_outputs, partition_input,
    partition_output,
    ctx_state,
};

Status from_code(int code, const char* message) {
  if (code == 0) return ok_status();
  const auto sc = code > 0 && code <= static_cast<int>(StatusCode::kOutOfMemory) ? static_cast<StatusCode>(code)
                                                                                 : StatusCode::kFail;
  return Status(sc, message);
}

class PluginAllocator final : public Allocator {
 public:
  PluginAllocator(const sy_provider_api* api, sy_provider* p, Device device) : api_(api), p_(p), device_(device) {}
  void* allocate(size_t bytes) override { return api_->allocate(p_, bytes); }
  void deallocate(void* p) override { api_->deallocate(p_, p); }
  Device device() const override { return device_; }
  std::string last_error() const override {
    const char* e = api_->last_error ? api_->last_error(p_) : nullptr;
    return e ? e : "";
  }

 private:
  const sy_provider_api* api_;
  sy_provider* p_;
  Device device_;
};

// A plugin kernel's prepared state, which the frame keeps; freed through
// the plugin.
class PluginKernelState final : public KernelState {
 public:
  PluginKernelState(const sy_provider_api* api, sy_provider* p, sy_kernel* k, void* state)
      : api_(api), p_(p), k_(k), state_(state) {}
  ~PluginKernelState() override {
    if (state_ != nullptr && api_->kernel_state_destroy != nullptr) api_->kernel_state_destroy(p_, k_, state_);
  }
  PluginKernelState(const PluginKernelState&) = delete;
  PluginKernelState& operator=(const PluginKernelState&) = delete;
  void* state() const { return state_; }

 private:
  const sy_provider_api* api_;
  sy_provider* p_;
  sy_kernel* k_;
  void* state_;
};

class PluginKernel final : public Kernel {
 public:
  PluginKernel(const sy_provider_api* api, sy_provider* p, sy_kernel* k) : api_(api), p_(p), k_(k) {}
  ~PluginKernel() override { api_->kernel_destroy(p_, k_); }

  bool prepares() const override { return api_->kernel_prepare != nullptr; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    // The plugin reads inputs only; ctx_allocate_output and ctx_scratch
    // refuse while preparing, so the context is not written through.
    sy_kernel_context c{const_cast<KernelContext*>(&ctx), true, nullptr};
    char error[kMessageSize];
    error[0] = '\0';
    void* state = nullptr;
    const int code = api_->kernel_prepare(p_, k_, &c, &state, error, sizeof error);
    auto kept = std::make_unique<PluginKernelState>(api_, p_, k_, state);
    if (code != 0) return from_code(code, (ctx.node().describe() + ": " + error).c_str());
    return std::unique_ptr<KernelState>(std::move(kept));
  }

  Status run(KernelContext& ctx) const override {
    const auto* prepared = static_cast<const PluginKernelState*>(ctx.state());
    sy_kernel_context c{&ctx, false, prepared != nullptr ? prepared->state() : nullptr};
    // Written only on failure; not cleared per node run.
    char error[kMessageSize];
    error[0] = '\0';
    const int code = api_->kernel_run(p_, k_, &c, error, sizeof error);
    if (code == 0) return ok_status();
    return from_code(code, (ctx.node().describe() + ": " + error).c_str());
  }

 private:
  const sy_provider_api* api_;
  sy_provider* p_;
  sy_kernel* k_;
};

class PluginProvider final : public ExecutionProvider {
 public:
  PluginProvider(const sy_provider_api* api, sy_provider* p)
      : api_(api), p_(p), device_(to_device(api->device(p))), allocator_(api, p, device_) {
    char reason[kMessageSize] = {}, fix[kMessageSize] = {};
    availability_.available = api_->availability(p_, reason, sizeof reason, fix, sizeof fix) != 0;
    availability_.reason = reason;
    availability_.fix = fix;
  }
  ~PluginProvider() override { api_->destroy(p_); }

  std::string name() const override { return api_->name; }
  std::string short_name() const override { return api_->short_name; }
  Availability availability() const override { return availability_; }
  Device device() const override { return device_; }
  Allocator* allocator() override { return &allocator_; }

  std::vector<NodeSupport> capability(const Graph& graph, std::span<const NodeId> candidates) override {
    std::vector<NodeSupport> answers;
    for (NodeId id : candidates) {
      NodeSupport a;
      a.node = id;
      const Node& node = graph.nodes[static_cast<size_t>(id)];
      if (!availability_.available) {
        a.reason = "provider unavailable: " + availability_.reason;
        answers.push_back(std::move(a));
        continue;
      }
      sy_node handle = node_handle(graph, node);
      char reason[kMessageSize] = {};
      if (api_->supports != nullptr) {
        a.supported = api_->supports(p_, &handle, reason, sizeof reason) != 0;
      } else {
        // A plugin without supports(): its answer is whether it creates a
        // kernel, which is thrown away; the kept nodes get theirs later.
        sy_kernel* kernel = nullptr;
        uint64_t host_inputs = 0;
        a.supported = api_->create_kernel(p_, &handle, &kernel, &host_inputs, reason, sizeof reason) != 0 &&
                      kernel != nullptr;
        if (kernel != nullptr) api_->kernel_destroy(p_, kernel);
      }
      if (!a.supported) a.reason = reason[0] ? reason : "declined by " + name();
      answers.push_back(std::move(a));
    }
    return answers;
  }

  std::vector<std::string> rewrites() const override {
    std::vector<std::string> names;
    if (api_->rewrites != nullptr)
      for (const char* const* n = api_->rewrites; *n != nullptr; ++n) names.emplace_back(*n);
    return names;
  }

  // The ABI has no way to run a subgraph, so `subgraphs` goes unused.
  Result<CreatedKernel> create_kernel(const Graph& graph, NodeId id, const CompiledSubgraphMap&) override {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    if (!availability_.available) return Status(StatusCode::kUnavailable, name() + " is unavailable: " + availability_.reason);
    sy_node handle = node_handle(graph, node);
    sy_kernel* kernel = nullptr;
    uint64_t host_inputs = 0;
    char reason[kMessageSize] = {};
    if (!api_->create_kernel(p_, &handle, &kernel, &host_inputs, reason, sizeof reason) || kernel == nullptr)
      return not_implemented(reason[0] ? reason : "declined by " + name());
    CreatedKernel created;
    created.kernel = std::make_unique<PluginKernel>(api_, p_, kernel);
    created.host_inputs = host_inputs;
    return created;
  }

  bool compiles_partitions() const override { return availability_.available && api_->compile != nullptr; }

  Result<CreatedKernel> compile(const Graph& graph, const PartitionToCompile& partition) override {
    if (!compiles_partitions()) return ExecutionProvider::compile(graph, partition);
    sy_partition handle{&graph, &partition, {}};
    for (NodeId id : partition.nodes) handle.nodes.push_back(node_handle(graph, graph.nodes[static_cast<size_t>(id)]));
    sy_kernel* kernel = nullptr;
    uint64_t host_inputs = 0;
    char reason[kMessageSize] = {};
    if (!api_->compile(p_, &handle, partition.cache_key.c_str(), &kernel, &host_inputs, reason, sizeof reason) ||
        kernel == nullptr)
      return not_implemented(reason[0] ? reason : name() + " declined to compile the partition");
    CreatedKernel created;
    created.kernel = std::make_unique<PluginKernel>(api_, p_, kernel);
    created.host_inputs = host_inputs;
    return created;
  }

  std::string version() const override { return api_->version != nullptr ? api_->version : ""; }

  std::vector<std::string> option_specs() const override {
    std::vector<std::string> out;
    if (api_->options != nullptr)
      for (const sy_option_spec* o = api_->options; o->key != nullptr; ++o)
        out.push_back(std::string(o->key) + " (" + (o->accepted ? o->accepted : "?") + ")");
    return out;
  }

  std::vector<std::string> required_libraries() const override {
    std::vector<std::string> out;
    if (api_->libraries != nullptr)
      for (const char* const* l = api_->libraries; *l != nullptr; ++l) {
        std::string entry = *l;
        for (size_t bar; (bar = entry.find('|')) != std::string::npos;) entry.replace(bar, 1, " or ");
        out.push_back(entry);
      }
    return out;
  }

  Status copy_to_host(const Tensor& src, Tensor& dst) const override { return copy(src, dst, api_->copy_to_host); }
  Status copy_from_host(const Tensor& src, Tensor& dst) const override { return copy(src, dst, api_->copy_from_host); }
  Status copy_on_device(const Tensor& src, Tensor& dst) const override {
    if (api_->copy_on_device == nullptr) return not_implemented(name() + " cannot copy within its device");
    return copy(src, dst, api_->copy_on_device);
  }

  Status synchronize() override {
    if (api_->synchronize == nullptr) return ok_status();
    char error[kMessageSize] = {};
    return from_code(api_->synchronize(p_, error, sizeof error), error);
  }

  bool keeps_shape_math_on_host() const override { return !device_.is_cpu(); }

  std::string describe() const override {
    if (api_->describe == nullptr) return {};
    std::string text(8192, '\0');
    if (api_->describe(p_, text.data(), text.size()) != 0) return {};
    text.resize(std::strlen(text.c_str()));
    return text;
  }

 private:
  using CopyFn = int (*)(sy_provider*, const sy_tensor*, sy_tensor*, char*, size_t);
  Status copy(const Tensor& src, Tensor& dst, CopyFn fn) const {
    sy_tensor s{}, d{};
    if (src.dtype() == DataType::kString || !to_abi(src, s) || !to_abi(dst, d))
      return not_implemented(name() + " cannot copy " + src.describe());
    char error[kMessageSize] = {};
    return from_code(fn(p_, &s, &d, error, sizeof error), error);
  }
  static Device to_device(sy_device d) { return Device{static_cast<DeviceType>(d.type), d.id}; }

  // The handle a plugin sees for `node`. The model key is computed once,
  // on the graph as placement first sees it, and then kept: the key names
  // the model, and fingerprinting the whole graph per node would cost
  // O(nodes^2) per session.
  sy_node node_handle(const Graph& graph, const Node& node) {
    if (model_key_.empty()) model_key_ = graph_fingerprint(graph);
    return sy_node{&graph, &node, node.describe(), model_key_};
  }

  const sy_provider_api* api_;
  sy_provider* p_;
  Device device_;
  PluginAllocator allocator_;
  Availability availability_;
  std::string model_key_;
};

}  // namespace

const sy_host_api* host_api() { return &kHostApi; }

Result<std::unique_ptr<ExecutionProvider>> make_plugin_provider(
    const sy_provider_api* api, const std::string& library, const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  char error[kMessageSize] = {};
  sy_provider* p = api->create(&kHostApi, keys.data(), values.data(), keys.size(), error, sizeof error);
  if (p == nullptr)
    return invalid_argument(error[0] ? std::string(error) : std::string(api->name) + ": provider creation failed (" + library + ")");
  return std::unique_ptr<ExecutionProvider>(std::make_unique<PluginProvider>(api, p));
}

}  // namespace sy
