// MatMul (numpy semantics: 1-D operands promoted, batch dims broadcast) and
// Gemm (transA/transB, alpha, beta, optional unidirectionally broadcast C).
//
// float runs on the blocked sgemm (gemm/sgemm.h); a constant B is packed
// once when the kernel is created. When B carries no batch (the common
// "activations x weights" case) the batch of A folds into M, so the whole
// MatMul is one GEMM. Real batches (attention) run one GEMM per batch,
// spread over the threads when there are enough of them, else each
// threaded. Other types use a plain loop: they exist for completeness.
// FusedMatMul (com.switchyard, schema/fused.cc) runs on the same kernel,
// its epilogue applied as the GEMM stores each tile.
#include <algorithm>
#include <string>

#include "providers/cpu/gemm/fused_epilogue.h"
#include "providers/cpu/gemm/gemm_state.h"
#include "providers/cpu/gemm/naive_gemm.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/matmul_dims.h"
#include "providers/kernel.h"
#include "schema/fused.h"

namespace sy::cpu {
namespace {

// ---------------------------------------------------------------- MatMul

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const KernelCreateContext& ctx, Status& status) {
    // FusedMatMul's epilogue (schema/fused.cc, made by optimizer/
    // matmul_epilogue_fusion.cc): scale, bias, residual and activation
    // applied as the GEMM stores each tile; float only. A plain MatMul has
    // none.
    if (is_fused_op(ctx)) {
      status = read_fused_activation(ctx, epilogue_);
      if (!status.ok()) return;
      bias_ = ctx.node().has_input(2);
      residual_ = ctx.node().has_input(3);
      alpha_ = ctx.node().attr_float(kAlphaAttr, 1.0f);
    }
    const ValueType* a_type = ctx.input_type(0);
    if (fused() && a_type != nullptr && a_type->dtype != DataType::kFloat) {
      status = ctx.error("a fused scale, bias, residual or activation needs float inputs");
      return;
    }
    const Tensor* b = ctx.constant_input(1);
    if (b == nullptr || b->dtype() != DataType::kFloat || b->shape().rank() == 0) return;
    const Shape& s = b->shape();
    for (size_t i = 0; i + 2 < s.rank(); ++i)
      if (s[i] != 1) return;  // a batched constant B: packed per call like any other
    const int64_t k = s.rank() == 1 ? s[0] : s[s.rank() - 2];
    const int64_t n = s.rank() == 1 ? 1 : s[s.rank() - 1];
    if (k * n == 0) return;
    packed_b_ = pack_b(false, k, n, b->data<float>(), n);
    if (!packed_b_.empty()) ctx.mark_prepacked(1);  // run() reads the packed copy only
  }

  bool prepares() const override { return true; }

  // Plans the float products run_float makes for these shapes. Shapes it
  // cannot multiply get no plans: run() reports them.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    MatMulDims d;
    if (a.dtype() != DataType::kFloat || !matmul_dims(ctx, a.shape(), b.shape(), d).ok())
      return std::unique_ptr<KernelState>(std::move(state));
    ThreadPool& pool = ctx.thread_pool();
    const bool use_packed = packed_b_fits(d);
    if (one_product(d)) {
      state->plans.add(d.batch_count * d.M, d.N, d.K, &pool, use_packed);
    } else {
      const ThreadPool* gemm_pool = batch_tasks(d, pool) > 1 ? nullptr : &pool;
      state->plans.add(d.M, d.N, d.K, gemm_pool, false);
      if (use_packed) state->plans.add(d.M, d.N, d.K, gemm_pool, true);
    }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dtype() != b.dtype())
      return kernel_error(ctx, "A is " + a.describe() + " but B is " + b.describe() + "; types must match");
    MatMulDims d;
    SY_RETURN_IF_ERROR(matmul_dims(ctx, a.shape(), b.shape(), d));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), d.out_shape));
    if (y->num_elements() == 0) return ok_status();
    if (fused() && a.dtype() != DataType::kFloat)
      return kernel_error(ctx, "a fused scale, bias, residual or activation needs float inputs; got " + a.describe());
    switch (a.dtype()) {
      case DataType::kFloat: {
        GemmEpilogue ep = epilogue_;
        float beta = 0.0f;
        SY_RETURN_IF_ERROR(prepare_epilogue(ctx, *y, d, ep, beta));
        return run_float(ctx, a.data<float>(), b.data<float>(), y->data<float>(), d, ep, beta);
      }
      case DataType::kDouble: return run_loop<double>(ctx, a, b, *y, d);
      case DataType::kInt32: return run_loop<int32_t>(ctx, a, b, *y, d);
      case DataType::kInt64: return run_loop<int64_t>(ctx, a, b, *y, d);
      case DataType::kUint32: return run_loop<uint32_t>(ctx, a, b, *y, d);
      case DataType::kUint64: return run_loop<uint64_t>(ctx, a, b, *y, d);
      case DataType::kFloat16: return run_half(ctx, a, b, *y, d, float16_to_float, float_to_float16);
      case DataType::kBfloat16: return run_half(ctx, a, b, *y, d, bfloat16_to_float, float_to_bfloat16);
      default: return kernel_error(ctx, "unsupported type " + a.describe());
    }
  }

 private:
  // float16 / bfloat16: products summed in float, rounded once per output.
  // A plain loop: correct for the models that use it (attention in half
  // precision), not yet tuned.
  static Status run_half(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& y, const MatMulDims& d,
                         float (*to_float)(uint16_t), uint16_t (*from_float)(float)) {
    const auto* pa = a.data<uint16_t>();
    const auto* pb = b.data<uint16_t>();
    auto* py = y.data<uint16_t>();
    ctx.thread_pool().parallel_for(d.batch_count * d.M, 4, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r / d.M;
        const int64_t m = r % d.M;
        int64_t a_off, b_off;
        batch_offsets(d, i, a_off, b_off);
        for (int64_t n = 0; n < d.N; ++n) {
          float acc = 0.0f;
          for (int64_t k = 0; k < d.K; ++k)
            acc += to_float(pa[a_off + m * d.K + k]) * to_float(pb[b_off + k * d.N + n]);
          py[i * d.M * d.N + m * d.N + n] = from_float(acc);
        }
      }
    });
    return ok_status();
  }

  bool fused() const { return bias_ || residual_ || alpha_ != 1.0f || epilogue_.activation != GemmActivation::kNone; }

  // The bias and residual pointers when those inputs are fused in (a
  // residual that is Y's own buffer is accumulated onto, beta = 1).
  Status prepare_epilogue(KernelContext& ctx, Tensor& y, const MatMulDims& d, GemmEpilogue& ep, float& beta) const {
    if (bias_) {
      const Tensor& bias = *ctx.input(2);
      if (bias.dtype() != DataType::kFloat || bias.num_elements() != d.N)
        return kernel_error(ctx, "the fused bias (input 2) must be " + std::to_string(d.N) + " floats; got " +
                                     bias.describe());
      ep.bias = bias.data<float>();
      ep.bias_per_row = false;
    }
    if (residual_) {
      const Tensor& z = *ctx.input(3);
      if (z.dtype() != DataType::kFloat || z.shape() != y.shape())
        return kernel_error(ctx, "the fused residual (input 3) must be float " + y.shape().to_string() + "; got " +
                                     z.describe());
      if (z.data<float>() == y.data<float>()) {
        beta = 1.0f;  // computed in place: Y already holds the residual
      } else {
        ep.residual = z.data<float>();
      }
    }
    return ok_status();
  }

  bool packed_b_fits(const MatMulDims& d) const {
    return !packed_b_.empty() && packed_b_.rows() == d.K && packed_b_.cols() == d.N;
  }

  // Every batch multiplies the same B and A's batches are contiguous rows
  // (A does not broadcast): the batch folds into M, one GEMM.
  static bool one_product(const MatMulDims& d) {
    if (d.b_has_batch) return false;
    for (size_t k = 0; k < d.batch.rank(); ++k)
      if (d.a_strides[k] == 0 && d.batch[k] != 1) return false;
    return true;
  }

  // Otherwise one GEMM per batch: with enough batches one thread each
  // (tasks > 1, every GEMM single-threaded), else each GEMM threaded.
  static int64_t batch_tasks(const MatMulDims& d, const ThreadPool& pool) {
    return std::min<int64_t>(pool.num_threads(), d.batch_count);
  }

  Status run_float(KernelContext& ctx, const float* a, const float* b, float* y, const MatMulDims& d,
                   const GemmEpilogue& ep, float beta) const {
    ThreadPool& pool = ctx.thread_pool();
    const GemmPlans& plans = gemm_plans(ctx);
    const bool use_packed = packed_b_fits(d);
    if (one_product(d)) {
      const int64_t rows = d.batch_count * d.M;
      const GemmPlan plan = plans.get(rows, d.N, d.K, &pool, use_packed);
      SY_ASSIGN_OR_RETURN(void* ws, ctx.scratch(plan.workspace_bytes));
      if (use_packed) {
        sgemm_packed_b(plan, false, rows, d.N, d.K, alpha_, a, d.K, packed_b_, beta, y, d.N, &pool, ws, ep);
      } else {
        sgemm(plan, false, false, rows, d.N, d.K, alpha_, a, d.K, b, d.N, beta, y, d.N, &pool, ws, ep);
      }
      return ok_status();
    }
    const int64_t tasks = batch_tasks(d, pool);
    ThreadPool* gemm_pool = tasks > 1 ? nullptr : &pool;
    const GemmPlan plain = plans.get(d.M, d.N, d.K, gemm_pool, false);
    const GemmPlan packed = use_packed ? plans.get(d.M, d.N, d.K, gemm_pool, true) : plain;
    const Plans both{plain, packed};
    const size_t per_task = KernelContext::scratch_align(std::max(plain.workspace_bytes, packed.workspace_bytes));
    if (tasks > 1) {
      // Every task with its own slice of the workspace.
      SY_ASSIGN_OR_RETURN(void* ws, ctx.scratch(per_task * static_cast<size_t>(tasks)));
      pool.parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          void* mine = static_cast<char*>(ws) + per_task * static_cast<size_t>(t);
          for (int64_t i = d.batch_count * t / tasks; i < d.batch_count * (t + 1) / tasks; ++i)
            gemm_one(a, b, y, d, i, use_packed, both, nullptr, mine, ep, beta);
        }
      });
      return ok_status();
    }
    SY_ASSIGN_OR_RETURN(void* ws, ctx.scratch(per_task));
    for (int64_t i = 0; i < d.batch_count; ++i) gemm_one(a, b, y, d, i, use_packed, both, &pool, ws, ep, beta);
    return ok_status();
  }

  // The plans of one batch's GEMM, with B as it is and prepacked.
  struct Plans {
    const GemmPlan& plain;
    const GemmPlan& packed;
  };

  void gemm_one(const float* a, const float* b, float* y, const MatMulDims& d, int64_t index, bool use_packed,
                const Plans& plans, ThreadPool* pool, void* ws, const GemmEpilogue& ep, float beta) const {
    int64_t a_off, b_off;
    batch_offsets(d, index, a_off, b_off);
    float* out = y + index * d.M * d.N;
    GemmEpilogue mine = ep;
    if (mine.residual != nullptr) mine.residual += index * d.M * d.N;
    if (use_packed && b_off == 0) {
      sgemm_packed_b(plans.packed, false, d.M, d.N, d.K, alpha_, a + a_off, d.K, packed_b_, beta, out, d.N, pool, ws,
                     mine);
    } else {
      sgemm(plans.plain, false, false, d.M, d.N, d.K, alpha_, a + a_off, d.K, b + b_off, d.N, beta, out, d.N, pool, ws,
            mine);
    }
  }

  template <typename T>
  Status run_loop(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& y, const MatMulDims& d) const {
    T* out = y.data<T>();
    std::fill(out, out + y.num_elements(), T(0));
    for (int64_t i = 0; i < d.batch_count; ++i) {
      int64_t a_off, b_off;
      batch_offsets(d, i, a_off, b_off);
      naive_gemm<T>(false, false, d.M, d.N, d.K, T(1), a.data<T>() + a_off, d.K, b.data<T>() + b_off, d.N,
                    out + i * d.M * d.N, d.N, &ctx.thread_pool());
    }
    return ok_status();
  }

  GemmEpilogue epilogue_;  // the fused activation
  bool bias_ = false;
  bool residual_ = false;
  float alpha_ = 1.0f;  // FusedMatMul's alpha
  PackedMatrix packed_b_;
};

// ------------------------------------------------------------------ Gemm

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& n = ctx.node();
    trans_a_ = n.attr_int("transA", 0) != 0;
    trans_b_ = n.attr_int("transB", 0) != 0;
    alpha_ = n.attr_float("alpha", 1.0f);
    beta_ = n.attr_float("beta", 1.0f);
    (void)status;
    const Tensor* b = ctx.constant_input(1);
    if (b != nullptr && b->dtype() == DataType::kFloat && b->shape().rank() == 2) {
      const int64_t k = trans_b_ ? b->shape()[1] : b->shape()[0];
      const int64_t nn = trans_b_ ? b->shape()[0] : b->shape()[1];
      if (k * nn > 0) packed_b_ = pack_b(trans_b_, k, nn, b->data<float>(), b->shape()[1]);
      if (!packed_b_.empty()) ctx.mark_prepacked(1);  // run() reads the packed copy only
    }
  }

  bool prepares() const override { return true; }

  // Plans the float product; shapes run() refuses get no plan.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dtype() == DataType::kFloat && a.shape().rank() == 2 && b.shape().rank() == 2) {
      const int64_t M = trans_a_ ? a.shape()[1] : a.shape()[0];
      const int64_t K = trans_a_ ? a.shape()[0] : a.shape()[1];
      const int64_t N = trans_b_ ? b.shape()[0] : b.shape()[1];
      state->plans.add(M, N, K, &ctx.thread_pool(), packed_b_fits(K, N));
    }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* c = ctx.input(2);
    if (a.shape().rank() != 2 || b.shape().rank() != 2)
      return kernel_error(ctx, "A and B must be 2-D; got A " + a.shape().to_string() + " and B " + b.shape().to_string());
    if (a.dtype() != b.dtype() || (c != nullptr && c->dtype() != a.dtype()))
      return kernel_error(ctx, "inputs must share one type; got A " + a.describe() + ", B " + b.describe());
    const int64_t M = trans_a_ ? a.shape()[1] : a.shape()[0];
    const int64_t K = trans_a_ ? a.shape()[0] : a.shape()[1];
    const int64_t kb = trans_b_ ? b.shape()[1] : b.shape()[0];
    const int64_t N = trans_b_ ? b.shape()[0] : b.shape()[1];
    if (K != kb)
      return kernel_error(ctx, "op(A) is " + std::to_string(M) + "x" + std::to_string(K) + " but op(B) is " +
                                   std::to_string(kb) + "x" + std::to_string(N) + "; inner dimensions differ");
    // C broadcasts to [M, N]: how it is indexed.
    int64_t c_row_stride = 0, c_col_stride = 0;
    if (c != nullptr) {
      const Shape& cs = c->shape();
      if (cs.rank() > 2) return kernel_error(ctx, "C must have rank <= 2; got " + cs.to_string());
      const int64_t cn = cs.rank() >= 1 ? cs[cs.rank() - 1] : 1;
      const int64_t cm = cs.rank() == 2 ? cs[0] : 1;
      if ((cn != 1 && cn != N) || (cm != 1 && cm != M))
        return kernel_error(ctx, "C " + cs.to_string() + " cannot be broadcast to [" + std::to_string(M) + "," +
                                     std::to_string(N) + "]");
      c_col_stride = cn == 1 ? 0 : 1;
      c_row_stride = cm == 1 ? 0 : cn;
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), Shape{M, N}));
    if (M * N == 0) return ok_status();
    const int64_t lda = a.shape()[1];
    const int64_t ldb = b.shape()[1];
    if (a.dtype() == DataType::kDouble) {
      double* out = y->data<double>();
      fill_c<double>(out, c, M, N, c_row_stride, c_col_stride, static_cast<double>(beta_));
      naive_gemm<double>(trans_a_, trans_b_, M, N, K, static_cast<double>(alpha_), a.data<double>(), lda,
                         b.data<double>(), ldb, out, N, &ctx.thread_pool());
      return ok_status();
    }
    if (a.dtype() != DataType::kFloat) return kernel_error(ctx, "unsupported type " + a.describe());

    float* out = y->data<float>();
    GemmEpilogue ep;
    float beta = 0.0f;
    if (c != nullptr && beta_ != 0.0f) {
      const bool vector_c = c_row_stride == 0 || c_col_stride == 0;
      if (beta_ == 1.0f && vector_c && !(c_row_stride == 0 && c_col_stride == 0)) {
        // A bias along N or along M: added by the GEMM as it stores.
        ep.bias = c->data<float>();
        ep.bias_per_row = c_col_stride == 0;
      } else {
        fill_c<float>(out, c, M, N, c_row_stride, c_col_stride, beta_);
        beta = 1.0f;
      }
    }
    ThreadPool& pool = ctx.thread_pool();
    const bool use_packed = packed_b_fits(K, N);
    const GemmPlan plan = gemm_plans(ctx).get(M, N, K, &pool, use_packed);
    SY_ASSIGN_OR_RETURN(void* ws, ctx.scratch(plan.workspace_bytes));
    if (use_packed) {
      sgemm_packed_b(plan, trans_a_, M, N, K, alpha_, a.data<float>(), lda, packed_b_, beta, out, N, &pool, ws, ep);
    } else {
      sgemm(plan, trans_a_, trans_b_, M, N, K, alpha_, a.data<float>(), lda, b.data<float>(), ldb, beta, out, N, &pool,
            ws, ep);
    }
    return ok_status();
  }

 private:
  bool packed_b_fits(int64_t K, int64_t N) const {
    return !packed_b_.empty() && packed_b_.rows() == K && packed_b_.cols() == N;
  }

  template <typename T>
  static void fill_c(T* out, const Tensor* c, int64_t M, int64_t N, int64_t row_stride, int64_t col_stride, T beta) {
    if (c == nullptr || beta == T(0)) {
      std::fill(out, out + M * N, T(0));
      return;
    }
    const T* cv = c->data<T>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) out[i * N + j] = beta * cv[i * row_stride + j * col_stride];
  }

  bool trans_a_ = false;
  bool trans_b_ = false;
  float alpha_ = 1.0f;
  float beta_ = 1.0f;
  PackedMatrix packed_b_;
};

constexpr uint64_t kMatMulTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                                  type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16) |
                                  type_bit(DataType::kInt32) | type_bit(DataType::kInt64) |
                                  type_bit(DataType::kUint32) | type_bit(DataType::kUint64);
constexpr uint64_t kGemmTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble);

const KernelDef kMatMulKernels[] = {
    {"", "MatMul", 1, 8, 0, type_bit(DataType::kFloat) | type_bit(DataType::kDouble) | type_bit(DataType::kFloat16),
     &make_kernel<MatMulKernel>},
    {"", "MatMul", 9, kLatestVersion, 0, kMatMulTypes, &make_kernel<MatMulKernel>},
    {kSwitchyardDomain, kFusedMatMulOp, 1, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<MatMulKernel>},
    {"", "Gemm", 7, kLatestVersion, 0, kGemmTypes, &make_kernel<GemmKernel>},
};

}  // namespace

std::span<const KernelDef> matmul_kernels() { return kMatMulKernels; }

}  // namespace sy::cpu
