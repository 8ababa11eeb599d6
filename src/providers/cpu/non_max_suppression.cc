// NonMaxSuppression, as ONNX's reference does it: per (batch, class), the
// boxes scoring above score_threshold (when given) are sorted once by
// descending score (ties: lower box index first), then taken greedily, each
// kept unless its IoU with a box already kept for that class exceeds
// iou_threshold, until max_output_boxes_per_class are kept.
//
// Box corners are normalised once per run (both formats, flipped corners),
// in float as the reference computes them, so a pair's IoU is the
// reference's to the last bit: the boundary cases (IoU equal to the
// threshold) fall the same way. The (batch, class) pairs are independent and
// run in parallel, each writing its picks to its own slot; one serial pass
// then packs them into the output in (batch, class, rank) order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

struct Corners {
  float x_min, y_min, x_max, y_max, area;
};

struct Candidate {
  float score;
  int32_t box;
};

// Descending score, then ascending box index. NaN scores sort after every
// number (a strict weak order std::sort can rely on), so they are picked
// last, if at all.
bool ranks_before(const Candidate& a, const Candidate& b) {
  const bool a_nan = std::isnan(a.score);
  const bool b_nan = std::isnan(b.score);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a.score != b.score) return a.score > b.score;
  return a.box < b.box;
}

Corners corners_of(const float* box, bool center_point_box) {
  Corners c;
  if (center_point_box) {
    // [x_center, y_center, width, height]
    const float half_w = box[2] / 2;
    const float half_h = box[3] / 2;
    c.x_min = box[0] - half_w;
    c.x_max = box[0] + half_w;
    c.y_min = box[1] - half_h;
    c.y_max = box[1] + half_h;
  } else {
    // [y1, x1, y2, x2], either corner first.
    c.x_min = box[1] >= box[3] ? box[3] : box[1];
    c.x_max = box[1] >= box[3] ? box[1] : box[3];
    c.y_min = box[0] >= box[2] ? box[2] : box[0];
    c.y_max = box[0] >= box[2] ? box[0] : box[2];
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

// Whether `a` overlaps `b` by more than the threshold. Empty and degenerate
// boxes never suppress anything.
bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min);
  const float ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min);
  const float iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
  if (intersection <= 0) return false;
  const float union_area = a.area + b.area - intersection;
  if (a.area <= 0 || b.area <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  NonMaxSuppressionKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t center = ctx.node().attr_int("center_point_box", 0);
    if (center != 0 && center != 1) {
      status = ctx.error("center_point_box must be 0 or 1, got " + std::to_string(center));
      return;
    }
    center_point_box_ = center == 1;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* boxes = ctx.input(0);
    const Tensor* scores = ctx.input(1);
    if (boxes == nullptr || scores == nullptr) return kernel_error(ctx, "inputs boxes and scores are required");
    if (boxes->dtype() != DataType::kFloat || scores->dtype() != DataType::kFloat)
      return kernel_error(ctx,
                          "boxes and scores must be float, got " + boxes->describe() + " and " + scores->describe());
    const Shape& bs = boxes->shape();
    const Shape& ss = scores->shape();
    if (bs.rank() != 3 || bs[2] != 4)
      return kernel_error(ctx, describe_input(ctx, 0, "boxes") + " must have shape [batches, boxes, 4]");
    if (ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
      return kernel_error(ctx, describe_input(ctx, 1, "scores") + " must have shape [batches, classes, boxes] = [" +
                                   std::to_string(bs[0]) + ", classes, " + std::to_string(bs[1]) + "]");
    const int64_t batches = bs[0];
    const int64_t num_boxes = bs[1];
    const int64_t classes = ss[1];
    if (num_boxes > std::numeric_limits<int32_t>::max())
      return kernel_invalid_argument(ctx, "boxes holds " + std::to_string(num_boxes) + " boxes per batch; at most " +
                                              std::to_string(std::numeric_limits<int32_t>::max()) + " are supported");

    int64_t max_per_class = 0;
    float iou_threshold = 0.0f;
    float score_threshold = 0.0f;
    bool has_score_threshold = false;
    SY_RETURN_IF_ERROR(read_scalar_inputs(ctx, max_per_class, iou_threshold, score_threshold, has_score_threshold));

    const int64_t cap = std::min(max_per_class, num_boxes);
    const int64_t pairs = batches * classes;
    if (cap == 0 || pairs == 0) return ctx.allocate_output(0, DataType::kInt64, Shape({0, 3})).status();

    ThreadPool& pool = ctx.thread_pool();
    const int64_t lanes = std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), pairs));
    ScratchCarver carver;
    const size_t corners_at = carver.add<Corners>(batches * num_boxes);
    const size_t candidates_at = carver.add<Candidate>(lanes * num_boxes);
    const size_t picks_at = carver.add<int32_t>(pairs * cap);
    const size_t counts_at = carver.add<int64_t>(pairs);
    SY_ASSIGN_OR_RETURN(void* base, ctx.scratch(carver.total()));
    auto* corners = ScratchCarver::pointer<Corners>(base, corners_at);
    auto* candidates = ScratchCarver::pointer<Candidate>(base, candidates_at);
    auto* picks = ScratchCarver::pointer<int32_t>(base, picks_at);
    auto* counts = ScratchCarver::pointer<int64_t>(base, counts_at);

    const float* box_data = boxes->data<float>();
    for (int64_t i = 0; i < batches * num_boxes; ++i) corners[i] = corners_of(box_data + i * 4, center_point_box_);

    const float* score_data = scores->data<float>();
    pool.run_tasks(lanes, pairs, [&](int64_t lane, int64_t pair) {
      const int64_t batch = pair / classes;
      const float* class_scores = score_data + pair * num_boxes;
      const Corners* batch_corners = corners + batch * num_boxes;
      Candidate* cand = candidates + lane * num_boxes;
      int64_t n = 0;
      for (int64_t b = 0; b < num_boxes; ++b) {
        if (has_score_threshold && !(class_scores[b] > score_threshold)) continue;
        cand[n++] = Candidate{class_scores[b], static_cast<int32_t>(b)};
      }
      std::sort(cand, cand + n, ranks_before);
      int32_t* kept = picks + pair * cap;
      int64_t kept_count = 0;
      for (int64_t i = 0; i < n && kept_count < cap; ++i) {
        const Corners& c = batch_corners[cand[i].box];
        bool keep = true;
        for (int64_t k = 0; k < kept_count && keep; ++k) keep = !suppresses(c, batch_corners[kept[k]], iou_threshold);
        if (keep) kept[kept_count++] = cand[i].box;
      }
      counts[pair] = kept_count;
    });

    int64_t total = 0;
    for (int64_t p = 0; p < pairs; ++p) total += counts[p];
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, Shape({total, 3})));
    int64_t* o = out->data<int64_t>();
    for (int64_t p = 0; p < pairs; ++p) {
      for (int64_t k = 0; k < counts[p]; ++k) {
        *o++ = p / classes;
        *o++ = p % classes;
        *o++ = picks[p * cap + k];
      }
    }
    return ok_status();
  }

 private:
  // Inputs 2 to 4, each optional and holding one value when present (an
  // empty tensor counts as absent, as in the reference).
  static Status read_scalar_inputs(const KernelContext& ctx, int64_t& max_per_class, float& iou_threshold,
                                   float& score_threshold, bool& has_score_threshold) {
    static const char* const kNames[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
    for (size_t i = 2; i < 5; ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr || t->num_elements() == 0) continue;
      const DataType want = i == 2 ? DataType::kInt64 : DataType::kFloat;
      if (t->dtype() != want || t->num_elements() != 1)
        return kernel_error(ctx, describe_input(ctx, i, kNames[i - 2]) + " must hold one " +
                                     std::string(data_type_name(want)) + " value");
    }
    if (const Tensor* t = ctx.input(2); t != nullptr && t->num_elements() == 1)
      max_per_class = std::max<int64_t>(t->data<int64_t>()[0], 0);
    if (const Tensor* t = ctx.input(3); t != nullptr && t->num_elements() == 1) {
      iou_threshold = t->data<float>()[0];
      if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f))
        return kernel_error(ctx, "iou_threshold must be in [0, 1], got " + std::to_string(iou_threshold));
    }
    if (const Tensor* t = ctx.input(4); t != nullptr && t->num_elements() == 1) {
      score_threshold = t->data<float>()[0];
      has_score_threshold = true;
    }
    return ok_status();
  }

  bool center_point_box_ = false;
};

const KernelDef kNonMaxSuppressionKernels[] = {
    {"", "NonMaxSuppression", 10, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<NonMaxSuppressionKernel>},
};

}  // namespace

std::span<const KernelDef> non_max_suppression_kernels() { return kNonMaxSuppressionKernels; }

}  // namespace sy::cpu
