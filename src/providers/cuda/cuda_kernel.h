// Kernels of the CUDA provider, built on the provider SDK's (kernel.h,
// node_info.h, run_context.h, kernel_table.h in switchyard/provider_sdk/):
// creation reads the node through KernelCreateInfo and may prepack
// constants; run() sees tensors through KernelRunContext, only queues work
// on the provider's stream and never calls cudaMalloc (outputs and scratch
// come from the context, backed by the device arena). What is CUDA's own
// here: the provider handle both carry, the stream, and how the table is
// collected from the op families.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuda_common.h"
#include "switchyard/provider_sdk/kernel.h"
#include "switchyard/provider_sdk/kernel_table.h"
#include "switchyard/provider_sdk/node_info.h"
#include "switchyard/provider_sdk/run_context.h"

namespace sy::cuda {

class CudaProvider;

// The node being claimed, with the provider it is claimed for (its
// device properties, options and caches).
class KernelCreateInfo : public provider_sdk::NodeInfo {
 public:
  KernelCreateInfo(const sy_host_api* host, const sy_node* node, CudaProvider* provider)
      : NodeInfo(host, node), provider_(provider) {}
  CudaProvider& provider() const { return *provider_; }

 private:
  CudaProvider* provider_;
};

// The most inputs a CUDA kernel takes (the SDK's limit): nodes with more
// are declined, so the variadic kernels hold this many.
using provider_sdk::kMaxKernelInputs;

// A kernel's view of one run, with the provider's stream and handles.
class KernelRunContext final : public provider_sdk::RunContext {
 public:
  KernelRunContext(const sy_host_api* host, sy_kernel_context* ctx, CudaProvider* provider)
      : RunContext(host, ctx), provider_(provider) {}
  cudaStream_t stream() const;
  CudaProvider& provider() const { return *provider_; }

 protected:
  // "scratch of 2.0 MiB on cuda:0: " and the arena's reason.
  std::string scratch_failure(size_t bytes) const override;

 private:
  CudaProvider* provider_;
};

using CudaKernel = provider_sdk::BasicKernel<KernelRunContext>;
using CudaKernelFactory = provider_sdk::BasicKernelFactory<KernelCreateInfo, KernelRunContext>;
// make_kernel<K> builds K from its constructor K(const KernelCreateInfo&, Status&).
using provider_sdk::make_kernel;

inline constexpr int kLatest = provider_sdk::kLatestVersion;
// Type masks use type_bit from switchyard/data_type.h.
inline constexpr uint64_t kFloatTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

// One row of the CUDA kernel table (the SDK's row: domain, op, versions,
// type constraint, host inputs, factory).
using CudaKernelDef = provider_sdk::BasicKernelRow<KernelCreateInfo, KernelRunContext>;

// Each op family's table is defined beside its kernels, in sy::cuda and at
// the start of a line, as
//   std::span<const CudaKernelDef> <family>_kernel_defs() {
// The build finds these definitions in src/providers/cuda/ and generates
// cuda_kernel_families() (cmake/table_list.cmake), so adding a family is
// writing its file.
using CudaKernelTableFunction = std::span<const CudaKernelDef> (*)();
// Every family's table function, ordered by the family's name.
std::span<const CudaKernelTableFunction> cuda_kernel_families();

// All of their rows, in that order.
const std::vector<CudaKernelDef>& cuda_kernel_table();

}  // namespace sy::cuda
