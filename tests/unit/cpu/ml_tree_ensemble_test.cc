// TreeEnsembleRegressor, TreeEnsembleClassifier and TreeEnsemble against a
// reference that walks the attributes as given ((tree id, node id) lookups,
// one row and one tree at a time), on random forests with every branch
// mode, NaN features and each aggregate function, on one thread and on
// four (rows shared, and trees shared for few rows); and against
// hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "unit/cpu/ml_test_util.h"

namespace sy {
namespace {

using testing::expect_all_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// A forest in the older ops' attribute form.
struct Forest {
  std::vector<int64_t> tree_ids, node_ids, features, trues, falses, missing;
  std::vector<std::string> modes;
  std::vector<float> values;
  std::vector<int64_t> w_trees, w_nodes, w_ids;
  std::vector<float> weights;
};

const char* const kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};

// Adds node `id` of tree `tree` and its subtree, `depth` levels at most;
// node ids are handed out from `next`, in a shuffled order so that the
// attribute order is not the walk order.
void grow(Forest& f, std::mt19937& rng, int64_t tree, int64_t id, int depth, int64_t& next, int64_t targets,
          bool mixed_modes) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  if (depth == 0 || (depth < 4 && rng() % 4 == 0)) {
    f.tree_ids.push_back(tree);
    f.node_ids.push_back(id);
    f.features.push_back(0);
    f.trues.push_back(0);
    f.falses.push_back(0);
    f.missing.push_back(0);
    f.modes.push_back("LEAF");
    f.values.push_back(0);
    const int64_t votes = 1 + static_cast<int64_t>(rng() % 2);
    for (int64_t v = 0; v < votes; ++v) {
      f.w_trees.push_back(tree);
      f.w_nodes.push_back(id);
      f.w_ids.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(targets)));
      f.weights.push_back(value(rng));
    }
    return;
  }
  const int64_t t = next++, e = next++;
  f.tree_ids.push_back(tree);
  f.node_ids.push_back(id);
  f.features.push_back(static_cast<int64_t>(rng() % 5));
  f.trues.push_back(t);
  f.falses.push_back(e);
  f.missing.push_back(static_cast<int64_t>(rng() % 2));
  // EQ and NEQ get thresholds that the inputs hit (they are rounded).
  const char* mode = mixed_modes ? kModes[rng() % 6] : "BRANCH_LEQ";
  f.modes.push_back(mode);
  f.values.push_back(std::round(value(rng) * 4) / 4);
  grow(f, rng, tree, t, depth - 1, next, targets, mixed_modes);
  grow(f, rng, tree, e, depth - 1, next, targets, mixed_modes);
}

Forest random_forest(std::mt19937& rng, int64_t trees, int64_t targets, bool mixed_modes) {
  Forest f;
  for (int64_t tree = 0; tree < trees; ++tree) {
    int64_t next = 1;
    grow(f, rng, tree * 3 + 1, 0, 6, next, targets, mixed_modes);  // tree ids need not be 0..n-1
  }
  return f;
}

bool goes_true(const std::string& mode, float x, float t, bool missing_true) {
  if (std::isnan(x)) return missing_true;
  if (mode == "BRANCH_LEQ") return x <= t;
  if (mode == "BRANCH_LT") return x < t;
  if (mode == "BRANCH_GTE") return x >= t;
  if (mode == "BRANCH_GT") return x > t;
  if (mode == "BRANCH_EQ") return x == t;
  return x != t;
}

// Per row, per target: the leaf weights of every tree combined by `agg`
// (the reference's rules: MIN and MAX start from the float extremes,
// AVERAGE divides by the tree count), plus base.
std::vector<float> reference_scores(const Forest& f, const std::vector<float>& x, int64_t rows, int64_t cols,
                                    int64_t targets, const std::string& agg, const std::vector<float>& base) {
  std::map<std::pair<int64_t, int64_t>, size_t> at;
  std::map<int64_t, size_t> roots;
  for (size_t i = 0; i < f.node_ids.size(); ++i) {
    at[{f.tree_ids[i], f.node_ids[i]}] = i;
    roots.emplace(f.tree_ids[i], i);
  }
  const float start = agg == "MIN" ? std::numeric_limits<float>::max()
                      : agg == "MAX" ? std::numeric_limits<float>::lowest()
                                     : 0.0f;
  std::vector<float> out(static_cast<size_t>(rows * targets), start);
  for (int64_t r = 0; r < rows; ++r) {
    for (const auto& [tree, root] : roots) {
      size_t i = root;
      while (f.modes[i] != "LEAF") {
        const float v = x[static_cast<size_t>(r * cols + f.features[i])];
        const bool t = goes_true(f.modes[i], v, f.values[i], f.missing[i] != 0);
        i = at.at({tree, t ? f.trues[i] : f.falses[i]});
      }
      for (size_t w = 0; w < f.weights.size(); ++w) {
        if (f.w_trees[w] != tree || f.w_nodes[w] != f.node_ids[i]) continue;
        float& s = out[static_cast<size_t>(r * targets + f.w_ids[w])];
        if (agg == "MIN") s = std::min(s, f.weights[w]);
        else if (agg == "MAX") s = std::max(s, f.weights[w]);
        else s += f.weights[w];
      }
    }
    for (int64_t t = 0; t < targets; ++t) {
      float& s = out[static_cast<size_t>(r * targets + t)];
      if (agg == "AVERAGE") s /= static_cast<float>(roots.size());
      if (!base.empty()) s += base[static_cast<size_t>(t)];
    }
  }
  return out;
}

// Random inputs on the quarter grid the thresholds use, with some NaNs.
std::vector<float> random_inputs(std::mt19937& rng, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = rng() % 10 == 0 ? kNan : static_cast<float>(static_cast<int>(rng() % 9) - 4) / 4;
  return x;
}

NodeTest& add_nodes(NodeTest& t, const Forest& f) {
  return t.attr("nodes_treeids", f.tree_ids)
      .attr("nodes_nodeids", f.node_ids)
      .attr("nodes_featureids", f.features)
      .attr("nodes_truenodeids", f.trues)
      .attr("nodes_falsenodeids", f.falses)
      .attr("nodes_missing_value_tracks_true", f.missing)
      .attr("nodes_modes", f.modes)
      .attr("nodes_values", f.values);
}

TEST(MlTreeEnsembleRegressor, RandomForestsMatchTheReferenceWalk) {
  std::mt19937 rng(7);
  const int64_t targets = 3, cols = 5;
  for (const char* agg : {"SUM", "AVERAGE", "MIN", "MAX"}) {
    for (bool mixed : {false, true}) {
      const Forest f = random_forest(rng, 13, targets, mixed);
      const std::vector<float> base = {0.5f, -1.0f, 2.0f};
      for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{150}}) {
        const std::vector<float> x = random_inputs(rng, rows * cols);
        const std::vector<float> want = reference_scores(f, x, rows, cols, targets, agg, base);
        for (int threads : {1, 4}) {
          SCOPED_TRACE(std::string(agg) + (mixed ? " mixed" : " LEQ") + " rows " + std::to_string(rows) +
                       " threads " + std::to_string(threads));
          NodeTest t("TreeEnsembleRegressor", 3, "ai.onnx.ml");
          add_nodes(t, f)
              .attr("target_treeids", f.w_trees)
              .attr("target_nodeids", f.w_nodes)
              .attr("target_ids", f.w_ids)
              .attr("target_weights", f.weights)
              .attr("n_targets", targets)
              .attr("aggregate_function", agg)
              .attr("base_values", base)
              .input(make_tensor<float>({rows, cols}, x))
              .threads(threads);
          auto out = t.run();
          ASSERT_TRUE(out.ok()) << out.status().to_string();
          EXPECT_EQ(out->at(0).shape(), (Shape{rows, targets}));
          expect_all_near(to_vector<float>(out->at(0)), want, 1e-5f);
        }
      }
    }
  }
}

// One split on feature 0 at 1.0 (true: 10, false: 20), for each mode.
std::vector<float> one_split(const std::string& mode, int64_t missing_true, const std::vector<float>& x,
                             const std::string& input_type = "float") {
  NodeTest t("TreeEnsembleRegressor", 1, "ai.onnx.ml");
  t.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
      .attr("nodes_missing_value_tracks_true", std::vector<int64_t>{missing_true, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{mode, "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{1.0f, 0, 0})
      .attr("target_treeids", std::vector<int64_t>{0, 0})
      .attr("target_nodeids", std::vector<int64_t>{1, 2})
      .attr("target_ids", std::vector<int64_t>{0, 0})
      .attr("target_weights", std::vector<float>{10, 20});
  const auto n = static_cast<int64_t>(x.size());
  if (input_type == "double") {
    t.input(make_tensor<double>({n, 1}, std::vector<double>(x.begin(), x.end())));
  } else if (input_type == "int64") {
    t.input(make_tensor<int64_t>({n, 1}, std::vector<int64_t>(x.begin(), x.end())));
  } else {
    t.input(make_tensor<float>({n, 1}, x));
  }
  auto out = t.run();
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? to_vector<float>(out->at(0)) : std::vector<float>();
}

TEST(MlTreeEnsembleRegressor, EachModeAtBelowAndAboveTheThresholdAndNaN) {
  const std::vector<float> x = {0.5f, 1.0f, 2.0f, kNan};
  EXPECT_EQ(one_split("BRANCH_LEQ", 0, x), (std::vector<float>{10, 10, 20, 20}));
  EXPECT_EQ(one_split("BRANCH_LT", 0, x), (std::vector<float>{10, 20, 20, 20}));
  EXPECT_EQ(one_split("BRANCH_GTE", 0, x), (std::vector<float>{20, 10, 10, 20}));
  EXPECT_EQ(one_split("BRANCH_GT", 0, x), (std::vector<float>{20, 20, 10, 20}));
  EXPECT_EQ(one_split("BRANCH_EQ", 0, x), (std::vector<float>{20, 10, 20, 20}));
  // The older ops send NaN by the flag alone, NEQ included.
  EXPECT_EQ(one_split("BRANCH_NEQ", 0, x), (std::vector<float>{10, 20, 10, 20}));
  EXPECT_EQ(one_split("BRANCH_NEQ", 1, x), (std::vector<float>{10, 20, 10, 10}));
  EXPECT_EQ(one_split("BRANCH_LEQ", 1, x), (std::vector<float>{10, 10, 20, 10}));
  const std::vector<float> whole = {0, 1, 2};
  EXPECT_EQ(one_split("BRANCH_LT", 0, whole, "double"), (std::vector<float>{10, 20, 20}));
  EXPECT_EQ(one_split("BRANCH_LT", 0, whole, "int64"), (std::vector<float>{10, 20, 20}));
}

TEST(MlTreeEnsembleRegressor, RejectsBrokenTreesAndNarrowInputs) {
  auto make = [](std::vector<int64_t> trues, std::vector<std::string> modes) {
    NodeTest t("TreeEnsembleRegressor", 3, "ai.onnx.ml");
    t.attr("nodes_treeids", std::vector<int64_t>{0, 0})
        .attr("nodes_nodeids", std::vector<int64_t>{0, 1})
        .attr("nodes_featureids", std::vector<int64_t>{0, 3})
        .attr("nodes_truenodeids", trues)
        .attr("nodes_falsenodeids", std::vector<int64_t>{1, 0})
        .attr("nodes_modes", modes)
        .attr("nodes_values", std::vector<float>{0, 0})
        .attr("target_treeids", std::vector<int64_t>{0})
        .attr("target_nodeids", std::vector<int64_t>{1})
        .attr("target_ids", std::vector<int64_t>{0})
        .attr("target_weights", std::vector<float>{1})
        .input(make_tensor<float>({1, 2}, {0, 0}));
    return t.run();
  };
  // Node 1 branches back to node 0: a cycle.
  auto cycle = make({1, 0}, {"BRANCH_LEQ", "BRANCH_LEQ"});
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().to_string().find("reached twice"), std::string::npos) << cycle.status().to_string();
  auto missing = make({5, 0}, {"BRANCH_LEQ", "LEAF"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().to_string().find("does not have"), std::string::npos) << missing.status().to_string();
  auto bad_mode = make({1, 0}, {"BRANCH_LE", "LEAF"});
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.status().to_string().find("BRANCH_LE'"), std::string::npos) << bad_mode.status().to_string();
  // The root reads feature 3; X has 2 columns.
  NodeTest wide("TreeEnsembleRegressor", 3, "ai.onnx.ml");
  wide.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{3, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{0, 0, 0})
      .attr("target_treeids", std::vector<int64_t>{0})
      .attr("target_nodeids", std::vector<int64_t>{1})
      .attr("target_ids", std::vector<int64_t>{0})
      .attr("target_weights", std::vector<float>{1})
      .input(make_tensor<float>({1, 2}, {0, 0}));
  auto narrow = wide.run();
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.status().to_string().find("feature 3"), std::string::npos) << narrow.status().to_string();
}

// ---- TreeEnsembleClassifier ----------------------------------------------------------

double logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(MlTreeEnsembleClassifier, MulticlassSoftmaxMatchesTheReferenceScores) {
  std::mt19937 rng(11);
  const int64_t classes = 3, cols = 5, rows = 40;
  const Forest f = random_forest(rng, 9, classes, true);
  const std::vector<float> x = random_inputs(rng, rows * cols);
  const std::vector<float> base = {0.1f, 0.2f, -0.3f};
  const std::vector<float> raw = reference_scores(f, x, rows, cols, classes, "SUM", base);
  for (int threads : {1, 4}) {
    NodeTest t("TreeEnsembleClassifier", 3, "ai.onnx.ml");
    add_nodes(t, f)
        .attr("class_treeids", f.w_trees)
        .attr("class_nodeids", f.w_nodes)
        .attr("class_ids", f.w_ids)
        .attr("class_weights", f.weights)
        .attr("classlabels_strings", std::vector<std::string>{"a", "b", "c"})
        .attr("base_values", base)
        .attr("post_transform", "SOFTMAX")
        .input(make_tensor<float>({rows, cols}, x))
        .outputs(2)
        .threads(threads);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const std::vector<float> z = to_vector<float>(out->at(1));
    const std::vector<std::string> y = to_vector<std::string>(out->at(0));
    for (int64_t r = 0; r < rows; ++r) {
      const float* s = raw.data() + r * classes;
      const float top = *std::max_element(s, s + classes);
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(s[c] - top);
      int64_t best = 0;
      for (int64_t c = 0; c < classes; ++c) {
        EXPECT_NEAR(z[static_cast<size_t>(r * classes + c)], std::exp(s[c] - top) / sum, 1e-5) << r << "," << c;
        if (s[c] > s[best]) best = c;
      }
      EXPECT_EQ(y[static_cast<size_t>(r)], std::string(1, static_cast<char>('a' + best))) << r;
    }
  }
}

// A stump on feature 0 at 0 whose leaves vote for class 0 only: the binary
// case, as gradient boosting writes it.
Result<std::vector<Tensor>> binary_stump(const std::string& post, std::vector<float> weights, std::vector<float> x) {
  NodeTest t("TreeEnsembleClassifier", 1, "ai.onnx.ml");
  t.attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
      .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
      .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
      .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
      .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr("nodes_values", std::vector<float>{0, 0, 0})
      .attr("class_treeids", std::vector<int64_t>{0, 0})
      .attr("class_nodeids", std::vector<int64_t>{1, 2})
      .attr("class_ids", std::vector<int64_t>{0, 0})
      .attr("class_weights", std::move(weights))
      .attr("classlabels_int64s", std::vector<int64_t>{4, 9})
      .attr("base_values", std::vector<float>{0.25f})
      .attr("post_transform", post)
      .input(make_tensor<float>({static_cast<int64_t>(x.size()), 1}, x))
      .outputs(2);
  return t.run();
}

TEST(MlTreeEnsembleClassifier, BinaryCaseScoresTheOtherClassAsItsComplement) {
  // Scores s = 0.25 + (x <= 0 ? -2 : 1.5).
  auto logit = binary_stump("LOGISTIC", {-2.0f, 1.5f}, {-1, 1});
  ASSERT_TRUE(logit.ok()) << logit.status().to_string();
  const std::vector<float> z = to_vector<float>(logit->at(1));
  const double s0 = -1.75, s1 = 1.75;
  const std::vector<float> want = {static_cast<float>(logistic(-s0)), static_cast<float>(logistic(s0)),
                                   static_cast<float>(logistic(-s1)), static_cast<float>(logistic(s1))};
  expect_all_near(z, want, 1e-6f);
  EXPECT_EQ(to_vector<int64_t>(logit->at(0)), (std::vector<int64_t>{4, 9}));
  // NONE: [1 - s, s], labelled by the larger.
  auto none = binary_stump("NONE", {0.1f, 0.6f}, {-1, 1});
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_all_near(to_vector<float>(none->at(1)), {1 - 0.35f, 0.35f, 1 - 0.85f, 0.85f}, 1e-6f);
  EXPECT_EQ(to_vector<int64_t>(none->at(0)), (std::vector<int64_t>{4, 9}));
}

// ---- TreeEnsemble (v5) ------------------------------------------------------------------

// Two trees on feature 0: tree 0 splits at 0.5 (leaves 1 and 3 to target
// 0), tree 1 is a single leaf (5 to target 1) and splits nothing.
NodeTest two_trees(int64_t aggregate, int64_t post, std::vector<int64_t> trues = {0, 2}) {
  NodeTest t("TreeEnsemble", 5, "ai.onnx.ml");
  t.attr("n_targets", int64_t{2})
      .attr("aggregate_function", aggregate)
      .attr("post_transform", post)
      .attr("tree_roots", std::vector<int64_t>{0, 1})
      .attr("nodes_modes", make_tensor<uint8_t>({2}, {1, 0}))
      .attr("nodes_featureids", std::vector<int64_t>{0, 0})
      .attr("nodes_splits", make_tensor<float>({2}, {0.5f, 0}))
      .attr("nodes_truenodeids", std::move(trues))
      .attr("nodes_trueleafs", std::vector<int64_t>{1, 1})
      .attr("nodes_falsenodeids", std::vector<int64_t>{1, 2})
      .attr("nodes_falseleafs", std::vector<int64_t>{1, 1})
      .attr("leaf_targetids", std::vector<int64_t>{0, 0, 1})
      .attr("leaf_weights", make_tensor<float>({3}, {1, 3, 5}));
  return t;
}

TEST(MlTreeEnsemble, SingleLeafTreesAverageAndPostTransform) {
  // x < 0.5 -> [1, 5]; else [3, 5]; a NaN goes false (LT fails).
  auto sum = two_trees(1, 0).input(make_tensor<float>({3, 1}, {0, 1, kNan})).run();
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  EXPECT_EQ(to_vector<float>(sum->at(0)), (std::vector<float>{1, 5, 3, 5, 3, 5}));
  auto average = two_trees(0, 0).input(make_tensor<double>({1, 1}, {0})).run();
  ASSERT_TRUE(average.ok()) << average.status().to_string();
  EXPECT_EQ(to_vector<double>(average->at(0)), (std::vector<double>{0.5, 2.5}));
  // One leaf per target per row: MIN gives the leaves' weights.
  auto minimum = two_trees(2, 0).input(make_tensor<float>({1, 1}, {0})).run();
  ASSERT_TRUE(minimum.ok()) << minimum.status().to_string();
  EXPECT_EQ(to_vector<float>(minimum->at(0)), (std::vector<float>{1, 5}));
  // LOGISTIC (2) on [1, 5].
  auto logit = two_trees(1, 2).input(make_tensor<float>({1, 1}, {0})).run();
  ASSERT_TRUE(logit.ok()) << logit.status().to_string();
  expect_all_near(to_vector<float>(logit->at(0)), {static_cast<float>(logistic(1)), static_cast<float>(logistic(5))},
                  1e-6f);
  Tensor half = Tensor::allocate(DataType::kFloat16, Shape{1, 1}).value();
  half.data<Float16>()[0] = Float16{0x3C00};  // 1.0
  auto f16 = two_trees(1, 0).input(half).run();
  ASSERT_TRUE(f16.ok()) << f16.status().to_string();
  EXPECT_EQ(f16->at(0).dtype(), DataType::kFloat16);
  EXPECT_EQ(f16->at(0).data<Float16>()[0].bits, 0x4200);  // 3.0
}

TEST(MlTreeEnsemble, RejectsOutOfRangeChildren) {
  auto out = two_trees(1, 0, {0, 7}).input(make_tensor<float>({1, 1}, {0})).run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().to_string().find("out of range"), std::string::npos) << out.status().to_string();
}

}  // namespace
}  // namespace sy
