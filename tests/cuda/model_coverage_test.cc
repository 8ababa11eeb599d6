// Every op the four reference models run (ResNet-50, MobileNetV2, the
// BERT-like encoder, the GPT-2-like decoder; opset 17 as exported by
// bench/models), at the version opset 17 resolves it to, has a CUDA kernel
// row for float32 and float16 — except the shape arithmetic, which stays
// on the CPU by design (Shape, Range and the int64 math on their results).
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "providers/cuda/cuda_kernel.h"

namespace sy::cuda {
namespace {

struct OpUse {
  const char* op;
  int version;  // the schema version opset 17 resolves to
  DataType dtype;
  const char* domain = "";  // "com.switchyard" for the optimizer's fused ops
};

// The CUDA table's row for `use` by the provider SDK's lookup (the one
// supports() asks), or null with the reason the provider gives.
const CudaKernelDef* find_row(const OpUse& use, std::string& reason) {
  return provider_sdk::find_kernel(std::span<const CudaKernelDef>(cuda_kernel_table()),
                                   {use.domain, use.op, use.version},
                                   [&use](int) { return static_cast<int32_t>(use.dtype); }, reason);
}

bool has_kernel(const OpUse& use) {
  std::string reason;
  return find_row(use, reason) != nullptr;
}

const OpUse kModelOps[] = {
    // ResNet-50 and MobileNetV2
    {"Conv", 11, DataType::kFloat}, {"Relu", 14, DataType::kFloat}, {"MaxPool", 12, DataType::kFloat},
    {"Add", 14, DataType::kFloat}, {"GlobalAveragePool", 1, DataType::kFloat}, {"Flatten", 13, DataType::kFloat},
    {"Gemm", 13, DataType::kFloat}, {"Clip", 13, DataType::kFloat},
    // BERT-like encoder
    {"MatMul", 13, DataType::kFloat}, {"LayerNormalization", 17, DataType::kFloat}, {"Softmax", 13, DataType::kFloat},
    {"Erf", 13, DataType::kFloat}, {"Tanh", 13, DataType::kFloat}, {"Div", 14, DataType::kFloat},
    {"Mul", 14, DataType::kFloat}, {"Sub", 14, DataType::kFloat}, {"Transpose", 13, DataType::kFloat},
    {"Reshape", 14, DataType::kFloat}, {"Gather", 13, DataType::kFloat}, {"Cast", 13, DataType::kInt64},
    {"Unsqueeze", 13, DataType::kInt64}, {"Concat", 13, DataType::kFloat}, {"Identity", 16, DataType::kFloat},
    // GPT-2-like decoder
    {"Split", 13, DataType::kFloat}, {"Pow", 15, DataType::kFloat}, {"Where", 16, DataType::kFloat},
    {"Equal", 13, DataType::kFloat}, {"Trilu", 14, DataType::kUint8}, {"ConstantOfShape", 9, DataType::kInt64},
    // Fused by the optimizer (Conv + Add + Relu / Clip: FusedConv)
    {"Gelu", 20, DataType::kFloat}, {"FusedConv", 1, DataType::kFloat, "com.switchyard"},
};

TEST(CudaModelCoverageTest, EveryModelOpHasAFloat32AndFloat16Kernel) {
  for (const OpUse& use : kModelOps) {
    EXPECT_TRUE(has_kernel(use)) << use.op << " version " << use.version << " " << dtype_name(static_cast<int32_t>(use.dtype));
    if (use.dtype == DataType::kFloat) {
      const OpUse half{use.op, use.version, DataType::kFloat16, use.domain};
      EXPECT_TRUE(has_kernel(half)) << use.op << " version " << use.version << " float16";
    }
  }
}

TEST(CudaModelCoverageTest, ShapeOpsAreNotClaimed) {
  EXPECT_FALSE(has_kernel({"Shape", 15, DataType::kFloat}));
  EXPECT_FALSE(has_kernel({"Range", 11, DataType::kInt64}));
}

TEST(CudaModelCoverageTest, FusedMatMulIsLeftToTheCpu) {
  // Only the CPU implements FusedMatMul (the CUDA provider does not ask for
  // the matmul_epilogue rewrite): a FusedMatMul in a saved optimized model
  // falls to the CPU with this reason.
  std::string reason;
  EXPECT_EQ(find_row({"FusedMatMul", 1, DataType::kFloat, "com.switchyard"}, reason), nullptr);
  EXPECT_EQ(reason, "op FusedMatMul not implemented");
}

TEST(CudaModelCoverageTest, DeclinesInTheCpuProvidersWords) {
  // The SDK's lookup: the same words as the CPU provider's registry.
  std::string reason;
  EXPECT_EQ(find_row({"Relu", 1, DataType::kFloat}, reason), nullptr);
  EXPECT_EQ(reason, "Relu version 1 not implemented (have 6+)");
  EXPECT_EQ(find_row({"Relu", 14, DataType::kInt32}, reason), nullptr);
  EXPECT_EQ(reason, "int32 not supported for input 0 (supports float, float16, bfloat16)");
}

TEST(CudaModelCoverageTest, TableRowsAreWellFormed) {
  for (const CudaKernelDef& def : cuda_kernel_table()) {
    EXPECT_LE(def.since_version, def.end_version) << def.op_type;
    EXPECT_NE(def.create, nullptr) << def.op_type;
    EXPECT_TRUE(def.type_input < 0 || def.type_mask != 0) << def.op_type;
  }
}

}  // namespace
}  // namespace sy::cuda
