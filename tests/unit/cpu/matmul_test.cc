// MatMul and Gemm kernels against reference loops written here.
#include <gtest/gtest.h>

#include <vector>

#include "schema/schema.h"
#include "testing/node_test.h"

namespace sy::testing {
namespace {

std::vector<float> seq(int64_t n, float scale = 0.1f, int mod = 13) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(static_cast<int>(i % mod) - mod / 2) * scale;
  return v;
}

// Batched reference with numpy broadcasting of the batch dims (as given,
// already promoted to rank >= 2).
std::vector<float> ref_matmul(const std::vector<int64_t>& as, const std::vector<float>& a, const std::vector<int64_t>& bs,
                              const std::vector<float>& b, std::vector<int64_t>& out_batch) {
  const size_t ar = as.size(), br = bs.size();
  const int64_t M = as[ar - 2], K = as[ar - 1], N = bs[br - 1];
  const size_t r = std::max(ar, br) - 2;
  out_batch.assign(r, 1);
  std::vector<int64_t> ab(r, 1), bb(r, 1);
  for (size_t i = 0; i < r; ++i) {
    if (i + ar - 2 >= r) ab[i] = as[i + ar - 2 - r];
    if (i + br - 2 >= r) bb[i] = bs[i + br - 2 - r];
    out_batch[i] = std::max(ab[i], bb[i]);
  }
  int64_t count = 1;
  for (int64_t d : out_batch) count *= d;
  std::vector<float> out(static_cast<size_t>(count * M * N));
  for (int64_t bi = 0; bi < count; ++bi) {
    int64_t rem = bi, ao = 0, bo = 0, astr = 1, bstr = 1;
    for (size_t i = r; i-- > 0;) {
      const int64_t idx = rem % out_batch[i];
      rem /= out_batch[i];
      ao += (ab[i] == 1 ? 0 : idx) * astr;
      bo += (bb[i] == 1 ? 0 : idx) * bstr;
      astr *= ab[i];
      bstr *= bb[i];
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[static_cast<size_t>((ao * M + m) * K + k)] * b[static_cast<size_t>((bo * K + k) * N + n)];
        out[static_cast<size_t>((bi * M + m) * N + n)] = static_cast<float>(s);
      }
  }
  return out;
}

int64_t count_of(const std::vector<int64_t>& s) {
  int64_t c = 1;
  for (int64_t d : s) c *= d;
  return c;
}

void check_matmul(std::vector<int64_t> as, std::vector<int64_t> bs, bool b_constant, int threads = 1) {
  const auto a = seq(count_of(as), 0.1f, 13);
  const auto b = seq(count_of(bs), 0.05f, 7);
  auto ap = as, bp = bs;
  if (ap.size() == 1) ap.insert(ap.begin(), 1);
  if (bp.size() == 1) bp.push_back(1);
  std::vector<int64_t> batch;
  const auto expect = ref_matmul(ap, a, bp, b, batch);
  std::vector<int64_t> out_shape = batch;
  if (as.size() > 1) out_shape.push_back(ap[ap.size() - 2]);
  if (bs.size() > 1) out_shape.push_back(bp.back());
  NodeTest t("MatMul", 13);
  t.input(make_tensor<float>(Shape(as), a));
  if (b_constant) {
    t.constant_input(make_tensor<float>(Shape(bs), b));
  } else {
    t.input(make_tensor<float>(Shape(bs), b));
  }
  auto out = t.threads(threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(out_shape), expect), 1e-4, 1e-4);
}

TEST(MatMulTest, TwoByTwoByHand) {
  auto out = NodeTest("MatMul", 13)
                 .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<float>({2, 2}, {5, 6, 7, 8}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2, 2}, {19, 22, 43, 50}));
}

TEST(MatMulTest, Plain2D) {
  check_matmul({3, 4}, {4, 5}, false);
  check_matmul({65, 257}, {257, 17}, false);
  check_matmul({65, 257}, {257, 17}, true);
}

TEST(MatMulTest, OneDimensionalOperands) {
  check_matmul({7}, {7, 3}, false);      // [K] x [K,N] -> [N]
  check_matmul({2, 5, 7}, {7}, false);   // [..,M,K] x [K] -> [..,M]
  check_matmul({7}, {7}, false);         // dot product -> scalar
  check_matmul({4}, {3, 4, 5}, true);    // vector x batched matrix
}

TEST(MatMulTest, BatchBroadcast) {
  check_matmul({2, 3, 4, 5}, {5, 6}, false);
  check_matmul({2, 3, 4, 5}, {5, 6}, true);  // prepacked B, batch folded into M
  check_matmul({2, 1, 4, 5}, {3, 5, 6}, false);
  check_matmul({1, 4, 5}, {3, 5, 6}, true);  // constant batched B
  check_matmul({4, 5}, {2, 5, 6}, false);
  check_matmul({1, 1, 3, 8}, {8, 2}, true);
}

TEST(MatMulTest, Threaded) {
  check_matmul({8, 40, 33}, {8, 33, 50}, false, 2);  // parallel over batches
  check_matmul({300, 200}, {200, 130}, true, 3);    // one threaded GEMM
  check_matmul({2, 100, 64}, {2, 64, 300}, false, 4);
}

TEST(MatMulTest, IntegerAndDouble) {
  auto out = NodeTest("MatMul", 13)
                 .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                 .input(make_tensor<int32_t>({3, 1}, {1, -1, 2}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 1}, {5, 11}));
  auto out64 = NodeTest("MatMul", 9)
                   .input(make_tensor<int64_t>({3}, {1, 2, 3}))
                   .input(make_tensor<int64_t>({3}, {4, 5, 6}))
                   .run();
  ASSERT_TRUE(out64.ok()) << out64.status().to_string();
  expect_tensor_eq(out64->at(0), make_tensor<int64_t>({}, {32}));
  auto outd = NodeTest("MatMul", 13)
                  .input(make_tensor<double>({1, 2}, {0.5, 2}))
                  .input(make_tensor<double>({2, 2}, {2, 4, 1, 3}))
                  .run();
  ASSERT_TRUE(outd.ok()) << outd.status().to_string();
  expect_tensor_near(outd->at(0), make_tensor<double>({1, 2}, {3, 8}));
}

TEST(MatMulTest, MismatchedInnerDimensionIsAnError) {
  auto out = NodeTest("MatMul", 13)
                 .dynamic_shapes()
                 .input(make_tensor<float>({2, 3}, seq(6)))
                 .input(make_tensor<float>({4, 2}, seq(8)))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("inner"), std::string::npos) << out.status().message();
}

TEST(MatMulTest, InferredShapeKeepsSymbolicBatch) {
  Graph g;
  g.opsets[""] = 13;
  const ValueId a = g.add_value(
      "a", ValueType::tensor(DataType::kFloat, {Dim::symbolic("batch"), Dim::known(1), Dim::known(3), Dim::known(4)}));
  const ValueId b = g.add_value("b", ValueType::tensor(DataType::kFloat, {Dim::known(6), Dim::known(4), Dim::known(5)}));
  const ValueId y = g.add_value("y");
  Node n;
  n.op_type = "MatMul";
  n.since_version = 13;
  n.inputs = {a, b};
  n.outputs = {y};
  const OpSchema* schema = find_schema("", "MatMul", 13);
  ASSERT_NE(schema, nullptr);
  std::vector<ValueType> outs(1);
  InferenceContext ctx(g, n, outs);
  ASSERT_TRUE(schema->infer(ctx).ok());
  ASSERT_TRUE(outs[0].has_shape);
  ASSERT_EQ(outs[0].rank(), 4u);
  EXPECT_EQ(outs[0].dims[0].symbol, "batch");
  EXPECT_EQ(outs[0].dims[1].value, 6);
  EXPECT_EQ(outs[0].dims[2].value, 3);
  EXPECT_EQ(outs[0].dims[3].value, 5);
  // Inner dims that cannot match are an error at inference time.
  const ValueId c = g.add_value("c", ValueType::tensor(DataType::kFloat, {Dim::known(7), Dim::known(5)}));
  n.inputs = {a, c};
  InferenceContext bad(g, n, outs);
  EXPECT_FALSE(schema->infer(bad).ok());
}

// Gemm reference: alpha * op(A) op(B) + beta * C (C broadcast).
std::vector<float> ref_gemm(int64_t M, int64_t N, int64_t K, bool ta, bool tb, float alpha, float beta,
                            const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>* c,
                            int64_t cm, int64_t cn) {
  std::vector<float> y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (ta ? a[k * M + i] : a[i * K + k]) * (tb ? b[j * K + k] : b[k * N + j]);
      double v = alpha * s;
      if (c != nullptr) v += beta * (*c)[static_cast<size_t>((cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j))];
      y[static_cast<size_t>(i * N + j)] = static_cast<float>(v);
    }
  return y;
}

void check_gemm(int64_t M, int64_t N, int64_t K, bool ta, bool tb, float alpha, float beta, std::vector<int64_t> c_shape,
                bool has_c, bool b_constant, int opset = 13) {
  const auto a = seq(M * K, 0.1f, 11);
  const auto b = seq(K * N, 0.2f, 5);
  const int64_t cm = c_shape.size() == 2 ? c_shape[0] : 1;
  const int64_t cn = c_shape.empty() ? 1 : c_shape.back();
  const auto c = seq(cm * cn, 0.3f, 9);
  NodeTest t("Gemm", opset);
  t.input(make_tensor<float>(ta ? Shape{K, M} : Shape{M, K}, a));
  if (b_constant) {
    t.constant_input(make_tensor<float>(tb ? Shape{N, K} : Shape{K, N}, b));
  } else {
    t.input(make_tensor<float>(tb ? Shape{N, K} : Shape{K, N}, b));
  }
  if (has_c) t.input(make_tensor<float>(Shape(c_shape), c));
  t.attr("transA", ta ? 1 : 0).attr("transB", tb ? 1 : 0).attr("alpha", alpha).attr("beta", beta);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({M, N}, ref_gemm(M, N, K, ta, tb, alpha, beta, a, b, has_c ? &c : nullptr, cm, cn)),
                     1e-4, 1e-4);
}

TEST(GemmTest, TransposesAndScales) {
  for (int t = 0; t < 4; ++t) {
    check_gemm(5, 7, 9, t & 1, t & 2, 1.0f, 1.0f, {5, 7}, true, false);
    check_gemm(17, 65, 33, t & 1, t & 2, 0.5f, 2.0f, {17, 65}, true, true);
  }
}

TEST(GemmTest, BroadcastC) {
  check_gemm(6, 10, 4, false, true, 1.0f, 1.0f, {10}, true, true);      // bias along N, fused
  check_gemm(6, 10, 4, false, false, 1.0f, 1.0f, {1, 10}, true, false);
  check_gemm(6, 10, 4, false, false, 1.0f, 1.0f, {6, 1}, true, false);  // along M, fused
  check_gemm(6, 10, 4, true, false, 2.0f, 0.5f, {10}, true, false);     // scaled: filled first
  check_gemm(6, 10, 4, false, false, 1.0f, 3.0f, {}, true, false);       // scalar
  check_gemm(6, 10, 4, false, false, 1.0f, 1.0f, {1}, true, true);
}

TEST(GemmTest, OptionalC) {
  check_gemm(3, 4, 5, false, false, 1.0f, 1.0f, {}, false, false, 11);
  check_gemm(3, 4, 5, true, true, 0.25f, 1.0f, {}, false, true, 13);
}

TEST(GemmTest, Double) {
  auto out = NodeTest("Gemm", 13)
                 .input(make_tensor<double>({1, 2}, {1, 2}))
                 .input(make_tensor<double>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<double>({2}, {10, 20}))
                 .attr("beta", 0.5f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<double>({1, 2}, {12, 20}));
}

TEST(GemmTest, BadCIsAnError) {
  auto out = NodeTest("Gemm", 13)
                 .dynamic_shapes()
                 .input(make_tensor<float>({2, 2}, seq(4)))
                 .input(make_tensor<float>({2, 3}, seq(6)))
                 .input(make_tensor<float>({2}, seq(2)))
                 .run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace sy::testing

namespace sy {
namespace {

// float16 products are summed in float and rounded once per output.
TEST(MatMulHalf, Float16MatchesFloatReference) {
  const std::vector<float> a = {0.5f, -1.25f, 2.0f, 3.0f, 0.125f, -0.75f};
  const std::vector<float> b = {1.5f, -2.0f, 0.25f, 4.0f, -1.0f, 0.5f};
  std::vector<uint16_t> ha, hb;
  for (float v : a) ha.push_back(float_to_float16(v));
  for (float v : b) hb.push_back(float_to_float16(v));
  Tensor ta = Tensor::allocate(DataType::kFloat16, Shape{2, 3}).value();
  Tensor tb = Tensor::allocate(DataType::kFloat16, Shape{3, 2}).value();
  std::copy(ha.begin(), ha.end(), ta.data<uint16_t>());
  std::copy(hb.begin(), hb.end(), tb.data<uint16_t>());
  auto out = testing::NodeTest("MatMul", 13).input(ta).input(tb).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).dtype(), DataType::kFloat16);
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += a[static_cast<size_t>(m * 3 + k)] * b[static_cast<size_t>(k * 2 + n)];
      EXPECT_EQ(out->at(0).data<uint16_t>()[m * 2 + n], float_to_float16(expected)) << m << "," << n;
    }
}

}  // namespace
}  // namespace sy
