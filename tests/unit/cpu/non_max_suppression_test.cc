// NonMaxSuppression against hand-worked cases (the spec's examples) and a
// brute-force reference written here: repeatedly take the best remaining
// box, drop every remaining box overlapping it too much (IoU in double).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

// The spec's six boxes: two clusters of three and one apart ([y1, x1, y2, x2]).
const std::vector<float> kBoxes = {0.0f, 0.0f,  1.0f, 1.0f,  0.0f, 0.1f,  1.0f, 1.1f,  0.0f, -0.1f,  1.0f, 0.9f,
                                   0.0f, 10.0f, 1.0f, 11.0f, 0.0f, 10.1f, 1.0f, 11.1f, 0.0f, 100.0f, 1.0f, 101.0f};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

Result<std::vector<Tensor>> run_nms(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches,
                                    int64_t classes, int64_t n, int64_t max_out, float iou, float score_threshold,
                                    int center = 0, int threads = 1) {
  return NodeTest("NonMaxSuppression", 11)
      .input(make_tensor<float>({batches, n, 4}, boxes))
      .input(make_tensor<float>({batches, classes, n}, scores))
      .input(make_tensor<int64_t>({1}, {max_out}))
      .input(make_tensor<float>({1}, {iou}))
      .input(make_tensor<float>({1}, {score_threshold}))
      .attr("center_point_box", center)
      .threads(threads)
      .run();
}

TEST(NonMaxSuppression, SpecExamples) {
  // Suppress by IoU: 3 (0.95) keeps, 0 (0.9) keeps, 1 overlaps 0, 5 is apart.
  auto out = run_nms(kBoxes, kScores, 1, 1, 6, 3, 0.5f, 0.0f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // A score threshold of 0.4 drops box 5; the limit of 2 stops after two.
  out = run_nms(kBoxes, kScores, 1, 1, 6, 3, 0.5f, 0.4f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({2, 3}, {0, 0, 3, 0, 0, 0}));
  out = run_nms(kBoxes, kScores, 1, 1, 6, 2, 0.5f, 0.0f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({2, 3}, {0, 0, 3, 0, 0, 0}));
}

TEST(NonMaxSuppression, CenterPointFormatMatchesCorners) {
  // The same boxes as [x_center, y_center, width, height].
  std::vector<float> centers;
  for (size_t b = 0; b < kBoxes.size(); b += 4) {
    const float y1 = kBoxes[b], x1 = kBoxes[b + 1], y2 = kBoxes[b + 2], x2 = kBoxes[b + 3];
    centers.insert(centers.end(), {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1});
  }
  auto out = run_nms(centers, kScores, 1, 1, 6, 3, 0.5f, 0.0f, 1);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NonMaxSuppression, TiesGoToTheLowerIndexAndFlippedCornersCount) {
  // Identical boxes, equal scores: box 0 wins and suppresses the others.
  std::vector<float> boxes;
  for (int i = 0; i < 4; ++i) boxes.insert(boxes.end(), {1.0f, 1.0f, 0.0f, 0.0f});  // flipped corners
  auto out = run_nms(boxes, {0.5f, 0.5f, 0.5f, 0.5f}, 1, 1, 4, 10, 0.5f, 0.0f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({1, 3}, {0, 0, 0}));
  // IoU exactly at the threshold does not suppress (strictly greater only):
  // [0,0,1,1] and [0,0,1,0.5] have IoU 0.5.
  out = run_nms({0, 0, 1, 1, 0, 0, 1, 0.5f}, {0.9f, 0.8f}, 1, 1, 2, 10, 0.5f, 0.0f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({2, 3}, {0, 0, 0, 0, 0, 1}));
}

TEST(NonMaxSuppression, OmittedInputsSelectNothing) {
  // max_output_boxes_per_class defaults to 0; a negative one is 0 too.
  auto out = NodeTest("NonMaxSuppression", 10)
                 .input(make_tensor<float>({1, 6, 4}, kBoxes))
                 .input(make_tensor<float>({1, 1, 6}, kScores))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), Shape({0, 3}));
  out = run_nms(kBoxes, kScores, 1, 1, 6, -5, 0.5f, 0.0f);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), Shape({0, 3}));
  // Without iou_threshold (0): any overlap suppresses; without
  // score_threshold every box is a candidate.
  out = NodeTest("NonMaxSuppression", 11)
            .input(make_tensor<float>({1, 6, 4}, kBoxes))
            .input(make_tensor<float>({1, 1, 6}, kScores))
            .input(make_tensor<int64_t>({1}, {10}))
            .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

double iou(const float* a, const float* b) {
  auto lo = [](float p, float q) { return std::min<double>(p, q); };
  auto hi = [](float p, float q) { return std::max<double>(p, q); };
  const double ay1 = lo(a[0], a[2]), ay2 = hi(a[0], a[2]), ax1 = lo(a[1], a[3]), ax2 = hi(a[1], a[3]);
  const double by1 = lo(b[0], b[2]), by2 = hi(b[0], b[2]), bx1 = lo(b[1], b[3]), bx2 = hi(b[1], b[3]);
  const double w = std::min(ax2, bx2) - std::max(ax1, bx1);
  const double h = std::min(ay2, by2) - std::max(ay1, by1);
  if (w <= 0 || h <= 0) return 0.0;
  const double inter = w * h;
  return inter / ((ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter);
}

// Greedy NMS by elimination: the best remaining box is kept, and every box
// overlapping it by more than `iou_threshold` leaves the pool.
std::vector<int64_t> reference(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches,
                               int64_t classes, int64_t n, int64_t max_out, double iou_threshold,
                               double score_threshold) {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores.data() + (b * classes + c) * n;
      std::vector<bool> alive(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) alive[static_cast<size_t>(i)] = s[i] > score_threshold;
      for (int64_t kept = 0; kept < max_out; ++kept) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; ++i)
          if (alive[static_cast<size_t>(i)] && (best < 0 || s[i] > s[best])) best = i;
        if (best < 0) break;
        out.insert(out.end(), {b, c, best});
        for (int64_t i = 0; i < n; ++i)
          if (alive[static_cast<size_t>(i)] &&
              (i == best || iou(&boxes[static_cast<size_t>((b * n + i) * 4)],
                                &boxes[static_cast<size_t>((b * n + best) * 4)]) > iou_threshold))
            alive[static_cast<size_t>(i)] = false;
      }
    }
  }
  return out;
}

TEST(NonMaxSuppression, RandomBoxesMatchTheReference) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> pos(0.0f, 20.0f), size(0.5f, 6.0f), score(0.0f, 1.0f);
  for (int threads : {1, 2}) {
    const int64_t batches = 3, classes = 4, n = 60;
    std::vector<float> boxes, scores;
    for (int64_t i = 0; i < batches * n; ++i) {
      const float y = pos(gen), x = pos(gen);
      // Half the boxes with their corners swapped.
      if (i % 2 == 0) {
        boxes.insert(boxes.end(), {y, x, y + size(gen), x + size(gen)});
      } else {
        boxes.insert(boxes.end(), {y + size(gen), x + size(gen), y, x});
      }
    }
    for (int64_t i = 0; i < batches * classes * n; ++i) scores.push_back(score(gen));
    for (const auto& [max_out, iou_t, score_t] :
         {std::tuple{int64_t{5}, 0.3f, 0.2f}, {int64_t{100}, 0.5f, 0.0f}, {int64_t{1000}, 0.0f, 0.9f}}) {
      auto out = run_nms(boxes, scores, batches, classes, n, max_out, iou_t, score_t, 0, threads);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      const std::vector<int64_t> want = reference(boxes, scores, batches, classes, n, max_out, iou_t, score_t);
      EXPECT_EQ(out->at(0).shape(), Shape({static_cast<int64_t>(want.size() / 3), 3}));
      EXPECT_EQ(to_vector<int64_t>(out->at(0)), want) << "max " << max_out << " iou " << iou_t << " score " << score_t;
    }
  }
}

TEST(NonMaxSuppression, BadInputsAreErrors) {
  // scores disagreeing with boxes on the box count.
  EXPECT_FALSE(NodeTest("NonMaxSuppression", 11)
                   .input(make_tensor<float>({1, 6, 4}, kBoxes))
                   .input(make_tensor<float>({1, 1, 5}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}))
                   .dynamic_shapes()
                   .run()
                   .ok());
  // iou_threshold outside [0, 1].
  EXPECT_FALSE(run_nms(kBoxes, kScores, 1, 1, 6, 3, 1.5f, 0.0f).ok());
  // center_point_box other than 0 or 1.
  EXPECT_FALSE(run_nms(kBoxes, kScores, 1, 1, 6, 3, 0.5f, 0.0f, 2).ok());
  // max_output_boxes_per_class with two values.
  EXPECT_FALSE(NodeTest("NonMaxSuppression", 11)
                   .input(make_tensor<float>({1, 6, 4}, kBoxes))
                   .input(make_tensor<float>({1, 1, 6}, kScores))
                   .input(make_tensor<int64_t>({2}, {1, 2}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
