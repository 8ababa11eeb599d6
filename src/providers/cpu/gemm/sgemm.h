// Single-precision GEMM for the CPU kernels (MatMul, Gemm, Conv).
//
//   C = activation(alpha * op(A) * op(B) + beta * C + bias)
//
// Row-major. op(A) is M x K, op(B) is K x N. The work is blocked for the
// caches (KC x NC panels of B, MC x KC blocks of A), B is packed into
// micro-panels, and a register-blocked micro-kernel (AVX-512 6x64, AVX2+FMA
// 6x16 or portable 6x8) computes each tile; the variant is picked once at
// run time from the CPU's features. The micro-kernels broadcast A's values
// one by one, so they read a row-major or channel-blocked A where it lies;
// only a transposed A is packed (a copy of 6 contiguous floats per k).
//
// The functions here never allocate: packing buffers live in a workspace
// the caller provides (GemmPlan::workspace_bytes, 64-byte aligned; kernels
// take it from KernelContext::scratch), and how the work is split among
// threads comes from a GemmPlan made ahead (in a kernel's prepare phase). Operands that are constant can be
// packed once (pack_a / pack_b), which also skips the per-call packing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"

namespace sy::cpu {

enum class GemmIsa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* gemm_isa_name(GemmIsa isa);
bool gemm_isa_supported(GemmIsa isa);
// The variant new calls use: the best one this CPU supports unless a test
// or benchmark forced another.
GemmIsa active_gemm_isa();
// For tests and benchmarks: makes later calls use `isa` (process-wide; not
// meant to change while other threads run GEMMs). Returns false, changing
// nothing, when the CPU lacks it.
bool force_gemm_isa(GemmIsa isa);
// Back to the best supported variant.
void reset_gemm_isa();

// Gelu (erf form, or its tanh approximation) is applied to each micro-tile
// as soon as it is final, while it is still in the L1 cache.
enum class GemmActivation : int { kNone = 0, kRelu = 1, kClip = 2, kGeluErf = 3, kGeluTanh = 4 };

// Applied once to each element of C after the product and beta term.
struct GemmEpilogue {
  const float* bias = nullptr;  // nullptr: no bias
  bool bias_per_row = false;    // false: bias[n] is added to column n; true: bias[m] to row m
  // Added to C with the bias, before the activation: a tensor laid out
  // exactly like C (same ldc or channel blocking), or nullptr. It must not
  // be C itself: C is written before the last block of K reads it (a
  // residual already in C is beta = 1 instead).
  const float* residual = nullptr;
  GemmActivation activation = GemmActivation::kNone;
  float clip_min = 0.0f;  // kClip only
  float clip_max = 0.0f;
  // Called with each block of C as soon as it is final (bias and activation
  // applied): rows [row0, row0 + rows), columns [col0, col0 + cols), on the
  // thread that computed it, while the block is still in cache. A caller
  // that stores C elsewhere (transposed, say) does it here instead of in one
  // more pass after the product.
  void (*block_done)(void* context, int64_t row0, int64_t rows, int64_t col0, int64_t cols) = nullptr;
  void* block_done_context = nullptr;
  // 0: C is row-major with row stride ldc. Otherwise C is channel-blocked
  // (a conv's output in NCHW16c, rows being positions and columns channels):
  // element (i, j) at C[(j / 16) * c_block_stride + i * 16 + j % 16], ldc
  // unused; N must then be a multiple of 16.
  int64_t c_block_stride = 0;
  // 0: A and B are read through lda / ldb and the trans flags. Otherwise
  // that operand (unpacked) is a conv input in NCHW16c, channels being K and
  // positions the other dimension, and its ld and trans flag are unused:
  //   A (M x K): element (i, k) at A[(k / 16) * a_block_stride + i * 16 + k % 16]
  //   B (K x N): element (k, j) at B[(k / 16) * b_block_stride + j * 16 + k % 16]
  // The micro-kernels read such an A in place (a run of 16 channels per
  // row); a B's packing transposes each block of 16 channels on the way into
  // the micro-panels. Either way the conv needs no NCHW copy of its input.
  int64_t a_block_stride = 0;
  int64_t b_block_stride = 0;
  // Threads split C by rows only (a conv's output positions), never by
  // columns. Convs in a chain that all split their maps by position keep
  // each part of every map on one thread: what matters where the cores do
  // not share a cache (see TwoEndedCounter in core/thread_pool.h).
  bool split_rows_only = false;
};

// The epilogue's activation as a clamp to [lo, hi] (Relu: [0, +inf]; Clip:
// [clip_min, clip_max]), for the kernels that apply it themselves. False,
// with [-inf, +inf], when there is none or it is not a clamp (Gelu).
bool activation_clamp(const GemmEpilogue& ep, float* lo, float* hi);

// Applies ep's activation (not its bias) to `n` floats: the GEMM's own
// Gelu step, and the kernels whose paths bypass the epilogue.
void apply_activation(float* y, int64_t n, const GemmEpilogue& ep);
// The same over `rows` rows of n floats, ld apart (an output tile); the
// one that holds the activations' loops.
void apply_activation_rows(float* y, int64_t rows, int64_t n, int64_t ld, const GemmEpilogue& ep);

// A constant operand in the layout the micro-kernels read. Movable, not
// copyable; its memory is 64-byte aligned.
class PackedMatrix {
 public:
  PackedMatrix() = default;
  bool empty() const { return data_ == nullptr; }
  int64_t rows() const { return rows_; }  // M for a packed A, K for a packed B
  int64_t cols() const { return cols_; }  // K for a packed A, N for a packed B
  GemmIsa isa() const { return isa_; }
  const float* data() const { return data_.get(); }
  size_t byte_size() const { return floats_ * sizeof(float); }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  friend PackedMatrix pack_a(bool, int64_t, int64_t, const float*, int64_t);
  friend PackedMatrix pack_b(bool, int64_t, int64_t, const float*, int64_t);
  friend PackedMatrix packed_b_of(int64_t, int64_t);
  friend void pack_b_row(PackedMatrix&, int64_t, const float*);
  std::unique_ptr<float[], Free> data_;
  size_t floats_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  GemmIsa isa_ = GemmIsa::kScalar;
};

// Packs op(A) (M x K) or op(B) (K x N) for the active variant. An empty
// result means the allocation failed.
PackedMatrix pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda);
PackedMatrix pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb);

// For a B produced a row at a time (Winograd's transformed weights): an
// unfilled packed K x N for the active variant, then each of its K rows
// (N floats) put in place with pack_b_row. Together the same as pack_b,
// without a whole unpacked copy of B in between.
PackedMatrix packed_b_of(int64_t K, int64_t N);
void pack_b_row(PackedMatrix& B, int64_t k, const float* row);

// How a product's C is cut among tasks: a tiles_m x tiles_n grid of
// tile_m x tile_n tiles, run by `lanes` threads that each take the next
// task until none is left.
struct GemmTiling {
  int64_t tile_m = 0;
  int64_t tile_n = 0;
  int64_t tiles_m = 1;
  int64_t tiles_n = 1;
  int64_t lanes = 1;  // threads working on it, each with its own packing buffers
  int64_t tasks() const { return tiles_m * tiles_n; }
};

// The plan of one product: its tiling and the workspace it needs. Finding
// a tiling is a search over the ways to cut C (O(tasks^2) for up to 4
// tasks per thread: about 2 ms at 64 threads), so kernels plan in their
// prepare phase, once per input shapes (GemmPlans), and hand the plan to
// every call. Made by plan_sgemm; holds a tiling for each way A may
// arrive (packed by the call, or read in place / prepacked), so one plan
// serves any A.
struct GemmPlan {
  int64_t M = 0, N = 0, K = 0;
  int threads = 1;
  bool b_prepacked = false;  // for sgemm_packed_b
  bool rows_only = false;    // GemmEpilogue::split_rows_only
  GemmTiling a_packed;       // the call packs A (a transposed A)
  GemmTiling a_in_place;     // A is read where it lies, or prepacked
  size_t workspace_bytes = 0;  // enough for either tiling; at least 64
};

// Plans a product of op(A) (M x K) and op(B) (K x N) run on `pool`
// (nullptr: the calling thread only); b_prepacked for sgemm_packed_b,
// rows_only as the call's GemmEpilogue::split_rows_only.
GemmPlan plan_sgemm(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked = false,
                    bool rows_only = false);

// A plan for one single-threaded call as one task (all of C, no search),
// made in a few nanoseconds: for products whose sizes depend on the data
// (attention's key ranges), which a prepare phase cannot know and whose
// search (about 1 us for 128 x 128 x 64) would cost a tenth of the product.
// On one thread a tiling only trims the micro-tiles at C's right edge.
// B is not prepacked.
GemmPlan plan_sgemm_one_task(int64_t M, int64_t N, int64_t K);
// Workspace enough for any single-threaded call of at most M x N x K.
size_t sgemm_workspace_bound(int64_t M, int64_t N, int64_t K);

// A kernel's plans for the products of one set of input shapes, made in
// its prepare phase and read by run(). A handful per kernel, so a list.
class GemmPlans {
 public:
  // Plans the product unless an equal one is planned already.
  void add(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked = false, bool rows_only = false);
  // The plan added for these; when prepare() added none, one made on the
  // spot (correct, but a search on the hot path: counted by
  // gemm_plans_missed(), which tests keep at zero).
  GemmPlan get(int64_t M, int64_t N, int64_t K, const ThreadPool* pool, bool b_prepacked = false,
               bool rows_only = false) const;
  size_t size() const { return plans_.size(); }

 private:
  const GemmPlan* find(int64_t M, int64_t N, int64_t K, int threads, bool b_prepacked, bool rows_only) const;
  std::vector<GemmPlan> plans_;
};

// How many times GemmPlans::get had to plan on the spot, process-wide.
uint64_t gemm_plans_missed();

// The calls. `plan` must be the plan of this product: its M, N, K, the
// pool's thread count, whether B is prepacked and the epilogue's
// split_rows_only; a plan for another product is a bug in the caller and
// stops the process with a message. `workspace` holds plan.workspace_bytes.
void sgemm(const GemmPlan& plan, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
           const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool,
           void* workspace, const GemmEpilogue& epilogue = {});

// op(B) prepacked (its K x N must match).
void sgemm_packed_b(const GemmPlan& plan, bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const PackedMatrix& B, float beta, float* C, int64_t ldc, ThreadPool* pool,
                    void* workspace, const GemmEpilogue& epilogue = {});

// op(A) prepacked (its M x K must match).
void sgemm_packed_a(const GemmPlan& plan, const PackedMatrix& A, bool trans_b, int64_t M, int64_t N, int64_t K,
                    float alpha, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool,
                    void* workspace, const GemmEpilogue& epilogue = {});

}  // namespace sy::cpu
