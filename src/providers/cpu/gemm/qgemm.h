// The 8-bit integer GEMM behind MatMulInteger, QLinearMatMul, ConvInteger
// and QLinearConv: raw[m][n] = sum_k a[m][k] * b[k][n] with a uint8, b int8
// and int32 sums, the product AVX-512 VNNI's vpdpbusd computes four at a
// time. Other signedness is flipped into these (x ^ 0x80 moves int8 to
// uint8 by +128 and uint8 to int8 by -128) and the shift folded into the
// zero point; zero points are applied afterwards from row and column sums:
//   sum_k (a - za)(b - zb) = raw - zb * rowsum(a) - za * colsum(b) + K * za * zb
// which holds exactly in wrapping int32 arithmetic, so the result is the
// spec's whenever it fits in int32.
//
// Layouts. A is row-major uint8 with its rows padded with zeros to a
// multiple of 4 (qgemm_depth(K)). B is packed once (weights: at kernel
// creation) into panels of kQgemmPanel columns; in a panel, each group of 4
// k's is 64 bytes, column j's four values at bytes 4j..4j+3, so one 512-bit
// load is one vpdpbusd operand. Padding (k >= K, n >= N) is zero.
//
// The GEMM hands every finished tile (at most kQgemmRows x 4 panels) to a
// callback while it is still in L1, which applies zero points, bias and
// requantization (qlinear.cc) — no int32 matrix is written.
//
// Variants: portable C++, AVX2 (vpmaddwd on bytes widened to int16),
// AVX-512BW (the same with 512-bit vectors) and AVX-512 VNNI (vpdpbusd).
// All give identical results; the widest the CPU runs is the default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace sy::cpu {

inline constexpr int64_t kQgemmPanel = 16;  // columns per packed panel of B
inline constexpr int64_t kQgemmRows = 6;    // rows of A per tile, at most
inline constexpr int64_t kQgemmPanelsPerTile = 4;
inline constexpr int64_t kQgemmTileCols = kQgemmPanelsPerTile * kQgemmPanel;

// K rounded up to a multiple of 4: the row length of A and the depth of B's panels.
inline int64_t qgemm_depth(int64_t K) { return (K + 3) / 4 * 4; }
// Bytes of B (K x N) once packed.
inline int64_t qgemm_packed_b_bytes(int64_t K, int64_t N) {
  return (N + kQgemmPanel - 1) / kQgemmPanel * kQgemmPanel * qgemm_depth(K);
}
// Offset of element (k, n) in packed B.
inline int64_t qgemm_packed_offset(int64_t K4, int64_t k, int64_t n) {
  return (n / kQgemmPanel) * kQgemmPanel * K4 + (k / 4) * (4 * kQgemmPanel) + (n % kQgemmPanel) * 4 + (k % 4);
}

// Storage for a packed operand kept across runs (weights packed at kernel
// creation): 64-byte aligned, so that each 64-byte group of a panel is one
// cache line, where a std::vector's 16-byte alignment splits three of four
// vector loads across two lines. The contents after resize are undefined;
// a failed resize (false) leaves it empty, and the kernel packs at run time.
template <typename T>
class QgemmPacked {
 public:
  bool resize(size_t count) {
    const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    data_.reset(static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
    count_ = data_ == nullptr ? 0 : count;
    return data_ != nullptr;
  }
  bool empty() const { return count_ == 0; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t count_ = 0;
};

// Packs B, element (k, n) read as the byte b[k * row_stride + n * col_stride]
// xor `flip` (0x80 for uint8 data, 0 for int8), into `out`
// (qgemm_packed_b_bytes); col_sums[n] gets the sum of column n as packed
// (int8), which the zero points need.
void qgemm_pack_b(const uint8_t* b, int64_t row_stride, int64_t col_stride, int64_t K, int64_t N, uint8_t flip,
                  int8_t* out, int32_t* col_sums);

// Packs rows k0 .. k0 + 3 of B (k0 a multiple of 4), N bytes each, xor
// `flip`, into their place in packed B: `group` is the packed B of column 0
// plus k0 * kQgemmPanel, panels kQgemmPanel * K4 bytes apart. A null row is
// one past K (zeros); columns past N in the last panel get zeros.
// col_sums[n] (N of them) gets the four values added, as packed (int8).
void qgemm_pack_b_quad(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                       int32_t* col_sums);

// Copies rows of A (M x K, byte (m, k) at a[m * lda + k]) xor `flip` (0x80
// for int8 data) into `out`, rows qgemm_depth(K) bytes apart and zero
// padded; row_sums[m] (when given) gets each row's sum as copied (uint8).
void qgemm_pack_a(const uint8_t* a, int64_t lda, int64_t M, int64_t K, uint8_t flip, uint8_t* out,
                  int32_t* row_sums);

// Receives tile rows [m0, m0 + rows) x columns [n0, n0 + cols) of raw; row
// i's values at tile[i * kQgemmTileCols].
using QgemmTileFn = void (*)(const int32_t* tile, int64_t m0, int64_t rows, int64_t n0, int64_t cols,
                             const void* arg);

enum class QgemmVariant { kPortable, kAvx2, kAvx512, kAvx512Vnni };
// The widest variant this CPU runs (capped by SWITCHYARD_MAX_ISA).
QgemmVariant qgemm_best_variant();
bool qgemm_variant_supported(QgemmVariant v);

// raw = A (M x K, packed by qgemm_pack_a or already in that form, rows lda
// bytes apart with lda >= qgemm_depth(K)) x packed B, columns [n0, n1) of N
// (n0 a multiple of kQgemmPanel), handed to `fn` tile by tile. Runs on the
// calling thread; callers split rows or columns among threads.
void qgemm_u8s8(const uint8_t* a, int64_t lda, int64_t M, const int8_t* b_packed, int64_t K, int64_t n0, int64_t n1,
                QgemmTileFn fn, const void* arg, QgemmVariant variant = qgemm_best_variant());

namespace qgemm_detail {
// One tile: rows (<= kQgemmRows) of A against `panels` (1 to
// kQgemmPanelsPerTile) panels of B, the first at b and the others
// panel_bytes apart, over kq groups of 4 k's, into tile (rows x
// kQgemmTileCols int32).
using TileKernel = void (*)(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes,
                            int64_t panels, int64_t kq, int32_t* tile);
void tile_avx2(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes, int64_t panels,
               int64_t kq, int32_t* tile);
void tile_avx512(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes, int64_t panels,
                 int64_t kq, int32_t* tile);
void tile_avx512vnni(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes,
                     int64_t panels, int64_t kq, int32_t* tile);
void pack_b_quad_portable(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                          int32_t* col_sums);
// qgemm_pack_b_quad with SSSE3 byte interleaving (built with AVX2's flags).
void pack_b_quad_avx2(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                      int32_t* col_sums);
// The same with AVX-512BW, four panels at a time.
void pack_b_quad_avx512(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                        int32_t* col_sums);
}  // namespace qgemm_detail

}  // namespace sy::cpu
