// The provider SDK's header-only pieces that every provider must agree on
// with the core: type names and sizes, tensor views, and the kernel table
// lookup whose reasons the CPU registry and the plugins share.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "switchyard/data_type.h"
#include "switchyard/provider_sdk/dtype.h"
#include "switchyard/provider_sdk/kernel_table.h"
#include "switchyard/provider_sdk/tensor_view.h"

namespace sy::provider_sdk {
namespace {

TEST(ProviderSdkTest, TypeNamesAndSizesAreTheCores) {
  for (int32_t t = 0; t <= kMaxDataTypeValue + 1; ++t) {
    const auto type = static_cast<DataType>(t);
    EXPECT_EQ(std::string(dtype_name(t)), std::string(data_type_name(type))) << t;
    if (type != DataType::kString) {
      EXPECT_EQ(dtype_size(t), element_size(type)) << t;
    }
  }
  EXPECT_STREQ(dtype_name(10), "float16");
  EXPECT_STREQ(dtype_name(-1), "unknown");
  EXPECT_EQ(dtype_size(static_cast<int32_t>(DataType::kString)), 0u);  // the core's std::string: not a plugin's
  EXPECT_EQ(dtype_size(static_cast<int32_t>(DataType::kInt4)), 0u);    // packed below a byte
  EXPECT_EQ(describe_type_mask(type_bit(DataType::kDouble) | type_bit(DataType::kFloat)), "float, double");
}

TensorView view(int32_t dtype, std::vector<int64_t> dims) {
  TensorView v;
  v.t.dtype = dtype;
  v.t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) v.t.dims[i] = dims[i];
  return v;
}

TEST(ProviderSdkTest, TensorViewCountsElementsWithoutOverflow) {
  EXPECT_EQ(view(1, {}).num_elements(), 1);  // a scalar
  EXPECT_EQ(view(1, {2, 0, 3}).num_elements(), 0);
  EXPECT_EQ(view(10, {2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(view(10, {2, 3, 4}).byte_size(), 48u);
  EXPECT_EQ(view(1, {2, -1}).num_elements(), -1);  // a static type's unknown dim
  EXPECT_EQ(view(1, {2, -1}).byte_size(), 0u);
  const int64_t big = int64_t{1} << 32;
  EXPECT_EQ(view(1, {big, big}).num_elements(), -1);  // 2^64 overflows
  EXPECT_EQ(view(1, {big, big / 2 - 1}).num_elements(), big * (big / 2 - 1));
  // The count fits, its bytes do not.
  EXPECT_EQ(view(11, {std::numeric_limits<int64_t>::max()}).byte_size(), 0u);
  TensorView unknown_rank;
  unknown_rank.t.dtype = 1;
  unknown_rank.t.rank = -1;
  EXPECT_EQ(unknown_rank.num_elements(), -1);
  EXPECT_EQ(unknown_rank.describe(), "float[?]");
  EXPECT_EQ(view(7, {1, -1, 224}).describe(), "int64[1,?,224]");
}

// A table of the SDK's row shape with no factories: the lookup reads only
// the matching fields.
struct Row {
  const char* domain;
  const char* op_type;
  int since_version;
  int end_version;
  int type_input;
  uint64_t type_mask;
};

const Row kRows[] = {
    {"", "Relu", 6, 12, 0, type_bit(DataType::kFloat)},
    {"", "Relu", 13, kLatestVersion, 0, type_bit(DataType::kFloat) | type_bit(DataType::kDouble)},
    {"", "Relu", 13, kLatestVersion, 0, type_bit(DataType::kInt32)},
    {"", "Shape", 1, kLatestVersion, -1, 0},
    {"com.switchyard", "FusedConv", 1, kLatestVersion, 0, type_bit(DataType::kFloat)},
};

// The row for a node whose every input has `dtype`, or the reason.
std::string lookup(std::string_view domain, std::string_view op, int version, DataType dtype) {
  std::string reason;
  const Row* row = find_kernel(std::span<const Row>(kRows), {domain, op, version},
                               [dtype](int) { return static_cast<int32_t>(dtype); }, reason);
  return row != nullptr ? "row " + std::to_string(row - kRows) : reason;
}

TEST(ProviderSdkTest, LookupFindsTheRowOrSaysWhyNot) {
  EXPECT_EQ(lookup("", "Relu", 14, DataType::kDouble), "row 1");
  EXPECT_EQ(lookup("ai.onnx", "Relu", 14, DataType::kInt32), "row 2");  // ai.onnx is ""
  EXPECT_EQ(lookup("", "Relu", 6, DataType::kFloat), "row 0");
  EXPECT_EQ(lookup("", "Shape", 15, DataType::kString), "row 3");      // no type constraint
  EXPECT_EQ(lookup("", "Relu", 14, DataType::kUndefined), "row 1");    // unknown until run time
  EXPECT_EQ(lookup("com.switchyard", "FusedConv", 1, DataType::kFloat), "row 4");

  EXPECT_EQ(lookup("", "Gelu", 20, DataType::kFloat), "op Gelu not implemented");
  EXPECT_EQ(lookup("", "FusedConv", 1, DataType::kFloat), "op FusedConv not implemented");  // another domain
  EXPECT_EQ(lookup("", "Relu", 1, DataType::kFloat), "Relu version 1 not implemented (have 6-12, 13+, 13+)");
  EXPECT_EQ(lookup("", "Relu", 14, DataType::kFloat16),
            "float16 not supported for input 0 (supports float, double, int32)");
  EXPECT_EQ(lookup("", "Relu", 7, DataType::kDouble), "double not supported for input 0 (supports float)");
}

}  // namespace
}  // namespace sy::provider_sdk
