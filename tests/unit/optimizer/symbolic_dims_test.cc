// Symbolic dimensions (optimizer/symbolic_dims.cc): which dims of a graph
// provably equal which, through the ops that pass a dim through, and what
// a shape tensor built from Shape/Gather/Unsqueeze/Concat holds.
#include <gtest/gtest.h>

#include <vector>

#include "optimizer/rewrite_util.h"
#include "optimizer/symbolic_dims.h"
#include "pass_test_util.h"

namespace sy::testing {
namespace {

using symbolic::DimRef;
using symbolic::dim_source;

// x [batch, seq, 8] -> LayerNormalization -> MatMul [8, 6] -> Add bias [6]
// -> Split on axis 2 (3 + 3) -> Transpose [1, 0, 2]; plus z [batch, seq, 6]
// added to a [1, seq, 6] y (broadcasting z's batch dim into the result).
ModelBuilder dims_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", "seq", 8});
  b.input("y", DataType::kFloat, {1, "seq2", 6});
  b.input("z", DataType::kFloat, {"batch", "seq", 6});
  b.initializer("gamma", sample_tensor({8}, 1));
  b.initializer("w", sample_tensor({8, 6}, 2));
  b.initializer("bias", sample_tensor({6}, 3));
  b.initializer("split", make_tensor<int64_t>({2}, {3, 3}));
  b.node("LayerNormalization", {"x", "gamma"}, {"ln"}, {AttrSpec("axis", int64_t{-1})}, "ln");
  b.node("MatMul", {"ln", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"bias", "m"}, {"mb"}, {}, "bias");
  b.node("Split", {"mb", "split"}, {"s0", "s1"}, {AttrSpec("axis", int64_t{2})}, "split");
  b.node("Transpose", {"s1"}, {"t"}, {AttrSpec("perm", std::vector<int64_t>{1, 0, 2})}, "transpose");
  b.node("Add", {"y", "z"}, {"yz"}, {}, "broadcast_add");
  b.output("t", DataType::kFloat, {"seq", "batch", 3});
  b.output("s0", DataType::kFloat, {"batch", "seq", 3});
  b.output("yz", DataType::kFloat, {"batch", "seq", 6});
  return b;
}

TEST(SymbolicDimsTest, DimsTraceBackThroughOpsThatKeepThem) {
  const Graph g = load_resolved(dims_model());
  const ValueId x = g.find_value("x");
  const DimRef batch{x, 0, -1};
  const DimRef seq{x, 1, -1};
  EXPECT_EQ(dim_source(g, g.find_value("s0"), 0), batch);
  EXPECT_EQ(dim_source(g, g.find_value("s1"), 1), seq);  // the second Split output too
  EXPECT_EQ(dim_source(g, g.find_value("t"), 0), seq);   // through the Transpose
  EXPECT_EQ(dim_source(g, g.find_value("t"), 1), batch);
  // A known dim is its number.
  EXPECT_EQ(dim_source(g, g.find_value("t"), 2), (DimRef{kNoValue, -1, 3}));
  // Split's own axis, and a dim two operands both bring, are their own source.
  EXPECT_FALSE(dim_source(g, g.find_value("s0"), 2) == dim_source(g, g.find_value("mb"), 2));
  // yz's batch is z's (y has 1 there); its seq could be either, so it stays yz's.
  EXPECT_EQ(dim_source(g, g.find_value("yz"), 0), (DimRef{g.find_value("z"), 0, -1}));
  EXPECT_EQ(dim_source(g, g.find_value("yz"), 1), (DimRef{g.find_value("yz"), 1, -1}));
}

TEST(SymbolicDimsTest, DimsTraceBackThroughAFusedMatMul) {
  // The epilogue fusion turns MatMuls into FusedMatMuls one by one; a later
  // residual's shape check traces rows through those already fused (BERT
  // and GPT-2 lost 24 residual fusions when only MatMul was known here).
  Graph g = load_resolved(dims_model());
  for (Node& n : g.nodes)
    if (n.name == "matmul") rewrite::make_switchyard_op(g, n, kFusedMatMulOp);
  const ValueId x = g.find_value("x");
  EXPECT_EQ(dim_source(g, g.find_value("m"), 0), (DimRef{x, 0, -1}));
  EXPECT_EQ(dim_source(g, g.find_value("m"), 1), (DimRef{x, 1, -1}));
  EXPECT_EQ(dim_source(g, g.find_value("s0"), 1), (DimRef{x, 1, -1}));
}

TEST(SymbolicDimsTest, ShapeTensorsBuiltFromShapeGatherConcat) {
  ModelBuilder b = dims_model();
  b.initializer("i1", make_tensor<int64_t>({}, {1}));
  b.initializer("axes", make_tensor<int64_t>({1}, {0}));
  b.initializer("tail", make_tensor<int64_t>({2}, {-1, 4}));
  b.node("Shape", {"s1"}, {"s1_shape"}, {}, "s1_shape");
  b.node("Gather", {"s1_shape", "i1"}, {"seq_scalar"}, {AttrSpec("axis", int64_t{0})}, "gather");
  b.node("Unsqueeze", {"seq_scalar", "axes"}, {"seq_1d"}, {}, "unsqueeze");
  b.node("Concat", {"seq_1d", "tail"}, {"target"}, {AttrSpec("axis", int64_t{0})}, "concat");
  b.node("Reshape", {"x", "target"}, {"r"}, {}, "reshape");
  b.output("r", DataType::kFloat, {"seq", "a", 4});
  const Graph g = load_resolved(b);
  std::vector<DimRef> e;
  ASSERT_TRUE(symbolic::shape_elements(g, g.find_value("target"), &e));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], (DimRef{g.find_value("x"), 1, -1}));  // s1's seq is x's
  EXPECT_EQ(e[1], (DimRef{kNoValue, -1, -1}));
  EXPECT_EQ(e[2], (DimRef{kNoValue, -1, 4}));
  // Through the Reshape: its axis 0 is the target's element, x's seq; its
  // -1 axis is its own.
  EXPECT_EQ(dim_source(g, g.find_value("r"), 0), (DimRef{g.find_value("x"), 1, -1}));
  EXPECT_EQ(dim_source(g, g.find_value("r"), 1), (DimRef{g.find_value("r"), 1, -1}));
  // A shape that is a graph input cannot be read.
  ModelBuilder c(17);
  c.input("x", DataType::kFloat, {2, 3});
  c.input("shape", DataType::kInt64, {2});
  c.node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape");
  c.output("y", DataType::kFloat, {3, 2});
  const Graph h = load_resolved(c);
  EXPECT_FALSE(symbolic::shape_elements(h, h.find_value("shape"), &e));
}

// Reshape's 0 copies the input's dim, unless allowzero makes it a 0.
TEST(SymbolicDimsTest, ReshapeZeroCopiesTheInputsDim) {
  for (int64_t allowzero : {0, 1}) {
    SCOPED_TRACE(allowzero);
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {"batch", "seq", 8});
    b.initializer("target", make_tensor<int64_t>({3}, {0, 2, 4}));
    b.node("Reshape", {"x", "target"}, {"r"}, {AttrSpec("allowzero", allowzero)}, "reshape");
    b.output("r", DataType::kFloat, {"a", 2, 4});
    const Graph g = load_resolved(b);
    const DimRef copied{g.find_value("x"), 0, -1};
    EXPECT_EQ(dim_source(g, g.find_value("r"), 0) == copied, allowzero == 0);
  }
}

}  // namespace
}  // namespace sy::testing
