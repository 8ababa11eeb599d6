#include "providers/cpu/conv/winograd.h"

#include <algorithm>

#include "providers/cpu/conv/winograd_transforms.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr int64_t kTile = 4;   // outputs per tile side
constexpr int64_t kPatch = 6;  // inputs per tile side
constexpr int64_t kPoints = kPatch * kPatch;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr auto align64 = KernelContext::scratch_align;

// G v for n 3-vectors at once, v = (a[m], b[m], c[m]): u_i[m] = (G v)[i]
// at u + i * u_step + m. One loop over m per output, which the compiler
// vectorises; a 512-channel layer transforms 262144 filters, and doing them
// one by one (in double) was 60 % of its creation time. Float keeps U
// within a few ulp, far inside the 1e-4 that Winograd is held to.
void weight_1d_n(const float* a, const float* b, const float* c, float* u, int64_t u_step, int64_t n) {
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
  // Down to 7x7 maps (4 tiles per image), ResNet-50's last stage: its two
  // 512-channel 3x3 Convs ran 3 % of the model faster at 1 thread and 2 %
  // at 2 on Zen 4, for 36/9 times the weights (+54 MB resident) and +30 ms
  // of session creation; both stay well below ONNX Runtime's. Smaller maps
  // would pad most of each tile.
  return C >= 16 && M >= 16 && H >= 7 && W >= 7;
}

bool WinogradConv::init(const float* w, int64_t M, int64_t C) {
  M_ = M;
  C_ = C;
  // U[p][c][m] = (G g G^T)[p] for each (m, c), written one input channel at
  // a time straight into each point's packed matrix (pack_b_row).
  u_.clear();
  u_.reserve(kPoints);
  for (int64_t p = 0; p < kPoints; ++p) {
    u_.push_back(packed_b_of(C, M));
    if (u_.back().empty()) {
      u_.clear();
      return false;
    }
  }
  // Per channel c: its M filters gathered tap-major, g[9][M]; G down their
  // columns, cols[6][3][M]; G along the rows, row[36][M], whose M values per
  // point are row k = c of that point's matrix. (Writing one [36][C][M]
  // array instead put a point's values M * C floats apart: 88 ms for a
  // 512-channel layer, against 25.)
  std::vector<float> g(static_cast<size_t>(9 * M)), cols(static_cast<size_t>(18 * M)), row(static_cast<size_t>(kPoints * M));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < 9; ++t) g[static_cast<size_t>(t * M + m)] = w[(m * C + c) * 9 + t];
    for (int64_t j = 0; j < 3; ++j)
      weight_1d_n(g.data() + j * M, g.data() + (3 + j) * M, g.data() + (6 + j) * M, cols.data() + j * M, 3 * M, M);
    for (int64_t i = 0; i < kPatch; ++i) {
      const float* ci = cols.data() + i * 3 * M;
      weight_1d_n(ci, ci + M, ci + 2 * M, row.data() + i * kPatch * M, M, M);
    }
    for (int64_t p = 0; p < kPoints; ++p) pack_b_row(u_[static_cast<size_t>(p)], c, row.data() + p * M);
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

  Layout(int64_t C, int64_t M, int64_t OH, int64_t OW, size_t per_gemm_bytes) {
    tiles_x = ceil_div(OW, kTile);
    tiles_y = ceil_div(OH, kTile);
    tiles = tiles_x * tiles_y;
    c_pad = ceil_div(C, 16) * 16;
    m_pad = ceil_div(M, 16) * 16;
    plane_height = tiles_y * kTile + 2;
    plane_width = tiles_x * kTile + 2;
    planes_bytes = align64(static_cast<size_t>(c_pad * plane_height * plane_width) * sizeof(float));
    v_bytes = align64(static_cast<size_t>(kPoints * tiles * c_pad) * sizeof(float));
    prod_bytes = align64(static_cast<size_t>(kPoints * tiles * m_pad) * sizeof(float));
    staging_bytes = align64(static_cast<size_t>(m_pad * tiles * kTile * kTile) * sizeof(float));
    gemm_bytes = per_gemm_bytes;
  }
  size_t total() const { return planes_bytes + v_bytes + prod_bytes + staging_bytes + kPoints * gemm_bytes; }
};

size_t WinogradConv::gemm_workspace(int64_t tiles) const {
  return align64(std::max<size_t>(64, sgemm_workspace_size(tiles, M_, C_, nullptr)));
}

size_t WinogradConv::workspace_size(int64_t OH, int64_t OW, const ThreadPool* pool) const {
  (void)pool;
  // One single-threaded GEMM workspace per point: the threads share out the
  // 36 GEMMs, each too thin to split well itself.
  const int64_t tiles = ceil_div(OH, kTile) * ceil_div(OW, kTile);
  return Layout(C_, M_, OH, OW, gemm_workspace(tiles)).total();
}

void WinogradConv::run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top,
                       int64_t pad_left, const GemmEpilogue& ep, void* workspace, ThreadPool& pool, bool x_blocked,
                       bool y_blocked) const {
  const int64_t C = C_, M = M_;
  const Layout lay(C, M, OH, OW, gemm_workspace(ceil_div(OH, kTile) * ceil_div(OW, kTile)));
  const int64_t tiles = lay.tiles;
  char* at = static_cast<char*>(workspace);
  float* planes = reinterpret_cast<float*>(at);  // interleaved input blocks
  at += lay.planes_bytes;
  float* v = reinterpret_cast<float*>(at);  // V[36][tiles][c_pad]
  at += lay.v_bytes;
  float* prod = reinterpret_cast<float*>(at);  // P[36][tiles][m_pad]
  at += lay.prod_bytes;
  float* staging = reinterpret_cast<float*>(at);  // interleaved output blocks
  at += lay.staging_bytes;
  char* gemm_ws = at;
  const int64_t lanes = winograd_lanes();

  // 1. Input: V[p][t][c] = (B^T d B)[p] for each tile t of channel c.
  WinogradInputArgs in;
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

  // 2. 36 GEMMs: P[p] [tiles x M] = V[p] [tiles x C] . U[p] [C x M], shared
  //    out among the threads whole.
  pool.parallel_for(kPoints, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      sgemm_packed_b(false, tiles, M, C, 1.0f, v + p * tiles * lay.c_pad, lay.c_pad, u_[static_cast<size_t>(p)], 0.0f,
                     prod + p * tiles * lay.m_pad, lay.m_pad, nullptr, gemm_ws + p * lay.gemm_bytes);
  });

  // 3. Output: Y = A^T P A, plus bias and activation.
  WinogradOutputArgs out;
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
