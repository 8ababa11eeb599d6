// The channel-blocked hand-offs between Convs
// (optimizer/conv_blocked_layout.cc), on MobileNet-like blocks: 1x1
// expansion -> depthwise and depthwise -> projection; the ResNet-like
// chains with residuals are in conv_blocked_chain_test.cc. Which tensors
// the pass blocks, that a marked
// model computes what the unmarked one does (maps under and over 128
// positions, stride 1 and 2, with the expansion's Clip and the
// projection's residual Add fused), and that a saved optimized model keeps
// the layout when read back.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

struct Block {
  int64_t in_channels = 16;
  int64_t channels = 32;  // the expansion's output, the depthwise's channels
  int64_t size = 9;       // H = W
  int64_t stride = 1;     // the depthwise's
  int64_t expand_kernel = 1;
  bool expansion_is_output = false;  // the expansion's output is a graph output too
  int64_t consumer_group = 0;        // 0: depthwise (group = channels)
  // A 1x1 projection after the depthwise: its output channels (0: none).
  int64_t project = 0;
  int64_t project_pad = 0;
  int64_t project_stride = 1;
  bool project_residual = false;  // y = x + projection (x's shape must fit)
  bool depthwise_is_output = false;
};

// x -> Conv (expansion) -> Clip(0, 6) -> Conv (3x3 depthwise) -> y, or
// -> Conv (1x1 projection) [-> Add x] -> y.
ModelBuilder block_model(const Block& c, std::vector<int64_t>* y_shape) {
  const int64_t out = (c.size + 2 - 3) / c.stride + 1;
  const int64_t group = c.consumer_group == 0 ? c.channels : c.consumer_group;
  const int64_t pout = (out + 2 * c.project_pad - 1) / c.project_stride + 1;
  *y_shape = c.project == 0 ? std::vector<int64_t>{1, c.channels, out, out} : std::vector<int64_t>{1, c.project, pout, pout};
  const int64_t ep = c.expand_kernel / 2;
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, c.in_channels, c.size, c.size});
  b.initializer("we", sample_tensor({c.channels, c.in_channels, c.expand_kernel, c.expand_kernel}, 1, 0.3f));
  b.initializer("be", sample_tensor({c.channels}, 2, 0.5f));
  b.initializer("wd", sample_tensor({c.channels, c.channels / group, 3, 3}, 3, 0.4f));
  b.initializer("bd", sample_tensor({c.channels}, 4, 0.5f));
  b.initializer("lo", make_tensor<float>({}, {0.0f}));
  b.initializer("hi", make_tensor<float>({}, {6.0f}));
  b.node("Conv", {"x", "we", "be"}, {"e"}, {AttrSpec("pads", std::vector<int64_t>{ep, ep, ep, ep})}, "expand");
  b.node("Clip", {"e", "lo", "hi"}, {"ec"}, {}, "clip");
  const std::string d = c.project == 0 ? "y" : "d";
  b.node("Conv", {"ec", "wd", "bd"}, {d},
         {AttrSpec("pads", std::vector<int64_t>{1, 1, 1, 1}), AttrSpec("strides", std::vector<int64_t>{c.stride, c.stride}),
          AttrSpec("group", group)},
         "depthwise");
  if (c.project != 0) {
    const int64_t pp = c.project_pad;
    b.initializer("wp", sample_tensor({c.project, c.channels, 1, 1}, 7, 0.3f));
    b.initializer("bp", sample_tensor({c.project}, 8, 0.5f));
    b.node("Conv", {d, "wp", "bp"}, {c.project_residual ? "p" : "y"},
           {AttrSpec("pads", std::vector<int64_t>{pp, pp, pp, pp}),
            AttrSpec("strides", std::vector<int64_t>{c.project_stride, c.project_stride})},
           "project");
    if (c.project_residual) b.node("Add", {"x", "p"}, {"y"}, {}, "residual");
    if (c.depthwise_is_output) b.output(d, DataType::kFloat, {1, c.channels, out, out});
  }
  b.output("y", DataType::kFloat, std::vector<DimSpec>(y_shape->begin(), y_shape->end()));
  if (c.expansion_is_output) b.output("ec", DataType::kFloat, {1, c.channels, c.size, c.size});
  return b;
}

int marked(const Block& c, bool cpu_rewrites = true, Graph* g = nullptr) {
  std::vector<int64_t> ys;
  return optimize_and_count(block_model(c, &ys), OptimizationLevel::kAll, cpu_rewrites, &PassStats::conv_layouts_blocked,
                            g);
}

TEST(ConvBlockedLayoutTest, ExpansionAndDepthwiseAreMarkedAndAgree) {
  for (const Block& c : {Block{16, 32, 9, 1}, Block{24, 48, 14, 1}, Block{16, 64, 15, 2}, Block{8, 16, 12, 2}}) {
    SCOPED_TRACE("channels " + std::to_string(c.channels) + " size " + std::to_string(c.size));
    Graph g;
    ASSERT_EQ(marked(c, true, &g), 1);
    // The depthwise, a plain Conv before, is a FusedConv for its layout.
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedConv", "FusedConv"}));
    const Node* expand = nullptr;
    const Node* dw = nullptr;
    for (const Node& n : g.nodes) {
      if (n.removed) continue;
      (n.name == "expand" ? expand : dw) = &n;
    }
    ASSERT_NE(expand, nullptr);
    ASSERT_NE(dw, nullptr);
    EXPECT_EQ(expand->attr_string("output_layout", ""), "NCHW16c");
    EXPECT_EQ(expand->attr_string("activation", ""), "Clip");
    EXPECT_FALSE(expand->has_attr("input_layout"));
    EXPECT_EQ(dw->domain, "com.switchyard");
    EXPECT_EQ(dw->attr_string("input_layout", ""), "NCHW16c");
    EXPECT_FALSE(dw->has_attr("output_layout"));
    EXPECT_FALSE(dw->has_attr("activation"));
    std::vector<int64_t> ys;
    const ModelBuilder b = block_model(c, &ys);
    expect_same_outputs(b, {{"x", sample_tensor({1, c.in_channels, c.size, c.size}, 5, 2.0f)}});
  }
}

TEST(ConvBlockedLayoutTest, OnlyCpuOnlyWholeBlocksOfA1x1IntoADepthwise) {
  EXPECT_EQ(marked(Block{}, /*cpu_rewrites=*/false), 0);
  Block odd;
  odd.channels = 24;  // not whole blocks of 16
  EXPECT_EQ(marked(odd), 0);
  Block shared;
  shared.expansion_is_output = true;  // someone else reads the expansion
  EXPECT_EQ(marked(shared), 0);
  Block grouped;
  grouped.consumer_group = 2;  // a grouped, not depthwise, consumer
  EXPECT_EQ(marked(grouped), 0);
}

TEST(ConvBlockedLayoutTest, ASpatialProducerWritesBlockedUnlessItIsAnImageStem) {
  // 16 channels, 3x3: the transposed product, which stores blocks.
  Block spatial;
  spatial.expand_kernel = 3;
  EXPECT_EQ(marked(spatial), 1);
  std::vector<int64_t> ys;
  expect_same_outputs(block_model(spatial, &ys), {{"x", sample_tensor({1, 16, 9, 9}, 11, 2.0f)}});
  // 4 channels, 3x3: the direct kernel, which writes NCHW only.
  Block stem = spatial;
  stem.in_channels = 4;
  EXPECT_EQ(marked(stem), 0);
}

TEST(ConvBlockedLayoutTest, DepthwiseAndProjectionAreMarkedAndAgree) {
  // 7x7 (transposed product), 14x14 (plain), stride 2, residual Add fused.
  for (const Block& c : {Block{.in_channels = 16, .channels = 96, .size = 7, .project = 24},
                         Block{.in_channels = 24, .channels = 144, .size = 14, .project = 24, .project_residual = true},
                         Block{.in_channels = 32, .channels = 64, .size = 15, .stride = 2, .project = 40}}) {
    SCOPED_TRACE("channels " + std::to_string(c.channels) + " size " + std::to_string(c.size));
    Graph g;
    ASSERT_EQ(marked(c, true, &g), 2);
    const Node* dw = nullptr;
    const Node* project = nullptr;
    for (const Node& n : g.nodes) {
      if (n.removed) continue;
      if (n.name == "depthwise") dw = &n;
      if (n.name == "project") project = &n;
    }
    ASSERT_NE(dw, nullptr);
    ASSERT_NE(project, nullptr);
    EXPECT_EQ(dw->attr_string("input_layout", ""), "NCHW16c");
    EXPECT_EQ(dw->attr_string("output_layout", ""), "NCHW16c");
    EXPECT_EQ(project->op_type, "FusedConv");
    EXPECT_EQ(project->attr_string("input_layout", ""), "NCHW16c");
    EXPECT_FALSE(project->has_attr("output_layout"));
    EXPECT_EQ(project->has_input(3), c.project_residual);
    std::vector<int64_t> ys;
    const ModelBuilder b = block_model(c, &ys);
    expect_same_outputs(b, {{"x", sample_tensor({1, c.in_channels, c.size, c.size}, 5, 2.0f)}});
  }
}

TEST(ConvBlockedLayoutTest, PaddedAndStridedProjectionsReadBlockedAGraphOutputStaysNchw) {
  const Block base{.in_channels = 16, .channels = 32, .size = 9, .project = 16};
  ASSERT_EQ(marked(base), 2);
  // Padded or strided, the projection reads its blocked X back into NCHW
  // for im2col.
  Block padded = base;
  padded.project_pad = 1;
  EXPECT_EQ(marked(padded), 2);
  Block strided = base;
  strided.project_stride = 2;
  EXPECT_EQ(marked(strided), 2);
  Block shared = base;
  shared.depthwise_is_output = true;  // a graph output: the depthwise's stays NCHW
  EXPECT_EQ(marked(shared), 1);
  std::vector<int64_t> ys;
  expect_same_outputs(block_model(padded, &ys), {{"x", sample_tensor({1, 16, 9, 9}, 9, 2.0f)}});
  expect_same_outputs(block_model(strided, &ys), {{"x", sample_tensor({1, 16, 9, 9}, 10, 2.0f)}});
}

TEST(ConvBlockedLayoutTest, SavedOptimizedModelKeepsTheLayout) {
  TempDir dir;
  const std::string path = dir.file("blocked.onnx");
  std::vector<int64_t> ys;
  const Block c{16, 32, 12, 1};
  const ModelBuilder b = block_model(c, &ys);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", sample_tensor({1, 16, 12, 12}, 6, 2.0f)}};
  auto optimized = run_at(b, OptimizationLevel::kAll, feeds, path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("FusedConv"), std::string::npos);
  EXPECT_NE(bytes.find("output_layout"), std::string::npos);
  EXPECT_NE(bytes.find("input_layout"), std::string::npos);
  // Read back with no optimization, the two Convs still hand over blocked.
  expect_saved_model_matches_unoptimized(path, b, feeds);
}

}  // namespace
}  // namespace sy::testing
