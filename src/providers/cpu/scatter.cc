// Scatter (the deprecated name of ScatterElements), ScatterElements,
// ScatterND and TensorScatter. Each copies its data input to the output and
// then writes updates into it. Indices are checked in one pass before any
// write, so a bad index is an error naming it instead of a write outside the
// tensor, and the write loops have no error path.
//
// Duplicate indices make the order of writes matter (last one wins, or the
// reduction sees each update once), so work is split only where writes
// cannot meet: across lanes that differ off the scatter axis
// (ScatterElements), across positions within the slices (ScatterND), or
// across rows (TensorScatter, whose rows are distinct by construction).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> read_reduction(const KernelCreateContext& ctx) {
  if (ctx.opset() < 16) return Reduction::kNone;
  const std::string r = ctx.node().attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (ctx.opset() >= 18 && r == "max") return Reduction::kMax;
  if (ctx.opset() >= 18 && r == "min") return Reduction::kMin;
  return ctx.error("reduction '" + r + "' is not supported (expected none, add, mul" +
                   (ctx.opset() >= 18 ? ", max, min)" : ")"));
}

template <typename T, Reduction R>
inline void combine(T& dst, const T& src) {
  if constexpr (R == Reduction::kNone) {
    dst = src;
  } else {
    using C = compute_t<T>;
    const C a = load(dst);
    const C b = load(src);
    if constexpr (std::is_same_v<T, bool>) {
      // Sum and max are "or", product and min are "and".
      dst = (R == Reduction::kAdd || R == Reduction::kMax) ? (a || b) : (a && b);
    } else if constexpr (R == Reduction::kAdd) {
      dst = store<T>(static_cast<C>(a + b));
    } else if constexpr (R == Reduction::kMul) {
      dst = store<T>(static_cast<C>(a * b));
    } else if constexpr (R == Reduction::kMax) {
      dst = store<T>(std::max(a, b));
    } else {
      dst = store<T>(std::min(a, b));
    }
  }
}

// Calls fn.template operator()<T, R>() with T the element type to work on:
// the storage type for plain writes (one instantiation per element size),
// the real numeric type for reductions.
template <typename Fn>
Status dispatch_scatter(const KernelContext& ctx, DataType dtype, Reduction r, Fn&& fn) {
  if (r == Reduction::kNone)
    return dispatch_by_element(dtype, [&]<typename T>() { return fn.template operator()<T, Reduction::kNone>(); });
  Status status;
  const bool found = visit_type(NumericBoolTypes{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (r) {
      case Reduction::kAdd:
        status = fn.template operator()<T, Reduction::kAdd>();
        break;
      case Reduction::kMul:
        status = fn.template operator()<T, Reduction::kMul>();
        break;
      case Reduction::kMax:
        status = fn.template operator()<T, Reduction::kMax>();
        break;
      case Reduction::kMin:
        status = fn.template operator()<T, Reduction::kMin>();
        break;
      case Reduction::kNone:
        break;
    }
  });
  if (!found)
    return kernel_error(ctx, "a reduction is not supported for element type " + std::string(data_type_name(dtype)));
  return status;
}

// ---- ScatterElements / Scatter --------------------------------------------------

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(const KernelCreateContext& ctx, Status& status) : axis_(ctx.node().attr_int("axis", 0)) {
    Result<Reduction> r = read_reduction(ctx);
    if (!r.ok()) {
      status = r.status();
      return;
    }
    reduction_ = *r;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    const Shape& s = data.shape();
    const Shape& is = indices.shape();
    const auto r = static_cast<int64_t>(s.rank());
    int64_t axis = axis_;
    if (r == 0 || !normalize_axis(axis, r))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for data " + data.describe());
    const auto a = static_cast<size_t>(axis);
    bool ok = is.rank() == s.rank();
    for (size_t k = 0; ok && k < s.rank(); ++k) ok = k == a || is[k] <= s[k];
    if (!ok)
      return kernel_error(ctx, "indices " + indices.describe() + " must have the rank of data " + data.describe() +
                                   " and no larger dims except on axis " + std::to_string(axis));
    if (updates.shape() != is || updates.dtype() != data.dtype())
      return kernel_error(ctx, "updates " + updates.describe() + " must have the shape of indices " +
                                   indices.describe() + " and the type of data " + data.describe());
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data.dtype(), s));
    copy_tensor_data(data, *out, ctx.thread_pool());
    const int64_t total = indices.num_elements();
    if (total == 0) return ok_status();

    Shape ds;
    contiguous_strides(s, ds);
    const int64_t dim = s[a];
    const int64_t axis_stride = ds[a];
    const int64_t outer = is.size_to(a);
    const int64_t along = is[a];
    const int64_t inner = is.size_from(a + 1);
    bool inner_contiguous = true;
    for (size_t k = a + 1; k < s.rank(); ++k) inner_contiguous = inner_contiguous && is[k] == s[k];

    // Data offset of the lane's position off the axis: outer part.
    auto outer_offset = [&](int64_t o) {
      int64_t off = 0;
      for (size_t k = a; k-- > 0;) {
        off += (o % is[k]) * ds[k];
        o /= is[k];
      }
      return off;
    };
    auto inner_offset = [&](int64_t j) {
      if (inner_contiguous) return j;
      int64_t off = 0;
      for (size_t k = s.rank(); k-- > a + 1;) {
        off += (j % is[k]) * ds[k];
        j /= is[k];
      }
      return off;
    };

    return dispatch_index(ctx, indices, [&]<typename I>() {
      const I* idx = indices.data<I>();
      SY_RETURN_IF_ERROR(check_indices(ctx, idx, total, dim, data, axis));
      return dispatch_scatter(ctx, data.dtype(), reduction_, [&]<typename T, Reduction R>() {
        const T* upd = updates.data<T>();
        T* dst = out->data<T>();
        const int64_t lanes = outer * inner;
        const int64_t min_lanes = std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(along, 1));
        ctx.thread_pool().parallel_for(lanes, min_lanes, [&](int64_t b, int64_t e) {
          for (int64_t lane = b; lane < e;) {
            const int64_t o = lane / inner;
            const int64_t j0 = lane % inner;
            const int64_t j1 = std::min(inner, j0 + (e - lane));
            const int64_t base = outer_offset(o);
            for (int64_t k = 0; k < along; ++k) {
              const int64_t row = (o * along + k) * inner;
              for (int64_t j = j0; j < j1; ++j) {
                int64_t v = idx[row + j];
                if (v < 0) v += dim;
                combine<T, R>(dst[base + v * axis_stride + inner_offset(j)], upd[row + j]);
              }
            }
            lane += j1 - j0;
          }
        });
        return ok_status();
      });
    });
  }

 private:
  int64_t axis_;
  Reduction reduction_ = Reduction::kNone;
};

// ---- ScatterND ----------------------------------------------------------------------

class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(const KernelCreateContext& ctx, Status& status) {
    Result<Reduction> r = read_reduction(ctx);
    if (!r.ok()) {
      status = r.status();
      return;
    }
    reduction_ = *r;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    const Shape& s = data.shape();
    const Shape& is = indices.shape();
    const size_t r = s.rank();
    const size_t q = is.rank();
    if (r < 1 || q < 1)
      return kernel_error(ctx,
                          "data " + data.describe() + " and indices " + indices.describe() + " must have rank >= 1");
    const int64_t k = is[q - 1];
    if (k < 0 || k > static_cast<int64_t>(r))
      return kernel_error(ctx, "indices " + indices.describe() + " hold tuples of " + std::to_string(k) +
                                   " indices; expected at most the rank of data " + data.describe());
    Shape want;
    for (size_t i = 0; i + 1 < q; ++i) want.push_back(is[i]);
    for (size_t i = static_cast<size_t>(k); i < r; ++i) want.push_back(s[i]);
    if (updates.shape() != want || updates.dtype() != data.dtype())
      return kernel_error(ctx, "updates " + updates.describe() + " must have shape " + want.to_string() +
                                   " and the type of data " + data.describe());
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data.dtype(), s));
    copy_tensor_data(data, *out, ctx.thread_pool());
    const int64_t tuples = k == 0 ? is.size_to(q - 1) : indices.num_elements() / k;
    const int64_t slice = s.size_from(static_cast<size_t>(k));
    if (tuples == 0 || slice == 0) return ok_status();

    Shape ds;
    contiguous_strides(s, ds);
    // One data offset per tuple, computed once: every task walks all tuples.
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(tuples) * sizeof(int64_t)));
    auto* offsets = static_cast<int64_t*>(mem);
    SY_RETURN_IF_ERROR(dispatch_index(ctx, indices, [&]<typename I>() {
      const I* idx = indices.data<I>();
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = 0;
        for (int64_t c = 0; c < k; ++c) {
          const int64_t dim = s[static_cast<size_t>(c)];
          int64_t v = idx[t * k + c];
          if (v < -dim || v >= dim) return index_error(ctx, t * k + c, v, dim, data, c);
          if (v < 0) v += dim;
          off += v * ds[static_cast<size_t>(c)];
        }
        offsets[t] = off;
      }
      return ok_status();
    }));

    return dispatch_scatter(ctx, data.dtype(), reduction_, [&]<typename T, Reduction R>() {
      const T* upd = updates.data<T>();
      T* dst = out->data<T>();
      const int64_t min_chunk = std::max<int64_t>(1, kCheapChunk / tuples);
      ctx.thread_pool().parallel_for(slice, min_chunk, [&](int64_t b, int64_t e) {
        for (int64_t t = 0; t < tuples; ++t) {
          T* d = dst + offsets[t];
          const T* u = upd + t * slice;
          if constexpr (R == Reduction::kNone) {
            copy_elements(d + b, u + b, e - b);
          } else {
            for (int64_t j = b; j < e; ++j) combine<T, R>(d[j], u[j]);
          }
        }
      });
      return ok_status();
    });
  }

 private:
  Reduction reduction_ = Reduction::kNone;
};

// ---- TensorScatter --------------------------------------------------------------

class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(const KernelCreateContext& ctx, Status& status) : axis_(ctx.node().attr_int("axis", -2)) {
    const std::string mode = ctx.node().attr_string("mode", "linear");
    if (mode == "circular") {
      circular_ = true;
    } else if (mode != "linear") {
      status = ctx.error("mode '" + mode + "' is not supported (expected linear or circular)");
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& past = *ctx.input(0);
    const Tensor& update = *ctx.input(1);
    const Tensor* write = ctx.input(2);
    const Shape& s = past.shape();
    const Shape& us = update.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    int64_t axis = axis_;
    if (rank < 2 || !normalize_axis(axis, rank) || axis == 0)
      return kernel_error(
          ctx, "axis " + std::to_string(axis_) + " must name a non-batch axis of past_cache " + past.describe());
    const auto a = static_cast<size_t>(axis);
    bool ok = us.rank() == s.rank() && update.dtype() == past.dtype() && us[a] <= s[a];
    for (size_t k = 0; ok && k < s.rank(); ++k) ok = k == a || us[k] == s[k];
    if (!ok)
      return kernel_error(ctx, "update " + update.describe() + " must match past_cache " + past.describe() +
                                   " in type and in every dim but axis " + std::to_string(axis) +
                                   ", where it may not be longer");
    const int64_t batch = s[0];
    if (write != nullptr && (write->dtype() != DataType::kInt64 || write->shape() != Shape{batch}))
      return kernel_error(
          ctx, "write_indices " + write->describe() + " must be int64 of shape [" + std::to_string(batch) + "]");
    const int64_t max_seq = s[a];
    const int64_t seq = us[a];
    const int64_t* wi = write ? write->data<int64_t>() : nullptr;
    if (!circular_ && wi != nullptr)
      for (int64_t b = 0; b < batch; ++b)
        if (wi[b] < 0 || wi[b] + seq > max_seq)
          return kernel_error(ctx, "write index " + std::to_string(wi[b]) + " of batch entry " + std::to_string(b) +
                                       " plus " + std::to_string(seq) + " updates does not fit in " +
                                       std::to_string(max_seq) + " cache positions (linear mode)");

    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, past.dtype(), s));
    copy_tensor_data(past, *out, ctx.thread_pool());
    const int64_t outer = s.size_to(a);
    const int64_t inner = s.size_from(a + 1);
    if (outer == 0 || seq == 0 || inner == 0) return ok_status();
    const int64_t per_batch = outer / batch;
    const bool circular = circular_;
    auto position = [&](int64_t row) {
      const int64_t o = row / seq;
      int64_t p = (wi ? wi[o / per_batch] : 0) + row % seq;
      if (circular) {
        p %= max_seq;
        if (p < 0) p += max_seq;
      }
      return o * max_seq + p;
    };

    if (past.dtype() == DataType::kString) {
      const std::string* src = update.data<std::string>();
      std::string* dst = out->data<std::string>();
      ctx.thread_pool().parallel_for(outer * seq, rows_per_chunk(inner, 32), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) copy_elements(dst + position(row) * inner, src + row * inner, inner);
      });
      return ok_status();
    }
    // Rows are moved as bytes, which serves every type, packed ones too
    // when a row is a whole number of bytes.
    const auto row_bytes = static_cast<int64_t>(storage_bytes(past.dtype(), inner));
    if (element_size(past.dtype()) == 0 &&
        static_cast<int64_t>(storage_bytes(past.dtype(), inner * 2)) != 2 * row_bytes)
      return kernel_error(ctx, "rows of " + std::to_string(inner) + " packed " +
                                   std::string(data_type_name(past.dtype())) +
                                   " elements do not end on a byte boundary, which this kernel does not support");
    const auto* src = static_cast<const uint8_t*>(update.raw_data());
    auto* dst = static_cast<uint8_t*>(out->raw_data());
    ctx.thread_pool().parallel_for(outer * seq, rows_per_chunk(row_bytes, 1), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row)
        std::memcpy(dst + position(row) * row_bytes, src + row * row_bytes, static_cast<size_t>(row_bytes));
    });
    return ok_status();
  }

 private:
  int64_t axis_;
  bool circular_ = false;
};

const KernelDef kScatterKernels[] = {
    {"", "Scatter", 9, 11, 0, kElementTypes, &make_kernel<ScatterElementsKernel>},
    {"", "ScatterElements", 11, kLatestVersion, 0, kElementTypes, &make_kernel<ScatterElementsKernel>},
    {"", "ScatterND", 11, kLatestVersion, 0, kElementTypes, &make_kernel<ScatterNDKernel>},
    {"", "TensorScatter", 24, kLatestVersion, 0, kAllTensorTypes, &make_kernel<TensorScatterKernel>},
};

}  // namespace

std::span<const KernelDef> scatter_kernels() { return kScatterKernels; }

}  // namespace sy::cpu
