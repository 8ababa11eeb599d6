// Einsum against a brute-force reference written here: every combination
// of label values, the product of the operands' elements summed into the
// output element its output labels pick (numpy broadcasting of length-1
// dims included).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<double> pseudo_random(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<double>((seed >> 8) % 200) / 50.0 - 2.0;
  }
  return v;
}

// Terms with "..." expanded to the operand's extra dims, written as digits
// '0'.. right-aligned so that broadcasting ellipses share them.
struct RefEquation {
  std::vector<std::string> inputs;
  std::string output;
};

RefEquation expand(const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  size_t max_e = 0;
  RefEquation r;
  auto ellipsis = [&](size_t e) {
    std::string s;
    for (size_t k = 0; k < e; ++k) s += static_cast<char>('0' + (9 - e + 1 + k));
    return s;
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string t = terms[i];
    const size_t dots = t.find("...");
    if (dots != std::string::npos) {
      const size_t e = shapes[i].rank() - (t.size() - 3);
      max_e = std::max(max_e, e);
      t = t.substr(0, dots) + ellipsis(e) + t.substr(dots + 3);
    }
    r.inputs.push_back(t);
  }
  if (arrow != std::string::npos) {
    r.output = eq.substr(arrow + 2);
    const size_t dots = r.output.find("...");
    if (dots != std::string::npos) r.output = r.output.substr(0, dots) + ellipsis(max_e) + r.output.substr(dots + 3);
  } else {
    std::map<char, int> counts;
    for (const std::string& t : r.inputs)
      for (char c : t) ++counts[c];
    r.output = ellipsis(max_e);
    for (const auto& [c, n] : counts)
      if (n == 1 && !(c >= '0' && c <= '9')) r.output += c;
  }
  return r;
}

std::vector<double> reference_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                                     const std::vector<std::vector<double>>& data, Shape& out_shape) {
  const RefEquation r = expand(equation, shapes);
  std::map<char, int64_t> dims;
  for (size_t i = 0; i < r.inputs.size(); ++i)
    for (size_t k = 0; k < r.inputs[i].size(); ++k) {
      int64_t& d = dims[r.inputs[i][k]];
      d = std::max(d, shapes[i][k]);
    }
  std::vector<char> labels;
  for (const auto& [c, d] : dims) labels.push_back(c);
  out_shape.clear();
  for (char c : r.output) out_shape.push_back(dims[c]);
  std::vector<double> out(static_cast<size_t>(out_shape.num_elements()), 0.0);
  std::map<char, int64_t> value;
  std::function<void(size_t)> loop = [&](size_t li) {
    if (li < labels.size()) {
      for (int64_t v = 0; v < dims[labels[li]]; ++v) {
        value[labels[li]] = v;
        loop(li + 1);
      }
      return;
    }
    double prod = 1.0;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < r.inputs[i].size(); ++k) {
        const int64_t d = shapes[i][k];
        off = off * d + (d == 1 ? 0 : value[r.inputs[i][k]]);
      }
      prod *= data[i][static_cast<size_t>(off)];
    }
    int64_t o = 0;
    for (char c : r.output) o = o * dims[c] + value[c];
    out[static_cast<size_t>(o)] += prod;
  };
  loop(0);
  return out;
}

// Runs the equation on float and double inputs and checks both against the
// reference.
void check(const std::string& equation, const std::vector<Shape>& shapes, int threads = 1) {
  SCOPED_TRACE(equation);
  std::vector<std::vector<double>> data;
  for (size_t i = 0; i < shapes.size(); ++i)
    data.push_back(pseudo_random(shapes[i].num_elements(), static_cast<uint32_t>(17 * i + 3)));
  Shape out_shape;
  const std::vector<double> expected = reference_einsum(equation, shapes, data, out_shape);

  NodeTest td("Einsum", 12);
  NodeTest tf("Einsum", 12);
  for (size_t i = 0; i < shapes.size(); ++i) {
    td.input(make_tensor<double>(shapes[i], data[i]));
    tf.input(make_tensor<float>(shapes[i], std::vector<float>(data[i].begin(), data[i].end())));
  }
  td.attr("equation", equation).threads(threads);
  tf.attr("equation", equation).threads(threads);
  auto got_d = td.run();
  ASSERT_TRUE(got_d.ok()) << got_d.status().to_string();
  expect_tensor_near(got_d->at(0), make_tensor<double>(out_shape, expected), 1e-10, 1e-10);
  auto got_f = tf.run();
  ASSERT_TRUE(got_f.ok()) << got_f.status().to_string();
  expect_tensor_near(got_f->at(0), make_tensor<float>(out_shape, std::vector<float>(expected.begin(), expected.end())),
                     1e-4, 1e-4);
  // The inferred shape agrees with what ran.
  const Graph& g = tf.graph();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].type.shape_string(), out_shape.to_string());
}

TEST(EinsumKernel, HandComputedMatMulAndTrace) {
  auto mm = NodeTest("Einsum", 12)
                .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                .input(make_tensor<float>({3, 2}, {1, 0, 0, 1, 1, 1}))
                .attr("equation", "ij,jk->ik")
                .run();
  ASSERT_TRUE(mm.ok()) << mm.status().to_string();
  expect_tensor_eq(mm->at(0), make_tensor<float>({2, 2}, {4, 5, 10, 11}));

  auto trace = NodeTest("Einsum", 12)
                   .input(make_tensor<int32_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
                   .attr("equation", "ii")
                   .run();
  ASSERT_TRUE(trace.ok()) << trace.status().to_string();
  expect_tensor_eq(trace->at(0), make_tensor<int32_t>({}, {15}));

  auto diag = NodeTest("Einsum", 12)
                  .input(make_tensor<int64_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
                  .attr("equation", "ii->i")
                  .run();
  ASSERT_TRUE(diag.ok()) << diag.status().to_string();
  expect_tensor_eq(diag->at(0), make_tensor<int64_t>({3}, {1, 5, 9}));
}

TEST(EinsumKernel, SingleOperand) {
  check("ij->ji", {{3, 4}});
  check("ij->", {{3, 4}});
  check("ij->j", {{3, 4}});
  check("ij", {{3, 4}});
  check("ji", {{3, 4}});  // implicit output is sorted: a transpose
  check("iji->j", {{3, 2, 3}});
  check("...ii->...i", {{2, 3, 4, 4}});
  check("b i j k -> k b", {{2, 3, 4, 5}});
}

TEST(EinsumKernel, TwoOperands) {
  check("ij,jk->ik", {{3, 4}, {4, 5}});
  check("ij,jk", {{3, 4}, {4, 5}});
  check("ji,jk->ik", {{4, 3}, {4, 5}});
  check("ij,kj->ik", {{3, 4}, {5, 4}});
  check("ij,kj->ki", {{3, 4}, {5, 4}});
  check("ij,jk->ki", {{3, 4}, {4, 5}});  // [N, M]: the operands swap
  check("bji,bjk->bki", {{2, 4, 3}, {2, 4, 5}});
  check("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}});
  check("bij,bkj->bki", {{2, 3, 4}, {2, 5, 4}});
  check("i,i", {{7}, {7}});
  check("i,j->ij", {{3}, {4}});
  check("i,i->i", {{5}, {5}});
  check("ij,ij->", {{3, 4}, {3, 4}});
  check("iij,jk->ik", {{3, 3, 4}, {4, 2}});
  check("ijk,jl->il", {{2, 3, 4}, {3, 5}});  // k summed before the product
  check("abc,cd->dba", {{2, 3, 4}, {4, 5}});
  check("Ab,bA->A", {{3, 4}, {4, 3}});
  check("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}});
  check("...ij,jk", {{2, 3, 4}, {4, 5}});
  check("ij,j->i", {{3, 1}, {4}});  // a length-1 contracted dim broadcasts
}

TEST(EinsumKernel, ThreeOperands) {
  check("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}});
  check("i,j,k->ijk", {{2}, {3}, {4}});
  check("bi,bj,bk->b", {{3, 2}, {3, 4}, {3, 5}});
  check("ab,bc,ca->", {{2, 3}, {3, 4}, {4, 2}});
}

TEST(EinsumKernel, LargeProductsUseTheBlockedGemmWithThreads) {
  check("bij,bjk->bik", {{4, 33, 40}, {4, 40, 27}}, 2);
  check("ik,jk->ij", {{70, 50}, {60, 50}}, 4);
  check("bhqd,bhkd->bhqk", {{1, 3, 20, 16}, {1, 3, 24, 16}}, 2);
}

TEST(EinsumKernel, OtherTypes) {
  auto i32 = NodeTest("Einsum", 12)
                 .input(make_tensor<int32_t>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<int32_t>({2}, {10, 100}))
                 .attr("equation", "ij,j->i")
                 .run();
  ASSERT_TRUE(i32.ok()) << i32.status().to_string();
  expect_tensor_eq(i32->at(0), make_tensor<int32_t>({2}, {210, 430}));

  std::vector<Float16> a, b;
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) a.push_back(Float16{float_to_float16(v)});
  for (float v : {0.5f, -1.0f}) b.push_back(Float16{float_to_float16(v)});
  auto f16 = NodeTest("Einsum", 12)
                 .input(make_tensor<Float16>({2, 2}, a))
                 .input(make_tensor<Float16>({2}, b))
                 .attr("equation", "ij,j->i")
                 .run();
  ASSERT_TRUE(f16.ok()) << f16.status().to_string();
  const Float16* y = f16->at(0).data<Float16>();
  EXPECT_EQ(float16_to_float(y[0].bits), -1.5f);
  EXPECT_EQ(float16_to_float(y[1].bits), -2.5f);
}

TEST(EinsumKernel, EmptyDimsGiveZerosOrEmptyOutputs) {
  auto zeros = NodeTest("Einsum", 12)
                   .input(make_tensor<float>({2, 0}, {}))
                   .input(make_tensor<float>({0, 3}, {}))
                   .attr("equation", "ij,jk->ik")
                   .run();
  ASSERT_TRUE(zeros.ok()) << zeros.status().to_string();
  expect_tensor_eq(zeros->at(0), make_tensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}));
}

TEST(EinsumKernel, Errors) {
  // Rank does not match the term.
  EXPECT_FALSE(NodeTest("Einsum", 12).input(make_tensor<float>({3}, {1, 2, 3})).attr("equation", "ij->i").run().ok());
  // Mismatched lengths for one label.
  EXPECT_FALSE(NodeTest("Einsum", 12)
                   .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                   .attr("equation", "ij,jk->ik")
                   .run()
                   .ok());
  // Output label no input has; term count differs from inputs; bad character.
  EXPECT_FALSE(NodeTest("Einsum", 12).input(make_tensor<float>({2}, {1, 2})).attr("equation", "i->j").run().ok());
  EXPECT_FALSE(NodeTest("Einsum", 12).input(make_tensor<float>({2}, {1, 2})).attr("equation", "i,i->i").run().ok());
  EXPECT_FALSE(NodeTest("Einsum", 12).input(make_tensor<float>({2}, {1, 2})).attr("equation", "i1->i").run().ok());
  // Mismatched lengths of a repeated label within one operand.
  EXPECT_FALSE(NodeTest("Einsum", 12)
                   .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .attr("equation", "ii->i")
                   .dynamic_shapes()
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy
