// DynamicQuantizeMatMul (com.switchyard, schema/fused.cc): A quantized the
// way DynamicQuantizeLinear does it, the 8-bit GEMM (gemm/qgemm.h) against
// B packed once at creation, and a float epilogue on each tile while it is
// in L1 (dynamic_quant_matmul_simd.h) that applies the zero points, the
// scales and the bias: no uint8 A tensor, int32 product or float copies
// between the five nodes the op replaces.
//
// Exactness: A's scale and zero point come from the same function as
// DynamicQuantizeLinear's (dynamic_quantize.h) and its values from the
// same vector loop (quantize_simd.h); the integer sum is exact whenever it
// fits in int32, as MatMulInteger's; then float(sum) * (a_scale *
// B_scale[n]) [+ bias[n]] rounds as Cast, Mul and Add do. So the op's
// output is the unfused graph's, bit for bit.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/dynamic_quant_matmul_simd.h"
#include "providers/cpu/dynamic_quantize.h"
#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/quantize_simd.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"
#include "schema/fused.h"
#include "schema/quantize.h"
#include "switchyard/data_type.h"

namespace sy::cpu {
namespace {

constexpr size_t kA = 0, kB = 1, kBScale = 2, kBZeroPoint = 3, kBias = 4;
constexpr const char* kInputNames[] = {"A", "B", "B_scale", "B_zero_point", "bias"};

// The GEMM's B side is int8: uint8 data is flipped by xor 0x80 (-128) and
// its zero point moved with it (qgemm.h).
uint8_t b_flip(DataType t) { return t == DataType::kUint8 ? 0x80 : 0; }
int32_t b_zero_point_at(const Tensor& z, int64_t i) {
  return z.dtype() == DataType::kUint8 ? int32_t{z.data<uint8_t>()[i]} - 128 : int32_t{z.data<int8_t>()[i]};
}

// "input 2 (B_scale) [3] float", for messages.
std::string describe_input(const KernelContext& ctx, size_t i) { return sy::describe_input(ctx, i, kInputNames[i]); }

class DynamicQuantizeMatMulKernel final : public Kernel {
 public:
  DynamicQuantizeMatMulKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    // B constant: packed once, here; otherwise each run packs it.
    const Tensor* b = ctx.constant_input(kB);
    if (b == nullptr || b->shape().rank() != 2 || !is_8bit_type(b->dtype())) return;
    const int64_t K = b->shape()[0], N = b->shape()[1];
    if (!packed_b_.resize(static_cast<size_t>(std::max<int64_t>(1, qgemm_packed_b_bytes(K, N))))) return;
    b_sums_.resize(static_cast<size_t>(N));
    qgemm_pack_b(b->data<uint8_t>(), N, 1, K, N, b_flip(b->dtype()), packed_b_.data(), b_sums_.data());
    packed_shape_ = b->shape();
    packed_dtype_ = b->dtype();
    ctx.mark_prepacked(kB);
  }

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(check_inputs(ctx));
    const Tensor& a = *ctx.input(kA);
    const Tensor& b = *ctx.input(kB);
    const Tensor& b_scale = *ctx.input(kBScale);
    const Tensor* b_zp = ctx.input(kBZeroPoint);
    const Tensor* bias = ctx.input(kBias);
    const int64_t K = b.shape()[0], N = b.shape()[1], K4 = qgemm_depth(K);
    // Y is A's shape with its last dim K replaced by N.
    Shape y_shape;
    int64_t M = 1;
    for (size_t d = 0; d + 1 < a.shape().rank(); ++d) {
      y_shape.push_back(a.shape()[d]);
      M *= a.shape()[d];
    }
    y_shape.push_back(N);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, y_shape));
    if (y->num_elements() == 0) return ok_status();

    const bool prepacked = !packed_b_.empty() && packed_shape_ == b.shape() && packed_dtype_ == b.dtype();
    // A zero point of B that is 0 everywhere (symmetric int8 weights) drops
    // the term that needs A's row sums.
    bool has_b_zp = false;
    for (int64_t i = 0; b_zp != nullptr && i < b_zp->num_elements(); ++i)
      has_b_zp = has_b_zp || b_zero_point_at(*b_zp, i) != 0;
    has_b_zp = has_b_zp || (b_zp == nullptr && b.dtype() == DataType::kUint8);  // an absent one is 0, -128 flipped

    // Per-column arrays run to a whole tile (DqmmEpilogue).
    const int64_t n_pad = (N + kQgemmTileCols - 1) / kQgemmTileCols * kQgemmTileCols;
    ScratchCarver carve;
    const size_t a_rows_at = carve.add<uint8_t>(M * K4);
    const size_t a_term_at = carve.add<int32_t>(M);
    const size_t b_zp_at = carve.add<int32_t>(n_pad);
    const size_t col_term_at = carve.add<int32_t>(n_pad);
    const size_t mult_at = carve.add<float>(n_pad);
    const size_t bias_at = carve.add<float>(n_pad);
    const size_t packed_at = carve.add<int8_t>(prepacked ? 0 : qgemm_packed_b_bytes(K, N));
    const size_t sums_at = carve.add<int32_t>(prepacked ? 0 : N);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carve.total()));
    auto* a_rows = ScratchCarver::pointer<uint8_t>(scratch, a_rows_at);
    auto* a_term = ScratchCarver::pointer<int32_t>(scratch, a_term_at);
    auto* zb = ScratchCarver::pointer<int32_t>(scratch, b_zp_at);
    auto* col_term = ScratchCarver::pointer<int32_t>(scratch, col_term_at);
    auto* mult = ScratchCarver::pointer<float>(scratch, mult_at);
    auto* bias_cols = ScratchCarver::pointer<float>(scratch, bias_at);
    ThreadPool& pool = ctx.thread_pool();

    const int8_t* packed = packed_b_.data();
    const int32_t* b_sums = b_sums_.data();
    if (!prepacked) {
      auto* p = ScratchCarver::pointer<int8_t>(scratch, packed_at);
      auto* s = ScratchCarver::pointer<int32_t>(scratch, sums_at);
      qgemm_pack_b(b.data<uint8_t>(), N, 1, K, N, b_flip(b.dtype()), p, s);
      packed = p;
      b_sums = s;
    }

    // A: its range over the whole tensor, as DynamicQuantizeLinear takes
    // it, then each row quantized into the GEMM's zero-padded rows.
    const float* ad = a.data<float>();
    const DynamicQuantParams q = dynamic_quant_params(pool, ad, a.num_elements());
    const QuantizeSimd& quant = quantize_simd();
    const DqmmSimd& simd = dqmm_simd();
    pool.parallel_for(M, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        uint8_t* row = a_rows + r * K4;
        quant.quantize_u8(ad + r * K, K, q.scale, q.zero_point, row);
        std::fill(row + K, row + K4, uint8_t{0});
        if (has_b_zp)
          a_term[r] = static_cast<int32_t>(static_cast<uint32_t>(simd.sum_bytes(row, K)) -
                                           static_cast<uint32_t>(K) * static_cast<uint32_t>(q.zero_point));
      }
    });

    // The columns' terms; the padding past N is zeros.
    const float a_scale = q.scale;
    for (int64_t n = 0; n < n_pad; ++n) {
      const bool in = n < N;
      zb[n] = !in ? 0 : b_zp != nullptr ? b_zero_point_at(*b_zp, b_zp->num_elements() == 1 ? 0 : n)
                                         : (b.dtype() == DataType::kUint8 ? -128 : 0);
      col_term[n] = in ? static_cast<int32_t>(static_cast<uint32_t>(q.zero_point) * static_cast<uint32_t>(b_sums[n]))
                       : 0;
      // The graph's Mul(a_scale, B_scale): one float product.
      mult[n] = in ? a_scale * b_scale.data<float>()[b_scale.num_elements() == 1 ? 0 : n] : 0.0f;
      bias_cols[n] = in && bias != nullptr ? bias->data<float>()[n] : 0.0f;
    }

    DqmmEpilogue e;
    e.a_term = a_term;
    e.b_zp = zb;
    e.col_term = col_term;
    e.mult = mult;
    e.bias = bias_cols;
    e.ldy = N;
    const QgemmTileFn tile = simd.tile[has_b_zp ? 1 : 0][bias != nullptr ? 1 : 0];
    float* yd = y->data<float>();

    // Blocks of rows and columns, column blocks outermost: consecutive
    // units share a block of B, and with several threads each reads its
    // own share of B (the weights, larger than A at BERT's shapes).
    constexpr int64_t row_block = kQgemmRows * 8;
    constexpr int64_t col_block = 8 * kQgemmPanel;
    // Tiles then start on multiples of kQgemmTileCols, which the padded
    // per-column arrays cover.
    static_assert(col_block % kQgemmTileCols == 0, "a column block is whole tiles");
    const int64_t row_blocks = (M + row_block - 1) / row_block;
    const int64_t col_blocks = (N + col_block - 1) / col_block;
    const int64_t work_per_unit = std::max<int64_t>(1, row_block * col_block * K);
    pool.parallel_for(row_blocks * col_blocks, std::max<int64_t>(1, (1 << 20) / work_per_unit),
                      [&](int64_t u0, int64_t u1) {
                        for (int64_t u = u0; u < u1; ++u) {
                          const int64_t cb = u / row_blocks, rb = u % row_blocks;
                          const int64_t m0 = rb * row_block, rows = std::min(row_block, M - m0);
                          DqmmEpilogue mine = e;
                          mine.a_term = a_term + m0;
                          mine.y = yd + m0 * N;
                          qgemm_u8s8(a_rows + m0 * K4, K4, rows, packed, K, cb * col_block,
                                     std::min(N, (cb + 1) * col_block), tile, &mine);
                        }
                      });
    return ok_status();
  }

 private:
  // Every input's presence, type and shape, with messages naming the node
  // and the input.
  static Status check_inputs(const KernelContext& ctx) {
    for (size_t i : {kA, kB, kBScale})
      if (ctx.input(i) == nullptr) return kernel_error(ctx, std::string("input ") + std::to_string(i) + " (" +
                                                                  kInputNames[i] + ") is required");
    const Tensor& a = *ctx.input(kA);
    const Tensor& b = *ctx.input(kB);
    if (a.dtype() != DataType::kFloat || a.shape().rank() < 1)
      return kernel_error(ctx, describe_input(ctx, kA) + " must be a float tensor of rank >= 1");
    if (!is_8bit_type(b.dtype()) || b.shape().rank() != 2)
      return kernel_error(ctx, describe_input(ctx, kB) + " must be an int8 or uint8 matrix [K, N]");
    const int64_t K = b.shape()[0], N = b.shape()[1];
    if (a.shape()[a.shape().rank() - 1] != K)
      return kernel_invalid_argument(ctx, describe_input(ctx, kA) + " does not fit " + describe_input(ctx, kB) +
                                              ": A's last dim must be B's first (K = " + std::to_string(K) + ")");
    const Tensor& scale = *ctx.input(kBScale);
    const int64_t scales = scale.num_elements();
    if (scale.dtype() != DataType::kFloat || scale.shape().rank() > 1 || (scales != 1 && scales != N))
      return kernel_invalid_argument(ctx, describe_input(ctx, kBScale) + " must be float, a scalar or 1-D with 1 or " +
                                              std::to_string(N) + " values (per tensor or per column)");
    if (const Tensor* z = ctx.input(kBZeroPoint); z != nullptr) {
      if (z->dtype() != b.dtype())
        return kernel_error(ctx, describe_input(ctx, kBZeroPoint) + " must have the type of B " + b.describe());
      if (z->shape().rank() > 1 || z->num_elements() != scales)
        return kernel_invalid_argument(ctx, describe_input(ctx, kBZeroPoint) + " must have the shape of " +
                                                describe_input(ctx, kBScale));
    }
    if (const Tensor* bias = ctx.input(kBias);
        bias != nullptr && (bias->dtype() != DataType::kFloat || bias->shape().rank() != 1 || bias->shape()[0] != N))
      return kernel_invalid_argument(ctx, describe_input(ctx, kBias) + " must be float [" + std::to_string(N) + "]");
    return ok_status();
  }

  QgemmPacked<int8_t> packed_b_;
  std::vector<int32_t> b_sums_;
  Shape packed_shape_;
  DataType packed_dtype_ = DataType::kUndefined;
};

const KernelDef kDynamicQuantMatMulKernels[] = {
    {kSwitchyardDomain, kDynamicQuantizeMatMulOp, 1, kLatestVersion, 0, type_bit(DataType::kFloat),
     &make_kernel<DynamicQuantizeMatMulKernel>},
};

}  // namespace

std::span<const KernelDef> dynamic_quant_matmul_kernels() { return kDynamicQuantMatMulKernels; }

}  // namespace sy::cpu
