#include "unit/partition/test_provider.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "providers/cpu/cpu_provider.h"
#include "providers/owning_kernel_context.h"
#include "schema/fused.h"

namespace sy::testing {
namespace {

std::atomic<TestProvider*> g_last_created{nullptr};

// Forwards to the frame's context, checking that every output the kernel
// asks for is memory on the simulated device: the plan must give a
// provider's outputs that provider's allocator.
class CheckingContext final : public KernelContext {
 public:
  static constexpr size_t kMaxInputs = 32;

  CheckingContext(KernelContext& outer, std::span<const Tensor* const> inputs, Device device)
      : outer_(outer), device_(device) {
    inputs_ = inputs;
    num_outputs_ = outer.num_outputs();
    pool_ = &outer.thread_pool();
    node_ = &outer.node();
    state_ = outer.state();  // the inner kernel's prepared state
  }
  bool output_requested(size_t i) const override { return outer_.output_requested(i); }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    SY_ASSIGN_OR_RETURN(Tensor * t, outer_.allocate_output(i, dtype, shape));
    if (t->device() != device_)
      return kernel_error(*this, "test provider: output " + std::to_string(i) + " was allocated on " +
                                     t->device().to_string() + ", expected " + device_.to_string());
    return t;
  }
  Result<void*> scratch(size_t bytes) override { return outer_.scratch(bytes); }

 private:
  KernelContext& outer_;
  Device device_;
};

// A CPU kernel that runs only on tensors living on the simulated device.
class SimulatedKernel final : public Kernel {
 public:
  SimulatedKernel(std::unique_ptr<Kernel> inner, Device device, std::atomic<int64_t>* runs,
                  std::atomic<int64_t>* prepares)
      : inner_(std::move(inner)), device_(device), runs_(runs), prepares_(prepares) {}

  // The inner kernel's prepare phase, counted: its state is the frame's.
  bool prepares() const override { return inner_->prepares(); }
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    prepares_->fetch_add(1);
    return inner_->prepare(ctx);
  }

  Status run(KernelContext& ctx) const override {
    if (ctx.num_inputs() > CheckingContext::kMaxInputs)
      return kernel_error(ctx, "test provider: too many inputs");
    std::array<const Tensor*, CheckingContext::kMaxInputs> inputs{};
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      inputs[i] = t;
      if (t != nullptr && t->device() != device_)
        return kernel_error(ctx, "test provider: input " + std::to_string(i) + " is on " + t->device().to_string() +
                                     ", expected " + device_.to_string() + " (a device copy is missing)");
    }
    CheckingContext checking(ctx, std::span<const Tensor* const>(inputs.data(), ctx.num_inputs()), device_);
    runs_->fetch_add(1);
    return inner_->run(checking);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  Device device_;
  std::atomic<int64_t>* runs_;
  std::atomic<int64_t>* prepares_;
};

// A compiled partition: the CPU kernels of its nodes, run one after another
// on host tensors inside one kernel call, reading the partition's inputs
// from the simulated device and writing its outputs there. What a
// TensorRT-like provider's engine is to the session: one node.
class PartitionKernel final : public Kernel {
 public:
  struct Step {
    Node node;  // a copy: the graph's node vector grows after compiling
    std::unique_ptr<Kernel> kernel;
  };
  PartitionKernel(std::vector<Step> steps, std::vector<ValueId> inputs, std::vector<ValueId> outputs, Device device,
                  std::atomic<int64_t>* runs)
      : steps_(std::move(steps)), inputs_(std::move(inputs)), outputs_(std::move(outputs)), device_(device),
        runs_(runs) {}

  // Allocates as it goes: a test provider, not a hot path.
  Status run(KernelContext& ctx) const override {
    std::map<ValueId, Tensor> values;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) return kernel_error(ctx, "test provider partition: input " + std::to_string(i) + " missing");
      const bool constant_on_host = t->device().is_cpu();  // a weight the partition reads where it lives
      if (!constant_on_host && t->device() != device_)
        return kernel_error(ctx, "test provider partition: input " + std::to_string(i) + " is on " +
                                     t->device().to_string());
      values[inputs_[i]] = *t;
    }
    for (const Step& step : steps_) {
      std::vector<const Tensor*> in;
      for (ValueId v : step.node.inputs) in.push_back(v == kNoValue ? nullptr : &values.at(v));
      OwningKernelContext node_ctx(step.node, in, &ctx.thread_pool());
      SY_RETURN_IF_ERROR(run_kernel_once(*step.kernel, node_ctx));
      runs_->fetch_add(1);
      for (size_t j = 0; j < step.node.outputs.size(); ++j)
        if (step.node.outputs[j] != kNoValue) values[step.node.outputs[j]] = node_ctx.outputs()[j];
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const Tensor& v = values.at(outputs_[k]);
      SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(k, v.dtype(), v.shape()));
      if (out->device() != device_)
        return kernel_error(ctx, "test provider partition: output " + std::to_string(k) + " was allocated on " +
                                     out->device().to_string());
      if (v.byte_size() > 0) std::memcpy(out->raw_data(), v.raw_data(), v.byte_size());
    }
    return ok_status();
  }

 private:
  std::vector<Step> steps_;
  std::vector<ValueId> inputs_, outputs_;
  Device device_;
  std::atomic<int64_t>* runs_;
};

std::set<std::string> split_ops(const std::string& s) {
  std::set<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.insert(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool node_uses_dtype(const Graph& graph, const Node& node, DataType dtype) {
  for (ValueId v : node.inputs)
    if (v != kNoValue && graph.values[static_cast<size_t>(v)].type.dtype == dtype) return true;
  for (ValueId v : node.outputs)
    if (v != kNoValue && graph.values[static_cast<size_t>(v)].type.dtype == dtype) return true;
  return false;
}

// Not ExecutionProvider's default: its copy_from_host dispatches to the
// virtual copy_to_host, which would count (and check) the wrong direction.
Status copy_bytes(const Tensor& src, Tensor& dst) {
  if (src.dtype() != dst.dtype() || src.shape() != dst.shape())
    return invalid_argument("test provider copy: " + src.describe() + " into " + dst.describe());
  if (src.dtype() == DataType::kString) return not_implemented("test provider cannot copy string tensors");
  if (src.byte_size() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.byte_size());
  return ok_status();
}

}  // namespace

void* CountingAllocator::allocate(size_t bytes) {
  const size_t rounded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  void* p = std::aligned_alloc(kCpuAlignment, rounded == 0 ? kCpuAlignment : rounded);
  if (p != nullptr) {
    allocations_.fetch_add(1);
    bytes_.fetch_add(static_cast<int64_t>(bytes));
  }
  return p;
}

void CountingAllocator::deallocate(void* p) {
  if (p == nullptr) return;
  deallocations_.fetch_add(1);
  std::free(p);
}

TestProvider::TestProvider(std::set<std::string> ops, DataType decline_dtype, int device_id)
    : ops_(std::move(ops)), decline_dtype_(decline_dtype), allocator_(Device{DeviceType::kSimulated, device_id}) {
  g_last_created.store(this);
}

TestProvider::~TestProvider() {
  TestProvider* self = this;
  g_last_created.compare_exchange_strong(self, nullptr);
}

TestProvider* TestProvider::last_created() { return g_last_created.load(); }

std::string TestProvider::name() const {
  const int id = allocator_.device().id;
  return id == 0 ? std::string(kName) : kName + std::to_string(id);
}

std::string TestProvider::short_name() const {
  const int id = allocator_.device().id;
  return id == 0 ? std::string(kShortName) : kShortName + std::to_string(id);
}

Result<std::unique_ptr<ExecutionProvider>> TestProvider::create(const ProviderOptions& options) {
  return create_on(options, 0);
}

Result<std::unique_ptr<ExecutionProvider>> TestProvider::create_on(const ProviderOptions& options,
                                                                   int default_device_id) {
  std::set<std::string> ops = {"Add", "Mul", "Relu", "MatMul"};
  DataType decline = DataType::kUndefined;
  int device_id = default_device_id;
  bool compile = false;
  std::set<std::string> refuse_create;
  for (const auto& [key, value] : options) {
    if (key == "compile") {
      if (value != "0" && value != "1")
        return invalid_argument("TestExecutionProvider: compile must be 0 or 1, got '" + value + "'");
      compile = value == "1";
    } else if (key == "ops") {
      ops = split_ops(value);
    } else if (key == "refuse_create") {
      refuse_create = split_ops(value);
    } else if (key == "decline_dtype") {
      bool found = false;
      for (int t = 1; t <= kMaxDataTypeValue; ++t) {
        if (data_type_name(static_cast<DataType>(t)) == value) {
          decline = static_cast<DataType>(t);
          found = true;
        }
      }
      if (!found) return invalid_argument("TestExecutionProvider: unknown dtype '" + value + "' for decline_dtype");
    } else if (key == "device_id") {
      char* end = nullptr;
      const long id = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || id < 0)
        return invalid_argument("TestExecutionProvider: device_id must be a non-negative integer, got '" + value + "'");
      device_id = static_cast<int>(id);
    } else {
      return invalid_argument("TestExecutionProvider: unknown option '" + key +
                              "'; accepted: ops, decline_dtype, device_id, compile, refuse_create");
    }
  }
  auto provider = std::make_unique<TestProvider>(std::move(ops), decline, device_id);
  provider->compiles_ = compile;
  provider->refuse_create_ = std::move(refuse_create);
  return std::unique_ptr<ExecutionProvider>(std::move(provider));
}

std::vector<NodeSupport> TestProvider::capability(const Graph& graph, std::span<const NodeId> candidates) {
  const KernelRegistry& cpu = cpu::cpu_kernel_registry();
  std::vector<NodeSupport> answers;
  for (NodeId id : candidates) {
    NodeSupport a;
    a.node = id;
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    if (ops_.count(node.op_type) == 0 || (!node.domain.empty() && node.domain != kSwitchyardDomain)) {
      a.reason = "op " + node.op_type + " not supported by the test provider";
    } else if (decline_dtype_ != DataType::kUndefined && node_uses_dtype(graph, node, decline_dtype_)) {
      a.reason = std::string(data_type_name(decline_dtype_)) + " not supported by the test provider";
    } else {
      std::string reason;
      a.supported = cpu.find(graph, node, reason) != nullptr;
      if (!a.supported) a.reason = "test provider: " + reason;
    }
    answers.push_back(std::move(a));
  }
  return answers;
}

Result<CreatedKernel> TestProvider::create_kernel(const Graph& graph, NodeId id,
                                                  const CompiledSubgraphMap& subgraphs) {
  const Node& node = graph.nodes[static_cast<size_t>(id)];
  if (ops_.count(node.op_type) == 0)
    return not_implemented("op " + node.op_type + " not supported by the test provider");
  if (refuse_create_.count(node.op_type) != 0)
    return not_implemented("the test provider refuses to create a kernel for " + node.op_type);
  std::string reason;
  const KernelDef* def = cpu::cpu_kernel_registry().find(graph, node, reason);
  if (def == nullptr) return not_implemented("test provider: " + reason);
  KernelCreateContext ctx(graph, node, &subgraphs);
  SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(ctx));
  ++kernels_created_;
  CreatedKernel created;
  created.kernel = std::make_unique<SimulatedKernel>(std::move(kernel), device(), &kernel_runs_, &kernel_prepares_);
  return created;
}

Result<CreatedKernel> TestProvider::compile(const Graph& graph, const PartitionToCompile& partition) {
  std::vector<PartitionKernel::Step> steps;
  for (NodeId id : partition.nodes) {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    std::string reason;
    const KernelDef* def = cpu::cpu_kernel_registry().find(graph, node, reason);
    if (def == nullptr) return not_implemented("test provider cannot compile " + node.describe() + ": " + reason);
    KernelCreateContext ctx(graph, node);
    SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(ctx));
    steps.push_back({node, std::move(kernel)});
  }
  ++partitions_compiled_;
  cache_keys_.push_back(partition.cache_key);
  CreatedKernel created;
  // Constants stay on the host, where the partition's nodes read them.
  for (size_t i = 0; i < partition.inputs.size() && i < 64; ++i)
    if (graph.constant(partition.inputs[i]) != nullptr) created.host_inputs |= uint64_t{1} << i;
  created.kernel = std::make_unique<PartitionKernel>(std::move(steps), partition.inputs, partition.outputs, device(),
                                                     &kernel_runs_);
  return created;
}

std::vector<std::string> TestProvider::rewrites() const {
  if (ops_.count(kFusedConvOp) == 0) return {};
  return {"conv_residual", "conv_activation"};
}

Status TestProvider::copy_to_host(const Tensor& src, Tensor& dst) const {
  if (src.device() != device())
    return invalid_argument("test provider copy_to_host: source is on " + src.device().to_string());
  if (!dst.device().is_cpu())
    return invalid_argument("test provider copy_to_host: destination is on " + dst.device().to_string());
  copies_to_host_.fetch_add(1);
  return copy_bytes(src, dst);
}

Status TestProvider::copy_from_host(const Tensor& src, Tensor& dst) const {
  if (!src.device().is_cpu())
    return invalid_argument("test provider copy_from_host: source is on " + src.device().to_string());
  if (dst.device() != device())
    return invalid_argument("test provider copy_from_host: destination is on " + dst.device().to_string());
  copies_from_host_.fetch_add(1);
  return copy_bytes(src, dst);
}

void register_test_provider() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_provider({TestProvider::kName, TestProvider::kShortName, true}, &TestProvider::create);
    register_provider({std::string(TestProvider::kName) + "1", std::string(TestProvider::kShortName) + "1", true},
                      [](const ProviderOptions& options) { return TestProvider::create_on(options, 1); });
  });
}

}  // namespace sy::testing
