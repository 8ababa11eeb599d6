// Loop: runs its compiled body (body.h) while the trip count and the
// condition allow, carrying values from one iteration to the next (swapped
// between two frames, as body.h says) and stacking the scan outputs.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/control_flow/body.h"
#include "providers/cpu/copy_util.h"
#include "switchyard/session.h"

namespace sy::cpu {
namespace {

// What one scan output takes over the iterations, end to end; its memory
// is kept for the next run.
struct StackedOutput {
  DataType dtype = DataType::kUndefined;
  Shape element;
  int64_t count = 0;
  std::vector<uint8_t> bytes;        // every type but string
  std::vector<std::string> strings;  // string

  void clear() {
    dtype = DataType::kUndefined;
    count = 0;
    bytes.clear();
    strings.clear();
  }
};

class LoopState final : public KernelState {
 public:
  // Frames alternate between iterations (even, odd); the rest is this run's.
  mutable std::unique_ptr<ExecutionFrame> frames[2];
  mutable Tensor iteration;  // int64 scalar: body input 0
  mutable Tensor condition;  // bool scalar: body input 1
  mutable std::vector<Tensor> carried;
  mutable std::vector<GrowableBuffer> copies;  // two per carried value
  mutable std::vector<StackedOutput> scans;
};

class LoopKernel final : public Kernel {
 public:
  LoopKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    if (!node.has_input(0) && !node.has_input(1)) {
      status = ctx.error("has neither a trip count (M) nor a condition (cond): it would never end");
      return;
    }
    status = make_body(ctx, "body", body_);
    if (!status.ok()) return;
    num_carried_ = node.inputs.size() >= 2 ? node.inputs.size() - 2 : 0;
    if (body_.num_inputs() != num_carried_ + 2) {
      status = ctx.error("body has " + std::to_string(body_.num_inputs()) + " inputs; expected " +
                         std::to_string(num_carried_ + 2) + " (iteration number, condition and " +
                         std::to_string(num_carried_) + " loop-carried values)");
      return;
    }
    if (body_.num_outputs() < num_carried_ + 1 || node.outputs.size() != body_.num_outputs() - 1) {
      status = ctx.error("body has " + std::to_string(body_.num_outputs()) + " outputs; expected the condition, " +
                         std::to_string(num_carried_) + " loop-carried values and one per scan output (" +
                         std::to_string(node.outputs.size() + 1) + " for the node's " +
                         std::to_string(node.outputs.size()) + " outputs)");
      return;
    }
    num_scans_ = body_.num_outputs() - 1 - num_carried_;
    for (size_t k = 0; k < num_carried_; ++k) sources_.push_back(body_output_source(body_, 1 + k));
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    SY_ASSIGN_OR_RETURN(std::unique_ptr<LoopState> state, make_state());
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const auto* state = static_cast<const LoopState*>(ctx.state());
    if (state != nullptr) return run_loop(ctx, *state);
    // Run without a prepare phase: state for this run only.
    SY_ASSIGN_OR_RETURN(std::unique_ptr<LoopState> local, make_state());
    return run_loop(ctx, *local);
  }

 private:
  Result<std::unique_ptr<LoopState>> make_state() const {
    auto state = std::make_unique<LoopState>();
    for (auto& frame : state->frames) frame = make_body_frame(body_);
    SY_ASSIGN_OR_RETURN(state->iteration, Tensor::allocate(DataType::kInt64, Shape{}));
    SY_ASSIGN_OR_RETURN(state->condition, Tensor::allocate(DataType::kBool, Shape{}));
    state->carried.resize(num_carried_);
    for (size_t k = 0; k < 2 * num_carried_; ++k) state->copies.emplace_back(cpu_allocator());
    state->scans.resize(num_scans_);
    return state;
  }

  Status run_loop(KernelContext& ctx, const LoopState& state) const {
    const Tensor* trip_input = ctx.input(0);
    const Tensor* cond_input = ctx.input(1);
    int64_t trip_count = 0;
    if (trip_input != nullptr) {
      if (!is_scalar_of(trip_input, DataType::kInt64))
        return kernel_invalid_argument(ctx, "M (the trip count) must be an int64 tensor of one element, got " +
                                                describe_value(trip_input));
      trip_count = trip_input->data<int64_t>()[0];
    }
    bool cond = true;
    if (cond_input != nullptr) {
      if (!is_scalar_of(cond_input, DataType::kBool))
        return kernel_invalid_argument(ctx, "cond must be a bool tensor of one element, got " +
                                                describe_value(cond_input));
      cond = cond_input->data<bool>()[0];
    }
    for (size_t k = 0; k < num_carried_; ++k) {
      const Tensor* v = ctx.input(2 + k);
      if (v == nullptr) return kernel_invalid_argument(ctx, "loop-carried input " + std::to_string(2 + k) + " is missing");
      state.carried[k] = *v;
    }
    for (StackedOutput& s : state.scans) s.clear();

    // Whatever happens, the kept state ends the run holding no reference to
    // this run's values.
    OuterBinding outer0(ctx, body_, *state.frames[0]);
    OuterBinding outer1(ctx, body_, *state.frames[1]);
    struct Release {
      const Body& body;
      const LoopState& state;
      ~Release() {
        for (auto& frame : state.frames) unbind_body_inputs(body, *frame);
        for (Tensor& t : state.carried) t = Tensor();
      }
    } release{body_, state};

    const RunOptions* options = ctx.run_options();
    for (int64_t i = 0; (trip_input == nullptr || i < trip_count) && cond; ++i) {
      // A body with no steps never meets the executor's check.
      if (options != nullptr && options->terminate != nullptr && options->terminate->load(std::memory_order_relaxed))
        return kernel_error(ctx, "terminated by RunOptions.terminate at iteration " + std::to_string(i));
      ExecutionFrame& frame = *state.frames[i & 1];
      state.iteration.data<int64_t>()[0] = i;
      state.condition.data<bool>()[0] = cond;
      bind_body_input(body_, frame, 0, state.iteration);
      bind_body_input(body_, frame, 1, state.condition);
      for (size_t k = 0; k < num_carried_; ++k) bind_body_input(body_, frame, 2 + k, state.carried[k]);
      SY_RETURN_IF_ERROR(execute_body(ctx, body_, frame).with_context("iteration " + std::to_string(i)));

      SY_ASSIGN_OR_RETURN(const Tensor* cond_out, body_output(ctx, body_, frame, 0));
      if (!is_scalar_of(cond_out, DataType::kBool))
        return kernel_error(ctx, body_.output_name(0) + " (the condition) must be a bool tensor of one element, got " +
                                     describe_value(cond_out));
      // Without a cond input, the loop is a for loop and ignores the body's.
      if (cond_input != nullptr) cond = cond_out->data<bool>()[0];
      for (size_t k = 0; k < num_carried_; ++k) {
        SY_ASSIGN_OR_RETURN(const Tensor* out, body_output(ctx, body_, frame, 1 + k));
        SY_RETURN_IF_ERROR(check_carried(ctx, body_, 1 + k, *ctx.input(2 + k), *out, i, "loop-carried value"));
        SY_RETURN_IF_ERROR(carry_value(ctx, *out, sources_[k], state.copies[2 * k + (i & 1)], state.carried[k]));
      }
      for (size_t j = 0; j < num_scans_; ++j) {
        SY_ASSIGN_OR_RETURN(const Tensor* out, body_output(ctx, body_, frame, 1 + num_carried_ + j));
        SY_RETURN_IF_ERROR(append(ctx, j, *out, state.scans[j], i));
      }
    }

    for (size_t k = 0; k < num_carried_; ++k) SY_RETURN_IF_ERROR(output_value(ctx, k, state.carried[k]));
    for (size_t j = 0; j < num_scans_; ++j) SY_RETURN_IF_ERROR(emit(ctx, j, state.scans[j]));
    return ok_status();
  }

  Status append(const KernelContext& ctx, size_t j, const Tensor& out, StackedOutput& s, int64_t i) const {
    const std::string what = body_.output_name(1 + num_carried_ + j);
    if (!out.is_tensor()) return kernel_error(ctx, what + " is a scan output and must be a tensor, got " + describe_value(&out));
    if (s.count == 0) {
      s.dtype = out.dtype();
      s.element = out.shape();
      if (packed_bits(s.dtype) != 0 && out.byte_size() * 8 != static_cast<size_t>(out.num_elements() * packed_bits(s.dtype)))
        return kernel_error(ctx, what + " is " + out.describe() + ", whose elements do not fill whole bytes: cannot stack it");
    } else if (out.dtype() != s.dtype || out.shape() != s.element) {
      return kernel_error(ctx, what + " is " + out.describe() + " at iteration " + std::to_string(i) +
                                   " but was " + std::string(data_type_name(s.dtype)) + s.element.to_string() +
                                   " before: scan outputs must keep their type and shape");
    }
    if (s.dtype == DataType::kString) {
      const std::string* p = out.data<std::string>();
      s.strings.insert(s.strings.end(), p, p + out.num_elements());
    } else {
      const auto* p = static_cast<const uint8_t*>(out.raw_data());
      s.bytes.insert(s.bytes.end(), p, p + out.byte_size());
    }
    ++s.count;
    return ok_status();
  }

  // Scan output j: the stacked values, or none of the body's type.
  Status emit(KernelContext& ctx, size_t j, const StackedOutput& s) const {
    const size_t out_index = num_carried_ + j;
    DataType dtype = s.dtype;
    Shape shape;
    shape.push_back(s.count);
    if (s.count > 0) {
      for (size_t d = 0; d < s.element.rank(); ++d) shape.push_back(s.element[d]);
    } else {
      const Graph& g = body_.graph();
      const ValueType& type = g.values[static_cast<size_t>(g.outputs[1 + out_index])].type;
      dtype = type.dtype != DataType::kUndefined ? type.dtype : DataType::kFloat;
      for (const Dim& d : type.dims) shape.push_back(d.is_known() ? d.value : 0);
    }
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(out_index, dtype, shape));
    if (s.count == 0) return ok_status();
    if (dtype == DataType::kString) {
      std::copy(s.strings.begin(), s.strings.end(), out->data<std::string>());
    } else if (!s.bytes.empty()) {
      std::memcpy(out->raw_data(), s.bytes.data(), s.bytes.size());
    }
    return ok_status();
  }

  Body body_;
  size_t num_carried_ = 0;
  size_t num_scans_ = 0;
  std::vector<OutputSource> sources_;  // per carried value
};

const KernelDef kLoopKernels[] = {
    {"", "Loop", 1, kLatestVersion, -1, 0, &make_kernel<LoopKernel>, /*accepts_containers=*/true},
};

}  // namespace

std::span<const KernelDef> loop_kernels() { return kLoopKernels; }

}  // namespace sy::cpu
