// Every op version a CUDA kernel runs, a CPU kernel runs too: the CPU
// provider runs every op Switchyard implements (cpu_provider.h), and
// tests/unit/schema/kernel_coverage_test.cc, which checks that every schema
// has a kernel or is listed as unimplemented, counts the CPU's kernels
// only, since unit_tests does not link the CUDA sources. This makes that
// count the same as "a kernel in any provider", and, the CPU's kernels
// having schemas, gives every CUDA kernel one.
#include <gtest/gtest.h>

#include <string>

#include "providers/cpu/cpu_provider.h"
#include "providers/cuda/cuda_kernel.h"
#include "schema/fused.h"
#include "schema/op_versions.h"

namespace sy {
namespace {

bool cpu_kernel_covers(std::string_view domain, std::string_view op_type, int version) {
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs())
    if (def.domain == domain && def.op_type == op_type && def.since_version <= version && version <= def.end_version)
      return true;
  return false;
}

TEST(CpuCoversCudaTest, EveryCudaKernelVersionHasACpuKernel) {
  std::string missing;
  for (const cuda::CudaKernelDef& def : cuda::cuda_kernel_table()) {
    int versions = 0;
    for (std::span<const OpVersion> table : {all_op_versions(), switchyard_op_versions()}) {
      for (const OpVersion& v : table) {
        if (v.domain != def.domain || v.op_type != def.op_type) continue;
        if (v.since_version < def.since_version || v.since_version > def.end_version) continue;
        ++versions;
        if (!cpu_kernel_covers(v.domain, v.op_type, v.since_version))
          missing += "\n  " + std::string(def.op_type) + " " + std::to_string(v.since_version);
      }
    }
    if (versions == 0) missing += "\n  " + std::string(def.op_type) + ": the spec has no version in its range";
  }
  EXPECT_TRUE(missing.empty()) << "CUDA kernels for op versions no CPU kernel runs:" << missing;
}

}  // namespace
}  // namespace sy
