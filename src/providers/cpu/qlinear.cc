// The integer matrix ops, on one 8-bit GEMM (gemm/qgemm.h): MatMulInteger
// and QLinearMatMul (numpy batching, zero points and scales per tensor, per
// row of A or per column of B), ConvInteger and QLinearConv (1-D to 6-D,
// groups, pads, strides, dilations, auto_pad; W's zero point and scale per
// tensor or per output channel).
//
// A GEMM tile goes through requant_tile() while in L1: zero points applied
// from row and column sums (qgemm.h), bias added, and for the QLinear ops
// y = saturate(round_half_even(acc * multiplier) + y_zero_point) with
// multiplier = (a_scale * b_scale) / y_scale computed in float, as ONNX
// Runtime does.
//
// Matrix ops: A is copied into the GEMM's uint8 rows (row sums on the way),
// B packed at creation when constant, else per run. Convolutions: W (the
// GEMM's A, one row per output channel) packed at creation when constant;
// X unrolled into packed columns (an integer im2col that pads with x's zero
// point) a block of output positions at a time, so the unrolled block stays
// in cache and no full column matrix is ever made. Y comes out NCHW.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/conv/conv_util.h"
#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/qgemm_epilogue.h"
#include "providers/cpu/matmul_dims.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"
#include "schema/quantize.h"
#include "switchyard/data_type.h"

namespace sy::cpu {
namespace {

constexpr uint64_t kInt8Types = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);

int32_t int8_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? int32_t{t.data<int8_t>()[i]} : int32_t{t.data<uint8_t>()[i]};
}

float scale_at(const Tensor& t, int64_t i) { return static_cast<float>(number_at(t, i)); }

// The GEMM multiplies uint8 (A side) by int8 (B side); other data is
// flipped (qgemm.h) and its zero point moved with it.
uint8_t a_side_flip(DataType t) { return t == DataType::kInt8 ? 0x80 : 0; }
uint8_t b_side_flip(DataType t) { return t == DataType::kUint8 ? 0x80 : 0; }
int32_t a_side_zero_point(int32_t z, DataType t) { return t == DataType::kInt8 ? z + 128 : z; }
int32_t b_side_zero_point(int32_t z, DataType t) { return t == DataType::kUint8 ? z - 128 : z; }

// ---- parameters: zero points and scales ------------------------------------------------------

Status check_zero_point_type(const KernelContext& ctx, size_t zp, const char* zp_name, const Tensor& x,
                             const char* x_name) {
  const Tensor* z = ctx.input(zp);
  if (z == nullptr || z->dtype() == x.dtype()) return ok_status();
  return kernel_error(ctx, describe_input(ctx, zp, zp_name) + " must have the type of " + x_name + " " + x.describe());
}

// Scales are finite and non-zero: a zero y_scale divides by zero, a zero x
// or w scale flattens every output to the zero point.
Status check_scale_values(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor& t = *ctx.input(i);
  if (t.dtype() != DataType::kFloat && t.dtype() != DataType::kFloat16 && t.dtype() != DataType::kBfloat16)
    return kernel_error(ctx, describe_input(ctx, i, name) + " must be a float tensor");
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    const float v = scale_at(t, k);
    if (v == 0.0f || !std::isfinite(v))
      return kernel_invalid_argument(ctx, describe_input(ctx, i, name) + " holds " + std::to_string(v) +
                                              " at index " + std::to_string(k) +
                                              "; scales must be finite and non-zero");
  }
  return ok_status();
}

// How a matrix op's parameter applies: one value, one per row (A) / column
// (B) shared by every matrix, or one per row / column of every matrix.
enum class Granularity { kNone, kScalar, kPerVector, kPerMatrixVector };

// `vec`: M for A (rows), N for B (columns); `matrices`: matrices in the operand.
Status classify_parameter(const KernelContext& ctx, size_t i, const char* name, const Tensor& x, int64_t vec,
                          int64_t matrices, bool is_a, Granularity& kind) {
  kind = Granularity::kNone;
  const Tensor* p = ctx.input(i);
  if (p == nullptr) return ok_status();
  const Shape& s = p->shape();
  const int64_t n = p->num_elements();
  // Per-row values of A have a trailing 1 ([.., M, 1]); per-column ones of
  // B a 1 before the last dim ([.., 1, N]). A scalar has neither.
  const bool vector_layout =
      s.rank() == 1 || (is_a ? s.rank() >= 1 && s[s.rank() - 1] == 1 : (s.rank() >= 2 && s[s.rank() - 2] == 1));
  if (n == 1) {
    kind = Granularity::kScalar;
  } else if (vector_layout && n == vec) {
    kind = Granularity::kPerVector;
  } else if (vector_layout && n == vec * matrices) {
    kind = Granularity::kPerMatrixVector;
  } else {
    return kernel_invalid_argument(
        ctx, describe_input(ctx, i, name) + " does not fit " + (is_a ? "A " : "B ") + x.describe() +
                 " (expected a scalar, " + std::to_string(vec) + (is_a ? " per-row" : " per-column") +
                 " values, or " + std::to_string(vec * matrices) + " for every matrix)");
  }
  return ok_status();
}

// The parameter's index for row / column i of matrix `matrix`.
int64_t parameter_index(Granularity kind, int64_t matrix, int64_t i, int64_t vec) {
  switch (kind) {
    case Granularity::kPerVector: return i;
    case Granularity::kPerMatrixVector: return matrix * vec + i;
    default: return 0;
  }
}

// A per-tensor parameter (one value), or with `channels` > 0 one per
// channel allowed too: rank <= 1 and 1 or `channels` values.
Status check_parameter_count(const KernelContext& ctx, size_t i, const char* name, int64_t channels) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return ok_status();
  const int64_t n = t->num_elements();
  if (t->shape().rank() <= 1 && (n == 1 || (channels > 0 && n == channels))) return ok_status();
  return kernel_invalid_argument(ctx, describe_input(ctx, i, name) + " must hold " +
                                          (channels > 0 ? "1 or " + std::to_string(channels) + " values (per tensor "
                                                          "or per output channel)"
                                                        : std::string("one value (per tensor)")) +
                                          " in a scalar or 1-D tensor");
}

// The node's first `count` inputs are present (the schema requires them;
// a graph built around it must not crash the kernel).
constexpr const char* kMatMulIntegerNames[] = {"A", "B", "a_zero_point", "b_zero_point"};
constexpr const char* kQLinearMatMulNames[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                                               "y_scale", "y_zero_point"};
constexpr const char* kConvIntegerNames[] = {"x", "w", "x_zero_point", "w_zero_point"};
constexpr const char* kQLinearConvNames[] = {"x", "x_scale", "x_zero_point", "w", "w_scale",
                                             "w_zero_point", "y_scale", "y_zero_point", "B"};

template <size_t kQ, size_t kI>
Status require_inputs(const KernelContext& ctx, size_t count, const char* const (&quantized)[kQ],
                      const char* const (&integer)[kI]) {
  for (size_t i = 0; i < count; ++i)
    if (ctx.input(i) == nullptr)
      return kernel_error(ctx, std::string("input ") + std::to_string(i) + " (" +
                                   (count == 8 ? quantized[i] : integer[i]) + ") is required");
  return ok_status();
}

// ---- the tile epilogue -----------------------------------------------------------------------

// What turns raw GEMM sums into outputs, for tile coordinates (m, n); every
// pointer is offset so that those index it directly.
struct Epilogue {
  const int32_t* a_zp = nullptr;    // per row, shifted into the GEMM's uint8
  const int32_t* a_term = nullptr;  // per row: row sum - K * a_zp
  const int32_t* b_zp = nullptr;    // per column, shifted into int8
  const int32_t* b_sum = nullptr;   // per column
  const int32_t* bias = nullptr;    // per row, or null
  // Where every row has one a_zp and every column one b_zp, the kernel
  // folds the zero-point products into these (qgemm_epilogue.h) and the
  // five above go unread: col_term[n] = a_zp * b_sum[n],
  // row_term[m] = bias[m] - b_zp * a_term[m].
  const int32_t* col_term = nullptr;
  const int32_t* row_term = nullptr;
  QgemmOutput kind = QgemmOutput::kInt32;
  void* y = nullptr;
  int64_t ldy = 0;
  // Multiplier: row_mult[m] or col_mult[n] where one is null; with both,
  // (row_mult[m] * col_mult[n]) / y_scale.
  const float* row_mult = nullptr;
  const float* col_mult = nullptr;
  float y_scale = 1.0f;
  int32_t y_zp = 0;
};

void requant_tile(const int32_t* tile, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const void* arg) {
  const Epilogue& e = *static_cast<const Epilogue*>(arg);
  static const QgemmEpilogueSimd& simd = qgemm_epilogue_simd();
  QgemmTileEpilogue p;
  p.row_mult = e.row_mult != nullptr ? e.row_mult + m0 : nullptr;
  p.col_mult = e.col_mult != nullptr ? e.col_mult + n0 : nullptr;
  p.y_scale = e.y_scale;
  p.y_zp = e.y_zp;
  p.kind = e.kind;
  p.out = static_cast<char*>(e.y) + (m0 * e.ldy + n0) * (e.kind == QgemmOutput::kInt32 ? 4 : 1);
  p.ldo = e.ldy;
  if (e.col_term != nullptr) {
    p.col_term = e.col_term + n0;
    p.row_term = e.row_term + m0;
    simd.tile(p, tile, rows, cols);
    return;
  }
  // Zero points that differ from row to row and column to column.
  alignas(64) int32_t v[kQgemmRows * kQgemmTileCols];
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t m = m0 + i;
    const int32_t bias = e.bias != nullptr ? e.bias[m] : 0;
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t n = n0 + j;
      const int32_t raw = tile[i * kQgemmTileCols + j];
      v[i * kQgemmTileCols + j] = wrap_sub(
          wrap_sub(raw, wrap_mul(e.b_zp[n], e.a_term[m])), wrap_sub(wrap_mul(e.a_zp[m], e.b_sum[n]), bias));
    }
  }
  simd.tile(p, v, rows, cols);
}

QgemmOutput output_kind(DataType t) {
  return t == DataType::kInt32 ? QgemmOutput::kInt32 : t == DataType::kInt8 ? QgemmOutput::kInt8 : QgemmOutput::kUint8;
}

// Product of the dims before the last two (the matrices in an operand).
int64_t matrix_count(const Shape& s) {
  int64_t n = 1;
  for (size_t i = 0; i + 2 < s.rank(); ++i) n *= s[i];
  return n;
}

// ---- MatMulInteger and QLinearMatMul ----------------------------------------------------------

struct MatMulInputs {
  size_t a = 0, a_scale = 0, a_zp = 0, b = 0, b_scale = 0, b_zp = 0, y_scale = 0, y_zp = 0;
};
constexpr MatMulInputs kMatMulIntegerInputs = {0, 0, 2, 1, 0, 3, 0, 0};
constexpr MatMulInputs kQLinearMatMulInputs = {0, 1, 2, 3, 4, 5, 6, 7};

class IntegerMatMulKernel final : public Kernel {
 public:
  IntegerMatMulKernel(const KernelCreateContext& ctx, bool quantized) : quantized_(quantized) {
    in_ = quantized ? kQLinearMatMulInputs : kMatMulIntegerInputs;
    // B constant: packed once, here (its zero point applies at run time).
    const Tensor* b = ctx.constant_input(in_.b);
    if (b == nullptr || b->shape().rank() == 0 || !is_8bit_type(b->dtype())) return;
    const Shape& s = b->shape();
    const int64_t K = s.rank() == 1 ? s[0] : s[s.rank() - 2];
    const int64_t N = s.rank() == 1 ? 1 : s[s.rank() - 1];
    const int64_t matrices = matrix_count(s);
    const int64_t bytes = qgemm_packed_b_bytes(K, N);
    if (!packed_b_.resize(static_cast<size_t>(matrices * bytes))) return;
    b_sums_.resize(static_cast<size_t>(matrices * N));
    const auto* data = b->data<uint8_t>();
    for (int64_t i = 0; i < matrices; ++i)
      qgemm_pack_b(data + i * K * N, N, 1, K, N, b_side_flip(b->dtype()), packed_b_.data() + i * bytes,
                   b_sums_.data() + i * N);
    packed_shape_ = s;
    packed_dtype_ = b->dtype();
    ctx.mark_prepacked(in_.b);
  }

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(require_inputs(ctx, quantized_ ? 8 : 2, kQLinearMatMulNames, kMatMulIntegerNames));
    const Tensor& a = *ctx.input(in_.a);
    const Tensor& b = *ctx.input(in_.b);
    for (size_t i : {in_.a, in_.b})
      if (!is_8bit_type(ctx.input(i)->dtype()))
        return kernel_error(ctx, describe_input(ctx, i, i == in_.a ? "A" : "B") + " must be int8 or uint8");
    SY_RETURN_IF_ERROR(check_zero_point_type(ctx, in_.a_zp, "a_zero_point", a, "A"));
    SY_RETURN_IF_ERROR(check_zero_point_type(ctx, in_.b_zp, "b_zero_point", b, "B"));
    MatMulDims d;
    SY_RETURN_IF_ERROR(matmul_dims(ctx, a.shape(), b.shape(), d));
    const int64_t M = d.M, N = d.N, K = d.K, K4 = qgemm_depth(K);
    const int64_t a_matrices = matrix_count(a.shape()), b_matrices = matrix_count(b.shape());
    Granularity a_zk, b_zk, a_sk = Granularity::kNone, b_sk = Granularity::kNone;
    SY_RETURN_IF_ERROR(classify_parameter(ctx, in_.a_zp, "a_zero_point", a, M, a_matrices, true, a_zk));
    SY_RETURN_IF_ERROR(classify_parameter(ctx, in_.b_zp, "b_zero_point", b, N, b_matrices, false, b_zk));
    DataType out_type = DataType::kInt32;
    if (quantized_) {
      SY_RETURN_IF_ERROR(classify_parameter(ctx, in_.a_scale, "a_scale", a, M, a_matrices, true, a_sk));
      SY_RETURN_IF_ERROR(classify_parameter(ctx, in_.b_scale, "b_scale", b, N, b_matrices, false, b_sk));
      SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.y_scale, "y_scale", 0));
      SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.y_zp, "y_zero_point", 0));
      const char* names[] = {"a_scale", "b_scale", "y_scale"};
      const size_t scales[] = {in_.a_scale, in_.b_scale, in_.y_scale};
      for (int i = 0; i < 3; ++i) SY_RETURN_IF_ERROR(check_scale_values(ctx, scales[i], names[i]));
      out_type = ctx.input(in_.y_zp)->dtype();
      if (!is_8bit_type(out_type))
        return kernel_error(ctx, describe_input(ctx, in_.y_zp, "y_zero_point") + " must be int8 or uint8");
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_type, d.out_shape));
    if (y->num_elements() == 0) return ok_status();
    const bool prepacked = !packed_b_.empty() && packed_shape_ == b.shape() && packed_dtype_ == b.dtype();
    const int64_t b_bytes = qgemm_packed_b_bytes(K, N);

    ScratchCarver carve;
    const size_t a_rows_at = carve.add<uint8_t>(a_matrices * M * K4);
    const size_t a_zp_at = carve.add<int32_t>(a_matrices * M);
    const size_t a_term_at = carve.add<int32_t>(a_matrices * M);
    const size_t b_zp_at = carve.add<int32_t>(b_matrices * N);
    const size_t b_packed_at = carve.add<int8_t>(prepacked ? 0 : b_matrices * b_bytes);
    const size_t b_sums_at = carve.add<int32_t>(prepacked ? 0 : b_matrices * N);
    const size_t row_mult_at = carve.add<float>(quantized_ ? a_matrices * M : 0);
    const size_t col_mult_at = carve.add<float>(quantized_ ? b_matrices * N : 0);
    const size_t col_term_at = carve.add<int32_t>(b_matrices * N);
    const size_t row_term_at = carve.add<int32_t>(a_matrices * M);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carve.total()));
    auto* a_rows = ScratchCarver::pointer<uint8_t>(scratch, a_rows_at);
    auto* a_zp = ScratchCarver::pointer<int32_t>(scratch, a_zp_at);
    auto* a_term = ScratchCarver::pointer<int32_t>(scratch, a_term_at);
    auto* b_zp = ScratchCarver::pointer<int32_t>(scratch, b_zp_at);
    const int8_t* b_packed = packed_b_.data();
    const int32_t* b_sums = b_sums_.data();
    ThreadPool& pool = ctx.thread_pool();

    // A's rows, their sums and zero points, in the GEMM's uint8.
    const int64_t a_total = a_matrices * M;
    const Tensor* za = ctx.input(in_.a_zp);
    pool.parallel_for(a_total, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K)), [&](int64_t r0, int64_t r1) {
      qgemm_pack_a(a.data<uint8_t>() + r0 * K, K, r1 - r0, K, a_side_flip(a.dtype()), a_rows + r0 * K4, a_term + r0);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t raw = za == nullptr ? 0 : int8_at(*za, parameter_index(a_zk, r / M, r % M, M));
        a_zp[r] = a_side_zero_point(static_cast<int32_t>(raw), a.dtype());
        a_term[r] = wrap_sub(a_term[r], wrap_mul(static_cast<int32_t>(K), a_zp[r]));
      }
    });
    const Tensor* zb = ctx.input(in_.b_zp);
    for (int64_t c = 0; c < b_matrices * N; ++c) {
      const int32_t raw = zb == nullptr ? 0 : int8_at(*zb, parameter_index(b_zk, c / N, c % N, N));
      b_zp[c] = b_side_zero_point(raw, b.dtype());
    }
    if (!prepacked) {
      auto* packed = ScratchCarver::pointer<int8_t>(scratch, b_packed_at);
      auto* sums = ScratchCarver::pointer<int32_t>(scratch, b_sums_at);
      pool.parallel_for(b_matrices, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          qgemm_pack_b(b.data<uint8_t>() + i * K * N, N, 1, K, N, b_side_flip(b.dtype()), packed + i * b_bytes,
                       sums + i * N);
      });
      b_packed = packed;
      b_sums = sums;
    }

    Epilogue base;
    base.kind = output_kind(out_type);
    base.ldy = N;
    if (a_total > 0 && b_matrices * N > 0 &&
        std::all_of(a_zp, a_zp + a_total, [&](int32_t z) { return z == a_zp[0]; }) &&
        std::all_of(b_zp, b_zp + b_matrices * N, [&](int32_t z) { return z == b_zp[0]; })) {
      auto* col_term = ScratchCarver::pointer<int32_t>(scratch, col_term_at);
      auto* row_term = ScratchCarver::pointer<int32_t>(scratch, row_term_at);
      for (int64_t c = 0; c < b_matrices * N; ++c) col_term[c] = wrap_mul(a_zp[0], b_sums[c]);
      for (int64_t r = 0; r < a_total; ++r) row_term[r] = wrap_sub(0, wrap_mul(b_zp[0], a_term[r]));
      base.col_term = col_term;
      base.row_term = row_term;
    }
    float* row_mult = nullptr;
    float* col_mult = nullptr;
    if (quantized_) {
      row_mult = ScratchCarver::pointer<float>(scratch, row_mult_at);
      col_mult = ScratchCarver::pointer<float>(scratch, col_mult_at);
      fill_multipliers(ctx, a_sk, b_sk, a_matrices * M, b_matrices * N, M, N, row_mult, col_mult, base);
      base.y_zp = int8_at(*ctx.input(in_.y_zp), 0);
    }

    // Blocks of rows and columns of each product, spread over the threads.
    const int64_t row_block = kQgemmRows * 8;
    const int64_t col_block = 8 * kQgemmPanel;
    const int64_t row_blocks = (M + row_block - 1) / row_block;
    const int64_t col_blocks = (N + col_block - 1) / col_block;
    const int64_t units = d.batch_count * row_blocks * col_blocks;
    const int64_t esize = base.kind == QgemmOutput::kInt32 ? 4 : 1;
    auto* y_bytes = static_cast<char*>(y->raw_data());
    const int64_t work_per_unit = std::max<int64_t>(1, row_block * col_block * K);
    pool.parallel_for(units, std::max<int64_t>(1, (1 << 20) / work_per_unit), [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t batch = u / (row_blocks * col_blocks);
        const int64_t rb = (u / col_blocks) % row_blocks;
        const int64_t cb = u % col_blocks;
        int64_t a_off, b_off;
        batch_offsets(d, batch, a_off, b_off);
        const int64_t am = M * K == 0 ? 0 : a_off / (M * K);
        const int64_t bm = K * N == 0 ? 0 : b_off / (K * N);
        const int64_t m0 = rb * row_block, rows = std::min(row_block, M - m0);
        const int64_t first_row = am * M + m0;
        Epilogue e = base;
        e.a_zp = a_zp + first_row;
        e.a_term = a_term + first_row;
        e.b_zp = b_zp + bm * N;
        e.b_sum = b_sums + bm * N;
        if (base.col_term != nullptr) {
          e.col_term = base.col_term + bm * N;
          e.row_term = base.row_term + first_row;
        }
        e.y = y_bytes + ((batch * M + m0) * N) * esize;
        if (base.row_mult != nullptr) e.row_mult = row_mult + first_row;
        if (base.col_mult != nullptr) e.col_mult = col_mult + bm * N;
        qgemm_u8s8(a_rows + first_row * K4, K4, rows, b_packed + bm * b_bytes, K, cb * col_block,
                   std::min(N, (cb + 1) * col_block), &requant_tile, &e);
      }
    });
    return ok_status();
  }

 private:
  // The requantization multipliers, (a_scale * b_scale) / y_scale: folded
  // into one per row or per column when the other side has one scale, so
  // that the epilogue multiplies once; per element when both vary.
  void fill_multipliers(const KernelContext& ctx, Granularity a_sk, Granularity b_sk, int64_t rows, int64_t cols,
                        int64_t M, int64_t N, float* row_mult, float* col_mult, Epilogue& e) const {
    const Tensor& as = *ctx.input(in_.a_scale);
    const Tensor& bs = *ctx.input(in_.b_scale);
    const float ys = scale_at(*ctx.input(in_.y_scale), 0);
    const bool a_varies = a_sk == Granularity::kPerVector || a_sk == Granularity::kPerMatrixVector;
    const bool b_varies = b_sk == Granularity::kPerVector || b_sk == Granularity::kPerMatrixVector;
    auto a_at = [&](int64_t r) { return scale_at(as, parameter_index(a_sk, r / M, r % M, M)); };
    auto b_at = [&](int64_t c) { return scale_at(bs, parameter_index(b_sk, c / N, c % N, N)); };
    if (a_varies && b_varies) {
      for (int64_t r = 0; r < rows; ++r) row_mult[r] = a_at(r);
      for (int64_t c = 0; c < cols; ++c) col_mult[c] = b_at(c);
      e.row_mult = row_mult;
      e.col_mult = col_mult;
      e.y_scale = ys;
    } else if (a_varies) {
      const float b0 = b_at(0);
      for (int64_t r = 0; r < rows; ++r) row_mult[r] = (a_at(r) * b0) / ys;
      e.row_mult = row_mult;
    } else {
      const float a0 = a_at(0);
      for (int64_t c = 0; c < cols; ++c) col_mult[c] = (a0 * b_at(c)) / ys;
      e.col_mult = col_mult;
    }
  }

  bool quantized_;
  MatMulInputs in_;
  QgemmPacked<int8_t> packed_b_;
  std::vector<int32_t> b_sums_;
  Shape packed_shape_;
  DataType packed_dtype_ = DataType::kUndefined;
};

template <bool kQuantized>
Result<std::unique_ptr<Kernel>> make_matmul_kernel(const KernelCreateContext& ctx) {
  return std::unique_ptr<Kernel>(std::make_unique<IntegerMatMulKernel>(ctx, kQuantized));
}

// ---- ConvInteger and QLinearConv -------------------------------------------------------------

constexpr int64_t kMaxColumnBlock = 256;

// Rows of the integer im2col of one channel plane: row (c, tap) holds, for
// output positions [p0, p0 + np), the byte of x under that tap, or `pad`
// (x's zero point, which adds nothing once subtracted) in the padding.
//
// A window of one tap with stride 1 and no padding reads x itself. Other
// 1-D and 2-D windows read a copy of x with the padding written out
// (padded_plane_bytes per plane, made by pad_planes). With stride 1 they
// compute on a grid as wide as the padded plane (grid()): position
// q = oh * grid_width() + ow, where the columns ow >= out width are
// computed and dropped, so that every tap row is one run of the padded
// plane, read in place; copying runs of a few bytes per output row cost
// more than the extra columns. With other strides each output row's run
// is copied. 3-D windows compute each position's offset.
class ConvRows {
 public:
  explicit ConvRows(const WindowGeometry& g) : g_(g) {
    direct_ = g.kernel_size() == 1;
    for (int d = 0; d < g.rank; ++d) direct_ = direct_ && g.stride[d] == 1 && g.pad_begin[d] == 0 && g.out[d] == g.in[d];
    padded_ = !direct_ && g.rank <= 2;
    if (padded_) {
      // A 1-D window is a 2-D one of height 1.
      const int w = g.rank - 1;
      const bool two = g.rank == 2;
      h_ = {two ? g.in[0] : 1, two ? g.out[0] : 1, two ? g.kernel[0] : 1, two ? g.stride[0] : 1,
            two ? g.dilation[0] : 1, two ? g.pad_begin[0] : 0, 0};
      w_ = {g.in[w], g.out[w], g.kernel[w], g.stride[w], g.dilation[w], g.pad_begin[w], 0};
      // The rows and columns the windows reach, from the first pad on.
      h_.span = (h_.out - 1) * h_.stride + (h_.kernel - 1) * h_.dilation + 1;
      w_.span = (w_.out - 1) * w_.stride + (w_.kernel - 1) * w_.dilation + 1;
      grid_ = h_.stride == 1 && w_.stride == 1;
    }
  }

  // Whether positions are on the padded plane's grid (see above), and its
  // width and size. Outside a grid, positions are the output's own.
  bool grid() const { return grid_; }
  int64_t grid_width() const { return w_.span; }
  int64_t grid_positions() const { return h_.out * w_.span; }
  // The output's width, for dropping a grid's extra columns.
  int64_t out_width() const { return w_.out; }

  // A tap of the window, stepped through in order by advance() so that
  // filling a row divides nothing: its index, its column in the kernel, and
  // where its run starts in a padded plane.
  struct Tap {
    int64_t index = 0, kw = 0, offset = 0;
  };
  // The next tap; after the last, the first again (of the next channel),
  // and then true.
  bool advance(Tap& t) const {
    if (++t.index == g_.kernel_size()) {
      t = Tap{};
      return true;
    }
    if (++t.kw < w_.kernel) {
      t.offset += w_.dilation;
    } else {
      t.kw = 0;
      t.offset += h_.dilation * w_.span - (w_.kernel - 1) * w_.dilation;
    }
    return false;
  }

  // The first position of a block, split per output row: computed once a
  // block, so that filling its rows divides nothing.
  struct Start {
    int64_t p0 = 0, oh = 0, ow = 0;
  };
  Start start(int64_t p0) const { return padded_ ? Start{p0, p0 / w_.out, p0 % w_.out} : Start{p0, 0, 0}; }

  // Bytes of one padded plane; 0 when rows read x or compute offsets.
  int64_t padded_plane_bytes() const { return padded_ ? h_.span * w_.span : 0; }
  // Bytes a copy may read or write past the end of a run (kCopyChunk).
  static constexpr int64_t kSlack = 16;
  // Bytes readable past the last padded plane: a grid's last tap row runs
  // (kernel width - 1) * dilation past it, in dropped columns.
  int64_t padded_slack() const { return kSlack + (grid_ ? (w_.kernel - 1) * w_.dilation : 0); }

  // `planes` planes of x (in_size bytes each) into out, padded_plane_bytes
  // apart, the padding set to `pad`.
  void pad_planes(const uint8_t* x, int64_t planes, int64_t in_size, uint8_t pad, uint8_t* out) const {
    const int64_t left = std::min(w_.pad, w_.span);
    const int64_t width = std::clamp<int64_t>(w_.span - left, 0, w_.in);
    for (int64_t c = 0; c < planes; ++c) {
      const uint8_t* src = x + c * in_size;
      uint8_t* dst = out + c * padded_plane_bytes();
      for (int64_t r = 0; r < h_.span; ++r, dst += w_.span) {
        const int64_t ih = r - h_.pad;
        if (ih < 0 || ih >= h_.in) {
          std::memset(dst, pad, static_cast<size_t>(w_.span));
          continue;
        }
        std::memset(dst, pad, static_cast<size_t>(left));
        std::memcpy(dst + left, src + ih * w_.in, static_cast<size_t>(width));
        std::memset(dst + left + width, pad, static_cast<size_t>(w_.span - left - width));
      }
    }
  }

  // Row `tap` for positions [p0, p0 + np): a pointer into x's plane when it
  // holds the row as is, else `buf` (np + kSlack bytes) filled. `padded` is
  // the plane's padded copy (pad_planes), for ranks 1 and 2.
  const uint8_t* row(const uint8_t* plane, const uint8_t* padded, const Tap& tap, const Start& at, int64_t np,
                     uint8_t pad, uint8_t* buf) const {
    if (direct_) return plane + at.p0;
    if (grid_) return padded + tap.offset + at.p0;
    if (padded_) {
      fill_from_padded(padded + tap.offset, at, np, buf);
    } else {
      fill_any(plane, tap.index, at.p0, np, pad, buf);
    }
    return buf;
  }

 private:
  struct Dim {
    int64_t in, out, kernel, stride, dilation, pad, span;
  };

  void fill_from_padded(const uint8_t* base, const Start& at, int64_t np, uint8_t* buf) const {
    int64_t oh = at.oh, ow0 = at.ow;  // the runs after the first start rows
    uint8_t* dst = buf;
    for (int64_t left = np; left > 0; ++oh, ow0 = 0) {
      const int64_t n = std::min(w_.out - ow0, left);
      const uint8_t* src = base + oh * h_.stride * w_.span + ow0 * w_.stride;
      if (w_.stride == 1) {
        // Whole chunks: a run's last one spills into the next run's bytes
        // (rewritten next) or the slack, and reads at most kSlack past it.
        for (int64_t i = 0; i < n; i += kSlack) std::memcpy(dst + i, src + i, kSlack);
      } else if (w_.stride == 2) {
        // A constant stride lets GCC vectorise the gather with shuffles.
        for (int64_t i = 0; i < n; ++i) dst[i] = src[2 * i];
      } else {
        const int64_t stride = w_.stride;  // in a register, not reloaded past each byte store
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
      }
      dst += n;
      left -= n;
    }
  }

  void fill_any(const uint8_t* plane, int64_t tap, int64_t p0, int64_t np, uint8_t pad, uint8_t* buf) const {
    const int rank = g_.rank;
    int64_t tap_at[kMaxSpatialDims], o[kMaxSpatialDims], in_stride[kMaxSpatialDims];
    for (int64_t rem = tap, d = rank - 1; d >= 0; --d) {
      tap_at[d] = rem % g_.kernel[d];
      rem /= g_.kernel[d];
    }
    for (int64_t rem = p0, d = rank - 1; d >= 0; --d) {
      o[d] = rem % g_.out[d];
      rem /= g_.out[d];
    }
    in_stride[rank - 1] = 1;
    for (int d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * g_.in[d];
    for (int64_t j = 0; j < np; ++j) {
      int64_t off = 0;
      bool inside = true;
      for (int d = 0; d < rank; ++d) {
        const int64_t i = o[d] * g_.stride[d] - g_.pad_begin[d] + tap_at[d] * g_.dilation[d];
        inside = inside && i >= 0 && i < g_.in[d];
        off += i * in_stride[d];
      }
      buf[j] = inside ? plane[off] : pad;
      for (int d = rank - 1; d >= 0; --d) {
        if (++o[d] < g_.out[d]) break;
        o[d] = 0;
      }
    }
  }

  const WindowGeometry& g_;
  bool direct_ = false;
  bool padded_ = false;
  bool grid_ = false;
  Dim h_{}, w_{};
};

// Output positions [p0, p0 + np) of the integer im2col of one group of x
// (`channels` planes of in_size bytes), packed as the GEMM's B (qgemm.h)
// four rows at a time: element (k, j) with k = channel * taps + tap.
// sums[j] gets column j's sum; `rows` holds 4 * kMaxColumnBlock bytes and
// ConvRows::kSlack more; `padded` is the group's padded planes, if any.
void pack_conv_columns(const uint8_t* x, const uint8_t* padded, const ConvRows& conv_rows, int64_t in_size,
                       int64_t p0, int64_t np, uint8_t pad, uint8_t flip, int64_t K, uint8_t* rows, int8_t* out,
                       int32_t* sums) {
  const int64_t K4 = qgemm_depth(K);
  std::fill(sums, sums + np, 0);
  const ConvRows::Start at = conv_rows.start(p0);
  int64_t c = 0;  // row k = c * taps + tap, counted rather than divided
  ConvRows::Tap tap;
  for (int64_t k0 = 0; k0 < K4; k0 += 4) {
    const uint8_t* quad[4];
    for (int64_t i = 0; i < 4; ++i) {
      if (k0 + i >= K) {
        quad[i] = nullptr;
        continue;
      }
      quad[i] = conv_rows.row(x + c * in_size, padded + c * conv_rows.padded_plane_bytes(), tap, at, np, pad,
                              rows + i * kMaxColumnBlock);
      if (conv_rows.advance(tap)) ++c;
    }
    qgemm_pack_b_quad(quad, np, flip, K4, out + k0 * kQgemmPanel, sums);
  }
}

// Grid positions [q0, q0 + n) of `rows` output rows (n values each, `esize`
// bytes a value, at `grid`) into y (rows p_out values apart): the columns
// of each grid row (width grid_width) inside the output's width.
void drop_grid_columns(const char* grid, int64_t rows, int64_t n, int64_t q0, int64_t grid_width, int64_t out_width,
                       int64_t p_out, int64_t esize, char* y) {
  const int64_t oh0 = q0 / grid_width, ow0 = q0 % grid_width;
  for (int64_t r = 0; r < rows; ++r) {
    const char* src = grid + r * n * esize;
    char* dst = y + r * p_out * esize;
    int64_t oh = oh0, ow = ow0;
    for (int64_t j = 0; j < n;) {
      const int64_t run = std::min(grid_width - ow, n - j);
      const int64_t keep = std::clamp<int64_t>(out_width - ow, 0, run);
      if (keep > 0) std::memcpy(dst + (oh * out_width + ow) * esize, src + j * esize, static_cast<size_t>(keep * esize));
      j += run;
      ++oh;
      ow = 0;
    }
  }
}

struct ConvInputs {
  size_t x = 0, x_scale = 0, x_zp = 0, w = 0, w_scale = 0, w_zp = 0, y_scale = 0, y_zp = 0, bias = 0;
};
constexpr ConvInputs kConvIntegerInputs = {0, 0, 2, 1, 0, 3, 0, 0, 0};
constexpr ConvInputs kQLinearConvInputs = {0, 1, 2, 3, 4, 5, 6, 7, 8};

class IntegerConvKernel final : public Kernel {
 public:
  IntegerConvKernel(const KernelCreateContext& ctx, bool quantized, Status& status) : quantized_(quantized) {
    in_ = quantized ? kQLinearConvInputs : kConvIntegerInputs;
    status = read_window_attributes(ctx, false, false, attrs_);
    if (!status.ok()) return;
    group_ = ctx.node().attr_int("group", 1);
    if (group_ <= 0) {
      status = ctx.error("group must be positive; got " + std::to_string(group_));
      return;
    }
    // W constant: its rows (one per output channel) packed once, here.
    const Tensor* w = ctx.constant_input(in_.w);
    if (w == nullptr || w->shape().rank() < 3 || !is_8bit_type(w->dtype()) || w->shape()[0] <= 0) return;
    const int64_t M = w->shape()[0];
    const int64_t K = w->num_elements() / M;
    if (!packed_w_.resize(static_cast<size_t>(std::max<int64_t>(1, M * qgemm_depth(K))))) return;
    w_sums_.resize(static_cast<size_t>(M));
    qgemm_pack_a(w->data<uint8_t>(), K, M, K, a_side_flip(w->dtype()), packed_w_.data(), w_sums_.data());
    packed_shape_ = w->shape();
    packed_dtype_ = w->dtype();
    ctx.mark_prepacked(in_.w);
  }

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(require_inputs(ctx, quantized_ ? 8 : 2, kQLinearConvNames, kConvIntegerNames));
    const Tensor& x = *ctx.input(in_.x);
    const Tensor& w = *ctx.input(in_.w);
    if (!is_8bit_type(x.dtype())) return kernel_error(ctx, describe_input(ctx, in_.x, "x") + " must be int8 or uint8");
    if (!is_8bit_type(w.dtype())) return kernel_error(ctx, describe_input(ctx, in_.w, "w") + " must be int8 or uint8");
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.rank() < 3 || ws.rank() != xs.rank())
      return kernel_error(ctx, "x " + xs.to_string() + " and w " + ws.to_string() +
                                   " must have one rank, at least 3 (N, C, spatial...)");
    const int64_t N = xs[0], C = xs[1], M = ws[0];
    if (C != ws[1] * group_ || M % group_ != 0)
      return kernel_error(ctx, "x has " + std::to_string(C) + " channels and w is " + ws.to_string() + " with group " +
                                   std::to_string(group_) + "; expected C == w[1] * group and w[0] % group == 0");
    const std::span<const int64_t> kernel_dims(ws.begin() + 2, ws.end());
    if (!attrs_.kernel_shape.empty() &&
        !std::equal(kernel_dims.begin(), kernel_dims.end(), attrs_.kernel_shape.begin(), attrs_.kernel_shape.end()))
      return kernel_error(ctx, "kernel_shape does not match w " + ws.to_string());
    WindowGeometry g;
    SY_RETURN_IF_ERROR(compute_window_geometry(ctx, attrs_, kernel_dims,
                                               std::span<const int64_t>(xs.begin() + 2, xs.end()), g));
    SY_RETURN_IF_ERROR(check_parameters(ctx, x, w, M));
    const DataType out_type = quantized_ ? ctx.input(in_.y_zp)->dtype() : DataType::kInt32;
    Shape ys{N, M};
    for (int i = 0; i < g.rank; ++i) ys.push_back(g.out[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_type, ys));
    if (y->num_elements() == 0) return ok_status();

    const int64_t Cg = C / group_, Mg = M / group_;
    const int64_t K = Cg * g.kernel_size(), K4 = qgemm_depth(K);
    const int64_t P = g.out_size(), in_size = g.in_size();
    const ConvRows conv_rows(g);
    // Positions the GEMM computes: the output's, or the padded grid's (ConvRows).
    const int64_t Pc = conv_rows.grid() ? conv_rows.grid_positions() : P;
    const int64_t out_bytes = out_type == DataType::kInt32 ? 4 : 1;
    const bool prepacked = !packed_w_.empty() && packed_shape_ == ws && packed_dtype_ == w.dtype();
    // Positions per block: the packed block (block * K4 bytes) within ~256 KiB.
    const int64_t fit = (1 << 18) / std::max<int64_t>(1, K4) / kQgemmTileCols * kQgemmTileCols;
    const int64_t block = std::min(std::clamp<int64_t>(fit, kQgemmTileCols, kMaxColumnBlock),
                                   (Pc + kQgemmPanel - 1) / kQgemmPanel * kQgemmPanel);
    const int64_t blocks = (Pc + block - 1) / block;
    ThreadPool& pool = ctx.thread_pool();
    // Deep layers have few positions, so a few blocks: their output
    // channels are split as well, into at least four units a thread so
    // that the threads' shares differ by little (each piece packing its
    // block; a task packs a block once for consecutive pieces of it), in
    // pieces of at least 48 rows.
    const int64_t position_units = N * group_ * blocks;
    const int64_t row_pieces = std::clamp<int64_t>((4 * pool.num_threads() + position_units - 1) / position_units, 1,
                                                   std::max<int64_t>(1, Mg / (8 * kQgemmRows)));
    const int64_t piece_rows = (Mg + row_pieces - 1) / row_pieces;
    const int64_t units = position_units * row_pieces;
    const int64_t tasks = std::clamp<int64_t>(N * group_ * blocks * Mg * K * block / (1 << 18), 1,
                                              std::min<int64_t>(pool.num_threads(), units));

    ScratchCarver carve;
    const size_t w_rows_at = carve.add<uint8_t>(prepacked ? 0 : M * K4);
    const size_t w_sums_at = carve.add<int32_t>(prepacked ? 0 : M);
    const size_t w_zp_at = carve.add<int32_t>(M);
    const size_t w_term_at = carve.add<int32_t>(M);
    const size_t row_mult_at = carve.add<float>(quantized_ ? M : 0);
    const size_t x_zp_at = carve.add<int32_t>(block);
    // Per task: the packed block and its column sums.
    const size_t packed_bytes = KernelContext::scratch_align(static_cast<size_t>(qgemm_packed_b_bytes(K, block)));
    const size_t sums_bytes = KernelContext::scratch_align(static_cast<size_t>(block) * sizeof(int32_t));
    const size_t rows_bytes = KernelContext::scratch_align(4 * kMaxColumnBlock + ConvRows::kSlack);
    // On a grid, a piece's outputs go to `grid_out` first, then their
    // columns inside the output's width to y.
    const size_t grid_out_bytes =
        conv_rows.grid() ? KernelContext::scratch_align(static_cast<size_t>(piece_rows * block * out_bytes)) : 0;
    const size_t per_task = packed_bytes + 2 * sums_bytes + rows_bytes + grid_out_bytes;
    const size_t row_term_at = carve.add<int32_t>(M);
    const int64_t plane_bytes = conv_rows.padded_plane_bytes();
    const size_t padded_at = carve.add<uint8_t>(plane_bytes == 0 ? 0 : N * C * plane_bytes + conv_rows.padded_slack());
    const size_t tasks_at = carve.add<char>(static_cast<int64_t>(per_task) * tasks);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carve.total()));

    const uint8_t* w_rows = packed_w_.data();
    const int32_t* w_sums = w_sums_.data();
    if (!prepacked) {
      auto* rows = ScratchCarver::pointer<uint8_t>(scratch, w_rows_at);
      auto* sums = ScratchCarver::pointer<int32_t>(scratch, w_sums_at);
      qgemm_pack_a(w.data<uint8_t>(), K, M, K, a_side_flip(w.dtype()), rows, sums);
      w_rows = rows;
      w_sums = sums;
    }
    auto* w_zp = ScratchCarver::pointer<int32_t>(scratch, w_zp_at);
    auto* w_term = ScratchCarver::pointer<int32_t>(scratch, w_term_at);
    const Tensor* wz = ctx.input(in_.w_zp);
    for (int64_t m = 0; m < M; ++m) {
      const int32_t raw = wz == nullptr ? 0 : int8_at(*wz, wz->num_elements() == 1 ? 0 : m);
      w_zp[m] = a_side_zero_point(raw, w.dtype());
      w_term[m] = wrap_sub(w_sums[m], wrap_mul(static_cast<int32_t>(K), w_zp[m]));
    }
    const Tensor* xz = ctx.input(in_.x_zp);
    const int32_t x_zp_raw = xz == nullptr ? 0 : int8_at(*xz, 0);
    auto* x_zp = ScratchCarver::pointer<int32_t>(scratch, x_zp_at);
    std::fill(x_zp, x_zp + block, b_side_zero_point(x_zp_raw, x.dtype()));

    Epilogue base;
    base.kind = output_kind(out_type);
    base.ldy = P;
    base.b_zp = x_zp;
    // One w zero point (x has one): the products fold into terms, the
    // column one made with each packed block.
    const bool uniform = std::all_of(w_zp, w_zp + M, [&](int32_t z) { return z == w_zp[0]; });
    const Tensor* bias = quantized_ ? ctx.input(in_.bias) : nullptr;
    if (quantized_) {
      auto* row_mult = ScratchCarver::pointer<float>(scratch, row_mult_at);
      const Tensor& wsc = *ctx.input(in_.w_scale);
      const float xsc = scale_at(*ctx.input(in_.x_scale), 0), ysc = scale_at(*ctx.input(in_.y_scale), 0);
      for (int64_t m = 0; m < M; ++m) row_mult[m] = (xsc * scale_at(wsc, wsc.num_elements() == 1 ? 0 : m)) / ysc;
      base.row_mult = row_mult;
      base.y_zp = int8_at(*ctx.input(in_.y_zp), 0);
    }
    auto* row_term = ScratchCarver::pointer<int32_t>(scratch, row_term_at);
    if (uniform) {
      for (int64_t m = 0; m < M; ++m)
        row_term[m] = wrap_sub(bias != nullptr ? bias->data<int32_t>()[m] : 0, wrap_mul(x_zp[0], w_term[m]));
    }

    const int64_t esize = base.kind == QgemmOutput::kInt32 ? 4 : 1;
    auto* y_bytes = static_cast<char*>(y->raw_data());
    const auto* xd = x.data<uint8_t>();
    const uint8_t pad = static_cast<uint8_t>(x_zp_raw);
    const uint8_t flip = b_side_flip(x.dtype());
    auto* padded = ScratchCarver::pointer<uint8_t>(scratch, padded_at);
    if (plane_bytes != 0) {
      pool.parallel_for(N * C, std::max<int64_t>(1, 65536 / plane_bytes), [&](int64_t c0, int64_t c1) {
        conv_rows.pad_planes(xd + c0 * in_size, c1 - c0, in_size, pad, padded + c0 * plane_bytes);
      });
    }
    auto body = [&](int64_t t) {
      char* mine = ScratchCarver::pointer<char>(scratch, tasks_at + per_task * static_cast<size_t>(t));
      auto* cols = reinterpret_cast<int8_t*>(mine);
      auto* sums = reinterpret_cast<int32_t*>(mine + packed_bytes);
      auto* col_term = reinterpret_cast<int32_t*>(mine + packed_bytes + sums_bytes);
      auto* rows = reinterpret_cast<uint8_t*>(mine + packed_bytes + 2 * sums_bytes);
      char* grid_out = mine + packed_bytes + 2 * sums_bytes + rows_bytes;
      int64_t packed_unit = -1;  // the position unit whose block `cols` holds
      for (int64_t u = units * t / tasks; u < units * (t + 1) / tasks; ++u) {
        const int64_t pu = u / row_pieces, piece = u % row_pieces;
        const int64_t img = pu / (group_ * blocks);
        const int64_t gi = (pu / blocks) % group_;
        const int64_t p0 = (pu % blocks) * block, np = std::min(block, Pc - p0);
        if (pu != packed_unit) {
          const int64_t plane0 = img * C + gi * Cg;
          pack_conv_columns(xd + plane0 * in_size, padded + plane0 * plane_bytes, conv_rows, in_size, p0, np, pad,
                            flip, K, rows, cols, sums);
          if (uniform)
            for (int64_t j = 0; j < np; ++j) col_term[j] = wrap_mul(w_zp[0], sums[j]);
          packed_unit = pu;
        }
        const int64_t r0 = piece * piece_rows, rn = std::min(piece_rows, Mg - r0);
        if (rn <= 0) continue;
        const int64_t m0 = gi * Mg + r0;
        Epilogue e = base;
        e.a_zp = w_zp + m0;
        e.a_term = w_term + m0;
        e.b_sum = sums;
        e.bias = bias != nullptr ? bias->data<int32_t>() + m0 : nullptr;
        if (uniform) {
          e.col_term = col_term;
          e.row_term = row_term + m0;
        }
        if (base.row_mult != nullptr) e.row_mult = base.row_mult + m0;
        char* y_rows = y_bytes + (img * M + m0) * P * esize;
        if (!conv_rows.grid()) {
          e.y = y_rows + p0 * esize;
          qgemm_u8s8(w_rows + m0 * K4, K4, rn, cols, K, 0, np, &requant_tile, &e);
          continue;
        }
        e.y = grid_out;
        e.ldy = np;
        qgemm_u8s8(w_rows + m0 * K4, K4, rn, cols, K, 0, np, &requant_tile, &e);
        drop_grid_columns(grid_out, rn, np, p0, conv_rows.grid_width(), conv_rows.out_width(), P, esize, y_rows);
      }
    };
    if (tasks == 1) {
      body(0);
    } else {
      pool.parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) body(t);
      });
    }
    return ok_status();
  }

 private:
  // Zero points, scales and bias: their types, counts and values.
  Status check_parameters(const KernelContext& ctx, const Tensor& x, const Tensor& w, int64_t M) const {
    SY_RETURN_IF_ERROR(check_zero_point_type(ctx, in_.x_zp, "x_zero_point", x, "x"));
    SY_RETURN_IF_ERROR(check_zero_point_type(ctx, in_.w_zp, "w_zero_point", w, "w"));
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.x_zp, "x_zero_point", 0));
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.w_zp, "w_zero_point", M));
    if (!quantized_) return ok_status();
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.x_scale, "x_scale", 0));
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.w_scale, "w_scale", M));
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.y_scale, "y_scale", 0));
    SY_RETURN_IF_ERROR(check_parameter_count(ctx, in_.y_zp, "y_zero_point", 0));
    const char* names[] = {"x_scale", "w_scale", "y_scale"};
    const size_t scales[] = {in_.x_scale, in_.w_scale, in_.y_scale};
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(scales[i])->dtype() != DataType::kFloat)
        return kernel_error(ctx, describe_input(ctx, scales[i], names[i]) + " must be float");
      SY_RETURN_IF_ERROR(check_scale_values(ctx, scales[i], names[i]));
    }
    if (!is_8bit_type(ctx.input(in_.y_zp)->dtype()))
      return kernel_error(ctx, describe_input(ctx, in_.y_zp, "y_zero_point") + " must be int8 or uint8");
    const Tensor* bias = ctx.input(in_.bias);
    if (bias != nullptr && (bias->dtype() != DataType::kInt32 || bias->shape().rank() != 1 || bias->shape()[0] != M))
      return kernel_invalid_argument(ctx, describe_input(ctx, in_.bias, "B") + " must be int32 [" +
                                              std::to_string(M) + "]");
    return ok_status();
  }

  bool quantized_;
  ConvInputs in_;
  WindowAttributes attrs_;
  int64_t group_ = 1;
  QgemmPacked<uint8_t> packed_w_;
  std::vector<int32_t> w_sums_;
  Shape packed_shape_;
  DataType packed_dtype_ = DataType::kUndefined;
};

template <bool kQuantized>
Result<std::unique_ptr<Kernel>> make_conv_kernel(const KernelCreateContext& ctx) {
  Status status;
  auto k = std::make_unique<IntegerConvKernel>(ctx, kQuantized, status);
  if (!status.ok()) return status;
  return std::unique_ptr<Kernel>(std::move(k));
}

const KernelDef kQLinearKernels[] = {
    {"", "ConvInteger", 10, kLatestVersion, 0, kInt8Types, &make_conv_kernel<false>},
    {"", "MatMulInteger", 10, kLatestVersion, 0, kInt8Types, &make_matmul_kernel<false>},
    {"", "QLinearConv", 10, kLatestVersion, 0, kInt8Types, &make_conv_kernel<true>},
    {"", "QLinearMatMul", 10, kLatestVersion, 0, kInt8Types, &make_matmul_kernel<true>},
};

}  // namespace

std::span<const KernelDef> qlinear_kernels() { return kQLinearKernels; }

}  // namespace sy::cpu
