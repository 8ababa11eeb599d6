// Det (batched determinants by LU with partial pivoting) and MatMulInteger
// (8-bit matrix products with zero points, int32 results, numpy batching).
//
// Det factors each matrix in double whatever the input type: the product
// of the pivots loses precision fast in float, and the copy the
// factorisation needs anyway is the place to widen.
//
// MatMulInteger subtracts B's zero point once per call (or once at creation
// when B and its zero point are constants) into an int16 copy, then each
// output row is a sum of int16 rows of B scaled by A's entries: int32
// multiply-adds the compiler vectorises. Exact: |a - za| * |b - zb| <=
// 255 * 255 and the sum is int32 as the spec asks.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/matmul_dims.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// ---- Det -------------------------------------------------------------------------

// Determinant of the n x n row-major matrix in `a` (overwritten).
double lu_determinant(double* a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    double best = std::abs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      const double v = std::abs(a[i * n + k]);
      if (v > best) {
        best = v;
        pivot = i;
      }
    }
    if (best == 0.0) return 0.0;
    if (pivot != k) {
      std::swap_ranges(a + k * n, a + (k + 1) * n, a + pivot * n);
      det = -det;
    }
    const double d = a[k * n + k];
    det *= d;
    const double* rk = a + k * n;
    for (int64_t i = k + 1; i < n; ++i) {
      double* ri = a + i * n;
      const double f = ri[k] / d;
      for (int64_t j = k + 1; j < n; ++j) ri[j] -= f * rk[j];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  DetKernel(const KernelCreateContext&, Status&) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    if (s.rank() < 2 || s[s.rank() - 1] != s[s.rank() - 2])
      return kernel_error(ctx, "X must hold square matrices ([*, M, M]); got " + x.describe());
    const int64_t n = s[s.rank() - 1];
    Shape out_shape;
    for (size_t i = 0; i + 2 < s.rank(); ++i) out_shape.push_back(s[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const int64_t batch = y->num_elements();
    if (batch == 0) return ok_status();
    Status status;
    const bool supported = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_typed<T>(ctx, x.data<T>(), y->data<T>(), batch, n);
    });
    if (!supported) return kernel_error(ctx, "unsupported type " + x.describe() + " (expected a float type)");
    return status;
  }

 private:
  template <typename T>
  static Status run_typed(KernelContext& ctx, const T* x, T* y, int64_t batch, int64_t n) {
    ThreadPool& pool = ctx.thread_pool();
    // One task per thread, each with its own copy of a matrix.
    const int64_t work = std::max<int64_t>(1, n * n * n);
    const int64_t tasks = std::clamp<int64_t>(batch * work / (1 << 15), 1, std::min<int64_t>(pool.num_threads(), batch));
    const size_t per_task = KernelContext::scratch_align(static_cast<size_t>(n * n) * sizeof(double));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(64, per_task * static_cast<size_t>(tasks))));
    auto body = [&](int64_t t) {
      auto* a = reinterpret_cast<double*>(static_cast<char*>(scratch) + per_task * static_cast<size_t>(t));
      for (int64_t b = batch * t / tasks; b < batch * (t + 1) / tasks; ++b) {
        const T* m = x + b * n * n;
        for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<double>(load(m[i]));
        y[b] = store<T>(static_cast<compute_t<T>>(lu_determinant(a, n)));
      }
    };
    if (tasks == 1) {
      body(0);
    } else {
      pool.parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) body(t);
      });
    }
    return ok_status();
  }
};

// ---- MatMulInteger --------------------------------------------------------------------

// How a zero point applies: one value, one per row (A) / column (B) shared
// by every batch, or one per row / column of every matrix of the operand.
enum class ZeroPointKind { kNone, kScalar, kPerVector, kPerMatrixVector };

// `vec`: M for A (rows), N for B (columns); `matrices`: matrices in the operand.
Status classify_zero_point(const KernelContext& ctx, const Tensor* zp, const Tensor& x, int64_t vec, int64_t matrices,
                           bool is_a, ZeroPointKind& kind) {
  kind = ZeroPointKind::kNone;
  if (zp == nullptr) return ok_status();
  if (zp->dtype() != x.dtype())
    return kernel_error(ctx, std::string(is_a ? "a_zero_point " : "b_zero_point ") + zp->describe() +
                                 " must have the type of " + (is_a ? "A " : "B ") + x.describe());
  const Shape& s = zp->shape();
  const int64_t n = zp->num_elements();
  // Per-row zero points of A have a trailing 1 ([.., M, 1]); per-column ones
  // of B a 1 before the last dim ([.., 1, N]).
  // A scalar (rank 0) has neither dim to look at.
  const bool vector_layout =
      s.rank() == 1 || (is_a ? s.rank() >= 1 && s[s.rank() - 1] == 1 : (s.rank() >= 2 && s[s.rank() - 2] == 1));
  if (n == 1) {
    kind = ZeroPointKind::kScalar;
  } else if (vector_layout && n == vec) {
    kind = ZeroPointKind::kPerVector;
  } else if (vector_layout && n == vec * matrices) {
    kind = ZeroPointKind::kPerMatrixVector;
  } else {
    return kernel_error(ctx, std::string(is_a ? "a_zero_point " : "b_zero_point ") + zp->describe() +
                                 " does not fit " + (is_a ? "A " : "B ") + x.describe() + " (expected a scalar, " +
                                 std::to_string(vec) + (is_a ? " per-row" : " per-column") + " values, or " +
                                 std::to_string(vec * matrices) + " for every matrix)");
  }
  return ok_status();
}

template <typename T>
int32_t zero_point_at(const Tensor* zp, ZeroPointKind kind, int64_t matrix, int64_t i, int64_t vec) {
  switch (kind) {
    case ZeroPointKind::kNone: return 0;
    case ZeroPointKind::kScalar: return zp->data<T>()[0];
    case ZeroPointKind::kPerVector: return zp->data<T>()[i];
    case ZeroPointKind::kPerMatrixVector: return zp->data<T>()[matrix * vec + i];
  }
  return 0;
}

// B - b_zero_point as int16, same layout as B.
template <typename TB>
void subtract_b_zero_point(const TB* b, const Tensor* zp, ZeroPointKind kind, int64_t matrices, int64_t K, int64_t N,
                           int16_t* out) {
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t k = 0; k < K; ++k) {
      const TB* row = b + (m * K + k) * N;
      int16_t* o = out + (m * K + k) * N;
      if (kind == ZeroPointKind::kNone || kind == ZeroPointKind::kScalar) {
        const int32_t z = zero_point_at<TB>(zp, kind, m, 0, N);
        for (int64_t j = 0; j < N; ++j) o[j] = static_cast<int16_t>(row[j] - z);
      } else {
        for (int64_t j = 0; j < N; ++j) o[j] = static_cast<int16_t>(row[j] - zero_point_at<TB>(zp, kind, m, j, N));
      }
    }
}

class MatMulIntegerKernel final : public Kernel {
 public:
  MatMulIntegerKernel(const KernelCreateContext& ctx, Status&) {
    // B and its zero point constant: subtract once, here.
    const Tensor* b = ctx.constant_input(1);
    const bool zp_given = ctx.num_inputs() > 3 && ctx.input_type(3) != nullptr;
    const Tensor* zp = zp_given ? ctx.constant_input(3) : nullptr;
    if (b == nullptr || (zp_given && zp == nullptr) || b->shape().rank() == 0) return;
    if (b->dtype() != DataType::kInt8 && b->dtype() != DataType::kUint8) return;
    if (zp != nullptr && zp->dtype() != b->dtype()) return;
    const Shape& s = b->shape();
    const int64_t K = s.rank() == 1 ? s[0] : s[s.rank() - 2];
    const int64_t N = s.rank() == 1 ? 1 : s[s.rank() - 1];
    const int64_t matrices = K * N == 0 ? 0 : b->num_elements() / (K * N);
    ZeroPointKind kind = ZeroPointKind::kNone;
    if (zp != nullptr) {
      const int64_t n = zp->num_elements();
      if (n == 1) {
        kind = ZeroPointKind::kScalar;
      } else {
        return;  // per-column layouts are checked at run time, with the other input's shape
      }
    }
    packed_b_.resize(static_cast<size_t>(b->num_elements()));
    if (b->dtype() == DataType::kInt8) {
      subtract_b_zero_point<int8_t>(b->data<int8_t>(), zp, kind, matrices, K, N, packed_b_.data());
    } else {
      subtract_b_zero_point<uint8_t>(b->data<uint8_t>(), zp, kind, matrices, K, N, packed_b_.data());
    }
    has_packed_b_ = true;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* a_zp = ctx.input(2);
    const Tensor* b_zp = ctx.input(3);
    for (const Tensor* t : {&a, &b})
      if (t->dtype() != DataType::kInt8 && t->dtype() != DataType::kUint8)
        return kernel_error(ctx, "A and B must be int8 or uint8; got " + t->describe());
    MatMulDims d;
    SY_RETURN_IF_ERROR(matmul_dims(ctx, a.shape(), b.shape(), d));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, d.out_shape));
    if (y->num_elements() == 0) return ok_status();
    const int64_t a_matrices = a.num_elements() / std::max<int64_t>(1, d.M * d.K);
    const int64_t b_matrices = b.num_elements() / std::max<int64_t>(1, d.K * d.N);
    ZeroPointKind a_kind, b_kind;
    SY_RETURN_IF_ERROR(classify_zero_point(ctx, a_zp, a, d.M, a_matrices, true, a_kind));
    SY_RETURN_IF_ERROR(classify_zero_point(ctx, b_zp, b, d.N, b_matrices, false, b_kind));

    const int16_t* bm = packed_b_.data();
    if (!has_packed_b_) {
      SY_ASSIGN_OR_RETURN(void* scratch,
                          ctx.scratch(std::max<size_t>(64, static_cast<size_t>(b.num_elements()) * sizeof(int16_t))));
      auto* out = static_cast<int16_t*>(scratch);
      if (b.dtype() == DataType::kInt8) {
        subtract_b_zero_point<int8_t>(b.data<int8_t>(), b_zp, b_kind, b_matrices, d.K, d.N, out);
      } else {
        subtract_b_zero_point<uint8_t>(b.data<uint8_t>(), b_zp, b_kind, b_matrices, d.K, d.N, out);
      }
      bm = out;
    }
    if (a.dtype() == DataType::kInt8) {
      multiply<int8_t>(ctx, a.data<int8_t>(), a_zp, a_kind, bm, y->data<int32_t>(), d);
    } else {
      multiply<uint8_t>(ctx, a.data<uint8_t>(), a_zp, a_kind, bm, y->data<int32_t>(), d);
    }
    return ok_status();
  }

 private:
  template <typename TA>
  static void multiply(KernelContext& ctx, const TA* a, const Tensor* a_zp, ZeroPointKind a_kind, const int16_t* b,
                       int32_t* y, const MatMulDims& d) {
    const int64_t M = d.M, N = d.N, K = d.K;
    const int64_t rows = d.batch_count * M;
    const int64_t chunk = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, K * N));
    ctx.thread_pool().parallel_for(rows, chunk, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t batch = row / M;
        const int64_t m = row - batch * M;
        int64_t a_off, b_off;
        batch_offsets(d, batch, a_off, b_off);
        const int32_t za = zero_point_at<TA>(a_zp, a_kind, a_off / std::max<int64_t>(1, M * K), m, M);
        const TA* ar = a + a_off + m * K;
        int32_t* out = y + row * N;
        std::fill(out, out + N, 0);
        for (int64_t k = 0; k < K; ++k) {
          const int32_t av = static_cast<int32_t>(ar[k]) - za;
          if (av == 0) continue;
          const int16_t* br = b + b_off + k * N;
          for (int64_t j = 0; j < N; ++j) out[j] += av * static_cast<int32_t>(br[j]);
        }
      }
    });
  }

  std::vector<int16_t> packed_b_;
  bool has_packed_b_ = false;
};

constexpr uint64_t kInt8Types = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);

const KernelDef kLinalgKernels[] = {
    {"", "Det", 11, 21,  0, type_mask(TypeList<float, double, Float16>{}), &make_kernel<DetKernel>},
    {"", "Det", 22, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<DetKernel>},
    {"", "MatMulInteger", 10, kLatestVersion, 0, kInt8Types, &make_kernel<MatMulIntegerKernel>},
};

}  // namespace

std::span<const KernelDef> linalg_kernels() { return kLinalgKernels; }

}  // namespace sy::cpu
