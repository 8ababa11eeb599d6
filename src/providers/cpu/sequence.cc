// The sequence ops: SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceErase, SequenceAt, SequenceLength, SplitToSequence and
// ConcatFromSequence.
//
// A sequence is an immutable value (Tensor::sequence): its items are
// tensors that own their memory, and a new sequence shares the items of the
// one it was made from instead of copying them. A tensor that enters a
// sequence from a planned buffer (a view the executor reuses on the next
// step) is copied once, on the way in.
#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/cpu/row_pieces.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// `t` as a sequence item: itself when it owns its memory (or shares it with
// an owner), a copy when it is a view of memory the executor reuses.
Result<Tensor> as_item(const Tensor& t) {
  if (t.owns_memory()) return t;
  return t.clone();
}

Result<const Tensor*> sequence_input(const KernelContext& ctx) {
  const Tensor* seq = ctx.input(0);
  if (seq == nullptr || seq->kind() != ValueKind::kSequence)
    return kernel_error(ctx, "input 0 (input_sequence) must be a sequence, got " +
                                 (seq == nullptr ? std::string("nothing") : seq->describe()));
  return seq;
}

// The position input i, one int32 or int64 value; `count` items accept
// positions in [-count, last] (last: count - 1 to read or erase, count to
// insert), negative ones counting from the back. Returns it in [0, last].
Result<int64_t> read_position(const KernelContext& ctx, size_t i, int64_t count, int64_t last) {
  const Tensor* p = ctx.input(i);
  if (p->dtype() != DataType::kInt32 && p->dtype() != DataType::kInt64)
    return kernel_error(ctx, "input " + std::to_string(i) + " (position) must be int32 or int64, got " + p->describe());
  if (p->num_elements() != 1)
    return kernel_invalid_argument(ctx, "input " + std::to_string(i) + " (position) must hold one value, got " +
                                            p->describe());
  const int64_t pos = int_element(*p, 0);
  if (last < -count)
    return kernel_invalid_argument(ctx, "position " + std::to_string(pos) + " (input " + std::to_string(i) +
                                            ") is out of range: input 0 (input_sequence) is empty");
  if (pos < -count || pos > last)
    return kernel_invalid_argument(ctx, "position " + std::to_string(pos) + " (input " + std::to_string(i) +
                                            ") is out of range for input 0 (input_sequence) of " +
                                            std::to_string(count) + " tensors (expected [" + std::to_string(-count) +
                                            ", " + std::to_string(last) + "])");
  return pos < 0 ? pos + count : pos;
}

// ---- SequenceEmpty, SequenceConstruct ---------------------------------------------

class SequenceEmptyKernel final : public Kernel {
 public:
  SequenceEmptyKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t dtype = ctx.node().attr_int("dtype", static_cast<int64_t>(DataType::kFloat));
    if (dtype <= 0 || dtype > kMaxDataTypeValue || !is_valid_data_type(static_cast<int32_t>(dtype))) {
      status = ctx.error("dtype " + std::to_string(dtype) + " is not a tensor element type");
      return;
    }
    dtype_ = static_cast<DataType>(dtype);
  }
  Status run(KernelContext& ctx) const override { return ctx.set_output(0, Tensor::sequence(dtype_, {})); }

 private:
  DataType dtype_ = DataType::kFloat;
};

class SequenceConstructKernel final : public Kernel {
 public:
  SequenceConstructKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    std::vector<Tensor> items;
    items.reserve(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr || !t->is_tensor())
        return kernel_error(ctx, "input " + std::to_string(i) + " must be a tensor");
      if (t->dtype() != ctx.input(0)->dtype())
        return kernel_error(ctx, "input " + std::to_string(i) + " is " + t->describe() + " but input 0 is " +
                                     ctx.input(0)->describe() + "; a sequence holds one element type");
      SY_ASSIGN_OR_RETURN(Tensor item, as_item(*t));
      items.push_back(std::move(item));
    }
    return ctx.set_output(0, Tensor::sequence(ctx.input(0)->dtype(), std::move(items)));
  }
};

// ---- SequenceInsert, SequenceErase, SequenceAt, SequenceLength -------------------

class SequenceInsertKernel final : public Kernel {
 public:
  SequenceInsertKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx));
    const Tensor* t = ctx.input(1);
    if (t == nullptr || !t->is_tensor()) return kernel_error(ctx, "input 1 (tensor) must be a tensor");
    // An empty sequence read from a file may not name its element type; the
    // first tensor inserted does.
    const DataType element_type =
        seq->dtype() == DataType::kUndefined && seq->items().empty() ? t->dtype() : seq->dtype();
    if (t->dtype() != element_type)
      return kernel_error(ctx, "input 1 (tensor) is " + t->describe() + " but input 0 (input_sequence) holds " +
                                   std::string(data_type_name(seq->dtype())) + " tensors");
    const std::vector<Tensor>& old_items = seq->items();
    const auto count = static_cast<int64_t>(old_items.size());
    int64_t pos = count;  // by default, at the back
    if (ctx.input(2) != nullptr) {
      SY_ASSIGN_OR_RETURN(pos, read_position(ctx, 2, count, count));
    }
    // A new list of the same items: the input sequence stays as it was.
    std::vector<Tensor> items;
    items.reserve(old_items.size() + 1);
    items.insert(items.end(), old_items.begin(), old_items.begin() + pos);
    SY_ASSIGN_OR_RETURN(Tensor item, as_item(*t));
    items.push_back(std::move(item));
    items.insert(items.end(), old_items.begin() + pos, old_items.end());
    return ctx.set_output(0, Tensor::sequence(element_type, std::move(items)));
  }
};

class SequenceEraseKernel final : public Kernel {
 public:
  SequenceEraseKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx));
    const std::vector<Tensor>& old_items = seq->items();
    const auto count = static_cast<int64_t>(old_items.size());
    if (count == 0) return kernel_invalid_argument(ctx, "input 0 (input_sequence) is empty: there is nothing to erase");
    int64_t pos = count - 1;  // by default, the last
    if (ctx.input(1) != nullptr) {
      SY_ASSIGN_OR_RETURN(pos, read_position(ctx, 1, count, count - 1));
    }
    std::vector<Tensor> items;
    items.reserve(old_items.size() - 1);
    items.insert(items.end(), old_items.begin(), old_items.begin() + pos);
    items.insert(items.end(), old_items.begin() + pos + 1, old_items.end());
    return ctx.set_output(0, Tensor::sequence(seq->dtype(), std::move(items)));
  }
};

class SequenceAtKernel final : public Kernel {
 public:
  SequenceAtKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx));
    if (ctx.input(1) == nullptr) return kernel_error(ctx, "input 1 (position) is missing");
    const auto count = static_cast<int64_t>(seq->items().size());
    SY_ASSIGN_OR_RETURN(int64_t pos, read_position(ctx, 1, count, count - 1));
    // Items are immutable, so the output shares the item's memory.
    return ctx.set_output(0, seq->items()[static_cast<size_t>(pos)]);
  }
};

class SequenceLengthKernel final : public Kernel {
 public:
  SequenceLengthKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx));
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, Shape{}));
    out->data<int64_t>()[0] = static_cast<int64_t>(seq->items().size());
    return ok_status();
  }
};

// ---- SplitToSequence ------------------------------------------------------------

class SplitToSequenceKernel final : public Kernel {
 public:
  SplitToSequenceKernel(const KernelCreateContext& ctx, Status& status) {
    axis_ = ctx.node().attr_int("axis", 0);
    keepdims_ = ctx.node().attr_int("keepdims", 1) != 0;
    (void)status;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& shape = in.shape();
    int64_t axis = axis_;
    if (!normalize_axis(axis, static_cast<int64_t>(shape.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input 0 " + in.describe());
    const int64_t axis_dim = shape[static_cast<size_t>(axis)];
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, piece_lengths(ctx, axis_dim));
    const auto a = static_cast<size_t>(axis);
    const int64_t outer = shape.size_to(a);
    const int64_t inner = shape.size_from(a + 1);
    // keepdims matters only without `split`: each item is then one slice.
    const bool drop_axis = ctx.input(1) == nullptr && !keepdims_;
    std::vector<Tensor> items;
    items.reserve(lengths.size());
    SY_ASSIGN_OR_RETURN(Pieces pieces, make_pieces(ctx, static_cast<int64_t>(lengths.size())));
    for (size_t k = 0; k < lengths.size(); ++k) {
      std::vector<int64_t> piece = shape.to_vector();
      piece[a] = lengths[k];
      if (drop_axis) piece.erase(piece.begin() + axis);
      SY_ASSIGN_OR_RETURN(Tensor item, Tensor::allocate_uninitialized(in.dtype(), Shape(piece)));
      pieces.width[k] = lengths[k] * inner;
      pieces.data[k] = item.raw_data();
      items.push_back(std::move(item));
    }
    // The input's rows cut into the items', as Split does.
    SY_RETURN_IF_ERROR(dispatch_by_element(in.dtype(), [&]<typename T>() {
      copy_rows<T, true>(const_cast<T*>(in.data<T>()), pieces, outer, ctx.thread_pool());
      return ok_status();
    }));
    return ctx.set_output(0, Tensor::sequence(in.dtype(), std::move(items)));
  }

 private:
  // The items' lengths along the axis, from `split` (absent: all 1; a
  // scalar: chunks of that size, the last one shorter if need be; 1-D: as
  // listed, summing to the axis's length).
  Result<std::vector<int64_t>> piece_lengths(const KernelContext& ctx, int64_t axis_dim) const {
    const Tensor* split = ctx.input(1);
    if (split == nullptr) return std::vector<int64_t>(static_cast<size_t>(axis_dim), 1);
    if (split->dtype() != DataType::kInt32 && split->dtype() != DataType::kInt64)
      return kernel_error(ctx, "input 1 (split) must be int32 or int64, got " + split->describe());
    if (split->shape().rank() > 1)
      return kernel_invalid_argument(ctx, "input 1 (split) must be a scalar or 1-D, got " + split->describe());
    std::vector<int64_t> lengths;
    if (split->shape().rank() == 0) {
      const int64_t chunk = int_element(*split, 0);
      if (chunk <= 0)
        return kernel_invalid_argument(ctx, "input 1 (split) is " + std::to_string(chunk) + "; it must be positive");
      for (int64_t begin = 0; begin < axis_dim; begin += chunk) lengths.push_back(std::min(chunk, axis_dim - begin));
      return lengths;
    }
    int64_t sum = 0;
    for (int64_t i = 0; i < split->num_elements(); ++i) {
      const int64_t v = int_element(*split, i);
      if (v < 0)
        return kernel_invalid_argument(ctx, "input 1 (split) holds " + std::to_string(v) + " at position " +
                                                std::to_string(i) + "; lengths must not be negative");
      if (!checked_add(sum, v, sum)) sum = INT64_MAX;
      lengths.push_back(v);
    }
    if (sum != axis_dim)
      return kernel_invalid_argument(ctx, "input 1 (split) sums to " + std::to_string(sum) + " but axis " +
                                              std::to_string(axis_) + " of input 0 has length " +
                                              std::to_string(axis_dim));
    return lengths;
  }

  int64_t axis_ = 0;
  bool keepdims_ = true;
};

// ---- ConcatFromSequence ---------------------------------------------------------

class ConcatFromSequenceKernel final : public Kernel {
 public:
  ConcatFromSequenceKernel(const KernelCreateContext& ctx, Status& status) {
    if (!ctx.node().has_attr("axis")) {
      status = ctx.error("attribute 'axis' is required");
      return;
    }
    axis_ = ctx.node().attr_int("axis", 0);
    new_axis_ = ctx.node().attr_int("new_axis", 0) != 0;
  }

  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx));
    const std::vector<Tensor>& items = seq->items();
    if (items.empty()) return kernel_invalid_argument(ctx, "input 0 (input_sequence) is empty: nothing to concatenate");
    const Shape& first = items[0].shape();
    // With new_axis the items are stacked along a new axis of length 1 each.
    const auto out_rank = static_cast<int64_t>(first.rank()) + (new_axis_ ? 1 : 0);
    int64_t axis = axis_;
    if (!normalize_axis(axis, out_rank))
      return kernel_invalid_argument(ctx, "axis " + std::to_string(axis_) + " is out of range for items of rank " +
                                              std::to_string(first.rank()) +
                                              (new_axis_ ? " stacked on a new axis" : ""));
    const auto a = static_cast<size_t>(axis);
    std::vector<int64_t> out_dims = first.to_vector();
    if (new_axis_) out_dims.insert(out_dims.begin() + axis, 1);
    int64_t total = 0;
    for (size_t k = 0; k < items.size(); ++k) {
      const Shape& s = items[k].shape();
      bool match = s.rank() == first.rank() && items[k].dtype() == items[0].dtype();
      for (size_t d = 0; match && d < s.rank(); ++d) match = s[d] == first[d] || (!new_axis_ && d == a);
      if (!match)
        return kernel_invalid_argument(ctx, "item " + std::to_string(k) + " of input 0 is " + items[k].describe() +
                                                " but item 0 is " + items[0].describe() + "; they must match" +
                                                (new_axis_ ? "" : " except along axis " + std::to_string(axis)));
      total += new_axis_ ? 1 : s[a];
    }
    out_dims[a] = total;
    const Shape out_shape(out_dims);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, items[0].dtype(), out_shape));
    // Row o of the output is item 0's row o, then item 1's, and so on, as
    // Concat's; an item's row is its dims from the axis on (with new_axis,
    // the output's dims after the new axis).
    SY_ASSIGN_OR_RETURN(Pieces pieces, make_pieces(ctx, static_cast<int64_t>(items.size())));
    for (size_t k = 0; k < items.size(); ++k) {
      pieces.width[k] = items[k].shape().size_from(a);
      pieces.data[k] = const_cast<void*>(items[k].raw_data());
    }
    return dispatch_by_element(out->dtype(), [&]<typename T>() {
      copy_rows<T, false>(out->data<T>(), pieces, out_shape.size_to(a), ctx.thread_pool());
      return ok_status();
    });
  }

 private:
  int64_t axis_ = 0;
  bool new_axis_ = false;
};

constexpr bool kContainers = true;  // the KernelDef flag: inputs may be sequences

const KernelDef kSequenceKernels[] = {
    {"", "SequenceEmpty", 11, kLatestVersion, -1, 0, &make_kernel<SequenceEmptyKernel>},
    {"", "SequenceConstruct", 11, kLatestVersion, 0, kElementTypes, &make_kernel<SequenceConstructKernel>},
    {"", "SequenceInsert", 11, kLatestVersion, -1, 0, &make_kernel<SequenceInsertKernel>, kContainers},
    {"", "SequenceErase", 11, kLatestVersion, -1, 0, &make_kernel<SequenceEraseKernel>, kContainers},
    {"", "SequenceAt", 11, kLatestVersion, -1, 0, &make_kernel<SequenceAtKernel>, kContainers},
    {"", "SequenceLength", 11, kLatestVersion, -1, 0, &make_kernel<SequenceLengthKernel>, kContainers},
    {"", "SplitToSequence", 11, kLatestVersion, 0, kElementTypes, &make_kernel<SplitToSequenceKernel>},
    {"", "ConcatFromSequence", 11, kLatestVersion, -1, 0, &make_kernel<ConcatFromSequenceKernel>, kContainers},
};

}  // namespace

std::span<const KernelDef> sequence_kernels() { return kSequenceKernels; }

}  // namespace sy::cpu
