// Packing, the portable tile and the driver of the 8-bit GEMM (qgemm.h).
#include "providers/cpu/gemm/qgemm.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace {

void tile_portable(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b0, int64_t panel_bytes,
                   int64_t panels, int64_t kq, int32_t* tile) {
  int32_t acc[kQgemmRows][kQgemmTileCols] = {};
  for (int64_t q = 0; q < kq; ++q) {
    for (int64_t p = 0; p < panels; ++p) {
      const int8_t* b = b0 + p * panel_bytes + q * 4 * kQgemmPanel;
      for (int64_t i = 0; i < rows; ++i) {
        const uint8_t* ar = a + i * lda + q * 4;
        int32_t* out = acc[i] + p * kQgemmPanel;
        for (int64_t j = 0; j < kQgemmPanel; ++j) {
          const int8_t* bj = b + j * 4;
          out[j] += ar[0] * bj[0] + ar[1] * bj[1] + ar[2] * bj[2] + ar[3] * bj[3];
        }
      }
    }
  }
  for (int64_t i = 0; i < rows; ++i) std::memcpy(tile + i * kQgemmTileCols, acc[i], sizeof(acc[i]));
}

bool has_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
}

qgemm_detail::TileKernel tile_kernel(QgemmVariant v) {
  switch (v) {
    case QgemmVariant::kAvx512Vnni: return &qgemm_detail::tile_avx512vnni;
    case QgemmVariant::kAvx512: return &qgemm_detail::tile_avx512;
    case QgemmVariant::kAvx2: return &qgemm_detail::tile_avx2;
    case QgemmVariant::kPortable: break;
  }
  return &tile_portable;
}

}  // namespace

bool qgemm_variant_supported(QgemmVariant v) {
  switch (v) {
    case QgemmVariant::kAvx512Vnni: return best_cpu_isa() == CpuIsa::kAvx512 && has_vnni();
    case QgemmVariant::kAvx512: return best_cpu_isa() == CpuIsa::kAvx512;
    case QgemmVariant::kAvx2: return best_cpu_isa() >= CpuIsa::kAvx2;
    case QgemmVariant::kPortable: break;
  }
  return true;
}

QgemmVariant qgemm_best_variant() {
  static const QgemmVariant best = [] {
    for (QgemmVariant v : {QgemmVariant::kAvx512Vnni, QgemmVariant::kAvx512, QgemmVariant::kAvx2})
      if (qgemm_variant_supported(v)) return v;
    return QgemmVariant::kPortable;
  }();
  return best;
}

void qgemm_pack_b(const uint8_t* b, int64_t row_stride, int64_t col_stride, int64_t K, int64_t N, uint8_t flip,
                  int8_t* out, int32_t* col_sums) {
  const int64_t K4 = qgemm_depth(K);
  std::fill(col_sums, col_sums + N, 0);
  if (col_stride == 1) {
    for (int64_t k0 = 0; k0 < K4; k0 += 4) {
      const uint8_t* rows[4];
      for (int64_t i = 0; i < 4; ++i) rows[i] = k0 + i < K ? b + (k0 + i) * row_stride : nullptr;
      qgemm_pack_b_quad(rows, N, flip, K4, out + k0 * kQgemmPanel, col_sums);
    }
    return;
  }
  std::memset(out, 0, static_cast<size_t>(qgemm_packed_b_bytes(K, N)));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const auto v = static_cast<int8_t>(b[k * row_stride + n * col_stride] ^ flip);
      out[qgemm_packed_offset(K4, k, n)] = v;
      col_sums[n] += v;
    }
}

namespace qgemm_detail {

void pack_b_quad_portable(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                          int32_t* col_sums) {
  const int64_t padded = (N + kQgemmPanel - 1) / kQgemmPanel * kQgemmPanel;
  for (int64_t n = 0; n < padded; ++n) {
    int8_t* dst = group + (n / kQgemmPanel) * kQgemmPanel * K4 + (n % kQgemmPanel) * 4;
    int32_t sum = 0;
    for (int i = 0; i < 4; ++i) {
      dst[i] = rows[i] == nullptr || n >= N ? 0 : static_cast<int8_t>(rows[i][n] ^ flip);
      sum += dst[i];
    }
    if (n < N) col_sums[n] += sum;
  }
}

}  // namespace qgemm_detail

void qgemm_pack_b_quad(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                       int32_t* col_sums) {
  static const auto pack = pick_for_cpu(&qgemm_detail::pack_b_quad_avx512, &qgemm_detail::pack_b_quad_avx2,
                                        &qgemm_detail::pack_b_quad_portable);
  pack(rows, N, flip, K4, group, col_sums);
}

void qgemm_pack_a(const uint8_t* a, int64_t lda, int64_t M, int64_t K, uint8_t flip, uint8_t* out,
                  int32_t* row_sums) {
  const int64_t K4 = qgemm_depth(K);
  for (int64_t m = 0; m < M; ++m) {
    const uint8_t* src = a + m * lda;
    uint8_t* dst = out + m * K4;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      dst[k] = static_cast<uint8_t>(src[k] ^ flip);
      sum += dst[k];
    }
    std::fill(dst + K, dst + K4, uint8_t{0});
    if (row_sums != nullptr) row_sums[m] = sum;
  }
}

void qgemm_u8s8(const uint8_t* a, int64_t lda, int64_t M, const int8_t* b_packed, int64_t K, int64_t n0, int64_t n1,
                QgemmTileFn fn, const void* arg, QgemmVariant variant) {
  const qgemm_detail::TileKernel kernel = tile_kernel(variant);
  const int64_t K4 = qgemm_depth(K);
  const int64_t kq = K4 / 4;
  const int64_t panel_bytes = kQgemmPanel * K4;
  alignas(64) int32_t tile[kQgemmRows * kQgemmTileCols];
  // A tile's panels of B (64 columns, 64 * K4 bytes) stay in L1/L2 while
  // every row of A streams past them.
  for (int64_t n = n0; n < n1; n += kQgemmTileCols) {
    const int64_t cols = std::min(kQgemmTileCols, n1 - n);
    const int8_t* b = b_packed + (n / kQgemmPanel) * panel_bytes;
    const int64_t panels = (cols + kQgemmPanel - 1) / kQgemmPanel;
    for (int64_t m = 0; m < M; m += kQgemmRows) {
      const int64_t rows = std::min(kQgemmRows, M - m);
      kernel(a + m * lda, lda, rows, b, panel_bytes, panels, kq, tile);
      fn(tile, m, rows, n, cols, arg);
    }
  }
}

}  // namespace sy::cpu
