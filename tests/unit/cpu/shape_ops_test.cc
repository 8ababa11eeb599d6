// Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Identity kernels, and
// the shape inference of the tensor-op schemas with symbolic dims.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "model/resolve.h"
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

Tensor int64s(std::vector<int64_t> v) { return make_tensor<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

const ValueType& output_type(const NodeTest& t, size_t i = 0) {
  return t.graph().values[static_cast<size_t>(t.graph().outputs[i])].type;
}

// ---- Reshape ------------------------------------------------------------------

TEST(ReshapeKernel, InfersMinusOneAndCopiesData) {
  NodeTest t("Reshape", 13);
  t.input(make_tensor<float>({2, 3, 4}, iota_floats(24))).constant_input(int64s({4, -1}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({4, 6}, iota_floats(24)));
  EXPECT_EQ(output_type(t).shape_string(), "[4,6]");
}

TEST(ReshapeKernel, ZeroCopiesInputDim) {
  auto out = NodeTest("Reshape", 13).input(make_tensor<float>({2, 3, 4}, iota_floats(24))).input(int64s({0, -1})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 12}));
  EXPECT_EQ(to_vector<float>(out->at(0)), iota_floats(24));
}

TEST(ReshapeKernel, AllowZeroKeepsZeroDims) {
  // The spec's test_reshape_allowzero_reordered: [0,3,4] -> [3,4,0].
  NodeTest t("Reshape", 14);
  t.input(make_tensor<float>({0, 3, 4}, {})).constant_input(int64s({3, 4, 0})).attr("allowzero", 1);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{3, 4, 0}));
  EXPECT_EQ(output_type(t).shape_string(), "[3,4,0]");

  // Without allowzero the 0 copies input dim 2 (4): 48 elements, not 0.
  auto bad = NodeTest("Reshape", 14).input(make_tensor<float>({0, 3, 4}, {})).input(int64s({3, 4, 0})).run();
  EXPECT_FALSE(bad.ok());
}

TEST(ReshapeKernel, AllowZeroWithMinusOneIsAnError) {
  auto out = NodeTest("Reshape", 14)
                 .input(make_tensor<float>({2, 3}, iota_floats(6)))
                 .input(int64s({0, -1}))
                 .attr("allowzero", 1)
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("allowzero"), std::string::npos) << out.status().message();
}

TEST(ReshapeKernel, ErrorsNameTheProblem) {
  auto two = NodeTest("Reshape", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).input(int64s({-1, -1})).run();
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("more than one -1"), std::string::npos) << two.status().message();
  EXPECT_NE(two.status().message().find("test_node"), std::string::npos) << two.status().message();

  auto count = NodeTest("Reshape", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).input(int64s({4, 2})).run();
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("6 elements"), std::string::npos) << count.status().message();

  auto indivisible =
      NodeTest("Reshape", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).input(int64s({4, -1})).run();
  EXPECT_FALSE(indivisible.ok());

  // A constant bad shape fails when the graph is resolved.
  auto static_bad =
      NodeTest("Reshape", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).constant_input(int64s({5})).run();
  EXPECT_FALSE(static_bad.ok());
}

TEST(ReshapeKernel, StringsAreCopiedAsObjects) {
  std::vector<std::string> v = {"a", "bb", "a much longer string than the small buffer", "d", "", "f"};
  auto out = NodeTest("Reshape", 21).input(make_tensor<std::string>({2, 3}, v)).input(int64s({3, 2})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<std::string>({3, 2}, v));
}

TEST(ReshapeKernel, PackedInt4IsCopiedByBytes) {
  Tensor in = Tensor::allocate(DataType::kInt4, Shape{2, 3}).value();
  auto* bytes = static_cast<uint8_t*>(in.raw_data());
  bytes[0] = 0x21;
  bytes[1] = 0x43;
  bytes[2] = 0x65;
  auto out = NodeTest("Reshape", 21).input(in).input(int64s({6})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{6}));
  const auto* ob = static_cast<const uint8_t*>(out->at(0).raw_data());
  EXPECT_EQ(ob[0], 0x21);
  EXPECT_EQ(ob[1], 0x43);
  EXPECT_EQ(ob[2], 0x65);
}

TEST(ReshapeKernel, BigTensorWithThreads) {
  const int64_t n = 1 << 20;
  auto out =
      NodeTest("Reshape", 19).input(make_tensor<float>({n}, iota_floats(n))).input(int64s({256, -1})).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{256, 4096}));
  EXPECT_EQ(to_vector<float>(out->at(0)), iota_floats(n));
}

// ---- Flatten ----------------------------------------------------------------------

TEST(FlattenKernel, AxesIncludingNegative) {
  struct Case {
    int64_t axis;
    Shape expected;
  };
  const Case cases[] = {{0, {1, 120}}, {1, {2, 60}},  {2, {6, 20}},  {3, {24, 5}},
                        {4, {120, 1}}, {-1, {24, 5}}, {-2, {6, 20}}, {-4, {1, 120}}};
  for (const Case& c : cases) {
    NodeTest t("Flatten", 13);
    t.input(make_tensor<float>({2, 3, 4, 5}, iota_floats(120))).attr("axis", c.axis);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << "axis " << c.axis << ": " << out.status().to_string();
    EXPECT_EQ(out->at(0).shape(), c.expected) << "axis " << c.axis;
    EXPECT_EQ(to_vector<float>(out->at(0)), iota_floats(120));
    EXPECT_EQ(output_type(t).static_shape(), c.expected);
  }
  EXPECT_FALSE(NodeTest("Flatten", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).attr("axis", 3).run().ok());
}

TEST(FlattenKernel, DefaultAxisIsOne) {
  auto out = NodeTest("Flatten", 9).input(make_tensor<float>({2, 3, 4}, iota_floats(24))).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 12}));
}

// ---- Squeeze / Unsqueeze -------------------------------------------------------------

TEST(SqueezeKernel, AxesAttributeBeforeOpset13) {
  auto out = NodeTest("Squeeze", 11)
                 .input(make_tensor<float>({1, 3, 1, 2}, iota_floats(6)))
                 .attr("axes", std::vector<int64_t>{0, -2})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({3, 2}, iota_floats(6)));
}

TEST(SqueezeKernel, AxesInputFromOpset13) {
  NodeTest t("Squeeze", 13);
  t.input(make_tensor<float>({1, 3, 1, 2}, iota_floats(6))).constant_input(int64s({2}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(output_type(t).shape_string(), "[1,3,2]");
}

TEST(SqueezeKernel, NoAxesRemovesAllOnes) {
  auto out = NodeTest("Squeeze", 13).input(make_tensor<float>({1, 3, 1, 2, 1}, iota_floats(6))).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{3, 2}));
}

TEST(SqueezeKernel, NonUnitAxisIsAnError) {
  auto out = NodeTest("Squeeze", 13)
                 .dynamic_shapes()
                 .input(make_tensor<float>({1, 3}, iota_floats(3)))
                 .input(int64s({1}))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("expected 1"), std::string::npos) << out.status().message();
}

TEST(UnsqueezeKernel, AxesInOutputRank) {
  // test_unsqueeze_unsorted_axes / negative axes: [3,4,5] with axes [5,4,2] -> [3,4,1,5,1,1].
  NodeTest t("Unsqueeze", 13);
  t.input(make_tensor<float>({3, 4, 5}, iota_floats(60))).constant_input(int64s({5, 4, 2}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{3, 4, 1, 5, 1, 1}));
  EXPECT_EQ(to_vector<float>(out->at(0)), iota_floats(60));
  EXPECT_EQ(output_type(t).shape_string(), "[3,4,1,5,1,1]");

  auto neg = NodeTest("Unsqueeze", 11)
                 .input(make_tensor<float>({1, 3, 1, 5}, iota_floats(15)))
                 .attr("axes", std::vector<int64_t>{-2})
                 .run();
  ASSERT_TRUE(neg.ok()) << neg.status().to_string();
  EXPECT_EQ(neg->at(0).shape(), (Shape{1, 3, 1, 1, 5}));

  auto dup = NodeTest("Unsqueeze", 13).input(make_tensor<float>({2}, {1, 2})).input(int64s({0, 0})).run();
  EXPECT_FALSE(dup.ok());
}

TEST(UnsqueezeKernel, ScalarToVector) {
  auto out = NodeTest("Unsqueeze", 13).input(make_tensor<int64_t>({}, {7})).input(int64s({0})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({1}, {7}));
}

// ---- Shape / Size / Identity ------------------------------------------------------------

TEST(ShapeKernel, StartAndEndAreClamped) {
  struct Case {
    int64_t start;
    int64_t end;
    bool has_end;
    std::vector<int64_t> expected;
  };
  // The spec's test_shape_* cases on a [3,4,5] input.
  const Case cases[] = {{0, 0, false, {3, 4, 5}},   {1, 0, false, {4, 5}},    {0, 1, true, {3}},
                        {-1, 0, false, {5}},        {0, -1, true, {3, 4}},    {1, 2, true, {4}},
                        {-10, 0, false, {3, 4, 5}}, {0, 10, true, {3, 4, 5}}, {2, 1, true, {}}};
  for (const Case& c : cases) {
    NodeTest t("Shape", 15);
    t.input(make_tensor<float>({3, 4, 5}, iota_floats(60))).attr("start", c.start);
    if (c.has_end) t.attr("end", c.end);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(to_vector<int64_t>(out->at(0)), c.expected) << "start " << c.start << " end " << c.end;
    EXPECT_EQ(output_type(t).dtype, DataType::kInt64);
    EXPECT_EQ(output_type(t).shape_string(), "[" + std::to_string(c.expected.size()) + "]");
  }
}

TEST(ShapeKernel, OldOpsetGivesWholeShape) {
  auto out = NodeTest("Shape", 13).input(make_tensor<float>({2, 0, 3}, {})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), int64s({2, 0, 3}));
}

TEST(SizeKernel, CountsElements) {
  NodeTest t("Size", 13);
  t.input(make_tensor<float>({3, 4, 5}, iota_floats(60)));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({}, {60}));
  EXPECT_EQ(output_type(t).shape_string(), "[]");
}

TEST(IdentityKernel, CopiesAnyType) {
  auto f = NodeTest("Identity", 16).input(make_tensor<double>({2}, {1.5, -2})).run();
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(f->at(0), make_tensor<double>({2}, {1.5, -2}));
  auto s = NodeTest("Identity", 21).input(make_tensor<std::string>({2}, {"x", "yz"})).run();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_tensor_eq(s->at(0), make_tensor<std::string>({2}, {"x", "yz"}));
}

// ---- Shape inference with symbolic dims ---------------------------------------------------

// A one-node graph whose inputs have declared types (possibly symbolic);
// resolve() runs the op's inference.
class InferCase {
 public:
  InferCase(std::string op, int opset) {
    graph_.opsets[""] = opset;
    node_.name = "n";
    node_.op_type = std::move(op);
  }
  InferCase& input(ValueType t) {
    const ValueId v = graph_.add_value("in" + std::to_string(node_.inputs.size()), std::move(t));
    graph_.values[static_cast<size_t>(v)].is_graph_input = true;
    graph_.inputs.push_back(v);
    node_.inputs.push_back(v);
    return *this;
  }
  InferCase& constant(Tensor t) {
    const ValueId v =
        graph_.add_value("c" + std::to_string(node_.inputs.size()), ValueType::tensor(t.dtype(), t.shape()));
    graph_.values[static_cast<size_t>(v)].is_initializer = true;
    graph_.initializers[v] = std::move(t);
    node_.inputs.push_back(v);
    return *this;
  }
  InferCase& attr(const std::string& name, int64_t v) {
    Attribute a;
    a.name = name;
    a.type = AttributeType::kInt;
    a.i = v;
    node_.attributes.push_back(std::move(a));
    return *this;
  }
  InferCase& attr(const std::string& name, std::vector<int64_t> v) {
    Attribute a;
    a.name = name;
    a.type = AttributeType::kInts;
    a.ints = std::move(v);
    node_.attributes.push_back(std::move(a));
    return *this;
  }
  // The shape strings of the outputs after inference, or the error.
  Result<std::vector<std::string>> shapes(int outputs = 1) {
    for (int i = 0; i < outputs; ++i) {
      const ValueId v = graph_.add_value("out" + std::to_string(i));
      graph_.outputs.push_back(v);
      node_.outputs.push_back(v);
    }
    graph_.add_node(node_);
    SY_RETURN_IF_ERROR(resolve(graph_));
    std::vector<std::string> s;
    for (ValueId v : graph_.outputs) s.push_back(graph_.values[static_cast<size_t>(v)].type.shape_string());
    return s;
  }
  std::string shape() {
    auto s = shapes();
    return s.ok() ? s->at(0) : "error: " + s.status().message();
  }

 private:
  Graph graph_;
  Node node_;
};

ValueType sym(std::vector<Dim> dims, DataType dt = DataType::kFloat) { return ValueType::tensor(dt, std::move(dims)); }
Dim k(int64_t v) { return Dim::known(v); }
Dim s(const char* name) { return Dim::symbolic(name); }

TEST(TensorSchemaTest, ReshapeKeepsSymbolsAndInfersMinusOne) {
  // [B,S,768] -> [0,0,12,64]
  EXPECT_EQ(InferCase("Reshape", 14).input(sym({s("B"), s("S"), k(768)})).constant(int64s({0, 0, 12, 64})).shape(),
            "[B,S,12,64]");
  // [B,S,12,64] -> [0,0,-1]: -1 = 768
  EXPECT_EQ(InferCase("Reshape", 14).input(sym({s("B"), s("S"), k(12), k(64)})).constant(int64s({0, 0, -1})).shape(),
            "[B,S,768]");
  // [B,S,768] -> [-1,768]: -1 = B*S, unknown
  EXPECT_EQ(InferCase("Reshape", 14).input(sym({s("B"), s("S"), k(768)})).constant(int64s({-1, 768})).shape(),
            "[?,768]");
  // [B,768] -> [-1,12,64]: -1 = B
  EXPECT_EQ(InferCase("Reshape", 14).input(sym({s("B"), k(768)})).constant(int64s({-1, 12, 64})).shape(), "[B,12,64]");
  // Non-constant shape of static length 3: rank 3.
  EXPECT_EQ(InferCase("Reshape", 14).input(sym({s("B"), k(768)})).input(sym({k(3)}, DataType::kInt64)).shape(),
            "[?,?,?]");
  // Static mismatch is an error at resolve time.
  EXPECT_NE(InferCase("Reshape", 14).input(sym({k(2), k(3)})).constant(int64s({4})).shape().find("error"),
            std::string::npos);
}

TEST(TensorSchemaTest, SqueezeUnsqueezeFlattenShapeWithSymbols) {
  EXPECT_EQ(InferCase("Unsqueeze", 13).input(sym({s("B"), s("S")})).constant(int64s({1, -1})).shape(), "[B,1,S,1]");
  EXPECT_EQ(InferCase("Unsqueeze", 11).input(sym({s("B")})).attr("axes", std::vector<int64_t>{0}).shape(), "[1,B]");
  EXPECT_EQ(InferCase("Squeeze", 13).input(sym({s("B"), k(1), s("S")})).constant(int64s({1})).shape(), "[B,S]");
  // Without axes and with unknown dims, the rank is unknown.
  EXPECT_EQ(InferCase("Squeeze", 13).input(sym({s("B"), k(1)})).shape(), "[?]");
  EXPECT_NE(InferCase("Squeeze", 13).input(sym({s("B"), k(3)})).constant(int64s({1})).shape().find("error"),
            std::string::npos);
  EXPECT_EQ(InferCase("Flatten", 13).input(sym({s("B"), k(3), k(4)})).shape(), "[B,12]");
  EXPECT_EQ(InferCase("Flatten", 13).input(sym({s("B"), k(3), k(4)})).attr("axis", 2).shape(), "[?,4]");
  EXPECT_EQ(InferCase("Shape", 15).input(sym({s("B"), k(3), k(4)})).attr("start", 1).shape(), "[2]");
  EXPECT_EQ(InferCase("Identity", 16).input(sym({s("B"), k(3)})).shape(), "[B,3]");
}

TEST(TensorSchemaTest, ConcatSplitGatherSliceTransposeExpandWithSymbols) {
  EXPECT_EQ(InferCase("Concat", 13).input(sym({s("B"), k(3)})).input(sym({s("B"), k(5)})).attr("axis", -1).shape(),
            "[B,8]");
  EXPECT_EQ(InferCase("Concat", 13).input(sym({s("B"), s("P")})).input(sym({s("B"), k(1)})).attr("axis", 1).shape(),
            "[B,?]");
  EXPECT_NE(
      InferCase("Concat", 13).input(sym({k(2), k(3)})).input(sym({k(4), k(3)})).attr("axis", 1).shape().find("error"),
      std::string::npos);
  auto split = InferCase("Split", 18).input(sym({s("B"), k(7)})).attr("axis", 1).attr("num_outputs", 4).shapes(4);
  ASSERT_TRUE(split.ok()) << split.status().to_string();
  EXPECT_EQ(*split, (std::vector<std::string>{"[B,2]", "[B,2]", "[B,2]", "[B,1]"}));
  auto split13 = InferCase("Split", 13).input(sym({s("B"), k(6)})).constant(int64s({2, 4})).attr("axis", -1).shapes(2);
  ASSERT_TRUE(split13.ok()) << split13.status().to_string();
  EXPECT_EQ(*split13, (std::vector<std::string>{"[B,2]", "[B,4]"}));
  // Embedding lookup: [vocab, hidden] gathered by [B, S] ids.
  EXPECT_EQ(InferCase("Gather", 13).input(sym({k(1000), k(64)})).input(sym({s("B"), s("S")}, DataType::kInt64)).shape(),
            "[B,S,64]");
  EXPECT_EQ(
      InferCase("Gather", 13).input(sym({s("B"), k(5), k(6)})).input(sym({}, DataType::kInt64)).attr("axis", 1).shape(),
      "[B,6]");
  EXPECT_EQ(InferCase("GatherND", 13)
                .input(sym({s("B"), k(5), k(6)}))
                .input(sym({s("B"), k(3), k(2)}, DataType::kInt64))
                .attr("batch_dims", 1)
                .shape(),
            "[B,3]");
  EXPECT_EQ(InferCase("Transpose", 13)
                .input(sym({s("B"), s("S"), k(12), k(64)}))
                .attr("perm", std::vector<int64_t>{0, 2, 1, 3})
                .shape(),
            "[B,12,S,64]");
  EXPECT_EQ(InferCase("Transpose", 13).input(sym({s("B"), k(3)})).shape(), "[3,B]");
  // Slice of a known axis of a symbolic tensor, and a whole unknown axis.
  EXPECT_EQ(InferCase("Slice", 13)
                .input(sym({s("B"), k(10)}))
                .constant(int64s({0, 2}))
                .constant(int64s({INT64_MAX, -1}))
                .shape(),
            "[B,7]");
  EXPECT_EQ(InferCase("Slice", 13).input(sym({s("B"), k(10)})).constant(int64s({1})).constant(int64s({3})).shape(),
            "[?,10]");
  EXPECT_EQ(InferCase("Slice", 13)
                .input(sym({s("B"), k(10)}))
                .input(sym({k(1)}, DataType::kInt64))
                .input(sym({k(1)}, DataType::kInt64))
                .constant(int64s({1}))
                .shape(),
            "[B,?]");
  EXPECT_EQ(InferCase("Expand", 13).input(sym({s("B"), k(1), k(4)})).constant(int64s({3, 1})).shape(), "[B,3,4]");
  EXPECT_EQ(InferCase("Expand", 13).input(sym({k(3), k(1)})).constant(int64s({2, 1, 6})).shape(), "[2,3,6]");
  EXPECT_EQ(InferCase("Tile", 13).input(sym({s("B"), k(3)})).constant(int64s({1, 2})).shape(), "[B,6]");
  EXPECT_EQ(InferCase("ConstantOfShape", 20).input(sym({k(3)}, DataType::kInt64)).shape(), "[?,?,?]");
  EXPECT_EQ(InferCase("Trilu", 14).input(sym({s("B"), k(3), k(3)})).shape(), "[B,3,3]");
  EXPECT_EQ(InferCase("EyeLike", 9).input(sym({s("N"), k(3)})).shape(), "[N,3]");
}

TEST(TensorSchemaTest, RangeCountsFromConstants) {
  auto scalar = [](int64_t v) { return make_tensor<int64_t>({}, {v}); };
  EXPECT_EQ(InferCase("Range", 11).constant(scalar(10)).constant(scalar(4)).constant(scalar(-3)).shape(), "[2]");
  EXPECT_EQ(InferCase("Range", 11)
                .constant(make_tensor<float>({}, {1}))
                .constant(make_tensor<float>({}, {5}))
                .constant(make_tensor<float>({}, {2}))
                .shape(),
            "[2]");
  EXPECT_EQ(InferCase("Range", 11).input(sym({}, DataType::kInt64)).constant(scalar(4)).constant(scalar(1)).shape(),
            "[?]");
}

// A requested shape whose product wraps around int64 to the input's count
// ((2^62 + 1) * 4 == 4 mod 2^64) used to pass the count check.
TEST(ReshapeKernel, ShapesWhoseProductOverflowsAreAnError) {
  const Tensor in = make_tensor<float>({4}, {1, 2, 3, 4});
  auto wraps = NodeTest("Reshape", 14).input(in).input(int64s({(int64_t{1} << 62) + 1, 4})).run();
  ASSERT_FALSE(wraps.ok());
  EXPECT_EQ(wraps.status().code(), StatusCode::kInvalidArgument) << wraps.status().to_string();
  EXPECT_NE(wraps.status().message().find("overflows"), std::string::npos) << wraps.status().message();
  auto inferred_dim = NodeTest("Reshape", 14).input(in).input(int64s({-1, int64_t{1} << 32, int64_t{1} << 32})).run();
  ASSERT_FALSE(inferred_dim.ok());
  EXPECT_NE(inferred_dim.status().message().find("overflows"), std::string::npos) << inferred_dim.status().message();
  // The same as a constant: refused by shape inference.
  NodeTest t("Reshape", 14);
  t.input(in).constant_input(int64s({(int64_t{1} << 62) + 1, 4}));
  auto constant = t.run();
  ASSERT_FALSE(constant.ok());
  EXPECT_NE(constant.status().message().find("overflows"), std::string::npos) << constant.status().message();
}

}  // namespace
}  // namespace sy
