// Scan: runs its compiled body (body.h) once per slice of its scan inputs,
// carrying the state variables (swapped between two frames, as body.h says)
// and writing each iteration's scan outputs into their place in the node's
// outputs.
//
// Slices are views, never copies: a scan input scanned along axis 0 is read
// in place, and one scanned along another axis is transposed once per run
// (that axis first), then read in place. Scan outputs along axis 0 are
// written in place; others are gathered axis first and transposed once at
// the end. Opset 8's Scan has a batch dim in front of every input and
// output and runs the body over each batch entry in turn.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/control_flow/body.h"
#include "providers/cpu/copy_util.h"

namespace sy::cpu {
namespace {

// Where scan input j's slices are: contiguous, one after the other (per
// batch entry at opset 8).
struct Source {
  const uint8_t* base = nullptr;
  DataType dtype = DataType::kUndefined;
  Shape slice;
  int64_t elements = 0;
};
// Where scan output j's slices go.
struct Destination {
  Tensor* output = nullptr;   // the node's output
  Tensor* gathered = nullptr;  // axis first, when the output's axis is not 0
  DataType dtype = DataType::kUndefined;
  Shape slice;
  int64_t elements = 0;
  size_t axis = 0;  // in the output, past the batch
};

class ScanState final : public KernelState {
 public:
  // Frames alternate between iterations (even, odd); the rest is this run's.
  mutable std::unique_ptr<ExecutionFrame> frames[2];
  mutable std::vector<Tensor> states;          // carried
  mutable std::vector<GrowableBuffer> copies;  // two per state
  mutable std::vector<Tensor> slices;          // per scan input, this iteration's
  mutable std::vector<Tensor> moved_inputs;    // per scan input along another axis than 0: axis first
  mutable std::vector<Tensor> gathered;        // per scan output along another axis than 0: axis first
  mutable std::vector<Source> sources;         // per scan input
  mutable std::vector<Destination> destinations;  // per scan output
  mutable std::vector<Tensor*> state_outputs;  // opset 8: per state, allocated with the first batch entry
};

// A tensor of `dtype` and `shape` in `t`, kept from the last run when it
// already has them.
Status keep_allocated(Tensor& t, DataType dtype, const Shape& shape) {
  if (t.defined() && t.dtype() == dtype && t.shape() == shape) return ok_status();
  SY_ASSIGN_OR_RETURN(t, Tensor::allocate(dtype, shape));
  return ok_status();
}

// `shape` with `dim` inserted before position `at`.
Shape insert_dim(const Shape& shape, size_t at, int64_t dim) {
  Shape out;
  for (size_t d = 0; d <= shape.rank(); ++d) {
    if (d == at) out.push_back(dim);
    if (d < shape.rank()) out.push_back(shape[d]);
  }
  return out;
}

// `shape` without dim `axis`.
Shape drop_dim(const Shape& shape, size_t axis) {
  Shape out;
  for (size_t d = 0; d < shape.rank(); ++d)
    if (d != axis) out.push_back(shape[d]);
  return out;
}

// Copies `src` into `dst` (contiguous, same element count) with dim `from`
// of src moved to position `to`.
Status move_axis(const KernelContext& ctx, const Tensor& src, size_t from, size_t to, Tensor& dst) {
  Shape strides;
  contiguous_strides(src.shape(), strides);
  Shape order;  // src dims in dst order
  for (size_t d = 0; d < src.shape().rank(); ++d)
    if (d != from) order.push_back(static_cast<int64_t>(d));
  order = insert_dim(order, to, static_cast<int64_t>(from));
  CopyPlan plan;
  for (size_t d = 0; d < order.rank(); ++d)
    plan.add(src.shape()[static_cast<size_t>(order[d])], strides[static_cast<size_t>(order[d])]);
  return strided_copy(ctx, src.dtype(), dst.raw_data(), src.raw_data(), plan);
}

// Byte offset of slice `index` when each slice holds `elements` of `dtype`.
size_t slice_offset(DataType dtype, int64_t elements, int64_t index) {
  return storage_bytes(dtype, elements) * static_cast<size_t>(index);
}

class ScanKernel final : public Kernel {
 public:
  ScanKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    batched_ = ctx.opset() < 9;
    first_state_ = batched_ ? 1 : 0;
    const int64_t m = node.attr_int("num_scan_inputs", -1);
    if (m < 1 || node.inputs.size() < first_state_ + static_cast<size_t>(m)) {
      status = ctx.error("num_scan_inputs must be at least 1 and at most the number of inputs");
      return;
    }
    num_scan_inputs_ = static_cast<size_t>(m);
    num_states_ = node.inputs.size() - first_state_ - num_scan_inputs_;
    status = make_body(ctx, "body", body_);
    if (!status.ok()) return;
    if (body_.num_inputs() != num_states_ + num_scan_inputs_ || body_.num_outputs() != node.outputs.size() ||
        node.outputs.size() < num_states_) {
      status = ctx.error("body has " + std::to_string(body_.num_inputs()) + " inputs and " +
                         std::to_string(body_.num_outputs()) + " outputs; expected " +
                         std::to_string(num_states_ + num_scan_inputs_) + " and " +
                         std::to_string(node.outputs.size()));
      return;
    }
    num_scan_outputs_ = node.outputs.size() - num_states_;
    status = read_list(ctx, batched_ ? "directions" : "scan_input_directions", num_scan_inputs_, true, input_reverse_);
    if (status.ok() && !batched_) status = read_list(ctx, "scan_output_directions", num_scan_outputs_, true, output_reverse_);
    if (status.ok() && !batched_) status = read_list(ctx, "scan_input_axes", num_scan_inputs_, false, input_axes_);
    if (status.ok() && !batched_) status = read_list(ctx, "scan_output_axes", num_scan_outputs_, false, output_axes_);
    if (batched_) output_reverse_.assign(num_scan_outputs_, 0);
    for (size_t k = 0; k < num_states_; ++k) sources_.push_back(body_output_source(body_, k));
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    SY_ASSIGN_OR_RETURN(std::unique_ptr<ScanState> state, make_state());
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const auto* state = static_cast<const ScanState*>(ctx.state());
    if (state != nullptr) return run_scan(ctx, *state);
    SY_ASSIGN_OR_RETURN(std::unique_ptr<ScanState> local, make_state());
    return run_scan(ctx, *local);
  }

 private:
  // An int list attribute of `count` entries (0 by default); directions are
  // 0 (forward) or 1 (reverse).
  static Status read_list(const KernelCreateContext& ctx, const char* name, size_t count, bool direction,
                          std::vector<int64_t>& out) {
    out = ctx.node().attr_ints(name);
    if (out.empty()) out.assign(count, 0);
    if (out.size() != count)
      return ctx.error(std::string(name) + " has " + std::to_string(out.size()) + " entries; expected " +
                       std::to_string(count));
    if (direction)
      for (int64_t d : out)
        if (d != 0 && d != 1) return ctx.error(std::string(name) + " holds " + std::to_string(d) + "; expected 0 or 1");
    return ok_status();
  }

  Result<std::unique_ptr<ScanState>> make_state() const {
    auto state = std::make_unique<ScanState>();
    for (auto& frame : state->frames) frame = make_body_frame(body_);
    state->states.resize(num_states_);
    for (size_t k = 0; k < 2 * num_states_; ++k) state->copies.emplace_back(cpu_allocator());
    state->slices.resize(num_scan_inputs_);
    state->moved_inputs.resize(num_scan_inputs_);
    state->gathered.resize(num_scan_outputs_);
    state->sources.resize(num_scan_inputs_);
    state->destinations.resize(num_scan_outputs_);
    state->state_outputs.resize(num_states_);
    return state;
  }

  Status run_scan(KernelContext& ctx, const ScanState& state) const {
    // The scan inputs: their scan length and batch.
    const size_t lead = batched_ ? 1 : 0;  // dims before the scan axis
    int64_t length = -1;
    int64_t batch = 1;
    std::vector<Source>& sources = state.sources;
    for (size_t j = 0; j < num_scan_inputs_; ++j) {
      const size_t input = first_state_ + num_states_ + j;
      const Tensor* x = ctx.input(input);
      if (x == nullptr || !x->is_tensor() || x->shape().rank() < lead + 1)
        return kernel_invalid_argument(ctx, "scan input " + std::to_string(input) + " must be a tensor of rank " +
                                                std::to_string(lead + 1) + " or more, got " + describe_value(x));
      const auto rank = static_cast<int64_t>(x->shape().rank());
      int64_t axis = batched_ ? 1 : input_axes_[j];
      if (axis < -rank || axis >= rank)
        return kernel_invalid_argument(ctx, "scan_input_axes[" + std::to_string(j) + "] = " + std::to_string(axis) +
                                                " is out of range for input " + std::to_string(input) + " " +
                                                x->describe());
      if (axis < 0) axis += rank;
      const int64_t n = x->shape()[static_cast<size_t>(axis)];
      if (length >= 0 && n != length)
        return kernel_invalid_argument(ctx, "scan input " + std::to_string(input) + " " + x->describe() + " has " +
                                                std::to_string(n) + " entries along its scan axis; the first has " +
                                                std::to_string(length));
      length = n;
      if (batched_) {
        if (j > 0 && x->shape()[0] != batch)
          return kernel_invalid_argument(ctx, "scan input " + std::to_string(input) + " " + x->describe() +
                                                  " has another batch size than the first (" + std::to_string(batch) + ")");
        batch = x->shape()[0];
      }
      Source& s = sources[j];
      s.dtype = x->dtype();
      s.slice = drop_dim(x->shape(), static_cast<size_t>(axis));
      if (batched_) s.slice = drop_dim(s.slice, 0);
      s.elements = s.slice.num_elements();
      if (packed_bits(s.dtype) != 0 && (s.elements * packed_bits(s.dtype)) % 8 != 0)
        return kernel_error(ctx, "scan input " + std::to_string(input) + " " + x->describe() +
                                     " has slices that do not fill whole bytes: cannot scan it");
      if (axis == static_cast<int64_t>(lead)) {
        s.base = static_cast<const uint8_t*>(x->raw_data());
      } else {
        Tensor& moved = state.moved_inputs[j];
        Shape moved_shape;
        moved_shape.push_back(n);
        for (size_t d = 0; d < s.slice.rank(); ++d) moved_shape.push_back(s.slice[d]);
        SY_RETURN_IF_ERROR(keep_allocated(moved, x->dtype(), moved_shape));
        SY_RETURN_IF_ERROR(move_axis(ctx, *x, static_cast<size_t>(axis), 0, moved));
        s.base = static_cast<const uint8_t*>(moved.raw_data());
      }
    }
    const Tensor* lengths = batched_ ? ctx.input(0) : nullptr;
    if (lengths != nullptr && (!lengths->is_tensor() || lengths->dtype() != DataType::kInt64 ||
                               lengths->num_elements() != batch))
      return kernel_invalid_argument(ctx, "sequence_lens must be an int64 tensor of " + std::to_string(batch) +
                                              " elements (one per batch entry), got " + describe_value(lengths));
    for (size_t k = 0; k < num_states_; ++k) {
      const Tensor* s = ctx.input(first_state_ + k);
      if (s == nullptr || !s->is_tensor() || (batched_ && (s->shape().rank() < 1 || s->shape()[0] != batch)))
        return kernel_invalid_argument(ctx, "state input " + std::to_string(first_state_ + k) + " must be a tensor" +
                                                (batched_ ? " whose first dim is the batch (" + std::to_string(batch) + ")" : "") +
                                                ", got " + describe_value(s));
    }

    OuterBinding outer0(ctx, body_, *state.frames[0]);
    OuterBinding outer1(ctx, body_, *state.frames[1]);
    struct Release {
      const Body& body;
      const ScanState& state;
      ~Release() {
        for (auto& frame : state.frames) unbind_body_inputs(body, *frame);
        for (Tensor& t : state.states) t = Tensor();
        for (Tensor& t : state.slices) t = Tensor();
      }
    } release{body_, state};

    std::vector<Destination>& destinations = state.destinations;
    std::fill(destinations.begin(), destinations.end(), Destination{});
    std::vector<Tensor*>& state_outputs = state.state_outputs;
    std::fill(state_outputs.begin(), state_outputs.end(), nullptr);
    for (int64_t b = 0; b < batch; ++b) {
      int64_t steps = length;
      if (lengths != nullptr) {
        steps = lengths->data<int64_t>()[b];
        if (steps < 0 || steps > length)
          return kernel_invalid_argument(ctx, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(steps) +
                                                  " is out of range [0, " + std::to_string(length) + "]");
      }
      for (size_t k = 0; k < num_states_; ++k) {
        const Tensor& initial = *ctx.input(first_state_ + k);
        if (!batched_) {
          state.states[k] = initial;
          continue;
        }
        const Shape shape = drop_dim(initial.shape(), 0);
        const auto* base = static_cast<const uint8_t*>(initial.raw_data());
        state.states[k] = Tensor::view(initial.dtype(), shape,
                                       const_cast<uint8_t*>(base + slice_offset(initial.dtype(), shape.num_elements(), b)));
      }
      for (int64_t i = 0; i < steps; ++i) {
        ExecutionFrame& frame = *state.frames[i & 1];
        for (size_t j = 0; j < num_scan_inputs_; ++j) {
          const Source& s = sources[j];
          const int64_t pos = b * length + (input_reverse_[j] ? steps - 1 - i : i);
          state.slices[j] = Tensor::view(s.dtype, s.slice, const_cast<uint8_t*>(s.base + slice_offset(s.dtype, s.elements, pos)));
          bind_body_input(body_, frame, num_states_ + j, state.slices[j]);
        }
        for (size_t k = 0; k < num_states_; ++k) bind_body_input(body_, frame, k, state.states[k]);
        SY_RETURN_IF_ERROR(execute_body(ctx, body_, frame).with_context("iteration " + std::to_string(i)));
        for (size_t k = 0; k < num_states_; ++k) {
          SY_ASSIGN_OR_RETURN(const Tensor* out, body_output(ctx, body_, frame, k));
          SY_RETURN_IF_ERROR(check_carried(ctx, body_, k, *ctx.input(first_state_ + k), *out, i, "state variable"));
          if (!out->is_tensor())
            return kernel_error(ctx, body_.output_name(k) + " is a state and must be a tensor, got " + describe_value(out));
          SY_RETURN_IF_ERROR(carry_value(ctx, *out, sources_[k], state.copies[2 * k + (i & 1)], state.states[k]));
        }
        for (size_t o = 0; o < num_scan_outputs_; ++o) {
          SY_ASSIGN_OR_RETURN(const Tensor* out, body_output(ctx, body_, frame, num_states_ + o));
          Destination& d = destinations[o];
          if (d.output == nullptr) SY_RETURN_IF_ERROR(allocate_scan_output(ctx, state, o, *out, batch, length, lengths != nullptr, d));
          if (!out->is_tensor() || out->dtype() != d.dtype || out->shape() != d.slice)
            return kernel_error(ctx, body_.output_name(num_states_ + o) + " is " + describe_value(out) +
                                         " at iteration " + std::to_string(i) + " but was " +
                                         std::string(data_type_name(d.dtype)) + d.slice.to_string() +
                                         " before: scan outputs must keep their type and shape");
          const int64_t pos = b * length + (output_reverse_[o] ? steps - 1 - i : i);
          Tensor& into = d.gathered != nullptr ? *d.gathered : *d.output;
          Tensor slot = Tensor::view(d.dtype, d.slice, static_cast<uint8_t*>(into.raw_data()) + slice_offset(d.dtype, d.elements, pos));
          copy_tensor_data(*out, slot, ctx.thread_pool());
        }
      }
      if (batched_) SY_RETURN_IF_ERROR(write_batch_states(ctx, state, b, batch, state_outputs));
    }

    if (!batched_)
      for (size_t k = 0; k < num_states_; ++k) SY_RETURN_IF_ERROR(output_value(ctx, k, state.states[k]));
    if (batched_ && batch == 0)
      for (size_t k = 0; k < num_states_; ++k)
        SY_RETURN_IF_ERROR(ctx.allocate_output(k, ctx.input(first_state_ + k)->dtype(), ctx.input(first_state_ + k)->shape()).status());
    for (size_t o = 0; o < num_scan_outputs_; ++o) {
      Destination& d = destinations[o];
      if (d.output == nullptr) {
        SY_RETURN_IF_ERROR(allocate_empty_output(ctx, o, batch, length));
      } else if (d.gathered != nullptr) {
        SY_RETURN_IF_ERROR(move_axis(ctx, *d.gathered, 0, d.axis, *d.output));
      }
    }
    return ok_status();
  }

  // Scan output o's memory, once its first value `first` shows its element
  // type and shape. Zeroed when some batch entries may stop short.
  Status allocate_scan_output(KernelContext& ctx, const ScanState& state, size_t o, const Tensor& first, int64_t batch,
                              int64_t length, bool padded, Destination& d) const {
    if (!first.is_tensor())
      return kernel_error(ctx, body_.output_name(num_states_ + o) + " is a scan output and must be a tensor, got " +
                                   describe_value(&first));
    d.dtype = first.dtype();
    d.slice = first.shape();
    d.elements = d.slice.num_elements();
    if (packed_bits(d.dtype) != 0 && (d.elements * packed_bits(d.dtype)) % 8 != 0)
      return kernel_error(ctx, body_.output_name(num_states_ + o) + " is " + first.describe() +
                                   ", whose elements do not fill whole bytes: cannot stack it");
    const auto rank = static_cast<int64_t>(d.slice.rank()) + 1;
    int64_t axis = batched_ ? 0 : output_axes_[o];
    if (axis < -rank || axis >= rank)
      return kernel_invalid_argument(ctx, "scan_output_axes[" + std::to_string(o) + "] = " + std::to_string(axis) +
                                              " is out of range for an output of rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    d.axis = static_cast<size_t>(axis);
    Shape shape;
    if (batched_) shape.push_back(batch);
    for (size_t k = 0; k < d.slice.rank(); ++k) shape.push_back(d.slice[k]);
    shape = insert_dim(shape, d.axis + (batched_ ? 1 : 0), length);
    SY_ASSIGN_OR_RETURN(d.output, ctx.allocate_output(num_states_ + o, d.dtype, shape));
    if (d.axis != 0) {
      Shape gathered_shape;
      gathered_shape.push_back(length);
      for (size_t k = 0; k < d.slice.rank(); ++k) gathered_shape.push_back(d.slice[k]);
      SY_RETURN_IF_ERROR(keep_allocated(state.gathered[o], d.dtype, gathered_shape));
      d.gathered = &state.gathered[o];
    }
    if (padded) {
      if (d.dtype == DataType::kString) {
        std::fill_n(d.output->data<std::string>(), d.output->num_elements(), std::string());
      } else {
        std::fill_n(static_cast<uint8_t*>(d.output->raw_data()), d.output->byte_size(), uint8_t{0});
      }
    }
    return ok_status();
  }

  // A scan output no iteration wrote: empty along the scan axis, of the
  // type and shape the body declares.
  Status allocate_empty_output(KernelContext& ctx, size_t o, int64_t batch, int64_t length) const {
    const Graph& g = body_.graph();
    const ValueType& type = g.values[static_cast<size_t>(g.outputs[num_states_ + o])].type;
    const DataType dtype = type.dtype != DataType::kUndefined ? type.dtype : DataType::kFloat;
    Shape shape;
    if (batched_) shape.push_back(batch);
    const auto rank = static_cast<int64_t>(type.rank()) + 1;
    int64_t axis = batched_ ? 0 : output_axes_[o];
    if (axis < 0) axis += rank;
    axis = std::clamp<int64_t>(axis, 0, rank - 1);
    for (const Dim& dim : type.dims) shape.push_back(dim.is_known() ? dim.value : 0);
    shape = insert_dim(shape, static_cast<size_t>(axis) + (batched_ ? 1 : 0), std::max<int64_t>(length, 0));
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(num_states_ + o, dtype, shape));
    if (dtype != DataType::kString) std::fill_n(static_cast<uint8_t*>(out->raw_data()), out->byte_size(), uint8_t{0});
    return ok_status();
  }

  // Opset 8: batch entry b's final states into the state outputs.
  Status write_batch_states(KernelContext& ctx, const ScanState& state, int64_t b, int64_t batch,
                            std::vector<Tensor*>& outputs) const {
    for (size_t k = 0; k < num_states_; ++k) {
      const Tensor& s = state.states[k];
      if (outputs[k] == nullptr) {
        Shape shape;
        shape.push_back(batch);
        for (size_t d = 0; d < s.shape().rank(); ++d) shape.push_back(s.shape()[d]);
        SY_ASSIGN_OR_RETURN(outputs[k], ctx.allocate_output(k, s.dtype(), shape));
      }
      Tensor& out = *outputs[k];
      const Shape entry = drop_dim(out.shape(), 0);
      if (s.dtype() != out.dtype() || s.shape() != entry)
        return kernel_error(ctx, body_.output_name(k) + " is " + s.describe() + " for batch entry " +
                                     std::to_string(b) + " but " + std::string(data_type_name(out.dtype())) +
                                     entry.to_string() + " for the first");
      Tensor slot = Tensor::view(out.dtype(), entry,
                                 static_cast<uint8_t*>(out.raw_data()) + slice_offset(out.dtype(), entry.num_elements(), b));
      copy_tensor_data(s, slot, ctx.thread_pool());
    }
    return ok_status();
  }

  Body body_;
  bool batched_ = false;  // opset 8
  size_t first_state_ = 0;
  size_t num_states_ = 0;
  size_t num_scan_inputs_ = 0;
  size_t num_scan_outputs_ = 0;
  std::vector<int64_t> input_reverse_, output_reverse_;
  std::vector<int64_t> input_axes_, output_axes_;
  std::vector<OutputSource> sources_;  // per state
};

const KernelDef kScanKernels[] = {
    {"", "Scan", 8, kLatestVersion, -1, 0, &make_kernel<ScanKernel>},
};

}  // namespace

std::span<const KernelDef> scan_kernels() { return kScanKernels; }

}  // namespace sy::cpu
