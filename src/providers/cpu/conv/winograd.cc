#include "providers/cpu/conv/winograd.h"

#include <algorithm>
#include <cstring>

#include "providers/cpu/conv/winograd_transforms.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr auto align64 = KernelContext::scratch_align;

// G (patch x kernel) of each variant, the kernel's taps evaluated at the
// points of input_1d (winograd_transforms_body.h) and divided by the
// product of (p - q) over the other finite points q, which B^T leaves out;
// the point at infinity takes the last tap.
struct WeightTransform {
  int patch, kernel;
  float g[7][4];
};
constexpr float k29 = 2.0f / 9.0f, k45 = 1.0f / 45.0f, k6 = 1.0f / 6.0f, k12 = 1.0f / 12.0f, k24 = 1.0f / 24.0f;
constexpr WeightTransform kF2x3 = {4, 3, {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}}};
constexpr WeightTransform kF4x3 = {
    6, 3, {{0.25f, 0, 0}, {-k6, -k6, -k6}, {-k6, k6, -k6}, {k24, k12, k6}, {k24, -k12, k6}, {0, 0, 1}}};
constexpr WeightTransform kF5x3 = {7,
                                   3,
                                   {{-k29, -k29, -k29},
                                    {k29, -k29, k29},
                                    {k45, 2 * k45, 4 * k45},
                                    {-k45, 2 * k45, -4 * k45},
                                    {16 * k45, 8 * k45, 4 * k45},
                                    {-16 * k45, 8 * k45, -4 * k45},
                                    {0, 0, 1}}};
constexpr WeightTransform kF4x4 = {7,
                                   4,
                                   {{-k29, -k29, -k29, -k29},
                                    {k29, -k29, k29, -k29},
                                    {k45, 2 * k45, 4 * k45, 8 * k45},
                                    {-k45, 2 * k45, -4 * k45, 8 * k45},
                                    {16 * k45, 8 * k45, 4 * k45, 2 * k45},
                                    {-16 * k45, 8 * k45, -4 * k45, 2 * k45},
                                    {0, 0, 0, 1}}};

// F(2, 2) (points 0, 1, infinity) and F(4, 2) (0, 1, -1, 2, infinity), the
// two-tap sides of the phase-split stride-2 3x3. Their B^T rows are scaled
// to integers (input_1d), and G's rows carry the inverse.
constexpr WeightTransform kF2x2 = {3, 2, {{1, 0}, {1, 1}, {0, 1}}};
constexpr WeightTransform kF4x2 = {5, 2, {{0.5f, 0}, {0.5f, 0.5f}, {k6, -k6}, {k6, 2 * k6}, {0, 1}}};

const WeightTransform& weight_transform(int64_t tile, int64_t kernel) {
  if (kernel == 2) return tile == 2 ? kF2x2 : kF4x2;
  if (kernel == 4) return kF4x4;
  if (tile == 2) return kF2x3;
  if (tile == 5) return kF5x3;
  return kF4x3;
}

// u_i[m] = (G v)[i] for n kernel-vectors at once, v[l] = in[l * in_step + m]
// (u_i at u + i * u_step). One loop over m per output, which the compiler
// vectorises; a 512-channel layer transforms 262144 filters, and doing
// them one by one (in double) was 60 % of its creation time. Float keeps U
// within a few ulp, far inside the 1e-4 that Winograd is held to.
void weight_1d_n(const WeightTransform& G, const float* in, int64_t in_step, float* u, int64_t u_step, int64_t n) {
  for (int i = 0; i < G.patch; ++i) {
    float* ui = u + i * u_step;
    for (int64_t m = 0; m < n; ++m) ui[m] = 0.0f;
    for (int l = 0; l < G.kernel; ++l) {
      const float gl = G.g[i][l];
      if (gl == 0.0f) continue;
      const float* vl = in + l * in_step;
      for (int64_t m = 0; m < n; ++m) ui[m] += gl * vl[m];
    }
  }
}

}  // namespace

bool WinogradConv::worthwhile(int64_t C, int64_t M, int64_t H, int64_t W) {
  // Down to 7x7 maps, ResNet-50's last stage, where F(2x2, 3x3) takes over
  // (tile_for). Smaller maps would pad most of each tile.
  return C >= 16 && M >= 16 && H >= 7 && W >= 7;
}

int64_t WinogradConv::tile_for(int64_t OH, int64_t OW) {
  // Each point's GEMM reads its [C x M] weights once for all of an image's
  // tiles. F(4x4, 3x3) on a 7x7 map has 4 tiles: its 36 weight matrices
  // (37.7 MB for ResNet-50's 512-channel layers) stream from memory for 4
  // rows each, and the GEMMs wait on the memory, worst with two threads
  // sharing it. F(2x2, 3x3) has 16 tiles and 16 matrices, for 1.8 times
  // the multiply-adds. On Zen 4 ResNet-50's two such Convs ran level at 1
  // thread (1.7 ms each) and 1.24 -> 1.0 ms at 2, and the rest of the stage
  // faster at both, its weights no longer evicted from L3: layer4 15.6 ->
  // 14.9 ms at 1 thread, 8.7 -> 7.6 ms at 2. From 16 tiles (a 14x14 map)
  // F(4x4, 3x3)'s fewer multiplies win.
  if (ceil_div(OH, 4) * ceil_div(OW, 4) < 16) return 2;
  // F(5x5, 3x3) takes 49 multiplies per 25 outputs against 36 per 16, but
  // its tiles cover the map in steps of 5: it wins only where 4 would pad
  // more. A 14x14 map is 16 tiles of 4 (16x16, 31 % padding, 576 point
  // rows) or 9 of 5 (15x15, 441 rows): 23 % fewer multiply-adds for
  // ResNet-50's third stage. 56x56 and 28x28 tie (4 divides them), and
  // then 4 keeps the weights smaller.
  const int64_t rows4 = 36 * ceil_div(OH, 4) * ceil_div(OW, 4);
  const int64_t rows5 = 49 * ceil_div(OH, 5) * ceil_div(OW, 5);
  return rows5 < rows4 ? 5 : 4;
}

bool WinogradConv::strided_worthwhile(int64_t C, int64_t M, int64_t kernel, int64_t OH, int64_t OW) {
  // A 7x7 stride-2 stem over RGB (ResNet's): F(4x4, 4x4) on its phases
  // takes 49 multiplies per 16 outputs per phase channel, 2352 per output
  // against the direct 9408. Its GEMMs are short (12 channels) but the map
  // is large (112x112: 784 tiles). ResNet-50's stem at 1 thread: 2.15 ->
  // 1.50 ms.
  if (kernel == 7 || kernel == 8) return 4 * C <= 16 && M >= 16 && OH >= 16 && OW >= 16;
  // A 3x3 stride-2 one, phase-split (winograd.h): (2 tile + 1)^2 multiplies
  // per tile^2 outputs per channel pair, 5.06 (tile 4) or 6.25 (tile 2)
  // against 9. (The stem's way, F(5x5, 2x2) over 4C phase channels, does
  // 5.76 and ran no faster than direct on ResNet-50's 28x28 one: its
  // transforms took what the GEMMs saved.) Its 36 or 16 weight matrices
  // are read once for all the tiles; below 14x14 (ResNet-50's 7x7 last
  // stage, 512 channels: 16 tiles for 16.8 MB of weights) memory, not the
  // multiplies, would set the pace.
  return kernel == 3 && C >= 16 && M >= 16 && OH >= 14 && OW >= 14;
}

int64_t WinogradConv::strided_tile_for(int64_t kernel, int64_t OH, int64_t OW) {
  if (kernel != 3) return 4;
  // Tiles of 4 take 81 GEMM rows per 16 outputs, tiles of 2 25 per 4: 2
  // wins where 4 would pad the map more (14x14: 16 tiles of 4 over 16x16,
  // 1296 rows, against 49 of 2, 1225).
  const int64_t rows4 = 81 * ceil_div(OH, 4) * ceil_div(OW, 4);
  const int64_t rows2 = 25 * ceil_div(OH, 2) * ceil_div(OW, 2);
  return rows2 < rows4 ? 2 : 4;
}

bool WinogradConv::init(const float* w, int64_t M, int64_t C, int64_t kernel, int64_t stride, int64_t tile) {
  M_ = M;
  C_ = C;
  stride_ = stride == 2 ? 2 : 1;
  split_ = stride_ == 2 && kernel == 3;
  gemms_.clear();
  u_.clear();
  if (split_) return init_split(w, tile == 2 ? 2 : 4);
  if (stride_ == 2) {
    kernel_ = 4;  // each phase's kernel side: 7x7 (8x8, the last row and column 0) is 4x4 per phase
    tile_ = 4;
  } else {
    kernel_ = 3;
    tile_ = tile == 2 || tile == 5 ? tile : 4;
  }
  // Stride 2: the taps of each input phase (py, px) — rows py, py + 2, ...
  // and columns px, px + 2, ... of the kernel — as a kernel_ x kernel_
  // stride-1 kernel over phase channel (py * 2 + px) * C + c (zeros past
  // the kernel's edge). The space-to-depth input (run) has those channels.
  std::vector<float> phases;
  int64_t gemm_c = C;
  if (stride_ == 2) {
    gemm_c = 4 * C;
    const int64_t r = kernel_;
    phases.assign(static_cast<size_t>(M * gemm_c * r * r), 0.0f);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t ph = 0; ph < 4; ++ph)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < r; ++j) {
              const int64_t ky = 2 * i + ph / 2, kx = 2 * j + ph % 2;
              if (ky < kernel && kx < kernel)
                phases[static_cast<size_t>(((m * gemm_c + ph * C + c) * r + i) * r + j)] =
                    w[((m * C + c) * kernel + ky) * kernel + kx];
            }
    w = phases.data();
  }
  const WeightTransform& G = weight_transform(tile_, kernel_);
  const int64_t r = kernel_, taps = r * r;
  const int64_t patch = G.patch, points = patch * patch;
  // U[p][c][m] = (G g G^T)[p] for each (m, c), written one input channel at
  // a time straight into each point's packed matrix (pack_b_row).
  if (!allocate_u(points, gemm_c)) return false;
  for (int64_t p = 0; p < points; ++p) gemms_.push_back({p, 1});
  // Per channel c: its M filters gathered tap-major, g[taps][M]; G down
  // their columns, cols[patch][r][M]; G along the rows, row[points][M],
  // whose M values per point are row k = c of that point's matrix.
  // (Writing one [points][C][M] array instead put a point's values M * C
  // floats apart: 88 ms for a 512-channel layer, against 25.)
  std::vector<float> g(static_cast<size_t>(taps * M)), cols(static_cast<size_t>(patch * r * M)),
      row(static_cast<size_t>(points * M));
  for (int64_t c = 0; c < gemm_c; ++c) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < taps; ++t) g[static_cast<size_t>(t * M + m)] = w[(m * gemm_c + c) * taps + t];
    for (int64_t j = 0; j < r; ++j) weight_1d_n(G, g.data() + j * M, r * M, cols.data() + j * M, r * M, M);
    for (int64_t i = 0; i < patch; ++i)
      weight_1d_n(G, cols.data() + i * r * M, M, row.data() + i * patch * M, M, M);
    for (int64_t p = 0; p < points; ++p) pack_b_row(u_[static_cast<size_t>(p)], c, row.data() + p * M);
  }
  return true;
}

bool WinogradConv::allocate_u(int64_t count, int64_t rows) {
  u_.reserve(static_cast<size_t>(count));
  for (int64_t p = 0; p < count; ++p) {
    u_.push_back(packed_b_of(rows, M_));
    if (u_.back().empty()) {
      u_.clear();
      return false;
    }
  }
  return true;
}

bool WinogradConv::init_split(const float* w, int64_t tile) {
  tile_ = tile;
  kernel_ = 3;
  const WeightTransform& G = weight_transform(tile, 2);  // F(tile, 2) on the two-tap sides
  const int64_t kT = tile, kN = G.patch, M = M_, C = C_;
  // The GEMMs, largest first so that the threads sharing them out end
  // together: OO (one matrix, kT^2 rows a tile), OE and EO (kN each, kT
  // rows a tile), EE (kN^2, a row a tile); slots as the transforms lay
  // them out (winograd_split_groups), U in the same order.
  const WinogradSplitGroups groups = winograd_split_groups(kT);
  gemms_.push_back({groups.oo, kT * kT});
  for (int64_t j = 0; j < kN; ++j) gemms_.push_back({groups.oe + j * kT, kT});
  for (int64_t i = 0; i < kN; ++i) gemms_.push_back({groups.eo + i * kT, kT});
  for (int64_t p = 0; p < kN * kN; ++p) gemms_.push_back({p, 1});
  if (!allocate_u(static_cast<int64_t>(gemms_.size()), C)) return false;
  // Per input channel, each matrix's row c: taps[t][m] = w[m][c][t / 3][t % 3].
  std::vector<float> taps(static_cast<size_t>(9 * M)), row(static_cast<size_t>(M));
  auto tap = [&](int64_t ky, int64_t kx, int64_t m) { return taps[static_cast<size_t>((ky * 3 + kx) * M + m)]; };
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < 9; ++t) taps[static_cast<size_t>(t * M + m)] = w[(m * C + c) * 9 + t];
    size_t g = 0;
    // OO: the centre tap.
    for (int64_t m = 0; m < M; ++m) row[static_cast<size_t>(m)] = tap(1, 1, m);
    pack_b_row(u_[g++], c, row.data());
    // OE (j): G along row 1's taps 0 and 2.
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t m = 0; m < M; ++m)
        row[static_cast<size_t>(m)] = G.g[j][0] * tap(1, 0, m) + G.g[j][1] * tap(1, 2, m);
      pack_b_row(u_[g++], c, row.data());
    }
    // EO (i): G down column 1's taps 0 and 2.
    for (int64_t i = 0; i < kN; ++i) {
      for (int64_t m = 0; m < M; ++m)
        row[static_cast<size_t>(m)] = G.g[i][0] * tap(0, 1, m) + G.g[i][1] * tap(2, 1, m);
      pack_b_row(u_[g++], c, row.data());
    }
    // EE (i, j): G g G^T of the corner taps.
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        for (int64_t m = 0; m < M; ++m) {
          float acc = 0.0f;
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) acc += G.g[i][a] * tap(2 * a, 2 * b, m) * G.g[j][b];
          row[static_cast<size_t>(m)] = acc;
        }
        pack_b_row(u_[g++], c, row.data());
      }
  }
  return true;
}

// Tiles per band (below), about: enough rows for the GEMMs' micro-tiles.
constexpr int64_t kBandTiles = 28;
// Products P larger than this run in bands.
constexpr size_t kBandAboveBytes = size_t{1} << 20;
// Fewer bands than this run whole instead. Every band reads all the
// weights, and two threads on two or three bands wait on the larger one:
// the split stride-2 3x3 of ResNet-50's second stage (P 2 MB, 2 bands of
// 4 and 3 tile rows) took 0.85-0.94 ms at 2 threads in bands, 0.78 whole,
// and the same at 1 thread.
constexpr int64_t kMinBands = 4;

// Tile rows per band, at most `most`, for the threads to finish together:
// the fewest tile rows on the busiest thread, then the largest bands. At
// 2 threads 14 tile rows (ResNet-50's 56x56 3x3s) in bands of 2 are 7
// bands, 4 on one thread and 3 on the other: 0.43-0.45 ms a conv against
// 0.79 at 1 thread. Bands of 1 are 7 each: 0.38-0.41 ms.
int64_t balanced_band_rows(int64_t tiles_y, int64_t most, int64_t threads) {
  int64_t best = most, best_rows = tiles_y + 1;
  for (int64_t rows = most; rows >= 1; --rows) {
    const int64_t busiest = ceil_div(ceil_div(tiles_y, rows), std::max<int64_t>(1, threads)) * rows;
    if (busiest < best_rows) {
      best = rows;
      best_rows = busiest;
    }
  }
  return best;
}

// Layout of the workspace for one image. Channel counts are rounded up to
// 16, a whole block for every variant.
//
// Large maps run in bands of whole tile rows, each band's input transform,
// GEMMs and output transform in turn on one thread, the threads taking
// bands: the band's V and P (the stem's whole P is 9.8 MB, 49 points 200 KB
// apart) then stay in L2, where the output transform's reads of a tile's
// points from 49 places missed every cache. Small maps run whole, each
// step shared among the threads (few tiles per weight matrix: each
// point's weights are read once).
struct WinogradConv::Layout {
  int64_t tiles_x = 0, tiles_y = 0, tiles = 0;
  int64_t band_rows = 0, bands = 1, band_tiles = 0;  // tile rows per band
  int64_t c_pad = 0, m_pad = 0;
  int64_t plane_height = 0, plane_width = 0;  // a band's
  int64_t phase_height = 0, phase_width = 0;  // stride 2: each phase map's size
  size_t phases_bytes = 0, planes_bytes = 0, v_bytes = 0, prod_bytes = 0, staging_bytes = 0, gemm_bytes = 0;
  size_t band_bytes = 0;  // planes to gemm workspace, one band's (banded) or the image's

  int64_t slots = 36;  // GEMM rows per tile, all GEMMs together: the points, or (2 tile + 1)^2 split
  int64_t lanes = 1;   // threads running at once, each with its own workspace (GEMM's or band's)

  // Everything but the GEMMs' workspace (size_gemms, from their plans).
  Layout(const WinogradConv& wc, int64_t OH, int64_t OW, int64_t threads) {
    const int64_t tile = wc.tile_, halo = wc.kernel_ - 1;
    // Each tile reads (stride (tile - 1) + kernel)^2 inputs, of which the
    // next tile shares the last kernel - stride rows and columns.
    const int64_t step = wc.split_ ? 2 * tile : tile, reach = wc.split_ ? 1 : halo;
    slots = 0;
    for (const Gemm& g : wc.gemms_) {
      slots += g.rows_per_tile;
    }
    tiles_x = ceil_div(OW, tile);
    tiles_y = ceil_div(OH, tile);
    tiles = tiles_x * tiles_y;
    c_pad = ceil_div(wc.gemm_channels(), 16) * 16;
    m_pad = ceil_div(wc.M_, 16) * 16;
    band_rows = tiles_y;
    if (static_cast<size_t>(slots * tiles * m_pad) * sizeof(float) > kBandAboveBytes)
      band_rows = balanced_band_rows(tiles_y, std::max<int64_t>(1, std::min(tiles_y, kBandTiles / tiles_x)), threads);
    if (ceil_div(tiles_y, band_rows) < kMinBands) band_rows = tiles_y;
    bands = ceil_div(tiles_y, band_rows);
    band_tiles = band_rows * tiles_x;
    plane_height = band_rows * step + reach;
    plane_width = tiles_x * step + reach;
    if (wc.uses_phases()) {
      phase_height = OH + halo;
      phase_width = OW + halo;
      phases_bytes = align64(static_cast<size_t>(c_pad * phase_height * phase_width) * sizeof(float));
    }
    planes_bytes = align64(static_cast<size_t>(c_pad * plane_height * plane_width) * sizeof(float));
    v_bytes = align64(static_cast<size_t>(slots * band_tiles * c_pad) * sizeof(float));
    prod_bytes = align64(static_cast<size_t>(slots * band_tiles * m_pad) * sizeof(float));
    staging_bytes = align64(static_cast<size_t>(m_pad * band_tiles * tile * tile) * sizeof(float));
    lanes = bands > 1 ? std::min(bands, threads) : std::min(static_cast<int64_t>(wc.gemms_.size()), threads);
  }

  // Calls f(rows) for the row count of every GEMM run() makes: each GEMM's
  // for a whole band of tiles and for the last, shorter band. One thread
  // each (nullptr pool), B prepacked.
  template <typename F>
  void for_each_gemm(const WinogradConv& wc, F f) const {
    const int64_t last_tiles = (tiles_y - (bands - 1) * band_rows) * tiles_x;
    for (const Gemm& g : wc.gemms_) {
      f(band_tiles * g.rows_per_tile);
      if (last_tiles != band_tiles) f(last_tiles * g.rows_per_tile);
    }
  }

  void size_gemms(const WinogradConv& wc, const GemmPlans& plans) {
    gemm_bytes = 64;
    for_each_gemm(wc, [&](int64_t rows) {
      gemm_bytes = std::max(gemm_bytes, plans.get(rows, wc.M_, wc.gemm_channels(), nullptr, true).workspace_bytes);
    });
    gemm_bytes = align64(gemm_bytes);
    band_bytes = planes_bytes + v_bytes + prod_bytes + staging_bytes +
                 (bands > 1 ? 1 : static_cast<size_t>(lanes)) * gemm_bytes;
  }
  size_t total() const { return phases_bytes + (bands > 1 ? static_cast<size_t>(lanes) : 1) * band_bytes; }
};

void WinogradConv::plan(int64_t OH, int64_t OW, const ThreadPool& pool, GemmPlans& plans) const {
  const Layout lay(*this, OH, OW, pool.num_threads());
  lay.for_each_gemm(*this, [&](int64_t rows) { plans.add(rows, M_, gemm_channels(), nullptr, true); });
}

size_t WinogradConv::workspace_size(int64_t OH, int64_t OW, const ThreadPool& pool, const GemmPlans& plans) const {
  Layout lay(*this, OH, OW, pool.num_threads());
  lay.size_gemms(*this, plans);
  return lay.total();
}

namespace {

// Space to depth for a stride-2 Winograd, x [C][H][W] with 4C <= 16 (an
// RGB stem): lane (py * 2 + px) * C + c of xs, one NCHW16c block
// [PH][PW][16], is x's channel c at rows py, py + 2, ... and columns px,
// px + 2, ... of its padded map (zeros outside x, and in the lanes past
// 4C). Blocked, the transforms copy its rows instead of transposing
// 12-channel columns, which took 11 % of the stem's time.
void space_to_depth(const float* x, int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left, float* xs,
                    int64_t PH, int64_t PW, ThreadPool& pool) {
  // Columns j with 0 <= 2j + px - pad_left < W, for phase column px.
  auto column_range = [&](int64_t px, int64_t* j0, int64_t* j1) {
    *j0 = std::min(PW, std::max<int64_t>(0, (pad_left - px + 1) / 2));
    *j1 = std::max(*j0, std::min(PW, (W + pad_left - px + 1) / 2));
  };
  // One block: rows of PW positions x 16 lanes, row by row.
  pool.parallel_for(PH, 8, [&](int64_t i0, int64_t i1) {
    std::fill(xs + i0 * PW * 16, xs + i1 * PW * 16, 0.0f);
    for (int64_t i = i0; i < i1; ++i) {
      float* drow = xs + i * PW * 16;
      for (int64_t py = 0; py < 2; ++py) {
        const int64_t iy = 2 * i + py - pad_top;
        if (iy < 0 || iy >= H) continue;
        for (int64_t px = 0; px < 2; ++px) {
          int64_t j0 = 0, j1 = 0;
          column_range(px, &j0, &j1);
          const int64_t shift = px - pad_left;
          for (int64_t c = 0; c < C; ++c) {
            const float* srow = x + (c * H + iy) * W;
            float* d = drow + (py * 2 + px) * C + c;
            for (int64_t j = j0; j < j1; ++j) d[j * 16] = srow[2 * j + shift];
          }
        }
      }
    }
  });
}

}  // namespace

void WinogradConv::run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top,
                       int64_t pad_left, const GemmEpilogue& ep, const GemmPlans& plans, void* workspace,
                       ThreadPool& pool, bool x_blocked, bool y_blocked) const {
  const int64_t C = gemm_channels(), M = M_;
  Layout lay(*this, OH, OW, pool.num_threads());
  lay.size_gemms(*this, plans);
  char* at = static_cast<char*>(workspace);
  const int64_t lanes = winograd_lanes();

  // 0. The stem: the phases as the channels of a stride-1 input, unpadded.
  if (uses_phases()) {
    float* phases = reinterpret_cast<float*>(at);
    space_to_depth(x, C_, H, W, pad_top, pad_left, phases, lay.phase_height, lay.phase_width, pool);
    x = phases;
    x_blocked = true;
    H = lay.phase_height;
    W = lay.phase_width;
    pad_top = pad_left = 0;
  }
  at += lay.phases_bytes;

  // The steps for the tile rows [ty0, ty1), with that band's workspace.
  struct Band {
    float* planes;   // interleaved input blocks
    float* v;        // V[slots][tiles][c_pad]
    float* prod;     // P[slots][tiles][m_pad]
    float* staging;  // interleaved output blocks
    char* gemm_ws;   // per GEMM lane when the image runs whole
  };
  auto band_at = [&](char* base) {
    Band b;
    b.planes = reinterpret_cast<float*>(base);
    b.v = reinterpret_cast<float*>(base + lay.planes_bytes);
    b.prod = reinterpret_cast<float*>(base + lay.planes_bytes + lay.v_bytes);
    b.staging = reinterpret_cast<float*>(base + lay.planes_bytes + lay.v_bytes + lay.prod_bytes);
    b.gemm_ws = base + lay.planes_bytes + lay.v_bytes + lay.prod_bytes + lay.staging_bytes;
    return b;
  };
  auto input_args = [&](const Band& b, int64_t ty0, int64_t ty1) {
    WinogradInputArgs in;
    in.tile = static_cast<int>(tile_);
    in.kernel = static_cast<int>(kernel_);
    in.stride = split_ ? 2 : 1;
    in.x = x;
    in.x_blocked = x_blocked;
    in.C = C;
    in.H = H;
    in.W = W;
    in.pad_top = pad_top;
    in.pad_left = pad_left;
    in.first_row = ty0 * tile_;
    in.block_begin = 0;
    in.block_end = ceil_div(C, lanes);
    in.planes = b.planes;
    in.plane_height = lay.plane_height;
    in.plane_width = lay.plane_width;
    in.tiles_x = lay.tiles_x;
    in.tiles = (ty1 - ty0) * lay.tiles_x;
    in.v = b.v;
    in.v_ld = lay.c_pad;
    in.point_stride = in.tiles * lay.c_pad;
    return in;
  };
  auto gemm = [&](const Band& b, int64_t tiles, int64_t i, char* gemm_ws) {
    // P[slots] [rows x M] = V[slots] [rows x C] . U[i] [C x M]
    const Gemm& g = gemms_[static_cast<size_t>(i)];
    const GemmPlan plan = plans.get(tiles * g.rows_per_tile, M, C, nullptr, true);
    sgemm_packed_b(plan, false, tiles * g.rows_per_tile, M, C, 1.0f, b.v + g.first_slot * tiles * lay.c_pad, lay.c_pad,
                   u_[static_cast<size_t>(i)], 0.0f, b.prod + g.first_slot * tiles * lay.m_pad, lay.m_pad, nullptr,
                   gemm_ws);
  };
  auto output_args = [&](const Band& b, int64_t ty0, int64_t ty1) {
    WinogradOutputArgs out;
    out.tile = static_cast<int>(tile_);
    out.kernel = static_cast<int>(kernel_);
    out.stride = split_ ? 2 : 1;
    out.prod = b.prod;
    out.prod_ld = lay.m_pad;
    out.tiles_x = lay.tiles_x;
    out.tiles = (ty1 - ty0) * lay.tiles_x;
    out.point_stride = out.tiles * lay.m_pad;
    out.M = M;
    out.block_begin = 0;
    out.block_end = ceil_div(M, lanes);
    out.OH = OH;
    out.OW = OW;
    out.first_row = ty0 * tile_;
    out.staging = b.staging;
    out.y = y;
    out.y_blocked = y_blocked;
    out.bias = ep.bias;
    out.clamp = activation_clamp(ep, &out.lo, &out.hi);
    return out;
  };

  if (lay.bands > 1) {
    // Each thread a band at a time, every step of it, in its own workspace.
    pool.run_tasks(lay.lanes, lay.bands, [&](int64_t lane, int64_t band) {
      const Band b = band_at(at + lane * lay.band_bytes);
      const int64_t ty0 = band * lay.band_rows, ty1 = std::min(lay.tiles_y, ty0 + lay.band_rows);
      const int64_t tiles = (ty1 - ty0) * lay.tiles_x;
      winograd_input_transform(input_args(b, ty0, ty1));
      for (size_t i = 0; i < gemms_.size(); ++i) gemm(b, tiles, static_cast<int64_t>(i), b.gemm_ws);
      winograd_output_transform(output_args(b, ty0, ty1));
    });
    return;
  }

  // The whole image, each step shared among the threads.
  const Band b = band_at(at);
  // 1. Input: V[p][t][c] = (B^T d B)[p] for each tile t of channel c.
  const WinogradInputArgs in = input_args(b, 0, lay.tiles_y);
  pool.parallel_for(ceil_div(C, lanes), 1, [&](int64_t b0, int64_t b1) {
    WinogradInputArgs part = in;
    part.block_begin = b0;
    part.block_end = b1;
    winograd_input_transform(part);
  });
  // 2. The GEMMs (a point's each, or a split group's), shared out among the
  //    threads whole, one at a time: in chunks (parallel_for makes 8 of 5
  //    points for 2 threads) one thread could wait out a whole chunk of the
  //    other's at the end.
  pool.run_tasks(lay.lanes, static_cast<int64_t>(gemms_.size()),
                 [&](int64_t lane, int64_t i) { gemm(b, lay.tiles, i, b.gemm_ws + lane * lay.gemm_bytes); });
  // 3. Output: Y = A^T P A, plus bias and activation.
  const WinogradOutputArgs out = output_args(b, 0, lay.tiles_y);
  pool.parallel_for(ceil_div(M, lanes), 1, [&](int64_t b0, int64_t b1) {
    WinogradOutputArgs part = out;
    part.block_begin = b0;
    part.block_end = b1;
    winograd_output_transform(part);
  });
}

}  // namespace sy::cpu
