// RotaryEmbedding (RoPE): the first rotary_embedding_dim values of each
// head are rotated in pairs by angles that depend on the token's position;
// the rest of the head is copied. A pair is (i, i + dim/2), or (2i, 2i + 1)
// when interleaved. The cos and sin of token (b, s) are row
// position_ids[b, s] of the 2-D caches, or row (b, s) of the 3-D caches
// when position_ids is omitted.
//
// X is [batch, heads, sequence, head_size], or [batch, sequence, hidden]
// split into num_heads heads; either way each head of each token is one
// contiguous row of head_size values, and rows run in parallel.
#include <algorithm>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using RotaryTypes = TypeList<float, Float16, BFloat16>;

// Where the rows of X and of the caches are.
struct RotaryGeometry {
  int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
  int64_t half = 0;                 // rotary_embedding_dim / 2
  bool heads_outer = true;          // 4-D [B, H, S, D]; 3-D is [B, S, H, D]
  bool cache_batch = false;         // the caches (or position_ids) have a batch dim > 1
  const int64_t* positions = nullptr;  // [batch or 1, seq], or null
};

template <typename T>
void rotate_rows(const T* x, const T* cos_cache, const T* sin_cache, T* y, const RotaryGeometry& g, bool interleaved,
                 ThreadPool& pool) {
  const int64_t rows = g.batch * g.heads * g.seq;
  const int64_t d = g.head_size;
  const int64_t half = g.half;
  parallel_range(pool, rows, std::max<int64_t>(1, kCheapChunk / d), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t s = g.heads_outer ? r % g.seq : (r / g.heads) % g.seq;
      const int64_t b = r / (g.heads * g.seq);
      const int64_t token = (g.cache_batch ? b : 0) * g.seq + s;
      const int64_t cache_row = g.positions != nullptr ? g.positions[token] : token;
      const T* c = cos_cache + cache_row * half;
      const T* sn = sin_cache + cache_row * half;
      const T* xr = x + r * d;
      T* yr = y + r * d;
      // Pair i is (lo + i * step, hi + i * step).
      const int64_t hi = interleaved ? 1 : half;
      const int64_t step = interleaved ? 2 : 1;
      for (int64_t i = 0; i < half; ++i) {
        const float cv = load(c[i]);
        const float sv = load(sn[i]);
        const float x1 = load(xr[i * step]);
        const float x2 = load(xr[hi + i * step]);
        yr[i * step] = store<T>(cv * x1 - sv * x2);
        yr[hi + i * step] = store<T>(sv * x1 + cv * x2);
      }
      std::copy(xr + 2 * half, xr + d, yr + 2 * half);
    }
  });
}

class RotaryEmbeddingKernel final : public Kernel {
 public:
  RotaryEmbeddingKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& n = ctx.node();
    interleaved_ = n.attr_int("interleaved", 0);
    rotary_dim_ = n.attr_int("rotary_embedding_dim", 0);
    num_heads_ = n.attr_int("num_heads", 0);
    if (interleaved_ != 0 && interleaved_ != 1) {
      status = ctx.error("attribute interleaved must be 0 or 1, got " + std::to_string(interleaved_));
    } else if (rotary_dim_ < 0 || rotary_dim_ % 2 != 0) {
      status = ctx.error("attribute rotary_embedding_dim must be 0 (the whole head) or a positive even number, got " +
                         std::to_string(rotary_dim_));
    } else if (num_heads_ < 0) {
      status = ctx.error("attribute num_heads must be positive, got " + std::to_string(num_heads_));
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* cos_cache = ctx.input(1);
    const Tensor* sin_cache = ctx.input(2);
    if (x == nullptr || cos_cache == nullptr || sin_cache == nullptr)
      return kernel_error(ctx, "inputs X, cos_cache and sin_cache are required");
    RotaryGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, g));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->num_elements() == 0) return ok_status();
    const bool handled = visit_type(RotaryTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      rotate_rows<T>(x->data<T>(), cos_cache->data<T>(), sin_cache->data<T>(), y->data<T>(), g, interleaved_ != 0,
                     ctx.thread_pool());
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "X"));
    return ok_status();
  }

 private:
  // Checks the inputs' shapes against each other and the attributes, and
  // every position id against the caches' rows.
  Status geometry(const KernelContext& ctx, RotaryGeometry& g) const {
    const Tensor& x = *ctx.input(0);
    const Tensor& cos_cache = *ctx.input(1);
    const Tensor& sin_cache = *ctx.input(2);
    const Tensor* position_ids = ctx.input(3);
    const Shape& xs = x.shape();
    if (xs.rank() == 4) {
      g.batch = xs[0];
      g.heads = xs[1];
      g.seq = xs[2];
      g.head_size = xs[3];
    } else if (xs.rank() == 3) {
      if (num_heads_ == 0)
        return kernel_error(ctx, "X " + xs.to_string() + " is 3-D, so attribute num_heads is required");
      if (xs[2] % num_heads_ != 0)
        return kernel_error(ctx, "X " + xs.to_string() + ": hidden size " + std::to_string(xs[2]) +
                                     " is not a multiple of num_heads " + std::to_string(num_heads_));
      g.batch = xs[0];
      g.seq = xs[1];
      g.heads = num_heads_;
      g.head_size = xs[2] / num_heads_;
      g.heads_outer = false;
    } else {
      return kernel_error(ctx, "X must be 3-D [batch, sequence, hidden] or 4-D [batch, heads, sequence, "
                               "head_size], got " + xs.to_string());
    }
    const int64_t dim = rotary_dim_ == 0 ? g.head_size : rotary_dim_;
    if (dim > g.head_size || dim % 2 != 0)
      return kernel_error(ctx, "the rotary embedding dim " + std::to_string(dim) +
                                   " must be even and at most the head size " + std::to_string(g.head_size) +
                                   " (X " + xs.to_string() + ")");
    g.half = dim / 2;
    for (const Tensor* c : {&cos_cache, &sin_cache})
      if (c->dtype() != x.dtype())
        return kernel_error(ctx, "cos_cache and sin_cache must have X's type " +
                                     std::string(data_type_name(x.dtype())) + ", got " + c->describe());
    if (cos_cache.shape() != sin_cache.shape())
      return kernel_error(ctx, "cos_cache " + cos_cache.shape().to_string() + " and sin_cache " +
                                   sin_cache.shape().to_string() + " must have one shape");
    const Shape& cs = cos_cache.shape();
    if (position_ids != nullptr) {
      const Shape& ps = position_ids->shape();
      if (position_ids->dtype() != DataType::kInt64 || ps.rank() != 2 || (ps[0] != g.batch && ps[0] != 1) ||
          ps[1] != g.seq)
        return kernel_error(ctx, describe_input(ctx, 3, "position_ids") + " must be int64 [" +
                                     std::to_string(g.batch) + " or 1, " + std::to_string(g.seq) + "]");
      if (cs.rank() != 2 || cs[1] != g.half)
        return kernel_error(ctx, "with position_ids, cos_cache and sin_cache must be [max_position + 1, " +
                                     std::to_string(g.half) + "], got " + cs.to_string());
      const int64_t* pos = position_ids->data<int64_t>();
      for (int64_t i = 0; i < position_ids->num_elements(); ++i)
        if (pos[i] < 0 || pos[i] >= cs[0])
          return kernel_error(ctx, "position id " + std::to_string(pos[i]) + " is outside the caches' " +
                                       std::to_string(cs[0]) + " rows");
      g.positions = pos;
      g.cache_batch = ps[0] != 1;
    } else {
      if (cs.rank() != 3 || (cs[0] != g.batch && cs[0] != 1) || cs[1] != g.seq || cs[2] != g.half)
        return kernel_error(ctx, "without position_ids, cos_cache and sin_cache must be [" + std::to_string(g.batch) +
                                     " or 1, " + std::to_string(g.seq) + ", " + std::to_string(g.half) + "], got " +
                                     cs.to_string());
      g.cache_batch = cs[0] != 1;
    }
    return ok_status();
  }

  int64_t interleaved_ = 0;
  int64_t rotary_dim_ = 0;
  int64_t num_heads_ = 0;
};

constexpr KernelDef kRotaryEmbeddingKernels[] = {
    {"", "RotaryEmbedding", 23, kLatestVersion, 0, type_mask(RotaryTypes{}), &make_kernel<RotaryEmbeddingKernel>},
};

}  // namespace

std::span<const KernelDef> rotary_embedding_kernels() { return kRotaryEmbeddingKernels; }

}  // namespace sy::cpu
