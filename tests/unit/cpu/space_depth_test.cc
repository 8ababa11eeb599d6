// DepthToSpace and SpaceToDepth against the spec's examples and the
// reshape-transpose-reshape definitions written as plain loops.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// The spec's numpy definitions, one output element at a time.
std::vector<float> reference_depth_to_space(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w,
                                            int64_t b, bool crd) {
  const int64_t oc = c / (b * b);
  std::vector<float> y;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t k = 0; k < oc; ++k)
      for (int64_t oy = 0; oy < h * b; ++oy)
        for (int64_t ox = 0; ox < w * b; ++ox) {
          const int64_t i = oy % b, j = ox % b;
          const int64_t ch = crd ? (k * b + i) * b + j : (i * b + j) * oc + k;
          y.push_back(x[static_cast<size_t>(((in * c + ch) * h + oy / b) * w + ox / b)]);
        }
  return y;
}

std::vector<float> reference_space_to_depth(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w,
                                            int64_t b) {
  std::vector<float> y;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j)
        for (int64_t k = 0; k < c; ++k)
          for (int64_t oy = 0; oy < h / b; ++oy)
            for (int64_t ox = 0; ox < w / b; ++ox)
              y.push_back(x[static_cast<size_t>(((in * c + k) * h + oy * b + i) * w + ox * b + j)]);
  return y;
}

TEST(DepthToSpaceKernel, SpecExamplesBothModes) {
  // test_depthtospace_example / _crd_mode_example input: [1,8,2,3], values
  // 0..47 laid out as in the spec (channel c holds 9c + 0..5).
  std::vector<float> x;
  for (int c = 0; c < 8; ++c)
    for (int i = 0; i < 6; ++i) x.push_back(static_cast<float>(9 * c + i));
  auto dcr = NodeTest("DepthToSpace", 13).input(make_tensor<float>({1, 8, 2, 3}, x)).attr("blocksize", 2).run();
  ASSERT_TRUE(dcr.ok()) << dcr.status().to_string();
  // First output row (DCR): channels 0 and 2 interleave, i.e. x[0,0,0,:] and x[0,2,0,:].
  const std::vector<float> row0 = {0, 18, 1, 19, 2, 20};
  const std::vector<float> got = to_vector<float>(dcr->at(0));
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 6), row0);
  auto crd = NodeTest("DepthToSpace", 13)
                 .input(make_tensor<float>({1, 8, 2, 3}, x))
                 .attr("blocksize", 2)
                 .attr("mode", "CRD")
                 .run();
  ASSERT_TRUE(crd.ok()) << crd.status().to_string();
  // First output row (CRD): channels 0 and 1 interleave.
  const std::vector<float> crd_row0 = {0, 9, 1, 10, 2, 11};
  const std::vector<float> got_crd = to_vector<float>(crd->at(0));
  EXPECT_EQ(std::vector<float>(got_crd.begin(), got_crd.begin() + 6), crd_row0);
}

TEST(DepthToSpaceKernel, MatchesReferenceForBothModesAndBlocksizes) {
  for (const int64_t b : {1, 2, 3})
    for (const bool crd : {false, true}) {
      const int64_t n = 2, c = 2 * b * b, h = 3, w = 5;
      const std::vector<float> x = iota_floats(n * c * h * w);
      NodeTest t("DepthToSpace", crd ? 11 : 1);
      t.input(make_tensor<float>({n, c, h, w}, x)).attr("blocksize", b);
      if (crd) t.attr("mode", "CRD");
      auto out = t.run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      ASSERT_EQ(out->at(0).shape(), (Shape{n, c / (b * b), h * b, w * b}));
      EXPECT_EQ(to_vector<float>(out->at(0)), reference_depth_to_space(x, n, c, h, w, b, crd))
          << "blocksize " << b << (crd ? " CRD" : " DCR");
    }
}

TEST(SpaceToDepthKernel, SpecExampleAndReference) {
  // test_spacetodepth_example: [1,1,4,6] -> [1,4,2,3] holding 0..23 in order.
  const std::vector<float> x = {0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23};
  NodeTest t("SpaceToDepth", 13);
  t.input(make_tensor<float>({1, 1, 4, 6}, x)).attr("blocksize", 2);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 4, 2, 3}, iota_floats(24)));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[1,4,2,3]");
  const std::vector<float> big = iota_floats(2 * 3 * 6 * 9);
  auto ref = NodeTest("SpaceToDepth", 1).input(make_tensor<float>({2, 3, 6, 9}, big)).attr("blocksize", 3).run();
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  EXPECT_EQ(to_vector<float>(ref->at(0)), reference_space_to_depth(big, 2, 3, 6, 9, 3));
}

TEST(SpaceToDepthKernel, RoundTripsThroughDepthToSpaceWithStrings) {
  std::vector<std::string> x;
  for (int i = 0; i < 1 * 2 * 4 * 4; ++i) x.push_back("v" + std::to_string(i) + std::string(24, '.'));
  auto s2d = NodeTest("SpaceToDepth", 13).input(make_tensor<std::string>({1, 2, 4, 4}, x)).attr("blocksize", 2).run();
  ASSERT_TRUE(s2d.ok()) << s2d.status().to_string();
  auto d2s = NodeTest("DepthToSpace", 13).input(s2d->at(0)).attr("blocksize", 2).run();
  ASSERT_TRUE(d2s.ok()) << d2s.status().to_string();
  expect_tensor_eq(d2s->at(0), make_tensor<std::string>({1, 2, 4, 4}, x));
}

TEST(SpaceToDepthKernel, Errors) {
  auto odd =
      NodeTest("SpaceToDepth", 13).input(make_tensor<float>({1, 1, 3, 4}, iota_floats(12))).attr("blocksize", 2).run();
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("divisible"), std::string::npos) << odd.status().message();
  auto channels =
      NodeTest("DepthToSpace", 13).input(make_tensor<float>({1, 3, 1, 1}, {1, 2, 3})).attr("blocksize", 2).run();
  EXPECT_FALSE(channels.ok());
  auto mode = NodeTest("DepthToSpace", 13)
                  .input(make_tensor<float>({1, 4, 1, 1}, {1, 2, 3, 4}))
                  .attr("blocksize", 2)
                  .attr("mode", "RCD")
                  .run();
  EXPECT_FALSE(mode.ok());
}

TEST(SpaceToDepthKernel, BlocksizeWhoseSquareOverflowsIsAnError) {
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    SCOPED_TRACE(op);
    auto out = NodeTest(op, 13)
                   .input(make_tensor<float>({1, 0, 0, 0}, {}))
                   .attr("blocksize", int64_t{1} << 32)
                   .run();
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("its square overflows"), std::string::npos) << out.status().message();
  }
  // Empty input, so only the output dims can overflow: 0 channels keeps
  // DepthToSpace's output empty, but H * blocksize must still fit.
  auto d2s = NodeTest("DepthToSpace", 13)
                 .input(make_tensor<float>({1, 0, int64_t{1} << 40, 1}, {}))
                 .dynamic_shapes()
                 .attr("blocksize", int64_t{1} << 30)
                 .run();
  ASSERT_FALSE(d2s.ok());
  EXPECT_NE(d2s.status().message().find("overflows int64"), std::string::npos) << d2s.status().message();
}

}  // namespace
}  // namespace sy
