// Every op the CPU provider can run must have a schema with type and shape
// inference at every version its kernels cover (issue: "type and shape
// inference for every supported op").
#include <gtest/gtest.h>

#include "providers/cpu/cpu_provider.h"
#include "schema/op_versions.h"
#include "schema/schema.h"

namespace sy {
namespace {

TEST(SchemaCoverage, EveryCpuKernelVersionHasAnInferenceFunction) {
  std::vector<std::string> missing;
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs()) {
    for (const OpVersion& v : all_op_versions()) {
      if (v.domain != def.domain || v.op_type != def.op_type) continue;
      if (v.since_version < def.since_version || v.since_version > def.end_version) continue;
      const OpSchema* s = find_schema(def.domain, def.op_type, v.since_version);
      if (s == nullptr || s->infer == nullptr)
        missing.push_back(std::string(def.op_type) + "-" + std::to_string(v.since_version));
    }
  }
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << "kernels without inference:" << list;
}

TEST(SchemaCoverage, EveryKernelNamesAnOpTheSpecDefines) {
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs())
    EXPECT_GT(first_op_version(def.domain, def.op_type), 0) << def.op_type << " is not an ONNX op";
}

}  // namespace
}  // namespace sy
