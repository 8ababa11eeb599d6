// TestProvider: a test-only execution provider on a simulated device, so
// that fall-through, partitioning and device copies are tested on machines
// without a GPU (DESIGN.md, "Testing habits").
//
// Its memory is host memory, but tensors it allocates are tagged
// Device{kSimulated, 0}, and its kernels refuse inputs that are not on that
// device: a node that ran on it proves a copy was inserted in front of it.
// It runs only the op types it is configured with, and reuses the CPU
// kernels for them.
//
// Sessions ask for it by name ("test" or "TestExecutionProvider") once
// register_test_provider() has run. Options:
//   ops            comma-separated op types to claim (default Add,Mul,Relu,MatMul)
//   decline_dtype  a dtype name ("int64") whose nodes it declines
//   device_id      the simulated device's id (default 0)
//   refuse_create  op types it says it can run but then fails to create a
//                  kernel for (a factory refusing an attribute), so the
//                  node moves on to the next provider at creation
//   compile        1: compiles each of its partitions into one kernel
//                  (ExecutionProvider::compile, the TensorRT pattern) that
//                  runs the nodes' CPU kernels in turn
// With "FusedConv" among its ops it asks for the Conv fusions after
// placement, as the CUDA provider does.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "providers/provider.h"
#include "providers/provider_factory.h"
#include "switchyard/allocator.h"

namespace sy::testing {

inline constexpr Device kSimulatedDevice{DeviceType::kSimulated, 0};

// Host memory tagged as a simulated device, counting what it hands out.
class CountingAllocator final : public Allocator {
 public:
  explicit CountingAllocator(Device device = kSimulatedDevice) : device_(device) {}
  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  Device device() const override { return device_; }

  int64_t allocations() const { return allocations_.load(); }
  int64_t bytes_allocated() const { return bytes_.load(); }
  int64_t live() const { return allocations_.load() - deallocations_.load(); }

 private:
  Device device_;
  std::atomic<int64_t> allocations_{0};
  std::atomic<int64_t> deallocations_{0};
  std::atomic<int64_t> bytes_{0};
};

class TestProvider final : public ExecutionProvider {
 public:
  static constexpr const char* kName = "TestExecutionProvider";
  static constexpr const char* kShortName = "test";

  // `device_id` picks the simulated device (sim:<id>); two providers on
  // different ids make device-to-device copies.
  explicit TestProvider(std::set<std::string> ops = {"Add", "Mul", "Relu", "MatMul"},
                        DataType decline_dtype = DataType::kUndefined, int device_id = 0);
  ~TestProvider() override;

  // Builds one from session options; unknown keys and bad values are errors.
  static Result<std::unique_ptr<ExecutionProvider>> create(const ProviderOptions& options);
  static Result<std::unique_ptr<ExecutionProvider>> create_on(const ProviderOptions& options, int default_device_id);
  // The most recently created TestProvider still alive, or nullptr. Tests
  // read its counters right after creating a session that asked for "test".
  static TestProvider* last_created();

  // Device 0 is "TestExecutionProvider" / "test"; device N is
  // "TestExecutionProviderN" / "testN".
  std::string name() const override;
  std::string short_name() const override;
  Availability availability() const override { return {}; }
  Device device() const override { return allocator_.device(); }
  Allocator* allocator() override { return &allocator_; }

  std::vector<NodeSupport> capability(const Graph& graph, std::span<const NodeId> candidates) override;
  Result<CreatedKernel> create_kernel(const Graph& graph, NodeId node, const CompiledSubgraphMap& subgraphs) override;
  // The rewrites a device provider would take: the Conv fusions (it runs
  // the CPU's FusedConv kernel when "FusedConv" is among its ops).
  std::vector<std::string> rewrites() const override;
  bool compiles_partitions() const override { return compiles_; }
  Result<CreatedKernel> compile(const Graph& graph, const PartitionToCompile& partition) override;
  std::string version() const override { return "test-1"; }

  Status copy_to_host(const Tensor& src, Tensor& dst) const override;
  Status copy_from_host(const Tensor& src, Tensor& dst) const override;

  const CountingAllocator& counting_allocator() const { return allocator_; }
  int64_t copies_to_host() const { return copies_to_host_.load(); }
  int64_t copies_from_host() const { return copies_from_host_.load(); }
  // Kernel runs on this provider (copies not included).
  int64_t kernel_runs() const { return kernel_runs_.load(); }
  // Prepare phases of its kernels (those that have one).
  int64_t kernel_prepares() const { return kernel_prepares_.load(); }
  // Kernels it created: one per node it keeps, none for a node it only
  // said it could run.
  int64_t kernels_created() const { return kernels_created_; }
  int64_t partitions_compiled() const { return partitions_compiled_; }
  // The cache key of every partition compiled, in order.
  const std::vector<std::string>& cache_keys() const { return cache_keys_; }

 private:
  std::set<std::string> ops_;
  DataType decline_dtype_;
  CountingAllocator allocator_;
  mutable std::atomic<int64_t> copies_to_host_{0};
  mutable std::atomic<int64_t> copies_from_host_{0};
  std::atomic<int64_t> kernel_runs_{0};
  std::atomic<int64_t> kernel_prepares_{0};
  int64_t kernels_created_ = 0;
  bool compiles_ = false;
  std::set<std::string> refuse_create_;
  int64_t partitions_compiled_ = 0;
  std::vector<std::string> cache_keys_;
};

// Makes "test" / "TestExecutionProvider" (sim:0) and "test1" /
// "TestExecutionProvider1" (sim:1) known to provider creation. Idempotent.
void register_test_provider();

}  // namespace sy::testing
