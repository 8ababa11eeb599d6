#include "providers/cpu/conv/winograd.h"

#include <algorithm>
#include <cstring>

namespace sy::cpu {
namespace {

constexpr int64_t kTile = 4;   // outputs per tile side
constexpr int64_t kPatch = 6;  // inputs per tile side
constexpr int64_t kPoints = kPatch * kPatch;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// B^T d for one 6-vector (input transform, one direction).
inline void input_1d(const float d[6], float r[6]) {
  r[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
  r[1] = -4.0f * d[1] - 4.0f * d[2] + d[3] + d[4];
  r[2] = 4.0f * d[1] - 4.0f * d[2] - d[3] + d[4];
  r[3] = -2.0f * d[1] - d[2] + 2.0f * d[3] + d[4];
  r[4] = 2.0f * d[1] - d[2] - 2.0f * d[3] + d[4];
  r[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
}

// G g for one 3-vector (weight transform), in double: done once.
inline void weight_1d(const double g[3], double u[6]) {
  u[0] = g[0] / 4.0;
  u[1] = -(g[0] + g[1] + g[2]) / 6.0;
  u[2] = -(g[0] - g[1] + g[2]) / 6.0;
  u[3] = g[0] / 24.0 + g[1] / 12.0 + g[2] / 6.0;
  u[4] = g[0] / 24.0 - g[1] / 12.0 + g[2] / 6.0;
  u[5] = g[2];
}

// A^T m for one 6-vector (output transform).
inline void output_1d(const float m[6], float o[4]) {
  o[0] = m[0] + m[1] + m[2] + m[3] + m[4];
  o[1] = m[1] - m[2] + 2.0f * (m[3] - m[4]);
  o[2] = m[1] + m[2] + 4.0f * (m[3] + m[4]);
  o[3] = m[1] - m[2] + 8.0f * (m[3] - m[4]) + m[5];
}

}  // namespace

bool WinogradConv::worthwhile(int64_t C, int64_t M, int64_t H, int64_t W) {
  // 14x14 maps give 16 tiles per image; below that the GEMMs are too thin.
  return C >= 16 && M >= 16 && H >= 12 && W >= 12;
}

bool WinogradConv::init(const float* w, int64_t M, int64_t C) {
  M_ = M;
  C_ = C;
  // U[p][m][c] = (G g G^T)[p] for each (m, c).
  std::vector<float> u(static_cast<size_t>(kPoints * M * C));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      double cols[3][6];  // G applied down each column of g
      for (int j = 0; j < 3; ++j) {
        const double col[3] = {g[0 * 3 + j], g[1 * 3 + j], g[2 * 3 + j]};
        weight_1d(col, cols[j]);
      }
      for (int i = 0; i < 6; ++i) {
        const double row[3] = {cols[0][i], cols[1][i], cols[2][i]};
        double out[6];
        weight_1d(row, out);
        for (int j = 0; j < 6; ++j) u[static_cast<size_t>(((i * 6 + j) * M + m) * C + c)] = static_cast<float>(out[j]);
      }
    }
  }
  u_.clear();
  u_.reserve(kPoints);
  for (int64_t p = 0; p < kPoints; ++p) {
    u_.push_back(pack_a(false, M, C, u.data() + p * M * C, C));
    if (u_.back().empty()) {
      u_.clear();
      return false;
    }
  }
  return true;
}

size_t WinogradConv::gemm_workspace(int64_t tiles) const {
  return align64(std::max<size_t>(64, sgemm_workspace_size(M_, tiles, C_, nullptr)));
}

size_t WinogradConv::workspace_size(int64_t OH, int64_t OW, const ThreadPool* pool) const {
  const int64_t tiles = ceil_div(OH, kTile) * ceil_div(OW, kTile);
  (void)pool;
  // One single-threaded GEMM workspace per point: the threads share out the
  // 36 GEMMs, each too thin (a few dozen tiles) to split well itself.
  return align64(static_cast<size_t>(kPoints * C_ * tiles) * sizeof(float)) +
         align64(static_cast<size_t>(kPoints * M_ * tiles) * sizeof(float)) +
         kPoints * gemm_workspace(tiles);
}

void WinogradConv::run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top,
                       int64_t pad_left, const GemmEpilogue& ep, void* workspace, ThreadPool& pool) const {
  const int64_t th = ceil_div(OH, kTile), tw = ceil_div(OW, kTile), tiles = th * tw;
  const int64_t C = C_, M = M_;
  float* v = static_cast<float*>(workspace);  // [36][C][tiles]
  float* prod = reinterpret_cast<float*>(static_cast<char*>(workspace) +
                                         align64(static_cast<size_t>(kPoints * C * tiles) * sizeof(float)));
  void* gemm_ws = reinterpret_cast<char*>(prod) + align64(static_cast<size_t>(kPoints * M * tiles) * sizeof(float));

  // 1. Input tiles, transformed: V[p][c][t] = (B^T d B)[p].
  pool.parallel_for(C, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const float* xc = x + c * H * W;
      for (int64_t ty = 0; ty < th; ++ty) {
        for (int64_t tx = 0; tx < tw; ++tx) {
          const int64_t y0 = ty * kTile - pad_top, x0 = tx * kTile - pad_left;
          float d[6][6];
          for (int i = 0; i < 6; ++i) {
            const int64_t iy = y0 + i;
            for (int j = 0; j < 6; ++j) {
              const int64_t ix = x0 + j;
              d[i][j] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? xc[iy * W + ix] : 0.0f;
            }
          }
          float t[6][6];  // B^T d, column by column
          for (int j = 0; j < 6; ++j) {
            const float col[6] = {d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]};
            float r[6];
            input_1d(col, r);
            for (int i = 0; i < 6; ++i) t[i][j] = r[i];
          }
          const int64_t tile = ty * tw + tx;
          for (int i = 0; i < 6; ++i) {
            float r[6];
            input_1d(t[i], r);  // (B^T d) B, row by row
            for (int j = 0; j < 6; ++j) v[((i * 6 + j) * C + c) * tiles + tile] = r[j];
          }
        }
      }
    }
  });

  // 2. 36 GEMMs: P[p] [M x tiles] = U[p] [M x C] . V[p] [C x tiles], shared
  //    out among the threads whole.
  const size_t per_gemm = gemm_workspace(tiles);
  pool.parallel_for(kPoints, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      sgemm_packed_a(u_[static_cast<size_t>(p)], false, M, tiles, C, 1.0f, v + p * C * tiles, tiles, 0.0f,
                     prod + p * M * tiles, tiles, nullptr, static_cast<char*>(gemm_ws) + p * per_gemm);
  });

  // 3. Back to 4x4 outputs: Y = A^T P A, plus bias and activation.
  pool.parallel_for(M, 1, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const float bias = ep.bias != nullptr ? ep.bias[m] : 0.0f;
      float* ym = y + m * OH * OW;
      for (int64_t ty = 0; ty < th; ++ty) {
        for (int64_t tx = 0; tx < tw; ++tx) {
          const int64_t tile = ty * tw + tx;
          float t[4][6];  // A^T P, column by column
          for (int j = 0; j < 6; ++j) {
            float col[6];
            for (int i = 0; i < 6; ++i) col[i] = prod[((i * 6 + j) * M + m) * tiles + tile];
            float o[4];
            output_1d(col, o);
            for (int i = 0; i < 4; ++i) t[i][j] = o[i];
          }
          for (int i = 0; i < 4; ++i) {
            const int64_t oy = ty * kTile + i;
            if (oy >= OH) break;
            float o[4];
            output_1d(t[i], o);
            for (int j = 0; j < 4; ++j) {
              const int64_t ox = tx * kTile + j;
              if (ox >= OW) break;
              float val = o[j] + bias;
              if (ep.activation == GemmActivation::kRelu) val = std::max(val, 0.0f);
              if (ep.activation == GemmActivation::kClip) val = std::min(std::max(val, ep.clip_min), ep.clip_max);
              ym[oy * OW + ox] = val;
            }
          }
        }
      }
    }
  });
}

}  // namespace sy::cpu
