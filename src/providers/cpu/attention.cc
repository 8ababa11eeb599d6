// Attention (ai.onnx 23, 24, 25): scaled dot-product attention over Q, K, V
// in 4-D [batch, heads, sequence, head size] or 3-D [batch, sequence,
// heads * head size] layout, with grouped query heads (GQA/MQA), an additive
// or boolean mask, causal and (25) sliding-window masking, a key/value cache
// (past_key/past_value in, present_key/present_value out), the padding
// lengths of an external cache (nonpad_kv_seqlen, 24) and the optional
// qk_matmul_output.
//
// For each (batch, query head) pair and block of query rows, one task
// computes, in a buffer of its own,
//   S = scale * Q_h K_h^T                   sgemm, K read transposed in place
//   S = softcap * tanh(S / softcap)         when softcap is not 0
//   S = S + bias                            attn_mask, causal, window, padding
//   P = softmax(S) per row                  0 for a row whose every key is masked
//   Y_h = P V_h                             sgemm, stored at Y's own strides
// Q, K, V and Y are read and written where they lie (a 3-D input's head is a
// column slice), so nothing is transposed or copied on the float path.
//
// The causal, window, padding and mask-width limits, and the masked keys
// at either end of the mask's row, give each row a range of keys [lo, hi)
// outside which every bias is -inf. A finite bias so far below the rest of
// the row that its key's probability is exactly 0 in float (BERT's -10000
// padding) narrows the range too (trim_negligible). A block computes
// scores only for the union of its rows' ranges, so a causal block
// (is_causal or a triangular mask tensor) skips the keys after its last
// row; the block size trades that saving against packing each block's keys
// again.
//
// Fully masked rows follow every version's text (23 by its errata): when
// every key's bias is -inf the row's probabilities are 0, so its Y row (and
// a mode-3 qk_matmul_output row) is 0 rather than NaN.
//
// float is the fast path. float16 and bfloat16 inputs are widened to float
// once and the results rounded once; double runs the same steps in double
// with plain loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "providers/cpu/abs_max_simd.h"
#include "providers/cpu/activation_simd.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gemm/naive_gemm.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/softmax_simd.h"
#include "providers/kernel.h"
#include "schema/fused.h"

namespace sy::cpu {
namespace {

// Lengths and window sizes are clamped to this, so that offsets computed
// from untrusted values (nonpad_kv_seqlen, window attributes) cannot
// overflow; any tensor that fits in memory is far shorter.
constexpr int64_t kMaxLength = int64_t{1} << 40;

// Scores held by one task: rows x keys are sized so the block stays in L2
// (128 rows of 128 keys for BERT); long key sequences get fewer rows.
constexpr int64_t kScoreBlockElements = 16384;

// While alive, float results too small to be normal become 0 and such
// inputs read as 0 (x86 FTZ and DAZ). Masked keys (a -10000 padding mask)
// give exponentials in that range; computing them as denormals costs a
// microcode assist each, and BERT's attention ran 6% slower. Their values
// (below 1.2e-38, against row sums of at least 1) change no result. Only
// the row steps run under it, not the GEMMs.
class FlushDenormals {
 public:
#if defined(__SSE__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtz | kDaz); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFtz = 0x8000;
  static constexpr unsigned kDaz = 0x0040;
  unsigned saved_;
#endif
};

// Where the rows of one head start, for a tensor seen as
// [batch][head][row][column]: 4-D [B, H, N, d] or 3-D [B, N, H * d].
struct HeadRows {
  int64_t batch_stride = 0;
  int64_t head_stride = 0;
  int64_t row_stride = 0;
  int64_t offset(int64_t b, int64_t h) const { return b * batch_stride + h * head_stride; }
};

HeadRows layout_4d(int64_t heads, int64_t rows, int64_t cols) { return {heads * rows * cols, rows * cols, cols}; }
HeadRows layout_3d(int64_t heads, int64_t rows, int64_t cols) { return {rows * heads * cols, cols, heads * cols}; }

// The sizes of one call, checked against each other.
struct Dims {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;      // S
  int64_t kv_len = 0;     // L, keys in K and V
  int64_t past_len = 0;   // P, keys in past_key and past_value
  int64_t total_len = 0;  // T = P + L
  int64_t head_size = 0;  // D of Q and K
  int64_t v_head_size = 0;
  bool has_past = false;
  HeadRows q, k, v, y;
  Shape y_shape;
};

// attn_mask as the kernel reads it: element (b, h, i, j) is at
// b * batch_stride + h * head_stride + i * row_stride + j * col_stride.
struct MaskView {
  const void* data = nullptr;  // nullptr: no mask
  DataType dtype = DataType::kUndefined;
  int64_t batch_stride = 0;  // 0 where the mask broadcasts
  int64_t head_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;  // 0: one value for every key (opset 23 broadcast)
  int64_t width = 0;       // keys the mask covers; from opset 24 later keys are masked (padded with -inf)
};

// Keys [lo, hi) a query row may attend: every key outside has a bias of -inf.
struct KeyRange {
  int64_t lo = 0;
  int64_t hi = 0;
  bool empty() const { return lo >= hi; }
};

class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& n = ctx.node();
    opset_ = ctx.opset();
    is_causal_ = n.attr_int("is_causal", 0) != 0;
    q_num_heads_ = n.attr_int("q_num_heads", 0);
    kv_num_heads_ = n.attr_int("kv_num_heads", 0);
    mode_ = n.attr_int("qk_matmul_output_mode", 0);
    has_scale_ = n.has_attr("scale");
    scale_ = n.attr_float("scale", 1.0f);
    softcap_ = n.attr_float("softcap", 0.0f);
    const int64_t precision = n.attr_int("softmax_precision", 0);
    // float and 16-bit inputs run the softmax in float, double inputs in
    // double. Only a request for more than that changes anything: double
    // for float inputs. Narrower requests get float, which is more precise
    // than asked for, as the spec allows an implementation to be.
    softmax_in_double_ = precision == static_cast<int64_t>(DataType::kDouble);
    if (opset_ >= 25 && n.domain != kSwitchyardDomain) {
      left_window_ = n.attr_int("left_window_size", -1);
      right_window_ = n.attr_int("right_window_size", -1);
    }
    if (n.domain == kSwitchyardDomain) {
      chain_ = true;
      replace_ = n.attr_string(kMaskedScoresAttr, "add") == "replace";
      if (replace_) causal_fill_ = n.attr_float(kCausalFillAttr, causal_fill_);
    }
    if (mode_ < 0 || mode_ > 3) {
      status = ctx.error("attribute qk_matmul_output_mode must be 0, 1, 2 or 3; got " + std::to_string(mode_));
    } else if (n.has_attr("softmax_precision") && precision != 1 && precision != 10 && precision != 11 &&
               precision != 16) {
      status = ctx.error("attribute softmax_precision must be 1, 10, 11 or 16; got " + std::to_string(precision));
    } else if (left_window_ < -1 || right_window_ < -1) {
      status = ctx.error("window sizes must be -1 (unbounded) or >= 0; got left " + std::to_string(left_window_) +
                         ", right " + std::to_string(right_window_));
    } else if ((n.has_attr("q_num_heads") && q_num_heads_ <= 0) ||
               (n.has_attr("kv_num_heads") && kv_num_heads_ <= 0)) {
      status = ctx.error("q_num_heads and kv_num_heads must be positive");
    }
    left_window_ = std::min(left_window_, kMaxLength);
    right_window_ = std::min(right_window_, kMaxLength);
  }

  Status run(KernelContext& ctx) const override {
    Dims d;
    SY_RETURN_IF_ERROR(check_inputs(ctx, d));
    MaskView mask;
    if (const Tensor* m = ctx.input(3)) {
      SY_RETURN_IF_ERROR(check_mask(ctx, *m, d, mask));
    }
    const Tensor* nonpad = opset_ >= 24 ? ctx.input(6) : nullptr;
    if (nonpad != nullptr && (nonpad->dtype() != DataType::kInt64 || nonpad->shape().rank() != 1 ||
                              nonpad->shape()[0] != d.batch))
      return kernel_error(ctx, "input 6 (nonpad_kv_seqlen) must be int64 [" + std::to_string(d.batch) + "]; got " +
                                   nonpad->describe());

    const Tensor& q = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype(), d.y_shape));
    Tensor* present_key = nullptr;
    Tensor* present_value = nullptr;
    Tensor* qk = nullptr;
    if (wants_output(ctx, 1)) {
      SY_ASSIGN_OR_RETURN(present_key, ctx.allocate_output(1, ctx.input(1)->dtype(),
                                                           Shape{d.batch, d.kv_heads, d.total_len, d.head_size}));
      copy_cache(ctx, ctx.input(4), *ctx.input(1), d.k, d, d.head_size, *present_key);
    }
    if (wants_output(ctx, 2)) {
      SY_ASSIGN_OR_RETURN(present_value, ctx.allocate_output(2, ctx.input(2)->dtype(),
                                                             Shape{d.batch, d.kv_heads, d.total_len, d.v_head_size}));
      copy_cache(ctx, ctx.input(5), *ctx.input(2), d.v, d, d.v_head_size, *present_value);
    }
    if (wants_output(ctx, 3)) {
      SY_ASSIGN_OR_RETURN(qk, ctx.allocate_output(3, q.dtype(), Shape{d.batch, d.q_heads, d.q_len, d.total_len}));
    }
    if (d.batch * d.q_heads * d.q_len == 0) return ok_status();  // Y and qk_matmul_output are empty

    Outputs out{y, present_key, present_value, qk};
    const int64_t* lengths = nonpad != nullptr ? nonpad->data<int64_t>() : nullptr;
    if (q.dtype() == DataType::kDouble) return run_typed<double>(ctx, d, mask, lengths, out);
    return run_typed<float>(ctx, d, mask, lengths, out);
  }

 private:
  struct Outputs {
    Tensor* y;
    Tensor* present_key;  // nullptr when not requested
    Tensor* present_value;
    Tensor* qk;
  };

  // K or V (with its cache) in compute type C: keys [0, past_rows) in
  // `past`, the rest in `cur`.
  template <typename C>
  struct KvSource {
    const C* past = nullptr;
    int64_t past_rows = 0;
    HeadRows past_layout;
    const C* cur = nullptr;
    HeadRows cur_layout;

    // f(first key, key count, first key's row, row stride) for the parts of
    // keys [k0, k1) of head (b, h) in `past` and in `cur`.
    template <typename F>
    void for_each_part(int64_t b, int64_t h, int64_t k0, int64_t k1, F&& f) const {
      if (k0 < past_rows) {
        const int64_t e = std::min(k1, past_rows);
        f(k0, e - k0, past + past_layout.offset(b, h) + k0 * past_layout.row_stride, past_layout.row_stride);
      }
      if (k1 > past_rows) {
        const int64_t s = std::max(k0, past_rows);
        f(s, k1 - s, cur + cur_layout.offset(b, h) + (s - past_rows) * cur_layout.row_stride, cur_layout.row_stride);
      }
    }
  };

  // Everything a task reads and writes, in compute type C.
  template <typename C>
  struct Problem {
    Dims d;
    MaskView mask;
    const int64_t* nonpad = nullptr;  // [batch] or nullptr
    const C* q = nullptr;
    KvSource<C> k, v;
    C* y = nullptr;   // laid out as Y (d.y)
    C* qk = nullptr;  // [B, Hq, S, T], or nullptr
    bool all_keys = false;  // qk_matmul_output modes 0 and 1 want the raw score of every key
    C alpha = C{1};
    // FusedAttention: per (batch, key/value head), whether its K or V holds
    // a value that is not finite (then its rows are recomputed the chain's
    // way); nullptr for Attention.
    const unsigned char* kv_nonfinite = nullptr;
    int64_t block_rows = 0;
    int64_t blocks_per_pair = 0;
    size_t lane_bytes = 0;
  };

  static bool wants_output(const KernelContext& ctx, size_t i) {
    return ctx.num_outputs() > i && ctx.output_requested(i);
  }

  // ---- input checks ----

  // `t` (input `index`, named `name`) as [batch, heads, rows, head size]:
  // from its 4-D shape, or its 3-D shape and the heads attribute.
  Status headed(const KernelContext& ctx, const Tensor& t, size_t index, const char* name, int64_t attr_heads,
                const char* attr_name, int64_t dims[4], HeadRows& layout) const {
    const Shape& s = t.shape();
    // Messages are built only on failure: run() must not allocate otherwise.
    auto what = [&] { return "input " + std::to_string(index) + " (" + name + ") " + s.to_string(); };
    if (s.rank() == 4) {
      if (attr_heads > 0 && attr_heads != s[1])
        return kernel_error(ctx, what() + " has " + std::to_string(s[1]) + " heads but attribute " + attr_name +
                                     " is " + std::to_string(attr_heads));
      for (size_t i = 0; i < 4; ++i) dims[i] = s[i];
      layout = layout_4d(s[1], s[2], s[3]);
      return ok_status();
    }
    if (s.rank() != 3) return kernel_error(ctx, what() + " must be 3-D or 4-D");
    if (attr_heads <= 0) return kernel_error(ctx, what() + " is 3-D, so attribute " + attr_name + " is required");
    if (s[2] % attr_heads != 0)
      return kernel_error(ctx, what() + ": hidden size " + std::to_string(s[2]) + " is not a multiple of " + attr_name +
                                   " " + std::to_string(attr_heads));
    dims[0] = s[0];
    dims[1] = attr_heads;
    dims[2] = s[1];
    dims[3] = s[2] / attr_heads;
    layout = layout_3d(dims[1], dims[2], dims[3]);
    return ok_status();
  }

  Status check_inputs(const KernelContext& ctx, Dims& d) const {
    const Tensor* q = ctx.input(0);
    const Tensor* k = ctx.input(1);
    const Tensor* v = ctx.input(2);
    if (q == nullptr || k == nullptr || v == nullptr) return kernel_error(ctx, "inputs Q, K and V are required");
    if (k->dtype() != q->dtype())
      return kernel_error(ctx, "Q is " + q->describe() + " but K is " + k->describe() + "; Q and K share one type");
    if (!is_float_type(v->dtype())) return kernel_error(ctx, "V must be a float tensor; got " + v->describe());
    int64_t qd[4], kd[4], vd[4];
    SY_RETURN_IF_ERROR(headed(ctx, *q, 0, "Q", q_num_heads_, "q_num_heads", qd, d.q));
    SY_RETURN_IF_ERROR(headed(ctx, *k, 1, "K", kv_num_heads_, "kv_num_heads", kd, d.k));
    SY_RETURN_IF_ERROR(headed(ctx, *v, 2, "V", kv_num_heads_, "kv_num_heads", vd, d.v));
    auto shapes = [&] {
      return "Q " + q->shape().to_string() + ", K " + k->shape().to_string() + ", V " + v->shape().to_string();
    };
    if (kd[0] != qd[0] || vd[0] != qd[0]) return kernel_error(ctx, "Q, K and V have different batch sizes: " + shapes());
    if (kd[3] != qd[3])
      return kernel_error(ctx, "Q and K have different head sizes (" + std::to_string(qd[3]) + " vs " +
                                   std::to_string(kd[3]) + "): " + shapes());
    if (vd[1] != kd[1] || vd[2] != kd[2])
      return kernel_error(ctx, "K and V must have the same heads and sequence length: " + shapes());
    if (kd[1] == 0 || qd[1] % kd[1] != 0)
      return kernel_error(ctx, "the query heads (" + std::to_string(qd[1]) +
                                   ") must be a multiple of the key/value heads (" + std::to_string(kd[1]) +
                                   "): " + shapes());
    d.batch = qd[0];
    d.q_heads = qd[1];
    d.q_len = qd[2];
    d.head_size = qd[3];
    d.kv_heads = kd[1];
    d.kv_len = kd[2];
    d.v_head_size = vd[3];

    const Tensor* past_key = ctx.input(4);
    const Tensor* past_value = ctx.input(5);
    if ((past_key == nullptr) != (past_value == nullptr))
      return kernel_error(ctx, "past_key and past_value must be given together");
    if (past_key != nullptr) {
      const Shape& pk = past_key->shape();
      const Shape& pv = past_value->shape();
      if (pk.rank() != 4 || pk[0] != d.batch || pk[1] != d.kv_heads || pk[3] != d.head_size)
        return kernel_error(ctx, "input 4 (past_key) must be [" + std::to_string(d.batch) + "," +
                                     std::to_string(d.kv_heads) + ",past," + std::to_string(d.head_size) + "]; got " +
                                     pk.to_string());
      if (pv.rank() != 4 || pv[0] != d.batch || pv[1] != d.kv_heads || pv[2] != pk[2] || pv[3] != d.v_head_size)
        return kernel_error(ctx, "input 5 (past_value) must be [" + std::to_string(d.batch) + "," +
                                     std::to_string(d.kv_heads) + "," + std::to_string(pk[2]) + "," +
                                     std::to_string(d.v_head_size) + "]; got " + pv.to_string());
      if (past_key->dtype() != k->dtype() || past_value->dtype() != v->dtype())
        return kernel_error(ctx, "past_key and past_value must have the types of K and V; got " +
                                     past_key->describe() + " and " + past_value->describe());
      d.has_past = true;
      d.past_len = pk[2];
    }
    d.total_len = d.past_len + d.kv_len;
    if (q->shape().rank() == 4) {
      d.y = layout_4d(d.q_heads, d.q_len, d.v_head_size);
      d.y_shape = Shape{d.batch, d.q_heads, d.q_len, d.v_head_size};
    } else {
      d.y = layout_3d(d.q_heads, d.q_len, d.v_head_size);
      d.y_shape = Shape{d.batch, d.q_len, d.q_heads * d.v_head_size};
    }
    return ok_status();
  }

  static bool is_float_type(DataType t) {
    return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBfloat16;
  }

  // The mask broadcasts to [B, Hq, S, T] by numpy's rules (right-aligned).
  // From opset 24 its last dim may also be shorter than T: the keys past it
  // are masked, as the spec pads the mask with -inf.
  Status check_mask(const KernelContext& ctx, const Tensor& m, const Dims& d, MaskView& out) const {
    const Shape& s = m.shape();
    auto target = [&] {
      return "[" + std::to_string(d.batch) + "," + std::to_string(d.q_heads) + "," + std::to_string(d.q_len) + "," +
             std::to_string(d.total_len) + "]";
    };
    if (s.rank() < 1 || s.rank() > 4)
      return kernel_error(ctx, "input 3 (attn_mask) " + s.to_string() + " must have rank 1 to 4, broadcastable to " +
                                   target());
    if (m.dtype() != DataType::kBool && (type_mask(NumericTypes{}) & type_bit(m.dtype())) == 0)
      return kernel_error(ctx, "input 3 (attn_mask) must be bool or numeric; got " + m.describe());
    const int64_t targets[4] = {d.batch, d.q_heads, d.q_len, d.total_len};
    int64_t dims[4] = {1, 1, 1, 1};
    for (size_t i = 0; i < s.rank(); ++i) dims[4 - s.rank() + i] = s[i];
    int64_t strides[4];
    int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      strides[i] = stride;
      stride *= dims[i];
    }
    for (int i = 0; i < 3; ++i) {
      if (dims[i] != 1 && dims[i] != targets[i])
        return kernel_error(ctx, "input 3 (attn_mask) " + s.to_string() + " cannot be broadcast to " + target());
      if (dims[i] == 1) strides[i] = 0;
    }
    const int64_t width = dims[3];
    out.col_stride = 1;
    out.width = width;
    if (width == d.total_len) {
      // the common case
    } else if (opset_ < 24 && width == 1) {
      out.col_stride = 0;
      out.width = d.total_len;
    } else if (!(opset_ >= 24 && width < d.total_len)) {
      return kernel_error(ctx, "input 3 (attn_mask) " + s.to_string() + " cannot be broadcast to " + target() +
                                   (opset_ >= 24 ? " (its last dim may be shorter than the keys, not longer)" : ""));
    }
    out.data = m.raw_data();
    out.dtype = m.dtype();
    out.batch_stride = strides[0];
    out.head_stride = strides[1];
    out.row_stride = strides[2];
    return ok_status();
  }

  // ---- the key/value caches ----

  // present = concat(past, cur) along the keys, as [B, Hkv, T, cols]; cur
  // may be 3-D. Raw bytes: present has the inputs' type.
  static void copy_cache(KernelContext& ctx, const Tensor* past, const Tensor& cur, const HeadRows& cur_layout,
                         const Dims& d, int64_t cols, Tensor& present) {
    if (present.num_elements() == 0) return;
    const size_t es = element_size(cur.dtype());
    const auto* src_past = past != nullptr ? static_cast<const char*>(past->raw_data()) : nullptr;
    const auto* src = static_cast<const char*>(cur.raw_data());
    auto* dst = static_cast<char*>(present.raw_data());
    const int64_t heads = d.batch * d.kv_heads;
    const auto row_bytes = static_cast<size_t>(cols) * es;
    parallel_range(ctx.thread_pool(), heads, std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, d.total_len * cols)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t bh = begin; bh < end; ++bh) {
                       const int64_t b = bh / d.kv_heads;
                       const int64_t h = bh % d.kv_heads;
                       char* out = dst + static_cast<size_t>(bh * d.total_len) * row_bytes;
                       if (d.past_len > 0) {
                         std::memcpy(out, src_past + static_cast<size_t>(bh * d.past_len) * row_bytes,
                                     static_cast<size_t>(d.past_len) * row_bytes);
                         out += static_cast<size_t>(d.past_len) * row_bytes;
                       }
                       const char* in = src + static_cast<size_t>(cur_layout.offset(b, h)) * es;
                       for (int64_t r = 0; r < d.kv_len; ++r)
                         std::memcpy(out + static_cast<size_t>(r) * row_bytes,
                                     in + static_cast<size_t>(r * cur_layout.row_stride) * es, row_bytes);
                     }
                   });
  }

  // ---- the run, in compute type C (float or double) ----

  template <typename C>
  static bool is_compute_type(DataType t) {
    return t == DataTypeOf<C>::value;
  }

  // `t`'s elements as C, into `dst`.
  template <typename C>
  static void widen(ThreadPool& pool, const Tensor& t, C* dst) {
    visit_type(FloatTypes{}, t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = t.data<T>();
      parallel_range(pool, t.num_elements(), kCheapChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = static_cast<C>(load(src[i]));
      });
    });
  }

  // `src` rounded into `t`'s type.
  template <typename C>
  static void narrow(ThreadPool& pool, const C* src, Tensor& t) {
    visit_type(FloatTypes{}, t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = t.data<T>();
      parallel_range(pool, t.num_elements(), kCheapChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = store<T>(static_cast<compute_t<T>>(src[i]));
      });
    });
  }

  // Scratch memory is one region per call: this hands out aligned pieces
  // of it, first sizing them (base == nullptr), then placing them.
  struct Carver {
    char* base = nullptr;
    size_t used = 0;
    template <typename C>
    C* take(int64_t count) {
      C* p = base != nullptr ? reinterpret_cast<C*>(base + used) : nullptr;
      used += KernelContext::scratch_align(static_cast<size_t>(count) * sizeof(C));
      return p;
    }
  };

  template <typename C>
  Status run_typed(KernelContext& ctx, const Dims& d, const MaskView& mask, const int64_t* nonpad,
                   const Outputs& out) const {
    ThreadPool& pool = ctx.thread_pool();
    const Tensor& q = *ctx.input(0);
    const Tensor& k = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    const Tensor* past_key = ctx.input(4);
    const Tensor* past_value = ctx.input(5);

    Problem<C> p;
    p.d = d;
    p.mask = mask;
    p.nonpad = nonpad;
    const int64_t threads = pool.num_threads();
    p.all_keys = out.qk != nullptr && mode_ <= 1;
    plan_blocks(p, threads);
    const int64_t tasks = d.batch * d.q_heads * p.blocks_per_pair;
    const int64_t lanes = std::min(threads, tasks);

    // Pass 1 sizes the scratch, pass 2 places the pieces in it.
    C* q_wide = nullptr;
    C* k_wide[2] = {nullptr, nullptr};  // past and current, or present
    C* v_wide[2] = {nullptr, nullptr};
    C* y_wide = nullptr;
    C* qk_wide = nullptr;
    unsigned char* kv_flags = nullptr;
    char* lanes_base = nullptr;
    Carver carver;
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) {
        SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(std::max<size_t>(64, carver.used)));
        carver = Carver{static_cast<char*>(mem), 0};
      }
      lanes_base = carver.take<char>(static_cast<int64_t>(p.lane_bytes) * lanes);
      if (!is_compute_type<C>(q.dtype())) q_wide = carver.take<C>(q.num_elements());
      plan_kv_scratch(carver, k, past_key, out.present_key, k_wide);
      plan_kv_scratch(carver, v, past_value, out.present_value, v_wide);
      if (!is_compute_type<C>(out.y->dtype())) y_wide = carver.take<C>(out.y->num_elements());
      if (out.qk != nullptr && !is_compute_type<C>(out.qk->dtype())) qk_wide = carver.take<C>(out.qk->num_elements());
      if (chain_) kv_flags = carver.take<unsigned char>(d.batch * d.kv_heads);
    }

    if (q_wide != nullptr) widen(pool, q, q_wide);
    p.q = q_wide != nullptr ? q_wide : q.data<C>();
    p.k = kv_source(pool, d, k, d.k, past_key, out.present_key, k_wide, d.head_size);
    p.v = kv_source(pool, d, v, d.v, past_value, out.present_value, v_wide, d.v_head_size);
    p.y = y_wide != nullptr ? y_wide : out.y->data<C>();
    if (out.qk != nullptr) p.qk = qk_wide != nullptr ? qk_wide : out.qk->data<C>();
    p.alpha = static_cast<C>(has_scale_ ? static_cast<double>(scale_)
                                        : 1.0 / std::sqrt(static_cast<double>(d.head_size)));
    if (chain_) {
      // One pass over K and V; almost always it finds nothing.
      for (int64_t b = 0; b < d.batch; ++b)
        for (int64_t g = 0; g < d.kv_heads; ++g)
          kv_flags[b * d.kv_heads + g] = static_cast<unsigned char>(
              !all_finite(p.k, b, g, d.total_len, d.head_size) || !all_finite(p.v, b, g, d.total_len, d.v_head_size));
      p.kv_nonfinite = kv_flags;
    }

    // Each lane has its own scratch.
    pool.run_tasks(lanes, tasks,
                   [&](int64_t lane, int64_t t) { run_block(p, t, lanes_base + static_cast<size_t>(lane) * p.lane_bytes); });

    if (y_wide != nullptr) narrow(pool, y_wide, *out.y);
    if (qk_wide != nullptr) narrow(pool, qk_wide, *out.qk);
    return ok_status();
  }

  // The scratch K or V needs in type C: none when its tensors are C
  // already; else present (when requested) or past and current, widened.
  template <typename C>
  static void plan_kv_scratch(Carver& carver, const Tensor& cur, const Tensor* past, const Tensor* present,
                              C* wide[2]) {
    if (is_compute_type<C>(cur.dtype())) return;
    if (present != nullptr) {
      wide[0] = carver.take<C>(present->num_elements());
      return;
    }
    if (past != nullptr) wide[0] = carver.take<C>(past->num_elements());
    wide[1] = carver.take<C>(cur.num_elements());
  }

  // Where a task reads K or V: the present output when there is one (it
  // already holds past and current keys in one 4-D block), else past and
  // current where they lie. Widened first when not of type C.
  template <typename C>
  static KvSource<C> kv_source(ThreadPool& pool, const Dims& d, const Tensor& cur, const HeadRows& cur_layout,
                               const Tensor* past, const Tensor* present, C* wide[2], int64_t cols) {
    KvSource<C> s;
    if (present != nullptr) {
      if (wide[0] != nullptr) widen(pool, *present, wide[0]);
      s.cur = wide[0] != nullptr ? wide[0] : present->data<C>();
      s.cur_layout = layout_4d(d.kv_heads, d.total_len, cols);
      return s;
    }
    if (past != nullptr) {
      if (wide[0] != nullptr) widen(pool, *past, wide[0]);
      s.past = wide[0] != nullptr ? wide[0] : past->data<C>();
      s.past_rows = d.past_len;
      s.past_layout = layout_4d(d.kv_heads, d.past_len, cols);
    }
    if (wide[1] != nullptr) widen(pool, cur, wide[1]);
    s.cur = wide[1] != nullptr ? wide[1] : cur.data<C>();
    s.cur_layout = cur_layout;
    return s;
  }

  // Rows per task, and each lane's scratch: the rows' key ranges, the
  // score block and the sgemm workspace.
  //
  // Where rows attend different keys (causal, windows, a causal boolean
  // mask), smaller blocks skip more of the keys no row of theirs attends,
  // but every block packs its keys and values again. The block size is the
  // one with the least estimated work for the first (batch, head) pair,
  // which stands for the others in the common cases (a mask shared by the
  // batch, or none).
  template <typename C>
  void plan_blocks(Problem<C>& p, int64_t threads) const {
    const Dims& d = p.d;
    const int64_t pairs = d.batch * d.q_heads;
    const int64_t max_rows =
        std::min(d.q_len, std::clamp<int64_t>(kScoreBlockElements / std::max<int64_t>(d.total_len, 1), 8, 128));
    // Candidates max_rows, max_rows / 2, ... down to 16 rows, costed in one
    // pass over the rows: multiply-adds of both products, plus packing each
    // block's keys and values (about 8 multiply-adds per element: it reads
    // and scatters).
    constexpr double kPackCost = 8.0;
    constexpr int kMaxCandidates = 4;
    int64_t candidates[kMaxCandidates];
    int count = 0;
    for (int64_t c = max_rows; count < kMaxCandidates; c /= 2) {
      candidates[count++] = c;
      if (c <= 16) break;
    }
    double cost[kMaxCandidates] = {};
    KeyRange open[kMaxCandidates];  // the keys of each candidate's current block
    for (int64_t i = 0; i < d.q_len; ++i) {
      const KeyRange r = p.all_keys ? KeyRange{0, d.total_len} : key_range(p, 0, 0, i);
      for (int c = 0; c < count; ++c) {
        if (i % candidates[c] == 0) open[c] = KeyRange{d.total_len, 0};
        if (!r.empty()) open[c] = KeyRange{std::min(open[c].lo, r.lo), std::max(open[c].hi, r.hi)};
        const bool last = (i + 1) % candidates[c] == 0 || i + 1 == d.q_len;
        if (last && !open[c].empty()) {
          const int64_t block_rows = i % candidates[c] + 1;
          cost[c] += static_cast<double>(open[c].hi - open[c].lo) * static_cast<double>(d.head_size + d.v_head_size) *
                     (static_cast<double>(block_rows) + kPackCost);
        }
      }
    }
    int64_t rows = candidates[0];
    double best = cost[0];
    for (int c = 1; c < count; ++c) {
      if (cost[c] < best) {
        best = cost[c];
        rows = candidates[c];
      }
    }
    int64_t blocks = (d.q_len + rows - 1) / rows;
    if (pairs * blocks < threads) {
      // Too few blocks to busy every thread: cut the rows finer.
      blocks = std::min(d.q_len, (threads + pairs - 1) / pairs);
      rows = (d.q_len + blocks - 1) / blocks;
      blocks = (d.q_len + rows - 1) / rows;
    }
    p.block_rows = rows;
    p.blocks_per_pair = blocks;
    size_t bytes = ranges_bytes(rows) + KernelContext::scratch_align(static_cast<size_t>(rows * d.total_len) * sizeof(C));
    if constexpr (std::is_same_v<C, float>) {
      // One thread per call, on a block's subset of keys: bounded by the
      // largest shapes.
      bytes += KernelContext::scratch_align(std::max(sgemm_workspace_bound(rows, d.total_len, d.head_size),
                                                     sgemm_workspace_bound(rows, d.v_head_size, d.total_len)));
    }
    p.lane_bytes = std::max<size_t>(bytes, 64);
  }

  // Keys [lo, hi) row i of (batch b, head h) may attend: the limits of the
  // mask's width, the padding lengths, causality and the window, then
  // narrowed to the first and last key the mask does not mask. Keys outside
  // have a bias of -inf. `offset` places the query block among the keys:
  // the cached keys before it.
  template <typename C>
  KeyRange key_range(const Problem<C>& p, int64_t b, int64_t h, int64_t i) const {
    KeyRange r = key_limits(p, b, i);
    if (p.mask.data != nullptr) trim_to_mask(p.mask, b, h, i, r);
    return r;
  }

  // key_range before the mask's own -inf or false ends are trimmed.
  template <typename C>
  KeyRange key_limits(const Problem<C>& p, int64_t b, int64_t i) const {
    const Dims& d = p.d;
    KeyRange r{0, d.total_len};
    if (p.mask.data != nullptr) r.hi = std::min(r.hi, p.mask.width);
    int64_t offset = 0;
    if (p.nonpad != nullptr) {
      const int64_t valid = std::clamp(p.nonpad[b], -kMaxLength, kMaxLength);
      r.hi = std::min(r.hi, valid);
      offset = valid - d.q_len;
    }
    if (d.has_past) offset = d.past_len;
    const int64_t pos = offset + i;
    if (is_causal_) r.hi = std::min(r.hi, pos + 1);
    if (left_window_ >= 0) r.lo = std::max(r.lo, pos - left_window_);
    if (right_window_ >= 0) r.hi = std::min(r.hi, pos + right_window_ + 1);
    r.lo = std::max<int64_t>(r.lo, 0);
    if (r.hi < r.lo) r.hi = r.lo;
    return r;
  }

  // The keys any of `rows` ranges holds (empty as {total_len, 0}).
  static KeyRange union_of(const KeyRange* ranges, int64_t rows, int64_t total_len) {
    KeyRange keys{total_len, 0};
    for (int64_t r = 0; r < rows; ++r) {
      if (ranges[r].empty()) continue;
      keys = KeyRange{std::min(keys.lo, ranges[r].lo), std::max(keys.hi, ranges[r].hi)};
    }
    return keys;
  }

  // Narrows the block's row ranges past keys at either end whose
  // probability is exactly 0 in float whatever their scores: a finite mask
  // bias so far below the largest in the row's range (BERT's -10000
  // padding) that the exponential underflows. Every score is at most
  // |alpha| D max|q| max|k| in size over the block's elements (at most the
  // softcap where there is one), so a key whose bias is more than twice
  // that plus 110 below the row's largest lands more than 110 below the
  // row's max, and e^-110 is 0 in float: skipping it changes neither the
  // row's sum nor Y. BERT's attention does a quarter fewer multiply-adds.
  // As for keys masked with -inf, a skipped key's V row is not read (a
  // non-finite V there does not reach Y). Not for qk_matmul_output, which
  // shows every key's score; any non-finite Q or K (an unbounded score)
  // turns it off.
  //
  // Only for masks shared by the query rows (BERT's [B, 1, 1, L]), whose
  // one row serves the block. A row of its own per query (a causal [S, L]
  // mask of -3.4e38, GPT-2's) would need a scan per row, and the block
  // planning (plan_blocks) does not see the trimmed keys, so the block
  // still computes them all: GPT-2's Attention ran 35 % slower with it.
  void trim_negligible(const Problem<float>& p, int64_t b, int64_t h, int64_t g, int64_t i0, int64_t rows,
                       KeyRange* ranges) const {
    const Dims& d = p.d;
    const MaskView& m = p.mask;
    if (m.dtype == DataType::kBool || m.col_stride == 0 || m.row_stride != 0) return;
    const KeyRange keys = union_of(ranges, rows, d.total_len);
    if (keys.empty()) return;
    visit_type(NumericTypes{}, m.dtype, [&](auto tag) {
      using M = typename decltype(tag)::type;
      const M* row = static_cast<const M*>(m.data) + mask_row(m, b, h, i0);  // every row's
      auto bias = [&](int64_t j) { return static_cast<double>(load(row[j * m.col_stride])); };
      auto top_of = [&](const KeyRange& r) {
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t j = r.lo; j < r.hi; ++j) top = std::max(top, bias(j));
        return top;
      };
      // Whatever the scores, no key goes unless its bias is 110 below the
      // largest: most masks (0 and -inf only) stop here, before the bound.
      const double top = top_of(keys);
      if (!std::isfinite(top)) return;
      bool candidates = false;
      for (int64_t j = keys.lo; j < keys.hi && !candidates; ++j) candidates = bias(j) <= top - 110.0;
      if (!candidates) return;

      const double q_max =
          abs_max_f32_rows(p.q + d.q.offset(b, h) + i0 * d.q.row_stride, rows, d.head_size, d.q.row_stride);
      double k_max = 0.0;
      p.k.for_each_part(b, g, keys.lo, keys.hi, [&](int64_t, int64_t count, const float* key_rows, int64_t ld) {
        k_max = std::max(k_max, static_cast<double>(abs_max_f32_rows(key_rows, count, d.head_size, ld)));
      });
      double bound = std::fabs(static_cast<double>(p.alpha)) * static_cast<double>(d.head_size) * q_max * k_max;
      if (!std::isfinite(bound)) return;
      if (softcap_ != 0.0f) bound = std::min(bound, std::fabs(static_cast<double>(softcap_)));
      // 1.001: the float products and sums can exceed the exact bound by a few ulp.
      const double gap = 2.0 * bound * 1.001 + 110.0;
      // Rows with the same range (all of them, but for causal or window
      // limits) share one trimming.
      KeyRange last_in, last_out;
      for (int64_t r = 0; r < rows; ++r) {
        KeyRange& kr = ranges[r];
        if (kr.empty()) continue;
        if (kr.lo == last_in.lo && kr.hi == last_in.hi) {
          kr = last_out;
          continue;
        }
        last_in = kr;
        const double cut = top_of(kr) - gap;
        // The key with the largest bias stays, so both loops stop.
        while (bias(kr.lo) <= cut) ++kr.lo;
        while (bias(kr.hi - 1) <= cut) --kr.hi;
        last_out = kr;
      }
    });
  }

  // A lane's scratch starts with the key ranges of its block's rows.
  static size_t ranges_bytes(int64_t rows) {
    return KernelContext::scratch_align(static_cast<size_t>(rows) * sizeof(KeyRange));
  }

  // Offset of mask element (b, h, i, key 0).
  static int64_t mask_row(const MaskView& m, int64_t b, int64_t h, int64_t i) {
    return b * m.batch_stride + h * m.head_stride + i * m.row_stride;
  }

  // Moves r's ends inwards past keys the mask masks (false, -inf), so that
  // a causal or padding mask given as a tensor skips work as is_causal does,
  // and a row whose every key is masked gets an empty range.
  static void trim_to_mask(const MaskView& m, int64_t b, int64_t h, int64_t i, KeyRange& r) {
    const int64_t base = mask_row(m, b, h, i);
    const int64_t step = m.col_stride;
    if (m.dtype == DataType::kBool && step == 1) {
      // A causal mask row is mostly false at one end: skip 8 keys per load.
      const auto* row = static_cast<const unsigned char*>(m.data) + base;
      auto all_false = [row](int64_t j) {  // keys [j, j + 8)
        uint64_t word;
        std::memcpy(&word, row + j, sizeof(word));
        return word == 0;
      };
      while (r.hi - r.lo >= 8 && all_false(r.lo)) r.lo += 8;
      while (r.lo < r.hi && row[r.lo] == 0) ++r.lo;
      while (r.hi - r.lo >= 8 && all_false(r.hi - 8)) r.hi -= 8;
      while (r.hi > r.lo && row[r.hi - 1] == 0) --r.hi;
      return;
    }
    visit_type(NumericBoolTypes{}, m.dtype, [&](auto tag) {
      using M = typename decltype(tag)::type;
      const M* row = static_cast<const M*>(m.data) + base;
      auto masked = [&](int64_t j) {
        if constexpr (std::is_same_v<M, bool>) {
          return !row[j * step];
        } else {
          return static_cast<double>(load(row[j * step])) == -std::numeric_limits<double>::infinity();
        }
      };
      while (r.lo < r.hi && masked(r.lo)) ++r.lo;
      while (r.hi > r.lo && masked(r.hi - 1)) --r.hi;
    });
  }

  template <typename C>
  static bool finite_row(const C* x, int64_t n) {
    if constexpr (std::is_same_v<C, float>) {
      // All exponent bits set: inf or NaN. Branch-free, so it vectorizes.
      uint32_t bad = 0;
      for (int64_t e = 0; e < n; ++e) {
        uint32_t u;
        std::memcpy(&u, x + e, sizeof u);
        bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
      }
      return bad == 0;
    } else {
      bool finite = true;
      for (int64_t e = 0; e < n; ++e) finite &= std::isfinite(static_cast<double>(x[e]));
      return finite;
    }
  }

  // Whether every value of keys [0, total) of head (b, g) is finite.
  template <typename C>
  static bool all_finite(const KvSource<C>& src, int64_t b, int64_t g, int64_t total, int64_t width) {
    bool finite = true;
    src.for_each_part(b, g, 0, total, [&](int64_t, int64_t count, const C* rows, int64_t ld) {
      for (int64_t r = 0; r < count && finite; ++r) finite = finite_row(rows + r * ld, width);
    });
    return finite;
  }

  // FusedAttention's rows as the chain computes them: every key's score,
  // softmax(S) with IEEE arithmetic throughout, and P V over every key. The
  // slow path, for rows where non-finite values could make the fast one
  // differ from the chain. `s` holds total_len scores (the block's score
  // buffer, free once the fast path is done).
  template <typename C>
  void chain_row(const Problem<C>& p, int64_t b, int64_t h, int64_t g, int64_t i, C* y_row, C* s) const {
    const Dims& d = p.d;
    const int64_t total = d.total_len;
    std::fill_n(s, total, C{0});
    if (p.mask.data != nullptr) add_mask(p.mask, b, h, i, 0, total, s);  // s holds the mask row for now
    const C* q = p.q + d.q.offset(b, h) + i * d.q.row_stride;
    const KeyRange limits = key_limits(p, b, i);
    p.k.for_each_part(b, g, 0, total, [&](int64_t k0, int64_t count, const C* rows, int64_t ld) {
      for (int64_t j = k0; j < k0 + count; ++j) {
        const C* k = rows + (j - k0) * ld;
        C dot = C{0};
        for (int64_t e = 0; e < d.head_size; ++e) dot += q[e] * k[e];
        const C mask = s[j];
        const bool causal_masked = j < limits.lo || j >= limits.hi;
        C score = p.alpha * dot + mask;  // Add(scores, mask)
        if (replace_) {
          // Where(cond, fill, scores): a masked key's score is the fill.
          if (causal_masked) {
            score = static_cast<C>(causal_fill_);
          } else if (static_cast<double>(mask) <= -1e30) {
            score = mask;
          }
        } else if (causal_masked) {
          score = -std::numeric_limits<C>::infinity();
        }
        s[j] = score;
      }
    });
    // Softmax as the unfused kernel's arithmetic gives it: a NaN anywhere,
    // an all -inf row or a +inf score make the row NaN.
    bool any_nan = false;
    C top = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < total; ++j) {
      any_nan |= std::isnan(static_cast<double>(s[j]));
      if (s[j] > top) top = s[j];
    }
    C sum = C{0};
    for (int64_t j = 0; j < total; ++j) {
      s[j] = any_nan ? std::numeric_limits<C>::quiet_NaN() : static_cast<C>(std::exp(static_cast<double>(s[j] - top)));
      sum += s[j];
    }
    for (int64_t j = 0; j < total; ++j) s[j] /= sum;
    std::fill_n(y_row, d.v_head_size, C{0});
    p.v.for_each_part(b, g, 0, total, [&](int64_t k0, int64_t count, const C* rows, int64_t ld) {
      for (int64_t j = k0; j < k0 + count; ++j) {
        const C w = s[j];
        const C* v = rows + (j - k0) * ld;
        for (int64_t e = 0; e < d.v_head_size; ++e) y_row[e] += w * v[e];
      }
    });
  }

  // After the fast path: FusedAttention's rows recomputed where the chain
  // may differ from it, i.e. a fully masked row (Attention: 0; the chain:
  // NaN, or under "replace" with a finite fill an average) or non-finite
  // values in this row's Q or the head's K or V.
  template <typename C>
  void match_chain(const Problem<C>& p, int64_t b, int64_t h, int64_t g, int64_t i0, int64_t i1,
                   const KeyRange* ranges, C* y, char* scratch) const {
    const Dims& d = p.d;
    C* row_scores = reinterpret_cast<C*>(scratch + ranges_bytes(p.block_rows));
    const bool kv_nonfinite = p.kv_nonfinite[b * d.kv_heads + g] != 0;
    for (int64_t i = i0; i < i1; ++i) {
      const C* q = p.q + d.q.offset(b, h) + i * d.q.row_stride;
      if (kv_nonfinite || ranges[i - i0].empty() || !finite_row(q, d.head_size))
        chain_row(p, b, h, g, i, y + (i - i0) * d.y.row_stride, row_scores);
    }
  }

  template <typename C>
  void run_block(const Problem<C>& p, int64_t task, char* scratch) const {
    const Dims& d = p.d;
    const int64_t pair = task / p.blocks_per_pair;
    const int64_t b = pair / d.q_heads;
    const int64_t h = pair % d.q_heads;
    const int64_t g = h / (d.q_heads / d.kv_heads);  // the key/value head of this query head
    const int64_t i0 = (task % p.blocks_per_pair) * p.block_rows;
    const int64_t i1 = std::min(d.q_len, i0 + p.block_rows);
    const int64_t rows = i1 - i0;
    C* y = p.y + d.y.offset(b, h) + i0 * d.y.row_stride;

    // Each row's keys, and the keys any row of the block attends.
    KeyRange* ranges = reinterpret_cast<KeyRange*>(scratch);
    {
      // Rows that share a mask row and limits (a mask broadcast over the
      // query rows) share its trimming: one scan per block.
      int64_t last_base = -1;
      KeyRange last_limits, last_range;
      for (int64_t i = i0; i < i1; ++i) {
        KeyRange r = key_limits(p, b, i);
        if (p.mask.data != nullptr) {
          const int64_t base = mask_row(p.mask, b, h, i);
          if (base == last_base && r.lo == last_limits.lo && r.hi == last_limits.hi) {
            r = last_range;
          } else {
            last_base = base;
            last_limits = r;
            trim_to_mask(p.mask, b, h, i, r);
            last_range = r;
          }
        }
        ranges[i - i0] = r;
      }
    }
    if constexpr (std::is_same_v<C, float>) {
      if (p.mask.data != nullptr && p.qk == nullptr) trim_negligible(p, b, h, g, i0, rows, ranges);
    }
    KeyRange keys = union_of(ranges, rows, d.total_len);
    if (p.all_keys) keys = KeyRange{0, d.total_len};
    const int64_t klo = keys.lo;
    const int64_t khi = keys.hi;
    if (keys.empty()) {
      // Every row is fully masked (or there are no keys): Y rows are 0.
      for (int64_t r = 0; r < rows; ++r) std::fill_n(y + r * d.y.row_stride, d.v_head_size, C{0});
      if (p.qk != nullptr)
        for (int64_t i = i0; i < i1; ++i)
          std::fill_n(qk_row(p, b, h, i), d.total_len,
                      mode_ == 2 ? -std::numeric_limits<C>::infinity() : C{0});
      if (chain_) match_chain(p, b, h, g, i0, i1, ranges, y, scratch);
      return;
    }

    const int64_t n = khi - klo;
    C* scores = reinterpret_cast<C*>(scratch + ranges_bytes(p.block_rows));
    void* ws = reinterpret_cast<char*>(scores) +
               KernelContext::scratch_align(static_cast<size_t>(p.block_rows * d.total_len) * sizeof(C));
    const C* q = p.q + d.q.offset(b, h) + i0 * d.q.row_stride;
    p.k.for_each_part(b, g, klo, khi, [&](int64_t k0, int64_t count, const C* key_rows, int64_t ld) {
      gemm_abt(rows, count, d.head_size, p.alpha, q, d.q.row_stride, key_rows, ld, scores + (k0 - klo), n, ws);
    });
    {
      [[maybe_unused]] const FlushDenormals flush;
      for (int64_t i = i0; i < i1; ++i) process_row(p, b, h, i, ranges[i - i0], scores + (i - i0) * n, klo, khi);
    }
    bool first = true;
    p.v.for_each_part(b, g, klo, khi, [&](int64_t k0, int64_t count, const C* value_rows, int64_t ld) {
      gemm_ab(rows, d.v_head_size, count, scores + (k0 - klo), n, value_rows, ld, first ? C{0} : C{1}, y,
              d.y.row_stride, ws);
      first = false;
    });
    if (chain_) match_chain(p, b, h, g, i0, i1, ranges, y, scratch);
  }

  template <typename C>
  static C* qk_row(const Problem<C>& p, int64_t b, int64_t h, int64_t i) {
    return p.qk + ((b * p.d.q_heads + h) * p.d.q_len + i) * p.d.total_len;
  }

  // qk_matmul_output's row from s (keys [klo, khi)), `fill` elsewhere.
  template <typename C>
  static void store_qk(C* out, int64_t total, const C* s, int64_t klo, int64_t khi, C fill) {
    std::fill_n(out, klo, fill);
    std::copy(s, s + (khi - klo), out + klo);
    std::fill(out + khi, out + total, fill);
  }

  // One row of scores over keys [klo, khi), in place: softcap, bias,
  // softmax. Emits the row of qk_matmul_output at its mode's step.
  template <typename C>
  void process_row(const Problem<C>& p, int64_t b, int64_t h, int64_t i, const KeyRange& r, C* s, int64_t klo,
                   int64_t khi) const {
    constexpr C kNegInf = -std::numeric_limits<C>::infinity();
    const int64_t n = khi - klo;
    C* qk = p.qk != nullptr ? qk_row(p, b, h, i) : nullptr;
    // Keys outside [lo, hi) are masked; within it, the ends are not (see
    // key_range), so an empty range is exactly a fully masked row.
    const int64_t lo = std::clamp(r.lo, klo, khi) - klo;
    const int64_t hi = std::clamp(r.hi, klo, khi) - klo;
    const bool attended = lo < hi;

    if (qk != nullptr && mode_ == 0) store_qk(qk, p.d.total_len, s, klo, khi, C{0});
    if (softcap_ != 0.0f) {
      // Masked keys end at -inf whatever their capped score, unless mode 1 shows it.
      if (qk != nullptr && mode_ == 1) {
        apply_softcap(s, n, static_cast<C>(softcap_));
      } else {
        apply_softcap(s + lo, hi - lo, static_cast<C>(softcap_));
      }
    }
    if (qk != nullptr && mode_ == 1) store_qk(qk, p.d.total_len, s, klo, khi, C{0});
    // A float mask row read in place joins the softmax's first pass instead
    // of taking one of its own (BERT's padding mask), unless mode 2 shows
    // the masked scores.
    const float* bias_row = nullptr;
    if (attended && p.mask.data != nullptr) {
      if (std::is_same_v<C, float> && p.mask.dtype == DataType::kFloat && p.mask.col_stride == 1 &&
          !(qk != nullptr && mode_ == 2)) {
        bias_row = static_cast<const float*>(p.mask.data) + mask_row(p.mask, b, h, i) + klo + lo;
      } else {
        add_mask(p.mask, b, h, i, klo + lo, hi - lo, s + lo);
      }
    }
    if (qk != nullptr && mode_ == 2) {
      std::fill_n(s, lo, kNegInf);
      std::fill(s + hi, s + n, kNegInf);
      store_qk(qk, p.d.total_len, s, klo, khi, kNegInf);
    }
    if (attended) {
      softmax(s + lo, bias_row, hi - lo);
      std::fill_n(s, lo, C{0});
      std::fill(s + hi, s + n, C{0});
    } else {
      std::fill_n(s, n, C{0});
    }
    if (qk != nullptr && mode_ == 3) store_qk(qk, p.d.total_len, s, klo, khi, C{0});
  }

  // s[j] += mask(b, h, i, key0 + j) for j < count; a boolean mask adds 0
  // (true) or -inf (false).
  template <typename C>
  static void add_mask(const MaskView& m, int64_t b, int64_t h, int64_t i, int64_t key0, int64_t count, C* s) {
    constexpr C kNegInf = -std::numeric_limits<C>::infinity();
    const int64_t base = mask_row(m, b, h, i) + key0 * m.col_stride;
    const int64_t step = m.col_stride;
    visit_type(NumericBoolTypes{}, m.dtype, [&](auto tag) {
      using M = typename decltype(tag)::type;
      const M* row = static_cast<const M*>(m.data) + base;
      if constexpr (std::is_same_v<M, bool>) {
        for (int64_t j = 0; j < count; ++j) s[j] = select(row[j * step], s[j], kNegInf);
      } else {
        for (int64_t j = 0; j < count; ++j) s[j] += static_cast<C>(load(row[j * step]));
      }
    });
  }

  static void apply_softcap(float* s, int64_t n, float cap) {
    for (int64_t j = 0; j < n; ++j) s[j] /= cap;
    activation_f32(SimdActivation::kTanh, s, s, n);
    for (int64_t j = 0; j < n; ++j) s[j] *= cap;
  }
  static void apply_softcap(double* s, int64_t n, double cap) {
    for (int64_t j = 0; j < n; ++j) s[j] = cap * std::tanh(s[j] / cap);
  }

  // s = softmax(s + bias) in place; bias may be null.
  void softmax(float* s, const float* bias, int64_t n) const {
    if (!softmax_in_double_) {
      softmax_row_biased_f32(s, bias, s, n);
      return;
    }
    if (bias != nullptr)
      for (int64_t j = 0; j < n; ++j) s[j] += bias[j];
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, static_cast<double>(s[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(s[j]) - mx);
    for (int64_t j = 0; j < n; ++j) s[j] = static_cast<float>(std::exp(static_cast<double>(s[j]) - mx) / sum);
  }
  void softmax(double* s, const float* bias, int64_t n) const {
    (void)bias;  // a double problem's mask is added beforehand (add_mask)
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, s[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      s[j] = std::exp(s[j] - mx);
      sum += s[j];
    }
    for (int64_t j = 0; j < n; ++j) s[j] /= sum;
  }

  // c[m x n] = alpha * a[m x k] * b[n x k]^T: scores from query and key rows.
  static void gemm_abt(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc, void* ws) {
    // The sizes follow the mask's key ranges: one task, planned here.
    sgemm(plan_sgemm_one_task(m, n, k), false, true, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc, nullptr, ws);
  }
  static void gemm_abt(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda, const double* b,
                       int64_t ldb, double* c, int64_t ldc, void* /*ws*/) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0);
    naive_gemm(false, true, m, n, k, alpha, a, lda, b, ldb, c, ldc, nullptr);
  }

  // c[m x n] = a[m x k] * b[k x n] + beta * c, beta 0 or 1: outputs from
  // probabilities and value rows.
  static void gemm_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float beta, float* c, int64_t ldc, void* ws) {
    sgemm(plan_sgemm_one_task(m, n, k), false, false, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, nullptr, ws);
  }
  static void gemm_ab(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb,
                      double beta, double* c, int64_t ldc, void* /*ws*/) {
    if (beta == 0.0)
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0);
    naive_gemm(false, false, m, n, k, 1.0, a, lda, b, ldb, c, ldc, nullptr);
  }

  int opset_ = 23;
  bool is_causal_ = false;
  int64_t q_num_heads_ = 0;   // 0: absent
  int64_t kv_num_heads_ = 0;
  int64_t mode_ = 0;          // qk_matmul_output_mode
  bool has_scale_ = false;
  float scale_ = 1.0f;
  float softcap_ = 0.0f;      // 0: none (a negative cap gives the same function as its absolute value)
  bool softmax_in_double_ = false;
  int64_t left_window_ = -1;  // -1: unbounded (and before opset 25)
  int64_t right_window_ = -1;
  // FusedAttention (schema/fused.cc): the chain's answers where they differ.
  bool chain_ = false;
  bool replace_ = false;  // masked_scores = "replace"
  float causal_fill_ = -std::numeric_limits<float>::infinity();
};

const KernelDef kAttentionKernels[] = {
    {"", "Attention", 23, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<AttentionKernel>},
    {kSwitchyardDomain, kFusedAttentionOp, 1, kLatestVersion, 0, type_mask(FloatTypes{}),
     &make_kernel<AttentionKernel>},
};

}  // namespace

std::span<const KernelDef> attention_kernels() { return kAttentionKernels; }

}  // namespace sy::cpu
