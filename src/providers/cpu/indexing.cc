// OneHot, Compress, NonZero, ReverseSequence and BitCast: ops whose output
// positions come from index or mask values rather than from the shapes
// alone. Each converts or checks its index data once up front (into scratch
// memory when a table is needed) and then runs a copy or fill loop with no
// error path, split across threads by rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// A numeric element as int64; NaN and values beyond int64 become INT64_MIN,
// which no valid index equals.
template <typename T>
int64_t to_index(T v) {
  if constexpr (kIsFloat<T>) {
    const double d = static_cast<double>(load(v));
    return std::fabs(d) < 9.0e18 ? static_cast<int64_t>(d) : std::numeric_limits<int64_t>::min();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::min()
                                                                          : static_cast<int64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

// ---- OneHot ---------------------------------------------------------------------

class OneHotKernel final : public Kernel {
 public:
  // OneHot-9 leaves negative indices out of range; 11 counts them from the end.
  OneHotKernel(const KernelCreateContext& ctx, Status&)
      : axis_(ctx.node().attr_int("axis", -1)), negative_from_end_(ctx.opset() >= 11) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& indices = *ctx.input(0);
    const Tensor& depth_t = *ctx.input(1);
    const Tensor& values = *ctx.input(2);
    if (depth_t.num_elements() != 1)
      return kernel_error(ctx, "depth " + depth_t.describe() + " must hold exactly one value");
    int64_t depth = 0;
    if (!visit_type(NumericTypes{}, depth_t.dtype(),
                    [&](auto tag) { depth = to_index(depth_t.data<typename decltype(tag)::type>()[0]); }))
      return kernel_error(ctx, "depth " + depth_t.describe() + " must be numeric");
    if (depth < 0) return kernel_error(ctx, "depth must not be negative, got " + std::to_string(depth));
    if (values.num_elements() != 2)
      return kernel_error(ctx, "values " + values.describe() + " must hold [off_value, on_value]");
    const Shape& is = indices.shape();
    const auto rank = static_cast<int64_t>(is.rank()) + 1;
    int64_t axis = axis_;
    if (!normalize_axis(axis, rank))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for indices " + indices.describe() +
                                   " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
    const auto a = static_cast<size_t>(axis);
    Shape out_shape;
    for (size_t k = 0; k < a; ++k) out_shape.push_back(is[k]);
    out_shape.push_back(depth);
    for (size_t k = a; k < is.rank(); ++k) out_shape.push_back(is[k]);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, values.dtype(), out_shape));
    const int64_t n = indices.num_elements();
    if (out->num_elements() == 0) return ok_status();

    // Indices as int64, converted once unless they already are.
    const int64_t* idx = nullptr;
    if (indices.dtype() == DataType::kInt64) {
      idx = indices.data<int64_t>();
    } else {
      SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(n) * sizeof(int64_t)));
      auto* converted = static_cast<int64_t*>(mem);
      if (!visit_type(NumericTypes{}, indices.dtype(), [&](auto tag) {
            using I = typename decltype(tag)::type;
            const I* src = indices.data<I>();
            for (int64_t i = 0; i < n; ++i) converted[i] = to_index(src[i]);
          }))
        return kernel_error(ctx, "indices " + indices.describe() + " must be numeric");
      idx = converted;
    }
    const int64_t inner = is.size_from(a);
    const bool negative_from_end = negative_from_end_;
    return dispatch_by_element(values.dtype(), [&]<typename T>() {
      const T off = values.data<T>()[0];
      const T on = values.data<T>()[1];
      T* dst = out->data<T>();
      ThreadPool& pool = ctx.thread_pool();
      pool.parallel_for(out->num_elements(), kCheapChunk,
                        [&](int64_t b, int64_t e) { fill_elements(dst + b, off, e - b); });
      // Each index position owns one output column, so writes never meet.
      pool.parallel_for(n, kCheapChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          int64_t v = idx[i];
          if (negative_from_end && v < 0 && v >= -depth) v += depth;
          if (v < 0 || v >= depth) continue;
          dst[((i / inner) * depth + v) * inner + i % inner] = on;
        }
      });
      return ok_status();
    });
  }

 private:
  int64_t axis_;
  bool negative_from_end_;
};

// ---- Compress -------------------------------------------------------------------

class CompressKernel final : public Kernel {
 public:
  CompressKernel(const KernelCreateContext& ctx, Status&)
      : has_axis_(ctx.node().has_attr("axis")), axis_(ctx.node().attr_int("axis", 0)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor& cond = *ctx.input(1);
    const Shape& s = in.shape();
    if (cond.dtype() != DataType::kBool || cond.shape().rank() != 1)
      return kernel_error(ctx, "condition " + cond.describe() + " must be a 1-D bool tensor");
    int64_t axis = axis_;
    if (has_axis_ && !normalize_axis(axis, static_cast<int64_t>(s.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + in.describe());
    const int64_t limit = has_axis_ ? s[static_cast<size_t>(axis)] : in.num_elements();
    const bool* c = cond.data<bool>();
    const int64_t cn = cond.num_elements();
    int64_t count = 0;
    for (int64_t i = 0; i < cn; ++i) {
      if (!c[i]) continue;
      if (i >= limit)
        return kernel_error(ctx, "condition " + cond.describe() + " selects position " + std::to_string(i) +
                                     ", beyond the " + std::to_string(limit) + " of input " + in.describe() +
                                     (has_axis_ ? " on axis " + std::to_string(axis) : std::string(" flattened")));
      ++count;
    }
    Shape out_shape;
    if (has_axis_) {
      out_shape = s;
      out_shape[static_cast<size_t>(axis)] = count;
    } else {
      out_shape = Shape{count};
    }
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(count) * sizeof(int64_t)));
    auto* selected = static_cast<int64_t*>(mem);
    for (int64_t i = 0, j = 0; i < cn; ++i)
      if (c[i]) selected[j++] = i;

    const int64_t dim = has_axis_ ? s[static_cast<size_t>(axis)] : in.num_elements();
    const int64_t inner = has_axis_ ? s.size_from(static_cast<size_t>(axis) + 1) : 1;
    const int64_t rows = (has_axis_ ? s.size_to(static_cast<size_t>(axis)) : 1) * count;
    return dispatch_by_element(in.dtype(), [&]<typename T>() {
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ctx.thread_pool().parallel_for(rows, rows_per_chunk(inner, sizeof(T)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row)
          copy_elements(dst + row * inner, src + ((row / count) * dim + selected[row % count]) * inner, inner);
      });
      return ok_status();
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// ---- NonZero --------------------------------------------------------------------

// Zero tests on the storage: floats compare by value (so -0 is zero and NaN
// is not), half floats and complex numbers by their bits without the signs.
template <typename T>
inline bool is_nonzero(const T& v) {
  return v != T{};
}
inline bool is_nonzero(Float16 v) { return (v.bits & 0x7fff) != 0; }
inline bool is_nonzero(BFloat16 v) { return (v.bits & 0x7fff) != 0; }
inline bool is_nonzero(const std::string& v) { return !v.empty(); }

struct Complex64 {
  float re;
  float im;
};
struct Complex128 {
  double re;
  double im;
};
inline bool is_nonzero(Complex64 v) { return v.re != 0.0f || v.im != 0.0f; }
inline bool is_nonzero(Complex128 v) { return v.re != 0.0 || v.im != 0.0; }

class NonZeroKernel final : public Kernel {
 public:
  NonZeroKernel(const KernelCreateContext&, Status&) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    Status status;
    auto body = [&](auto tag) { status = run_typed<typename decltype(tag)::type>(ctx, in); };
    if (in.dtype() == DataType::kComplex64) {
      body(TypeTag<Complex64>{});
    } else if (in.dtype() == DataType::kComplex128) {
      body(TypeTag<Complex128>{});
    } else if (in.dtype() == DataType::kString) {
      body(TypeTag<std::string>{});
    } else if (!visit_type(NumericBoolTypes{}, in.dtype(), body)) {
      return kernel_error(ctx, "input " + in.describe() + " has an unsupported type");
    }
    return status;
  }

 private:
  // Blocks counted separately and then written at their prefix offsets, so
  // both passes run in parallel and the order stays row-major.
  static constexpr int64_t kMaxBlocks = 64;
  static constexpr int64_t kBlockElements = 32768;

  template <typename T>
  static Status run_typed(KernelContext& ctx, const Tensor& in) {
    const T* x = in.data<T>();
    const int64_t n = in.num_elements();
    const Shape& s = in.shape();
    const size_t r = s.rank();
    const int64_t blocks = std::clamp<int64_t>(n / kBlockElements, 1, kMaxBlocks);
    const int64_t per_block = (n + blocks - 1) / blocks;
    int64_t counts[kMaxBlocks + 1] = {};
    ThreadPool& pool = ctx.thread_pool();
    pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t lo = std::min(n, blk * per_block);
        const int64_t hi = std::min(n, lo + per_block);
        int64_t c = 0;
        for (int64_t i = lo; i < hi; ++i) c += is_nonzero(x[i]) ? 1 : 0;
        counts[blk + 1] = c;
      }
    });
    for (int64_t blk = 0; blk < blocks; ++blk) counts[blk + 1] += counts[blk];
    const int64_t nnz = counts[blocks];
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, Shape{static_cast<int64_t>(r), nnz}));
    if (out->num_elements() == 0) return ok_status();
    int64_t* y = out->data<int64_t>();
    pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t lo = std::min(n, blk * per_block);
        const int64_t hi = std::min(n, lo + per_block);
        if (lo >= hi) continue;
        Shape index;
        index.resize(r);
        int64_t rem = lo;
        for (size_t k = r; k-- > 0;) {
          index[k] = rem % s[k];
          rem /= s[k];
        }
        int64_t pos = counts[blk];
        for (int64_t i = lo; i < hi; ++i) {
          if (is_nonzero(x[i])) {
            for (size_t k = 0; k < r; ++k) y[static_cast<int64_t>(k) * nnz + pos] = index[k];
            ++pos;
          }
          for (size_t k = r; k-- > 0;) {
            if (++index[k] < s[k]) break;
            index[k] = 0;
          }
        }
      }
    });
    return ok_status();
  }
};

// ---- ReverseSequence ------------------------------------------------------------

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(const KernelCreateContext& ctx, Status& status)
      : batch_axis_(ctx.node().attr_int("batch_axis", 1)), time_axis_(ctx.node().attr_int("time_axis", 0)) {
    if ((batch_axis_ != 0 && batch_axis_ != 1) || (time_axis_ != 0 && time_axis_ != 1) || batch_axis_ == time_axis_)
      status = ctx.error("batch_axis " + std::to_string(batch_axis_) + " and time_axis " + std::to_string(time_axis_) +
                         " must be 0 and 1 in some order");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor& lens = *ctx.input(1);
    const Shape& s = in.shape();
    if (s.rank() < 2) return kernel_error(ctx, "input must have rank >= 2, got " + in.describe());
    const int64_t batch = s[static_cast<size_t>(batch_axis_)];
    const int64_t steps = s[static_cast<size_t>(time_axis_)];
    if (lens.dtype() != DataType::kInt64 || lens.shape() != Shape{batch})
      return kernel_error(ctx, "sequence_lens " + lens.describe() + " must be int64 of shape [" +
                                   std::to_string(batch) + "] for input " + in.describe());
    const int64_t* len = lens.data<int64_t>();
    for (int64_t b = 0; b < batch; ++b)
      if (len[b] < 0 || len[b] > steps)
        return kernel_error(ctx, "sequence length " + std::to_string(len[b]) + " of batch entry " + std::to_string(b) +
                                     " is outside [0, " + std::to_string(steps) + "]");
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), s));
    if (out->num_elements() == 0) return ok_status();
    const int64_t d1 = s[1];
    const int64_t inner = s.size_from(2);
    const bool time_first = time_axis_ == 0;
    return dispatch_by_element(in.dtype(), [&]<typename T>() {
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ctx.thread_pool().parallel_for(s[0] * d1, rows_per_chunk(inner, sizeof(T)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const int64_t i0 = row / d1;
          const int64_t i1 = row % d1;
          const int64_t t = time_first ? i0 : i1;
          const int64_t n = len[time_first ? i1 : i0];
          const int64_t from_t = t < n ? n - 1 - t : t;
          const int64_t from = time_first ? from_t * d1 + i1 : i0 * d1 + from_t;
          copy_elements(dst + row * inner, src + from * inner, inner);
        }
      });
      return ok_status();
    });
  }

 private:
  int64_t batch_axis_;
  int64_t time_axis_;
};

// ---- BitCast --------------------------------------------------------------------

int bit_width(DataType t) {
  if (t == DataType::kString) return 0;
  if (const int bits = packed_bits(t)) return bits;
  return static_cast<int>(element_size(t)) * 8;
}

class BitCastKernel final : public Kernel {
 public:
  BitCastKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t to = ctx.node().attr_int("to", 0);
    if (to <= 0 || to > kMaxDataTypeValue || !is_valid_data_type(static_cast<int32_t>(to)) ||
        static_cast<DataType>(to) == DataType::kString) {
      status = ctx.error("attribute 'to' = " + std::to_string(to) + " is not a non-string tensor type");
      return;
    }
    to_ = static_cast<DataType>(to);
    const DataType from = ctx.input_dtype(0);
    if (from != DataType::kUndefined && bit_width(from) != bit_width(to_))
      status = ctx.error("cannot bitcast " + tensor_type_string(from) + " (" + std::to_string(bit_width(from)) +
                         " bits) to " + tensor_type_string(to_) + " (" + std::to_string(bit_width(to_)) + " bits)");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.dtype() == DataType::kString || bit_width(in.dtype()) != bit_width(to_))
      return kernel_error(
          ctx, "cannot bitcast " + in.describe() + " to " + tensor_type_string(to_) + ": the bit widths differ");
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, to_, in.shape()));
    copy_tensor_data(in, *out, ctx.thread_pool());  // same bytes, another type
    return ok_status();
  }

 private:
  DataType to_ = DataType::kUndefined;
};

constexpr uint64_t kNumericMask = type_mask(NumericTypes{});
constexpr uint64_t kNonZeroMask = kNumericMask | type_bit(DataType::kBool) | type_bit(DataType::kString) |
                                  type_bit(DataType::kComplex64) | type_bit(DataType::kComplex128);

const KernelDef kIndexingKernels[] = {
    {"", "OneHot", 9, kLatestVersion, 0, kNumericMask, &make_kernel<OneHotKernel>},
    {"", "Compress", 9, kLatestVersion, 0, kElementTypes, &make_kernel<CompressKernel>},
    {"", "NonZero", 9, kLatestVersion, 0, kNonZeroMask, &make_kernel<NonZeroKernel>},
    {"", "ReverseSequence", 10, kLatestVersion, 0, kElementTypes, &make_kernel<ReverseSequenceKernel>},
    {"", "BitCast", 26, kLatestVersion, 0, kAllTensorTypes & ~type_bit(DataType::kString), &make_kernel<BitCastKernel>},
};

}  // namespace

std::span<const KernelDef> indexing_kernels() { return kIndexingKernels; }

}  // namespace sy::cpu
