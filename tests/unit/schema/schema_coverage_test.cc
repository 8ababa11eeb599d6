// Every op the CPU provider can run must have a schema with type and shape
// inference at every version its kernels cover (issue: "type and shape
// inference for every supported op").
#include <gtest/gtest.h>

#include "providers/cpu/cpu_provider.h"
#include "schema/fused.h"
#include "schema/op_versions.h"
#include "schema/schema.h"

namespace sy {
namespace {

TEST(SchemaCoverage, EveryCpuKernelVersionHasAnInferenceFunction) {
  std::vector<std::string> missing;
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs()) {
    for (std::span<const OpVersion> table : {all_op_versions(), switchyard_op_versions()}) {
      for (const OpVersion& v : table) {
        if (v.domain != def.domain || v.op_type != def.op_type) continue;
        if (v.since_version < def.since_version || v.since_version > def.end_version) continue;
        const OpSchema* s = find_schema(def.domain, def.op_type, v.since_version);
        if (s == nullptr || s->infer == nullptr)
          missing.push_back(std::string(def.op_type) + "-" + std::to_string(v.since_version));
      }
    }
  }
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << "kernels without inference:" << list;
}

TEST(SchemaCoverage, EveryKernelNamesAnOpTheSpecDefines) {
  // The spec, or schema/fused.cc for the com.switchyard ops.
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs())
    EXPECT_GT(first_op_version(def.domain, def.op_type), 0) << def.op_type << " is not an ONNX op";
}

TEST(SchemaCoverage, TheFusedOpsHaveSchemasAndAttributeLists) {
  for (const char* op : {"FusedConv", "FusedMatMul"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(first_op_version("com.switchyard", op), 1);
    const OpSchema* s = find_schema("com.switchyard", op, 1);
    ASSERT_NE(s, nullptr);
    EXPECT_NE(s->infer, nullptr);
    EXPECT_EQ(s->max_inputs, 4);
    const OpVersion* v = find_op_version("com.switchyard", op, 1);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(listed_attribute_type(*v, "activation"), "string");
    EXPECT_EQ(listed_attribute_type(*v, "activation_params"), "floats");
  }
  const OpVersion* conv = find_op_version("com.switchyard", "FusedConv", 1);
  ASSERT_NE(conv, nullptr);
  // Every attribute of Conv-11, and the layouts.
  const OpVersion* onnx_conv = find_op_version("", "Conv", 11);
  ASSERT_NE(onnx_conv, nullptr);
  for (const char* name : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    EXPECT_EQ(listed_attribute_type(*conv, name), listed_attribute_type(*onnx_conv, name)) << name;
  for (const char* name : {"input_layout", "output_layout", "residual_layout"})
    EXPECT_EQ(listed_attribute_type(*conv, name), "string") << name;
  EXPECT_EQ(listed_attribute_type(*find_op_version("com.switchyard", "FusedMatMul", 1), "alpha"), "float");
  EXPECT_EQ(newest_opset("com.switchyard"), 1);
}

}  // namespace
}  // namespace sy
