#include "providers/cpu/gemm/sgemm.h"

#include "core/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "providers/cpu/activation_simd.h"
#include "providers/cpu/gemm/sgemm_kernels.h"
#include "providers/cpu/simd/transpose_store.h"

namespace sy::cpu {

using gemm_detail::kMr;
using gemm_detail::MicroKernel;
using gemm_detail::MicroTile;

namespace {

// Blocking. KC x NR of B and kMr x KC of A stay close to the core while a
// micro-tile runs; an MC x KC block of A stays in L2 while the tiles sweep
// across an KC x NC block of B. The same for every variant, so a workspace
// and a packed A suit them all.
//
// KC depends on K only (k_block): K is cut into the fewest blocks of at
// most kKcMax, all of about the same depth. Each block of K loads and
// stores every micro-tile of C once more, so deep blocks pay: on Zen 4 a
// BERT layer's products (K 768 and 3072) run 3 % faster with blocks of 768
// than with 256, GPT-2's too, ResNet-50 and MobileNetV2 unchanged.
constexpr int64_t kKcMax = 768;
constexpr int64_t kMc = 144;   // a multiple of kMr
constexpr int64_t kNc = 1024;  // a multiple of every NR
// Tasks split C's columns in whole vectors of the widest variant, not whole
// 64-column micro-tiles: 960 columns (a 1x1 conv's output channels) then
// split 480 / 480 over 2 threads instead of 512 / 448, or 160 as 80 / 80
// instead of 128 / 32. A task may so start inside a prepacked panel of B.
constexpr int64_t kNGranule = 16;
// Packing buffers hold whole panels of the widest variant.
constexpr int64_t kNrMax = gemm_detail::kNrAvx512;
// Below this many multiply-adds per task (about 3 us on one core, against
// about 1 us for a parallel_for), threading costs more than it gains.
constexpr double kMinMacsPerTask = 1.5e5;
// Up to this many tasks per thread: threads pull them one by one, so a map
// that does not split evenly in two still keeps both cores busy.
constexpr int64_t kMaxTasksPerThread = 4;
// Floats, so that every buffer starts 64-byte aligned.
constexpr int64_t kAlignFloats = 16;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// The depth of every block of K but the last, which may be shallower: a
// multiple of 16 when there are several, since a channel-blocked A is read
// in runs of 16 k steps (sgemm_kernels.h), and K itself when there is one.
int64_t k_block(int64_t K) {
  K = std::max<int64_t>(K, 1);
  return std::min(K, round_up(ceil_div(K, ceil_div(K, kKcMax)), 16));
}

bool cpu_has(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kScalar: return true;
    case GemmIsa::kAvx2: return cpu_supports(CpuIsa::kAvx2);
    case GemmIsa::kAvx512: return cpu_supports(CpuIsa::kAvx512);
  }
  return false;
}

GemmIsa best_isa() {
  static const GemmIsa best = pick_for_cpu(GemmIsa::kAvx512, GemmIsa::kAvx2, GemmIsa::kScalar);
  return best;
}

std::atomic<int> g_forced_isa{-1};

int nr_of(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512: return gemm_detail::kNrAvx512;
    case GemmIsa::kAvx2: return gemm_detail::kNrAvx2;
    case GemmIsa::kScalar: break;
  }
  return gemm_detail::kNrScalar;
}

MicroKernel kernel_of(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512: return &gemm_detail::micro_kernel_avx512;
    case GemmIsa::kAvx2: return &gemm_detail::micro_kernel_avx2;
    case GemmIsa::kScalar: break;
  }
  return &gemm_detail::micro_kernel_scalar;
}

using Plan = GemmTiling;

// Which operands arrive prepacked: their packing costs the tasks nothing.
struct Prepacked {
  bool a = false;
  bool b = false;
};

// The time of one task of `rows` x `cols`, in multiply-adds per step of K.
// A micro-tile of few rows is load-bound and costs about as much as one of
// 3 rows; columns go in whole vectors, and a micro-tile of one vector (the
// leftover of a split) costs about as much as one of two, being bound by
// its loads too; packing copies its rows of A and columns of B once, about
// 2 multiply-adds per element (measured on Zen 4, packing a 3136 x 256 B
// against 6-row tiles over it).
double task_cost(int64_t rows, int64_t cols, Prepacked packed) {
  double tile_rows = static_cast<double>(rows / kMr * kMr);
  if (rows % kMr != 0) tile_rows += static_cast<double>(std::max<int64_t>(rows % kMr, 3));
  double tile_cols = static_cast<double>(cols / kNrMax * kNrMax);
  if (cols % kNrMax != 0) tile_cols += static_cast<double>(std::max<int64_t>(round_up(cols % kNrMax, 16), 32));
  const double c = static_cast<double>(round_up(cols, 16));
  return tile_rows * tile_cols + (packed.a ? 0.0 : 2.0 * static_cast<double>(rows)) + (packed.b ? 0.0 : 2.0 * c);
}

// The time to run every task of `p` when lanes pull them in order: task t
// goes to lane t % lanes (what pulling amounts to when tasks take about
// the same time), and the busiest lane sets the time. Tiles at the right
// and bottom edges are smaller, which is what lets 5 tasks split well over
// 2 threads. `lane_time` is scratch of at least p.lanes entries.
double plan_cost(const Plan& p, int64_t M, int64_t N, Prepacked packed, std::vector<double>& lane_time) {
  std::fill(lane_time.begin(), lane_time.begin() + p.lanes, 0.0);
  for (int64_t t = 0; t < p.tasks(); ++t) {
    const int64_t rows = std::min(p.tile_m, M - t / p.tiles_n * p.tile_m);
    const int64_t cols = std::min(p.tile_n, N - t % p.tiles_n * p.tile_n);
    lane_time[static_cast<size_t>(t % p.lanes)] += task_cost(rows, cols, packed);
  }
  return *std::max_element(lane_time.begin(), lane_time.begin() + p.lanes);
}

Plan search_plan(int64_t M, int64_t N, int64_t K, int threads, Prepacked packed, bool rows_only) {
  M = std::max<int64_t>(M, 1);
  N = std::max<int64_t>(N, 1);
  const double k = static_cast<double>(std::max<int64_t>(K, 1));
  // The work to share: the multiply-adds, plus reading B, which is what a
  // product with few rows (a GEMV) is bound by; 8 multiply-adds per element
  // of B is about what one core streams from L3 in that time.
  const double work = (static_cast<double>(M) + 8.0) * static_cast<double>(N) * k;
  const int64_t thread_count = std::max(threads, 1);
  const int64_t max_tasks =
      std::clamp<int64_t>(static_cast<int64_t>(work / kMinMacsPerTask), 1, kMaxTasksPerThread * thread_count);
  Plan best;
  best.tile_m = M;
  best.tile_n = N;
  double best_cost = std::numeric_limits<double>::max();
  std::vector<double> lane_time(static_cast<size_t>(thread_count));
  for (int64_t tm = 1; tm <= max_tasks; ++tm) {
    for (int64_t tn = 1; tm * tn <= max_tasks && (tn == 1 || !rows_only); ++tn) {
      Plan p;
      p.tile_m = round_up(ceil_div(M, tm), kMr);
      p.tile_n = round_up(ceil_div(N, tn), kNGranule);
      p.tiles_m = ceil_div(M, p.tile_m);
      p.tiles_n = ceil_div(N, p.tile_n);
      p.lanes = std::min(p.tasks(), thread_count);
      // K is common to every task and drops out.
      const double cost = plan_cost(p, M, N, packed, lane_time);
      if (cost < best_cost) {
        best_cost = cost;
        best = p;
      }
    }
  }
  return best;
}

int64_t a_buffer_floats(const Plan& p, int64_t K) {
  return round_up(std::min(kMc, p.tile_m) * k_block(K), kAlignFloats);
}
int64_t b_buffer_floats(const Plan& p, int64_t K) {
  return round_up(k_block(K) * round_up(std::min(kNc, p.tile_n), kNrMax),
                  kAlignFloats);
}

// A view of op(X) for one operand: element (r, c) of the logical matrix.
struct Operand {
  const float* p = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const float* packed = nullptr;  // whole prepacked matrix, or nullptr
  int64_t block_stride = 0;       // channel-blocked (GemmEpilogue::a_block_stride), or 0
};

struct Problem {
  int64_t M, N, K;
  float alpha, beta;
  Operand a, b;
  float* c;
  int64_t ldc;
  GemmEpilogue ep;
  MicroKernel kernel;
  int64_t nr;
};

// Whether each call packs A. A prepacked A is read from its panels, and a
// row-major or channel-blocked one where it lies (k contiguous); only a
// transposed A (k strided) is copied, which is cheap: kMr contiguous floats
// per k step.
bool packs_a(const Operand& a) { return a.packed == nullptr && a.block_stride == 0 && (a.trans || a.ld <= 0); }

// dst: panels of kMr rows, k-major. Rows past the matrix are left as they
// are: every micro-kernel is specialised on its tile's row count and reads
// only those rows (for a GEMV, zeroing them was 5 of every 6 stores).
void pack_a_panels(const float* A, int64_t lda, bool trans, int64_t row0, int64_t rows, int64_t k0, int64_t kc,
                   float* dst) {
  for (int64_t ir = 0; ir < rows; ir += kMr) {
    const int64_t mr = std::min<int64_t>(kMr, rows - ir);
    float* d = dst + ir * kc;
    if (trans && mr == kMr) {
      // A fixed-length copy per k, which compiles to two vector moves.
      for (int64_t k = 0; k < kc; ++k) std::memcpy(d + k * kMr, A + (k0 + k) * lda + row0 + ir, kMr * sizeof(float));
    } else if (trans) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = A + (k0 + k) * lda + row0 + ir;
        float* dk = d + k * kMr;
        for (int64_t i = 0; i < mr; ++i) dk[i] = src[i];
      }
    } else {
      for (int64_t i = 0; i < mr; ++i) {
        const float* src = A + (row0 + ir + i) * lda + k0;
        for (int64_t k = 0; k < kc; ++k) d[k * kMr + i] = src[k];
      }
    }
  }
}

// dst: panels of nr columns, k-major, columns past the matrix zero.
void pack_b_panels(const float* B, int64_t ldb, bool trans, int64_t k0, int64_t kc, int64_t col0, int64_t cols,
                   int64_t nr, float* dst) {
  for (int64_t jr = 0; jr < cols; jr += nr) {
    const int64_t n = std::min(nr, cols - jr);
    float* d = dst + jr * kc;
    if (trans) {
      // B's rows are the panel's columns: register transposes, 16 x 16 at
      // a time (attention's K^T; a scalar scatter ran at a third the speed).
      transpose_f32(B + (col0 + jr) * ldb + k0, ldb, n, kc, d, nr);
      if (n < nr)
        for (int64_t k = 0; k < kc; ++k) std::memset(d + k * nr + n, 0, static_cast<size_t>(nr - n) * sizeof(float));
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = B + (k0 + k) * ldb + col0 + jr;
        std::memcpy(d + k * nr, src, static_cast<size_t>(n) * sizeof(float));
        if (n < nr) std::memset(d + k * nr + n, 0, static_cast<size_t>(nr - n) * sizeof(float));
      }
    }
  }
}

// pack_b_panels for a channel-blocked B (element (k, j) at
// B[(k / 16) * bs + j * 16 + k % 16]): 16 x 16 register transposes.
void pack_b_panels_blocked(const float* B, int64_t bs, int64_t k0, int64_t kc, int64_t col0, int64_t cols, int64_t nr,
                           float* dst) {
  for (int64_t jr = 0; jr < cols; jr += nr) {
    const int64_t n = std::min(nr, cols - jr);
    float* d = dst + jr * kc;
    for (int64_t kb = 0; kb < kc; kb += 16)
      transpose_f32(B + (k0 + kb) / 16 * bs + (col0 + jr) * 16, 16, n, std::min<int64_t>(16, kc - kb), d + kb * nr,
                    nr);
    if (n < nr)
      for (int64_t k = 0; k < kc; ++k) std::memset(d + k * nr + n, 0, static_cast<size_t>(nr - n) * sizeof(float));
  }
}

// `at`: the element's offset in C, which is also its offset in the residual.
float apply_epilogue_scalar(float x, int64_t i, int64_t j, int64_t at, const GemmEpilogue& ep) {
  if (ep.bias != nullptr) x += ep.bias_per_row ? ep.bias[i] : ep.bias[j];
  if (ep.residual != nullptr) x += ep.residual[at];
  if (ep.activation == GemmActivation::kRelu) {
    x = std::max(x, 0.0f);
  } else if (ep.activation == GemmActivation::kClip) {
    x = std::min(std::max(x, ep.clip_min), ep.clip_max);
  } else if (ep.activation == GemmActivation::kGeluErf || ep.activation == GemmActivation::kGeluTanh) {
    apply_activation(&x, 1, ep);
  }
  return x;
}

// K == 0 or alpha == 0: the product contributes nothing (and A, B are not
// read, as BLAS does).
void scale_only(const Problem& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; ++i) {
    for (int64_t j = n0; j < n1; ++j) {
      const int64_t at = g.ep.c_block_stride != 0 ? j / 16 * g.ep.c_block_stride + i * 16 + j % 16 : i * g.ldc + j;
      g.c[at] = apply_epilogue_scalar(g.beta == 0.0f ? 0.0f : g.beta * g.c[at], i, j, at, g.ep);
    }
  }
  if (g.ep.block_done != nullptr) g.ep.block_done(g.ep.block_done_context, m0, m1 - m0, n0, n1 - n0);
}

// What the micro-tiles of one column panel prefetch of the next panel of
// a prepacked B. Weights prepacked at session creation come from memory on
// every run (a BERT layer's outnumber L3), and the first tile over a panel
// otherwise waits on them: fetching the next panel a slice per tile while
// this panel's tiles compute makes a BERT layer's products (M = 128) 2 %
// faster on Zen 4 at 1 and 2 threads. One line per 4 k steps covers the
// panel (4 lines per k step) in 16 tiles; a column with fewer tiles takes
// two, and more than two per 4 k steps was slower. Below 8 tiles (48 rows)
// the kernel streams its own panel and prefetching more slows it: 6 % at
// M = 32, 15 % at M = 8.
constexpr int64_t kMinPrefetchTiles = 8;

struct NextPanel {
  const float* panel = nullptr;  // nullptr: nothing to prefetch
  int64_t panel_floats = 0;
  int64_t floats_per_tile = 0;
  int rate = 1;
};

NextPanel next_panel_prefetch(const Problem& g, int64_t j, int64_t cols_left, int64_t pc, int64_t kc, int64_t n_pad,
                              int64_t mc) {
  NextPanel next;
  const int64_t next_j = j - j % g.nr + g.nr;  // the next panel's first column
  const int64_t tiles = ceil_div(mc, kMr);
  if (g.b.packed == nullptr || next_j - j >= cols_left || tiles < kMinPrefetchTiles) return next;
  next.panel = g.b.packed + pc * n_pad + next_j * kc;
  next.panel_floats = kc * g.nr;
  next.rate = tiles >= 16 ? 1 : 2;
  next.floats_per_tile = kc / 4 * next.rate * 16;
  return next;
}

// Panels ahead of the current one whose memory pages a prepacked B's
// tasks touch early (warm_pages). A small M (a Winograd point's few tiles,
// 9 rows in ResNet-50's 14x14 stage) gives a panel little compute to hide
// its fetch behind, and the hardware prefetchers stop at every 4 KiB page:
// each page's first lines then wait on a page walk and a memory miss, in
// series. One prefetch per page two panels ahead starts both early, 16
// prefetches per 64 KiB panel. On the 2-core Zen 4, with other tenants
// loading the memory, ResNet-50 at 1 thread (medians of 8 alternations):
// its 14x14 Winograd Convs 8.0 -> 6.2 ms, its 7x7 ones 4.6 -> 3.9 ms, the
// classifier's Gemm about 20 % faster, the whole model 77.6 -> 73.7 ms. The
// weights on 2 MiB pages (MADV_HUGEPAGE) bought as much, but cost session
// creation 100 to 350 ms more in page faults.
constexpr int64_t kWarmAhead = 2;
constexpr int64_t kPageFloats = 4096 / sizeof(float);

// One prefetch (into L2) per page of panels [q0, q1) of block pc of the
// prepacked B.
void warm_pages(const Problem& g, int64_t pc, int64_t kc, int64_t n_pad, int64_t q0, int64_t q1) {
  q1 = std::min(q1, n_pad / g.nr);
  for (int64_t q = q0; q < q1; ++q) {
    const float* panel = g.b.packed + pc * n_pad + q * g.nr * kc;
    for (int64_t f = 0; f < g.nr * kc; f += kPageFloats) __builtin_prefetch(panel + f, 0, 2);
  }
}

// The rows of the next micro-tile, `left` rows from the end of the block.
// A tile of 1 or 2 rows reads its whole panel of B for 1 or 2 multiply-adds
// per value and waits on those reads: at 49 rows (a 7x7 map, 8 x 6 + 1, the
// Winograd products of a 28x28 one) ResNet-50 spent 1.25 % of its time in
// such 1-row tiles. Where A's rows may start anywhere (read in place, not
// packed in panels of kMr), the last kMr + 1 or kMr + 2 rows go as two
// tiles of about half each instead.
int64_t tile_rows(int64_t left, bool rows_start_anywhere) {
  if (rows_start_anywhere && (left == kMr + 1 || left == kMr + 2)) return (kMr + 2) / 2;
  return std::min<int64_t>(kMr, left);
}

void run_task(const Problem& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* abuf, float* bbuf) {
  if (g.K == 0 || g.alpha == 0.0f) {
    scale_only(g, m0, m1, n0, n1);
    return;
  }
  const int64_t m_pad = round_up(g.M, kMr);
  const int64_t n_pad = round_up(g.N, g.nr);
  float lo = 0.0f, hi = 0.0f;
  const bool has_act = activation_clamp(g.ep, &lo, &hi);
  const bool gelu = g.ep.activation == GemmActivation::kGeluErf || g.ep.activation == GemmActivation::kGeluTanh;
  const int64_t kc_full = k_block(g.K);
  for (int64_t jc = n0; jc < n1; jc += kNc) {
    const int64_t nc = std::min(kNc, n1 - jc);
    for (int64_t pc = 0; pc < g.K; pc += kc_full) {
      const int64_t kc = std::min(kc_full, g.K - pc);
      const bool first = pc == 0;
      const bool last = pc + kc == g.K;
      if (g.b.packed == nullptr) {
        if (g.b.block_stride != 0) {
          pack_b_panels_blocked(g.b.p, g.b.block_stride, pc, kc, jc, nc, g.nr, bbuf);
        } else {
          pack_b_panels(g.b.p, g.b.ld, g.b.trans, pc, kc, jc, nc, g.nr, bbuf);
        }
      }
      for (int64_t ic = m0; ic < m1; ic += kMc) {
        const int64_t mc = std::min(kMc, m1 - ic);
        // A's tiles: packed panels (kMr floats per k step), or rows read in
        // place (sgemm_kernels.h), row r of the block at ap + r * a_row_stride.
        const float* ap;
        int64_t a_row_stride = 0, a_run_stride = 0;
        if (g.a.packed != nullptr) {
          ap = g.a.packed + pc * m_pad + ic * kc;
        } else if (g.a.block_stride != 0) {
          ap = g.a.p + pc / 16 * g.a.block_stride + ic * 16;  // pc is a multiple of k_block(K), hence of 16
          a_row_stride = 16;
          a_run_stride = g.a.block_stride;
        } else if (packs_a(g.a)) {
          pack_a_panels(g.a.p, g.a.ld, g.a.trans, ic, mc, pc, kc, abuf);
          ap = abuf;
        } else {
          ap = g.a.p + ic * g.a.ld + pc;  // row-major
          a_row_stride = g.a.ld;
          a_run_stride = 16;
        }
        MicroTile t;
        t.a_row_stride = a_row_stride;
        t.a_run_stride = a_run_stride;
        const bool blocked_c = g.ep.c_block_stride != 0;
        t.ldc = blocked_c ? 16 : g.ldc;
        t.c_step16 = blocked_c ? g.ep.c_block_stride : 16;
        t.kc = kc;
        t.alpha = g.alpha;
        t.beta = first ? g.beta : 1.0f;
        t.clamp = last && has_act;
        t.lo = lo;
        t.hi = hi;
        for (int64_t jr = 0; jr < nc; jr += t.nr) {
          if (g.b.packed != nullptr) {
            const int64_t j = jc + jr;
            // The first panel of a pass also warms the ones before its
            // kWarmAhead-th; later panels, that one only.
            const int64_t q = j / g.nr;
            warm_pages(g, pc, kc, n_pad, jr == 0 ? q : q + kWarmAhead, q + kWarmAhead + 1);
            // Panels of the prepacked B start at multiples of nr; the task
            // may start or end inside one.
            const int64_t in_panel = j % g.nr;
            t.nr = static_cast<int>(std::min(g.nr - in_panel, nc - jr));
            t.b = g.b.packed + pc * n_pad + (j - in_panel) * kc + in_panel;
          } else {
            t.nr = static_cast<int>(std::min(g.nr, nc - jr));
            t.b = bbuf + jr * kc;
          }
          t.col_bias = last && g.ep.bias != nullptr && !g.ep.bias_per_row ? g.ep.bias + jc + jr : nullptr;
          const NextPanel next = next_panel_prefetch(g, jc + jr, nc - jr, pc, kc, n_pad, mc);
          t.prefetch_rate = next.rate;
          int64_t tile_index = 0;
          for (int64_t ir = 0; ir < mc; ir += t.mr, ++tile_index) {
            t.mr = static_cast<int>(tile_rows(mc - ir, a_row_stride != 0));
            t.a = a_row_stride != 0 ? ap + ir * a_row_stride : ap + ir * kc;
            const int64_t c_offset = blocked_c ? (jc + jr) / 16 * g.ep.c_block_stride + (ic + ir) * 16 + (jc + jr) % 16
                                               : (ic + ir) * g.ldc + jc + jr;
            t.c = g.c + c_offset;
            t.residual = last && g.ep.residual != nullptr ? g.ep.residual + c_offset : nullptr;
            t.row_bias = last && g.ep.bias != nullptr && g.ep.bias_per_row ? g.ep.bias + ic + ir : nullptr;
            const int64_t pf_offset = tile_index * next.floats_per_tile;
            t.prefetch = next.panel != nullptr && pf_offset < next.panel_floats ? next.panel + pf_offset : nullptr;
            g.kernel(t);
            if (last && gelu) {
              // The tile is mr rows of nr at ldc in row-major C; in
              // channel-blocked C, each block of 16 columns is mr * 16
              // contiguous floats.
              if (t.c_step16 == 16) {
                apply_activation_rows(t.c, t.mr, t.nr, t.ldc, g.ep);
              } else {
                for (int j = 0; j < t.nr; j += 16)
                  apply_activation_rows(t.c + j / 16 * t.c_step16, t.mr, std::min(16, t.nr - j), 16, g.ep);
              }
            }
          }
          if (last && g.ep.block_done != nullptr) g.ep.block_done(g.ep.block_done_context, ic, mc, jc + jr, t.nr);
        }
      }
    }
  }
}

// A plan made for another product than the call's is a bug in the caller:
// its tiling would leave parts of C out or its workspace be too small.
void check_plan(const GemmPlan& p, const Problem& g, const ThreadPool* pool) {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (p.M == g.M && p.N == g.N && p.K == g.K && p.threads == threads && p.b_prepacked == (g.b.packed != nullptr) &&
      p.rows_only == g.ep.split_rows_only)
    return;
  std::fprintf(stderr,
               "switchyard: internal error: sgemm called for %lldx%lldx%lld on %d threads (B %s, rows only %d) "
               "with the plan of %lldx%lldx%lld on %d threads (B %s, rows only %d)\n",
               static_cast<long long>(g.M), static_cast<long long>(g.N), static_cast<long long>(g.K), threads,
               g.b.packed != nullptr ? "prepacked" : "unpacked", g.ep.split_rows_only ? 1 : 0,
               static_cast<long long>(p.M), static_cast<long long>(p.N), static_cast<long long>(p.K), p.threads,
               p.b_prepacked ? "prepacked" : "unpacked", p.rows_only ? 1 : 0);
  std::abort();
}

void run_problem(const GemmPlan& gemm_plan, const Problem& g, ThreadPool* pool, void* workspace) {
  if (g.M <= 0 || g.N <= 0) return;
  check_plan(gemm_plan, g, pool);
  // An A read in place costs the tasks no packing either.
  const Plan& plan = packs_a(g.a) ? gemm_plan.a_packed : gemm_plan.a_in_place;
  const int64_t a_floats = a_buffer_floats(plan, g.K);
  const int64_t b_floats = b_buffer_floats(plan, g.K);
  float* ws = static_cast<float*>(workspace);
  auto task = [&](int64_t t, float* abuf) {
    const int64_t tm = t / plan.tiles_n;
    const int64_t tn = t % plan.tiles_n;
    const int64_t m0 = tm * plan.tile_m;
    const int64_t n0 = tn * plan.tile_n;
    run_task(g, m0, std::min(g.M, m0 + plan.tile_m), n0, std::min(g.N, n0 + plan.tile_n), abuf, abuf + a_floats);
  };
  const int64_t tasks = plan.tasks();
  if (plan.lanes == 1 || pool == nullptr) {
    for (int64_t t = 0; t < tasks; ++t) task(t, ws);
    return;
  }
  // Each lane owns one slice of the workspace; whichever thread is free
  // runs the next task.
  pool->run_tasks(plan.lanes, tasks, [&](int64_t lane, int64_t t) { task(t, ws + lane * (a_floats + b_floats)); });
}

GemmIsa current_isa() {
  const int forced = g_forced_isa.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<GemmIsa>(forced) : best_isa();
}

Problem make_problem(GemmIsa isa, int64_t M, int64_t N, int64_t K, float alpha, float beta, float* C, int64_t ldc,
                     const GemmEpilogue& ep) {
  Problem g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.alpha = alpha;
  g.beta = beta;
  g.c = C;
  g.ldc = ldc;
  g.ep = ep;
  g.kernel = kernel_of(isa);
  g.nr = nr_of(isa);
  return g;
}

}  // namespace

namespace gemm_detail {

namespace {
template <int R>
void scalar_tile(const MicroTile& t) {
  float acc[R][kNrScalar] = {};
  const float* b = t.b;
  for (int64_t k = 0; k < t.kc; ++k) {
    for (int i = 0; i < R; ++i) {
      // Packed: kMr floats per k step. In place: runs of 16 k steps.
      const float a = t.a_row_stride == 0 ? t.a[k * kMr + i]
                                          : t.a[i * t.a_row_stride + k / 16 * t.a_run_stride + k % 16];
      for (int j = 0; j < kNrScalar; ++j) acc[i][j] += a * b[j];
    }
    b += kNrScalar;
  }
  for (int i = 0; i < R; ++i) {
    float* c = t.c + i * t.ldc;
    for (int j = 0; j < t.nr; ++j) {
      float x = t.alpha * acc[i][j];
      if (t.beta != 0.0f) x += t.beta * c[j];
      if (t.row_bias != nullptr) x += t.row_bias[i];
      if (t.col_bias != nullptr) x += t.col_bias[j];
      if (t.residual != nullptr) x += t.residual[i * t.ldc + j];
      if (t.clamp) x = std::min(std::max(x, t.lo), t.hi);
      c[j] = x;
    }
  }
}
}  // namespace

void micro_kernel_scalar(const MicroTile& t) {
  switch (t.mr) {
    case 1: scalar_tile<1>(t); break;
    case 2: scalar_tile<2>(t); break;
    case 3: scalar_tile<3>(t); break;
    case 4: scalar_tile<4>(t); break;
    case 5: scalar_tile<5>(t); break;
    default: scalar_tile<6>(t); break;
  }
}

}  // namespace gemm_detail

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kScalar: return "scalar";
    case GemmIsa::kAvx2: return "avx2";
    case GemmIsa::kAvx512: return "avx512";
  }
  return "?";
}

bool gemm_isa_supported(GemmIsa isa) { return cpu_has(isa); }
GemmIsa active_gemm_isa() { return current_isa(); }

bool force_gemm_isa(GemmIsa isa) {
  if (!cpu_has(isa)) return false;
  g_forced_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

void reset_gemm_isa() { g_forced_isa.store(-1, std::memory_order_relaxed); }

void apply_activation_rows(float* y, int64_t rows, int64_t n, int64_t ld, const GemmEpilogue& ep) {
  switch (ep.activation) {
    case GemmActivation::kNone: break;
    case GemmActivation::kRelu:
      for (int64_t r = 0; r < rows; ++r) {
        float* yr = y + r * ld;
        for (int64_t i = 0; i < n; ++i) yr[i] = std::max(yr[i], 0.0f);
      }
      break;
    case GemmActivation::kClip:
      for (int64_t r = 0; r < rows; ++r) {
        float* yr = y + r * ld;
        for (int64_t i = 0; i < n; ++i) yr[i] = std::min(std::max(yr[i], ep.clip_min), ep.clip_max);
      }
      break;
    case GemmActivation::kGeluErf: activation_f32_rows(SimdActivation::kGeluErf, y, y, rows, n, ld); break;
    case GemmActivation::kGeluTanh: activation_f32_rows(SimdActivation::kGeluTanh, y, y, rows, n, ld); break;
  }
}

void apply_activation(float* y, int64_t n, const GemmEpilogue& ep) { apply_activation_rows(y, 1, n, n, ep); }

bool activation_clamp(const GemmEpilogue& ep, float* lo, float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  *lo = -kInf;
  *hi = kInf;
  if (ep.activation == GemmActivation::kRelu) {
    *lo = 0.0f;
  } else if (ep.activation == GemmActivation::kClip) {
    *lo = ep.clip_min;
    *hi = ep.clip_max;
  } else {
    return false;
  }
  return true;
}

void PackedMatrix::Free::operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }

PackedMatrix pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) {
  PackedMatrix out;
  const int64_t m_pad = round_up(std::max<int64_t>(M, 1), kMr);
  const size_t floats = static_cast<size_t>(m_pad * std::max<int64_t>(K, 1));
  float* mem = static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t(64), std::nothrow));
  if (mem == nullptr) return out;
  out.data_.reset(mem);
  out.floats_ = floats;
  out.rows_ = M;
  out.cols_ = K;
  out.isa_ = current_isa();
  // Block pc holds every row for k in [pc, pc + kc), so the driver finds rows
  // ic.. of that block at pc * m_pad + ic * kc.
  const int64_t kc_full = k_block(K);
  for (int64_t pc = 0; pc < K; pc += kc_full) {
    const int64_t kc = std::min(kc_full, K - pc);
    if (M > 0) pack_a_panels(A, lda, trans_a, 0, M, pc, kc, mem + pc * m_pad);
  }
  return out;
}

PackedMatrix packed_b_of(int64_t K, int64_t N) {
  PackedMatrix out;
  const GemmIsa isa = current_isa();
  const int64_t n_pad = round_up(std::max<int64_t>(N, 1), nr_of(isa));
  const size_t floats = static_cast<size_t>(n_pad * std::max<int64_t>(K, 1));
  float* mem = static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t(64), std::nothrow));
  if (mem == nullptr) return out;
  out.data_.reset(mem);
  out.floats_ = floats;
  out.rows_ = K;
  out.cols_ = N;
  out.isa_ = isa;
  return out;
}

PackedMatrix pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) {
  PackedMatrix out = packed_b_of(K, N);
  if (out.empty() || N <= 0) return out;
  const int64_t nr = nr_of(out.isa());
  const int64_t n_pad = round_up(N, nr);
  const int64_t kc_full = k_block(K);
  for (int64_t pc = 0; pc < K; pc += kc_full)
    pack_b_panels(B, ldb, trans_b, pc, std::min(kc_full, K - pc), 0, N, nr, out.data_.get() + pc * n_pad);
  return out;
}

void pack_b_row(PackedMatrix& B, int64_t k, const float* row) {
  const int64_t K = B.rows(), N = B.cols();
  const int64_t nr = nr_of(B.isa());
  const int64_t n_pad = round_up(std::max<int64_t>(N, 1), nr);
  const int64_t kc_full = k_block(K);
  const int64_t pc = k / kc_full * kc_full;
  const int64_t kc = std::min(kc_full, K - pc);
  // The row's k step in each panel of block pc (pack_b_panels' layout).
  float* d = B.data_.get() + pc * n_pad + (k - pc) * nr;
  for (int64_t jr = 0; jr < N; jr += nr) {
    const int64_t n = std::min(nr, N - jr);
    std::memcpy(d + jr * kc, row + jr, static_cast<size_t>(n) * sizeof(float));
    if (n < nr) std::memset(d + jr * kc + n, 0, static_cast<size_t>(nr - n) * sizeof(float));
  }
}

std::atomic<uint64_t> g_plans_missed{0};

GemmPlan plan_sgemm(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked, bool rows_only) {
  GemmPlan p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.threads = pool != nullptr ? pool->num_threads() : 1;
  p.b_prepacked = b_prepacked;
  p.rows_only = rows_only;
  p.workspace_bytes = 64;
  if (M <= 0 || N <= 0) return p;
  p.a_packed = search_plan(M, N, K, p.threads, Prepacked{false, b_prepacked}, rows_only);
  p.a_in_place = search_plan(M, N, K, p.threads, Prepacked{true, b_prepacked}, rows_only);
  for (const Plan* t : {&p.a_packed, &p.a_in_place}) {
    const size_t floats = static_cast<size_t>(t->lanes * (a_buffer_floats(*t, K) + b_buffer_floats(*t, K)));
    p.workspace_bytes = std::max(p.workspace_bytes, floats * sizeof(float));
  }
  return p;
}

GemmPlan plan_sgemm_one_task(int64_t M, int64_t N, int64_t K) {
  GemmPlan p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.workspace_bytes = 64;
  if (M <= 0 || N <= 0) return p;
  p.a_in_place.tile_m = M;  // one tile, one lane (GemmTiling's defaults)
  p.a_in_place.tile_n = N;
  p.a_packed = p.a_in_place;
  const size_t floats = static_cast<size_t>(a_buffer_floats(p.a_in_place, K) + b_buffer_floats(p.a_in_place, K));
  p.workspace_bytes = std::max<size_t>(64, floats * sizeof(float));
  return p;
}

size_t sgemm_workspace_bound(int64_t M, int64_t N, int64_t K) {
  if (M <= 0 || N <= 0) return 64;
  // One lane; its tile at most round_up(M, kMr) x round_up(N, kNGranule);
  // every block of K at most min(K, kKcMax) deep (k_block of a smaller K
  // can be deeper than K's own: 768 against 769's 400).
  const int64_t kc = std::min(std::max<int64_t>(K, 1), kKcMax);
  const int64_t a = round_up(std::min(kMc, round_up(M, kMr)) * kc, kAlignFloats);
  const int64_t b = round_up(kc * round_up(std::min(kNc, round_up(N, kNGranule)), kNrMax), kAlignFloats);
  return std::max<size_t>(64, static_cast<size_t>(a + b) * sizeof(float));
}

const GemmPlan* GemmPlans::find(int64_t M, int64_t N, int64_t K, int threads, bool b_prepacked, bool rows_only) const {
  for (const GemmPlan& p : plans_)
    if (p.M == M && p.N == N && p.K == K && p.threads == threads && p.b_prepacked == b_prepacked &&
        p.rows_only == rows_only)
      return &p;
  return nullptr;
}

void GemmPlans::add(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked, bool rows_only) {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (find(M, N, K, threads, b_prepacked, rows_only) == nullptr)
    plans_.push_back(plan_sgemm(M, N, K, pool, b_prepacked, rows_only));
}

GemmPlan GemmPlans::get(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked,
                        bool rows_only) const {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (const GemmPlan* p = find(M, N, K, threads, b_prepacked, rows_only)) return *p;
  g_plans_missed.fetch_add(1, std::memory_order_relaxed);
  return plan_sgemm(M, N, K, pool, b_prepacked, rows_only);
}

uint64_t gemm_plans_missed() { return g_plans_missed.load(std::memory_order_relaxed); }

void sgemm(const GemmPlan& plan, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
           const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool,
           void* workspace, const GemmEpilogue& epilogue) {
  Problem g = make_problem(current_isa(), M, N, K, alpha, beta, C, ldc, epilogue);
  g.a = Operand{A, lda, trans_a, nullptr, epilogue.a_block_stride};
  g.b = Operand{B, ldb, trans_b, nullptr, epilogue.b_block_stride};
  run_problem(plan, g, pool, workspace);
}

void sgemm_packed_b(const GemmPlan& plan, bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const PackedMatrix& B, float beta, float* C, int64_t ldc, ThreadPool* pool,
                    void* workspace, const GemmEpilogue& epilogue) {
  // The packed layout belongs to the variant that packed it.
  Problem g = make_problem(B.isa(), M, N, K, alpha, beta, C, ldc, epilogue);
  g.a = Operand{A, lda, trans_a, nullptr, epilogue.a_block_stride};
  g.b = Operand{nullptr, 0, false, B.data()};
  run_problem(plan, g, pool, workspace);
}

void sgemm_packed_a(const GemmPlan& plan, const PackedMatrix& A, bool trans_b, int64_t M, int64_t N, int64_t K,
                    float alpha, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool,
                    void* workspace, const GemmEpilogue& epilogue) {
  // A's layout is the same for every variant (kMr rows, k_block(K) blocks).
  Problem g = make_problem(current_isa(), M, N, K, alpha, beta, C, ldc, epilogue);
  g.a = Operand{nullptr, 0, false, A.data()};
  g.b = Operand{B, ldb, trans_b, nullptr, epilogue.b_block_stride};
  run_problem(plan, g, pool, workspace);
}

}  // namespace sy::cpu
