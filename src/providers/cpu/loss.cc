// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Both see their scores as [N, C, D] (D the product of d1..dk) and their
// labels as [N, D]. At every position (n, d) whose label t is not
// ignore_index the loss is -weight[t] * logp[n, t, d], where logp is the
// input itself for NegativeLogLikelihoodLoss and its LogSoftmax along C for
// SoftmaxCrossEntropyLoss (the softmax family's loop: the maximum is
// subtracted first and the exponentials summed in double, so large scores
// neither overflow nor lose the small terms). The log-probabilities go to
// SoftmaxCrossEntropyLoss's second output when it is asked for, else to
// scratch.
//
// "sum" and "mean" add in double over fixed blocks of positions and then
// add the blocks' sums in order, so the result does not depend on the
// number of threads. "mean" divides by the sum of the weights of the
// positions not ignored (their count without weights); when every position
// is ignored that is 0 / 0, NaN, as in the ONNX reference and PyTorch.
#include <algorithm>
#include <cstdint>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/cpu/softmax.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Reduction { kNone, kSum, kMean };

// Positions per block of a reduction: the unit of both the split among
// threads and the fixed summation order.
inline constexpr int64_t kBlock = 4096;

// One run's operands, seen as [N, C, D] scores and [N, D] labels.
template <typename T, typename Tind>
struct LossOperands {
  const T* logp;
  const Tind* labels;
  const T* weight;  // nullptr: every class weighs 1
  int64_t classes;  // C
  int64_t inner;    // D
  bool ignoring;
  int64_t ignore_index;
};

// The losses of positions [begin, end): into out[p] when out is not null,
// and their sum and the sum of their weights into the two accumulators.
template <typename T, typename Tind>
void pick_losses(const LossOperands<T, Tind>& op, int64_t begin, int64_t end, T* out, double& loss_sum,
                 double& weight_sum) {
  using C = compute_t<T>;
  int64_t n = begin / op.inner;
  int64_t d = begin - n * op.inner;
  for (int64_t p = begin; p < end; ++p) {
    const auto t = static_cast<int64_t>(op.labels[p]);
    if (op.ignoring && t == op.ignore_index) {
      if (out != nullptr) out[p] = store<T>(C{0});
    } else {
      const C w = op.weight != nullptr ? load(op.weight[t]) : C{1};
      const C loss = -load(op.logp[(n * op.classes + t) * op.inner + d]) * w;
      if (out != nullptr) out[p] = store<T>(loss);
      loss_sum += static_cast<double>(loss);
      weight_sum += static_cast<double>(w);
    }
    if (++d == op.inner) {
      d = 0;
      ++n;
    }
  }
}

// The inputs' names in the spec, for messages.
struct InputNames {
  const char* scores;
  const char* labels;
  const char* weight;
};
inline constexpr InputNames kNllNames{"input", "target", "weight"};
inline constexpr InputNames kSceNames{"scores", "labels", "weights"};

// Every label is a class in [0, C) or ignore_index; the kernels index with
// them, so a bad one is an error naming its position, not a wild read.
template <typename Tind>
Status check_labels(const KernelContext& ctx, const char* name, const Tind* labels, int64_t count, int64_t classes,
                    bool ignoring, int64_t ignore_index) {
  for (int64_t p = 0; p < count; ++p) {
    const auto t = static_cast<int64_t>(labels[p]);
    if ((t >= 0 && t < classes) || (ignoring && t == ignore_index)) continue;
    return kernel_invalid_argument(
        ctx, "input 1 (" + std::string(name) + ") holds " + std::to_string(t) + " at flat index " + std::to_string(p) +
                 ", not a class in [0, " + std::to_string(classes) + ")" +
                 (ignoring ? " nor ignore_index " + std::to_string(ignore_index) : std::string(" (no ignore_index)")));
  }
  return ok_status();
}

class LossKernel final : public Kernel {
 public:
  LossKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    softmax_ = node.op_type == "SoftmaxCrossEntropyLoss";
    names_ = softmax_ ? kSceNames : kNllNames;
    const std::string reduction = node.attr_string("reduction", "mean");
    if (reduction == "none") {
      reduction_ = Reduction::kNone;
    } else if (reduction == "sum") {
      reduction_ = Reduction::kSum;
    } else if (reduction == "mean") {
      reduction_ = Reduction::kMean;
    } else {
      status = ctx.error("attribute reduction must be \"none\", \"sum\" or \"mean\", got \"" + reduction + "\"");
      return;
    }
    ignoring_ = node.has_attr("ignore_index");
    ignore_index_ = node.attr_int("ignore_index", 0);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* scores = ctx.input(0);
    const Tensor* labels = ctx.input(1);
    const Tensor* weight = ctx.input(2);
    if (scores == nullptr || labels == nullptr)
      return kernel_error(ctx, "inputs 0 (" + std::string(names_.scores) + ") and 1 (" + names_.labels +
                                   ") are required");
    SY_RETURN_IF_ERROR(check_shapes(ctx, *scores, *labels, weight));
    const Shape& shape = scores->shape();
    const int64_t classes = shape[1];
    const int64_t inner = shape.size_from(2);
    const int64_t positions = labels->num_elements();
    const DataType dtype = scores->dtype();

    SY_ASSIGN_OR_RETURN(Tensor * loss, ctx.allocate_output(0, dtype, reduction_ == Reduction::kNone ? labels->shape()
                                                                                                     : Shape{}));
    const bool wide_labels = labels->dtype() == DataType::kInt64;
    SY_RETURN_IF_ERROR(wide_labels ? check_labels(ctx, names_.labels, labels->data<int64_t>(), positions, classes,
                                                  ignoring_, ignore_index_)
                                   : check_labels(ctx, names_.labels, labels->data<int32_t>(), positions, classes,
                                                  ignoring_, ignore_index_));

    // Scratch: the log-probabilities when no output takes them, and the
    // per-block sums of a reduction.
    const bool logp_output = softmax_ && ctx.num_outputs() > 1 && ctx.output_requested(1);
    const int64_t blocks = reduction_ == Reduction::kNone ? 0 : (positions + kBlock - 1) / kBlock;
    ScratchCarver carver;
    const size_t logp_at = carver.add<char>(softmax_ && !logp_output ? static_cast<int64_t>(scores->byte_size()) : 0);
    const size_t sums_at = carver.add<double>(2 * blocks);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
    const void* logp = scores->raw_data();
    if (softmax_) {
      void* dst = ScratchCarver::pointer<char>(scratch, logp_at);
      if (logp_output) {
        SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(1, dtype, shape));
        dst = out->raw_data();
      }
      if (!log_softmax_along(dtype, scores->raw_data(), dst, shape[0], classes, inner, ctx.thread_pool()))
        return unsupported_type(ctx);
      logp = dst;
    }
    auto* sums = ScratchCarver::pointer<double>(scratch, sums_at);

    const bool handled = visit_type(FloatTypes{}, dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* w = weight != nullptr ? weight->data<T>() : nullptr;
      if (wide_labels) {
        compute(ctx, LossOperands<T, int64_t>{static_cast<const T*>(logp), labels->data<int64_t>(), w, classes, inner,
                                              ignoring_, ignore_index_},
                positions, loss->data<T>(), sums);
      } else {
        compute(ctx, LossOperands<T, int32_t>{static_cast<const T*>(logp), labels->data<int32_t>(), w, classes, inner,
                                              ignoring_, ignore_index_},
                positions, loss->data<T>(), sums);
      }
    });
    return handled ? ok_status() : unsupported_type(ctx);
  }

 private:
  Status unsupported_type(const KernelContext& ctx) const {
    return kernel_error(ctx, describe_input(ctx, 0, names_.scores) + " has an unsupported type");
  }

  Status check_shapes(const KernelContext& ctx, const Tensor& scores, const Tensor& labels,
                             const Tensor* weight) const {
    const Shape& s = scores.shape();
    const Shape& l = labels.shape();
    if (s.rank() < 2)
      return kernel_error(ctx, describe_input(ctx, 0, names_.scores) + " must have shape [N, C, d1, ..., dk]");
    bool same = l.rank() + 1 == s.rank() && l[0] == s[0];
    for (size_t d = 1; same && d < l.rank(); ++d) same = l[d] == s[d + 1];
    if (!same)
      return kernel_error(ctx, describe_input(ctx, 1, names_.labels) + " must have the shape of input 0 (" +
                                   names_.scores + ") " + s.to_string() + " without its dim 1 (C)");
    if (labels.dtype() != DataType::kInt32 && labels.dtype() != DataType::kInt64)
      return kernel_error(ctx, describe_input(ctx, 1, names_.labels) + " must be int32 or int64");
    if (weight != nullptr && (weight->dtype() != scores.dtype() || weight->shape().rank() != 1 ||
                              weight->shape()[0] != s[1]))
      return kernel_error(ctx, describe_input(ctx, 2, names_.weight) + " must be " +
                                   std::string(data_type_name(scores.dtype())) + " of shape [" +
                                   std::to_string(s[1]) + "] (one weight per class)");
    return ok_status();
  }

  template <typename T, typename Tind>
  void compute(KernelContext& ctx, const LossOperands<T, Tind>& op, int64_t positions, T* loss, double* sums) const {
    if (reduction_ == Reduction::kNone) {
      parallel_range(ctx.thread_pool(), positions, kCheapChunk, [&](int64_t b, int64_t e) {
        double loss_sum = 0;
        double weight_sum = 0;
        pick_losses(op, b, e, loss, loss_sum, weight_sum);
      });
      return;
    }
    const int64_t blocks = (positions + kBlock - 1) / kBlock;
    double* loss_sums = sums;
    double* weight_sums = sums + blocks;
    parallel_range(ctx.thread_pool(), blocks, std::max<int64_t>(1, kCheapChunk / kBlock), [&](int64_t b, int64_t e) {
      for (int64_t block = b; block < e; ++block) {
        loss_sums[block] = 0;
        weight_sums[block] = 0;
        pick_losses<T, Tind>(op, block * kBlock, std::min(positions, (block + 1) * kBlock), nullptr,
                             loss_sums[block], weight_sums[block]);
      }
    });
    double loss_sum = 0;
    double weight_sum = 0;
    for (int64_t block = 0; block < blocks; ++block) {
      loss_sum += loss_sums[block];
      weight_sum += weight_sums[block];
    }
    const double result = reduction_ == Reduction::kSum ? loss_sum : loss_sum / weight_sum;
    loss[0] = store<T>(static_cast<compute_t<T>>(result));
  }

  bool softmax_ = false;
  InputNames names_ = kNllNames;
  Reduction reduction_ = Reduction::kMean;
  bool ignoring_ = false;
  int64_t ignore_index_ = 0;
};

// The versions before bfloat16 joined (NegativeLogLikelihoodLoss 22,
// SoftmaxCrossEntropyLoss 13).
using NoBfloat16Types = TypeList<float, double, Float16>;

constexpr KernelDef kLossKernels[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 21, 0, type_mask(NoBfloat16Types{}), &make_kernel<LossKernel>},
    {"", "NegativeLogLikelihoodLoss", 22, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<LossKernel>},
    {"", "SoftmaxCrossEntropyLoss", 12, 12, 0, type_mask(NoBfloat16Types{}), &make_kernel<LossKernel>},
    {"", "SoftmaxCrossEntropyLoss", 13, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<LossKernel>},
};

}  // namespace

std::span<const KernelDef> loss_kernels() { return kLossKernels; }

}  // namespace sy::cpu
