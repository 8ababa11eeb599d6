// TfIdfVectorizer against a brute-force reference: every n-gram of every
// length and skip is cut out of the row and looked up in a map of the
// pool, without a trie.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

struct Config {
  std::string mode = "TF";
  int64_t min_gram = 1;
  int64_t max_gram = 2;
  int64_t max_skip = 0;
  std::vector<int64_t> ngram_counts;   // start of each length's n-grams in the pool
  std::vector<int64_t> ngram_indexes;  // output coordinate of each n-gram
  std::vector<int64_t> pool;
  std::vector<float> weights;
};

// rows x width items; the output is rows x (max(ngram_indexes) + 1).
std::vector<float> reference(const Config& c, const std::vector<int64_t>& x, int64_t rows, int64_t width) {
  int64_t out_size = 0;
  for (int64_t i : c.ngram_indexes) out_size = std::max(out_size, i + 1);
  // The pool's n-grams of the lengths asked for; a repeated one keeps its
  // last index.
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t number = 0;
  for (size_t level = 0; level < c.ngram_counts.size(); ++level) {
    const auto n = static_cast<int64_t>(level + 1);
    const int64_t begin = c.ngram_counts[level];
    const int64_t end =
        level + 1 < c.ngram_counts.size() ? c.ngram_counts[level + 1] : static_cast<int64_t>(c.pool.size());
    for (int64_t at = begin; at < end; at += n, ++number) {
      if (n < c.min_gram || n > c.max_gram) continue;
      grams[std::vector<int64_t>(c.pool.begin() + at, c.pool.begin() + at + n)] =
          c.ngram_indexes[static_cast<size_t>(number)];
    }
  }
  std::vector<float> y;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> counts(static_cast<size_t>(out_size), 0);
    for (int64_t n = c.min_gram; n <= c.max_gram; ++n) {
      // 1-grams do not depend on the skip: counted once.
      const int64_t last_skip = n == 1 ? 0 : c.max_skip;
      for (int64_t skip = 0; skip <= last_skip; ++skip) {
        for (int64_t start = 0; start + (n - 1) * (skip + 1) < width; ++start) {
          std::vector<int64_t> gram;
          for (int64_t k = 0; k < n; ++k) gram.push_back(x[static_cast<size_t>(r * width + start + k * (skip + 1))]);
          auto it = grams.find(gram);
          if (it != grams.end()) ++counts[static_cast<size_t>(it->second)];
        }
      }
    }
    for (int64_t i = 0; i < out_size; ++i) {
      const auto count = static_cast<double>(counts[static_cast<size_t>(i)]);
      const double w = c.weights.empty() ? 1.0 : c.weights[static_cast<size_t>(i)];
      if (c.mode == "TF") y.push_back(static_cast<float>(count));
      if (c.mode == "IDF") y.push_back(count > 0 ? static_cast<float>(w) : 0.0f);
      if (c.mode == "TFIDF") y.push_back(static_cast<float>(w * count));
    }
  }
  return y;
}

NodeTest node(const Config& c, Tensor x, bool string_pool = false) {
  NodeTest t("TfIdfVectorizer", 9);
  t.input(std::move(x))
      .attr("mode", c.mode)
      .attr("min_gram_length", c.min_gram)
      .attr("max_gram_length", c.max_gram)
      .attr("max_skip_count", c.max_skip)
      .attr("ngram_counts", c.ngram_counts)
      .attr("ngram_indexes", c.ngram_indexes);
  if (string_pool) {
    std::vector<std::string> pool;
    for (int64_t v : c.pool) pool.push_back("w" + std::to_string(v));
    t.attr("pool_strings", pool);
  } else {
    t.attr("pool_int64s", c.pool);
  }
  if (!c.weights.empty()) t.attr("weights", c.weights);
  return t;
}

Tensor as_strings(const Shape& shape, const std::vector<int64_t>& x) {
  std::vector<std::string> s;
  for (int64_t v : x) s.push_back("w" + std::to_string(v));
  return make_tensor<std::string>(shape, s);
}

std::vector<int32_t> as_int32(const std::vector<int64_t>& x) { return std::vector<int32_t>(x.begin(), x.end()); }

// The spec's example: 2-grams with two items skipped.
TEST(TfIdfVectorizerKernel, SpecExampleSkips) {
  Config c;
  c.min_gram = 2;
  c.max_gram = 2;
  c.max_skip = 2;
  c.ngram_counts = {0, 0};
  c.pool = {94, 12, 17, 28, 94, 17};
  c.ngram_indexes = {0, 1, 2};
  const std::vector<int64_t> x = {94, 17, 36, 12, 28};
  auto out = node(c, make_tensor<int64_t>({5}, x)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // [94, 12] (skip 2), [17, 28] (skip 2), [94, 17] (skip 0): once each.
  expect_tensor_near(out->at(0), make_tensor<float>({3}, {1, 1, 1}));
  EXPECT_EQ(reference(c, x, 1, 5), (std::vector<float>{1, 1, 1}));
}

TEST(TfIdfVectorizerKernel, RandomPoolsMatchTheBruteForce) {
  std::mt19937 rng(7);
  auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    Config c;
    c.mode = trial % 3 == 0 ? "TF" : trial % 3 == 1 ? "IDF" : "TFIDF";
    c.max_gram = draw(1, 3);
    c.min_gram = draw(1, c.max_gram);
    c.max_skip = draw(0, 3);
    // A few n-grams of each length 1..3 over a small vocabulary, so that
    // the rows hit them often; a repeat now and then.
    const int64_t vocabulary = 5;
    for (int64_t n = 1; n <= 3; ++n) {
      c.ngram_counts.push_back(static_cast<int64_t>(c.pool.size()));
      const int64_t count = draw(0, 6);
      for (int64_t g = 0; g < count * n; ++g) c.pool.push_back(draw(0, vocabulary - 1));
    }
    const int64_t ngrams = (c.ngram_counts[1] - c.ngram_counts[0]) + (c.ngram_counts[2] - c.ngram_counts[1]) / 2 +
                           (static_cast<int64_t>(c.pool.size()) - c.ngram_counts[2]) / 3;
    if (ngrams == 0) continue;
    // Output coordinates shuffled, some shared, some left unused.
    for (int64_t i = 0; i < ngrams; ++i) c.ngram_indexes.push_back(draw(0, ngrams + 1));
    c.ngram_indexes.push_back(ngrams + 2);
    if (trial % 2 == 1)
      for (int64_t i = 0; i <= ngrams + 2; ++i) c.weights.push_back(0.25f * static_cast<float>(draw(1, 8)));
    const int64_t rows = draw(1, 9);
    const int64_t width = draw(0, 12);
    std::vector<int64_t> x;
    for (int64_t i = 0; i < rows * width; ++i) x.push_back(draw(0, vocabulary));  // `vocabulary` is in no n-gram
    const std::vector<float> expected = reference(c, x, rows, width);
    const Shape shape{rows, width};
    const Shape out_shape{rows, static_cast<int64_t>(expected.size()) / rows};
    const std::string what = "trial " + std::to_string(trial);
    auto out = node(c, make_tensor<int64_t>(shape, x)).threads(2).run();
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>(out_shape, expected));
    out = node(c, make_tensor<int32_t>(shape, as_int32(x))).run();
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>(out_shape, expected));
    out = node(c, as_strings(shape, x), true).threads(2).run();
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>(out_shape, expected));
  }
}

TEST(TfIdfVectorizerKernel, OneDimensionalScalarAndEmptyInputs) {
  Config c;
  c.min_gram = 1;
  c.max_gram = 1;
  c.ngram_counts = {0};
  c.pool = {3, 4};
  c.ngram_indexes = {1, 0};
  auto out = node(c, make_tensor<int64_t>({4}, {4, 4, 3, 9})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2}, {2, 1}));
  out = node(c, make_tensor<int64_t>({}, {3})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2}, {0, 1}));
  out = node(c, make_tensor<int64_t>({3, 0}, {})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({3, 2}, {0, 0, 0, 0, 0, 0}));
  // A huge skip count is no different from one past the row's length.
  c.max_skip = INT64_MAX;
  c.max_gram = 2;
  c.ngram_counts = {0, 2};
  c.pool = {3, 4, 4, 3};
  c.ngram_indexes = {1, 0, 2};
  out = node(c, make_tensor<int64_t>({4}, {4, 1, 1, 3})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({3}, {1, 1, 1}));
}

TEST(TfIdfVectorizerKernel, RejectsInconsistentAttributesAndInputs) {
  Config c;
  c.ngram_counts = {0, 2};
  c.pool = {1, 2, 1, 2};
  c.ngram_indexes = {0, 1, 2};
  const Tensor x = make_tensor<int64_t>({3}, {1, 2, 1});
  ASSERT_TRUE(node(c, x).run().ok());
  Config bad = c;
  bad.mode = "BM25";
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.pool = {1, 2, 1};  // the 2-grams take an odd number of items
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.ngram_indexes = {0, 1};  // one short
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.ngram_counts = {0, 5};  // past the pool
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.ngram_indexes = {0, -1, 2};
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.mode = "IDF";
  bad.weights = {1.0f, 2.0f};  // fewer than the output's 3 coordinates
  EXPECT_FALSE(node(bad, x).run().ok());
  bad = c;
  bad.min_gram = 3;  // above max_gram_length
  EXPECT_FALSE(node(bad, x).run().ok());
  // A string input for an int64 pool, and the other way round.
  EXPECT_FALSE(node(c, as_strings({3}, {1, 2, 1})).run().ok());
  EXPECT_FALSE(node(c, x, true).run().ok());
  EXPECT_FALSE(node(c, make_tensor<int64_t>({1, 1, 3}, {1, 2, 1})).run().ok());
  EXPECT_FALSE(node(c, make_tensor<int64_t>({0, 3}, {})).run().ok());
  // Both pools.
  EXPECT_FALSE(node(c, x).attr("pool_strings", std::vector<std::string>{"a"}).run().ok());
}

}  // namespace
}  // namespace sy
