#include "providers/cpu/conv/winograd.h"

#include <algorithm>

#include "providers/cpu/conv/winograd_transforms.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr auto align64 = KernelContext::scratch_align;

// G v for n 3-vectors at once, v = (a[m], b[m], c[m]): u_i[m] = (G v)[i]
// at u + i * u_step + m, G being F(4x4, 3x3)'s 6 x 3 for tile 4,
// F(5x5, 3x3)'s 7 x 3 for tile 5 and F(2x2, 3x3)'s 4 x 3 for tile 2. One
// loop over m per output, which the compiler vectorises; a 512-channel
// layer transforms 262144 filters, and doing them one by one (in double)
// was 60 % of its creation time. Float keeps U within a few ulp, far
// inside the 1e-4 that Winograd is held to.
void weight_1d_n(int64_t tile, const float* a, const float* b, const float* c, float* u, int64_t u_step, int64_t n) {
  if (tile == 5) {
    // Points p = 1, -1, 2, -2, 1/2, -1/2, infinity: (1, p, p^2) / prod(p - q)
    // over the other finite points q (winograd_transforms_body.h's B^T
    // leaves that factor out).
    constexpr float k29 = 2.0f / 9.0f, k45 = 1.0f / 45.0f;
    for (int64_t m = 0; m < n; ++m) u[m] = -(a[m] + b[m] + c[m]) * k29;
    for (int64_t m = 0; m < n; ++m) u[u_step + m] = (a[m] - b[m] + c[m]) * k29;
    for (int64_t m = 0; m < n; ++m) u[2 * u_step + m] = (a[m] + 2.0f * b[m] + 4.0f * c[m]) * k45;
    for (int64_t m = 0; m < n; ++m) u[3 * u_step + m] = (-a[m] + 2.0f * b[m] - 4.0f * c[m]) * k45;
    for (int64_t m = 0; m < n; ++m) u[4 * u_step + m] = (16.0f * a[m] + 8.0f * b[m] + 4.0f * c[m]) * k45;
    for (int64_t m = 0; m < n; ++m) u[5 * u_step + m] = (-16.0f * a[m] + 8.0f * b[m] - 4.0f * c[m]) * k45;
    for (int64_t m = 0; m < n; ++m) u[6 * u_step + m] = c[m];
    return;
  }
  if (tile == 2) {
    for (int64_t m = 0; m < n; ++m) u[m] = a[m];
    for (int64_t m = 0; m < n; ++m) u[u_step + m] = (a[m] + b[m] + c[m]) * 0.5f;
    for (int64_t m = 0; m < n; ++m) u[2 * u_step + m] = (a[m] - b[m] + c[m]) * 0.5f;
    for (int64_t m = 0; m < n; ++m) u[3 * u_step + m] = c[m];
    return;
  }
  constexpr float k4 = 1.0f / 4.0f, k6 = 1.0f / 6.0f, k12 = 1.0f / 12.0f, k24 = 1.0f / 24.0f;
  for (int64_t m = 0; m < n; ++m) u[m] = a[m] * k4;
  for (int64_t m = 0; m < n; ++m) u[u_step + m] = -(a[m] + b[m] + c[m]) * k6;
  for (int64_t m = 0; m < n; ++m) u[2 * u_step + m] = -(a[m] - b[m] + c[m]) * k6;
  for (int64_t m = 0; m < n; ++m) u[3 * u_step + m] = a[m] * k24 + b[m] * k12 + c[m] * k6;
  for (int64_t m = 0; m < n; ++m) u[4 * u_step + m] = a[m] * k24 - b[m] * k12 + c[m] * k6;
  for (int64_t m = 0; m < n; ++m) u[5 * u_step + m] = c[m];
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

bool WinogradConv::init(const float* w, int64_t M, int64_t C, int64_t tile) {
  M_ = M;
  C_ = C;
  tile_ = tile == 2 || tile == 5 ? tile : 4;
  const int64_t patch = tile_ + 2, points = patch * patch;
  // U[p][c][m] = (G g G^T)[p] for each (m, c), written one input channel at
  // a time straight into each point's packed matrix (pack_b_row).
  u_.clear();
  u_.reserve(static_cast<size_t>(points));
  for (int64_t p = 0; p < points; ++p) {
    u_.push_back(packed_b_of(C, M));
    if (u_.back().empty()) {
      u_.clear();
      return false;
    }
  }
  // Per channel c: its M filters gathered tap-major, g[9][M]; G down their
  // columns, cols[patch][3][M]; G along the rows, row[points][M], whose M
  // values per point are row k = c of that point's matrix. (Writing one
  // [points][C][M] array instead put a point's values M * C floats apart:
  // 88 ms for a 512-channel layer, against 25.)
  std::vector<float> g(static_cast<size_t>(9 * M)), cols(static_cast<size_t>(patch * 3 * M)),
      row(static_cast<size_t>(points * M));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < 9; ++t) g[static_cast<size_t>(t * M + m)] = w[(m * C + c) * 9 + t];
    for (int64_t j = 0; j < 3; ++j)
      weight_1d_n(tile_, g.data() + j * M, g.data() + (3 + j) * M, g.data() + (6 + j) * M, cols.data() + j * M, 3 * M,
                  M);
    for (int64_t i = 0; i < patch; ++i) {
      const float* ci = cols.data() + i * 3 * M;
      weight_1d_n(tile_, ci, ci + M, ci + 2 * M, row.data() + i * patch * M, M, M);
    }
    for (int64_t p = 0; p < points; ++p) pack_b_row(u_[static_cast<size_t>(p)], c, row.data() + p * M);
  }
  return true;
}

// Layout of the workspace for one image. Channel counts are rounded up to
// 16, a whole block for every variant.
struct WinogradConv::Layout {
  int64_t tiles_x = 0, tiles_y = 0, tiles = 0;
  int64_t c_pad = 0, m_pad = 0;
  int64_t plane_height = 0, plane_width = 0;
  size_t planes_bytes = 0, v_bytes = 0, prod_bytes = 0, staging_bytes = 0, gemm_bytes = 0;

  int64_t tile = 4, points = 36;
  int64_t lanes = 1;  // GEMMs running at once, one per thread, each with its own workspace

  Layout(int64_t tile_side, int64_t C, int64_t M, int64_t OH, int64_t OW, size_t per_gemm_bytes, int64_t threads) {
    tile = tile_side;
    points = (tile + 2) * (tile + 2);
    tiles_x = ceil_div(OW, tile);
    tiles_y = ceil_div(OH, tile);
    tiles = tiles_x * tiles_y;
    c_pad = ceil_div(C, 16) * 16;
    m_pad = ceil_div(M, 16) * 16;
    plane_height = tiles_y * tile + 2;
    plane_width = tiles_x * tile + 2;
    planes_bytes = align64(static_cast<size_t>(c_pad * plane_height * plane_width) * sizeof(float));
    v_bytes = align64(static_cast<size_t>(points * tiles * c_pad) * sizeof(float));
    prod_bytes = align64(static_cast<size_t>(points * tiles * m_pad) * sizeof(float));
    staging_bytes = align64(static_cast<size_t>(m_pad * tiles * tile * tile) * sizeof(float));
    gemm_bytes = per_gemm_bytes;
    lanes = std::min(points, threads);
  }
  size_t total() const {
    return planes_bytes + v_bytes + prod_bytes + staging_bytes + static_cast<size_t>(lanes) * gemm_bytes;
  }
};

size_t WinogradConv::gemm_workspace(int64_t tiles) const {
  return align64(std::max<size_t>(64, sgemm_workspace_size(tiles, M_, C_, nullptr)));
}

size_t WinogradConv::workspace_size(int64_t OH, int64_t OW, const ThreadPool* pool) const {
  // One single-threaded GEMM workspace per thread: the threads share out
  // the GEMMs, each too thin to split well itself.
  const int64_t tiles = ceil_div(OH, tile_) * ceil_div(OW, tile_);
  return Layout(tile_, C_, M_, OH, OW, gemm_workspace(tiles), pool != nullptr ? pool->num_threads() : 1).total();
}

void WinogradConv::run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top,
                       int64_t pad_left, const GemmEpilogue& ep, void* workspace, ThreadPool& pool, bool x_blocked,
                       bool y_blocked) const {
  const int64_t C = C_, M = M_;
  const Layout lay(tile_, C, M, OH, OW, gemm_workspace(ceil_div(OH, tile_) * ceil_div(OW, tile_)), pool.num_threads());
  const int64_t tiles = lay.tiles;
  char* at = static_cast<char*>(workspace);
  float* planes = reinterpret_cast<float*>(at);  // interleaved input blocks
  at += lay.planes_bytes;
  float* v = reinterpret_cast<float*>(at);  // V[points][tiles][c_pad]
  at += lay.v_bytes;
  float* prod = reinterpret_cast<float*>(at);  // P[points][tiles][m_pad]
  at += lay.prod_bytes;
  float* staging = reinterpret_cast<float*>(at);  // interleaved output blocks
  at += lay.staging_bytes;
  char* gemm_ws = at;
  const int64_t lanes = winograd_lanes();

  // 1. Input: V[p][t][c] = (B^T d B)[p] for each tile t of channel c.
  WinogradInputArgs in;
  in.tile = static_cast<int>(tile_);
  in.x = x;
  in.x_blocked = x_blocked;
  in.C = C;
  in.H = H;
  in.W = W;
  in.pad_top = pad_top;
  in.pad_left = pad_left;
  in.planes = planes;
  in.plane_height = lay.plane_height;
  in.plane_width = lay.plane_width;
  in.tiles_x = lay.tiles_x;
  in.tiles = tiles;
  in.v = v;
  in.v_ld = lay.c_pad;
  in.point_stride = tiles * lay.c_pad;
  pool.parallel_for(ceil_div(C, lanes), 1, [&](int64_t b0, int64_t b1) {
    WinogradInputArgs part = in;
    part.block_begin = b0;
    part.block_end = b1;
    winograd_input_transform(part);
  });

  // 2. A GEMM per point: P[p] [tiles x M] = V[p] [tiles x C] . U[p] [C x M],
  //    shared out among the threads whole, one point at a time: in chunks
  //    (parallel_for makes 8 of 5 points for 2 threads) one thread could
  //    wait out a whole chunk of the other's at the end.
  pool.run_tasks(lay.lanes, lay.points, [&](int64_t lane, int64_t p) {
    sgemm_packed_b(false, tiles, M, C, 1.0f, v + p * tiles * lay.c_pad, lay.c_pad, u_[static_cast<size_t>(p)], 0.0f,
                   prod + p * tiles * lay.m_pad, lay.m_pad, nullptr, gemm_ws + lane * lay.gemm_bytes);
  });

  // 3. Output: Y = A^T P A, plus bias and activation.
  WinogradOutputArgs out;
  out.tile = static_cast<int>(tile_);
  out.prod = prod;
  out.prod_ld = lay.m_pad;
  out.point_stride = tiles * lay.m_pad;
  out.M = M;
  out.tiles_x = lay.tiles_x;
  out.tiles = tiles;
  out.OH = OH;
  out.OW = OW;
  out.staging = staging;
  out.y = y;
  out.y_blocked = y_blocked;
  out.bias = ep.bias;
  out.clamp = activation_clamp(ep, &out.lo, &out.hi);
  pool.parallel_for(ceil_div(M, lanes), 1, [&](int64_t b0, int64_t b1) {
    WinogradOutputArgs part = out;
    part.block_begin = b0;
    part.block_end = b1;
    winograd_output_transform(part);
  });
}

}  // namespace sy::cpu
