#include "providers/cpu/cpu_provider.h"

#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

const KernelRegistry& cpu_kernel_registry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    for (auto table : {elementwise_kernels(), cast_kernels(), conv_kernels(), pool_kernels(),
                       normalization_kernels(), softmax_kernels(), matmul_kernels(), reduce_kernels(),
                       shape_kernels(), concat_split_kernels(), slice_kernels(), gather_kernels(),
                       transpose_kernels(), expand_kernels(), generator_kernels(), trilu_kernels(),
                       pad_kernels(), scatter_kernels(), indexing_kernels(), space_depth_kernels(), resize_kernels(),
                       einsum_kernels(), linalg_kernels(), topk_kernels(), unique_kernels(), cumulative_kernels(), dropout_kernels(),
                       rnn_kernels(), attention_kernels()})
      r.add(table);
    return r;
  }();
  return registry;
}

CpuProvider::CpuProvider() { registry_ = cpu_kernel_registry(); }

}  // namespace sy::cpu
