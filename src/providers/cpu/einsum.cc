// Einsum: the equation is parsed once, when the kernel is created; each run
// contracts the operands left to right, two at a time, as batched matrix
// products.
//
// For a pair (A, B), after summing away the labels only one of them has
// and nothing later needs (and taking diagonals of repeated labels), every
// label is one of
//   batch: in A and B, needed later     K: in A and B, not needed later
//   M: only in A                         N: only in B
// so the pair is C[batch, M, N] = sum_K A[batch, M, K] * B[batch, K, N]:
// a GEMM per batch, on the blocked sgemm for float. An operand whose axes
// are already grouped that way (possibly transposed) is used in place;
// otherwise one strided copy groups them. A single operand (transpose,
// trace, diagonal, sum) is one strided reduction into the output.
//
// run() allocates nothing: the whole plan is laid out twice, first only to
// measure the scratch it needs, then for real in that scratch.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gemm/gemm_state.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Label ids: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (ASCII order, which the
// implicit output uses); the dims an ellipsis stands for are 52-63,
// right-aligned so that broadcasting ellipses share their trailing ids.
constexpr int kLetterLabels = 52;
constexpr int kMaxEllipsisDims = 12;
constexpr int kMaxLabels = kLetterLabels + kMaxEllipsisDims;
constexpr int kEllipsisMark = -1;
constexpr int kMaxAxes = 64;

int label_id(char c) { return c >= 'a' ? 26 + (c - 'a') : c - 'A'; }
char label_char(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26)); }

struct Term {
  std::vector<int> labels;  // label ids, with kEllipsisMark where "..." is
  bool has_ellipsis = false;
  int letters = 0;
};

// One operand of a contraction: labelled strided view.
struct Operand {
  int rank = 0;
  int labels[kMaxAxes] = {};
  int64_t dims[kMaxAxes] = {};
  int64_t strides[kMaxAxes] = {};
  const void* data = nullptr;

  uint64_t label_set() const {
    uint64_t s = 0;
    for (int i = 0; i < rank; ++i) s |= uint64_t{1} << labels[i];
    return s;
  }
  int64_t dim_of(int label) const {
    for (int i = 0; i < rank; ++i)
      if (labels[i] == label) return dims[i];
    return 1;
  }
  // The summed stride of every axis with this label (a diagonal when it
  // repeats); 0 when absent or of length 1 (broadcast).
  int64_t stride_of(int label) const {
    int64_t s = 0;
    for (int i = 0; i < rank; ++i)
      if (labels[i] == label && dims[i] != 1) s += strides[i];
    return s;
  }
  bool contiguous() const {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (dims[i] != 1 && strides[i] != s) return false;
      s *= dims[i];
    }
    return true;
  }
};

void set_contiguous(Operand& op) {
  int64_t s = 1;
  for (int i = op.rank - 1; i >= 0; --i) {
    op.strides[i] = s;
    s *= op.dims[i];
  }
}

int64_t elements_of(const Operand& op) {
  int64_t n = 1;
  for (int i = 0; i < op.rank; ++i) n *= op.dims[i];
  return n;
}

constexpr auto align64 = KernelContext::scratch_align;

// The label order an operand is copied into when it cannot be used in
// place: groups of labels, each dim taken from the operand, or for
// contracted (K) labels from the broadcast K dims.
struct LabelLayout {
  int labels[kMaxAxes];
  int64_t dims[kMaxAxes];
  int n = 0;
  void add(const Operand& x, const int* group, int count) {
    for (int i = 0; i < count; ++i, ++n) {
      labels[n] = group[i];
      dims[n] = x.dim_of(group[i]);
    }
  }
  void add_k(const int* group, const int64_t* k_dims, int count) {
    for (int i = 0; i < count; ++i, ++n) {
      labels[n] = group[i];
      dims[n] = k_dims[i];
    }
  }
};

// Scratch carved in order; in measuring mode it only counts.
struct Arena {
  unsigned char* base = nullptr;
  size_t used = 0;
  bool measuring = true;
  // Set while prepare() measures: the GEMMs' plans go here.
  GemmPlans* plans = nullptr;
  void* take(size_t bytes) {
    void* p = measuring ? nullptr : base + used;
    used += align64(std::max<size_t>(bytes, 1));
    return p;
  }
};

// dst (contiguous over `out_dims` of the labels `out_labels`) = src summed
// over its labels not in out_labels. Output labels src lacks, or has with
// length 1, broadcast.
template <typename C>
void reduce_into(const Operand& src, const int* out_labels, const int64_t* out_dims, int n_out, C* dst,
                 ThreadPool& pool) {
  uint64_t out_set = 0;
  for (int i = 0; i < n_out; ++i) out_set |= uint64_t{1} << out_labels[i];
  int64_t sum_dims[kMaxAxes], sum_strides[kMaxAxes];
  int n_sum = 0;
  uint64_t done = 0;
  for (int i = 0; i < src.rank; ++i) {
    const int l = src.labels[i];
    const uint64_t bit = uint64_t{1} << l;
    if ((out_set & bit) || (done & bit)) continue;
    done |= bit;
    sum_dims[n_sum] = src.dims[i];
    sum_strides[n_sum] = src.stride_of(l);
    ++n_sum;
  }
  int64_t o_strides[kMaxAxes];
  int64_t total = 1;
  for (int i = 0; i < n_out; ++i) {
    o_strides[i] = src.stride_of(out_labels[i]);
    total *= out_dims[i];
  }
  const C* s = static_cast<const C*>(src.data);
  if (n_sum == 0) {
    CopyPlan plan;
    for (int i = 0; i < n_out; ++i) plan.add(out_dims[i], o_strides[i]);
    if (!plan.too_deep) {
      strided_copy<C>(dst, s, plan, pool);
      return;
    }
  }
  int64_t inner_sum = 1;
  for (int i = 0; i < n_sum; ++i) inner_sum *= sum_dims[i];
  pool.parallel_for(total, std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, inner_sum)),
                    [&](int64_t begin, int64_t end) {
                      int64_t index[kMaxAxes];
                      int64_t offset = 0;
                      int64_t rem = begin;
                      for (int i = n_out - 1; i >= 0; --i) {
                        index[i] = rem % out_dims[i];
                        rem /= out_dims[i];
                        offset += index[i] * o_strides[i];
                      }
                      for (int64_t e = begin; e < end; ++e) {
                        C acc = C(0);
                        if (n_sum == 0) {
                          acc = s[offset];
                        } else {
                          // Odometer over the summed labels, innermost as a plain loop.
                          int64_t sidx[kMaxAxes] = {};
                          int64_t soff = 0;
                          const int64_t last_dim = sum_dims[n_sum - 1];
                          const int64_t last_stride = sum_strides[n_sum - 1];
                          while (true) {
                            const C* p = s + offset + soff;
                            for (int64_t k = 0; k < last_dim; ++k) acc += p[k * last_stride];
                            int i = n_sum - 2;
                            for (; i >= 0; --i) {
                              soff += sum_strides[i];
                              if (++sidx[i] < sum_dims[i]) break;
                              soff -= sum_strides[i] * sum_dims[i];
                              sidx[i] = 0;
                            }
                            if (i < 0) break;
                          }
                        }
                        dst[e] = acc;
                        for (int i = n_out - 1; i >= 0; --i) {
                          offset += o_strides[i];
                          if (++index[i] < out_dims[i]) break;
                          offset -= o_strides[i] * out_dims[i];
                          index[i] = 0;
                        }
                      }
                    });
}

// A batch of GEMMs: for each batch index b (over batch_dims), C_b (M x N,
// contiguous, at c + b * M * N) = op(A_b) * op(B_b).
struct GemmBatch {
  int n_batch = 0;
  int64_t batch_dims[kMaxAxes] = {};
  int64_t a_strides[kMaxAxes] = {};
  int64_t b_strides[kMaxAxes] = {};
  int64_t count = 1;
  int64_t M = 1, N = 1, K = 1;
  bool trans_a = false, trans_b = false;
  int64_t lda = 1, ldb = 1;

  void offsets(int64_t index, int64_t& a_off, int64_t& b_off) const {
    a_off = 0;
    b_off = 0;
    for (int k = n_batch - 1; k >= 0; --k) {
      const int64_t i = index % batch_dims[k];
      index /= batch_dims[k];
      a_off += i * a_strides[k];
      b_off += i * b_strides[k];
    }
  }
};

// GEMMs this small go through the plain loop even for float: the blocked
// sgemm's packing costs more than it saves.
constexpr int64_t kSmallGemm = 4096;

template <typename C>
bool use_sgemm(const GemmBatch& g) {
  return std::is_same_v<C, float> && g.M * g.N * g.K >= kSmallGemm;
}

// How run_gemms threads a batch of sgemm products: `tasks` threads each
// taking a share of them, one thread per product; or, with tasks 1, one
// product after the other, each on the pool (returned as gemm_pool).
int64_t gemm_tasks(const GemmBatch& g, ThreadPool& pool, ThreadPool** gemm_pool) {
  const int64_t tasks = std::min<int64_t>(pool.num_threads(), g.count);
  *gemm_pool = tasks > 1 ? nullptr : &pool;
  return std::max<int64_t>(tasks, 1);
}

// Workspace bytes run_gemms needs with `tasks` and `plan`.
template <typename C>
size_t gemm_workspace(const GemmBatch& g, const GemmPlan& plan, int64_t tasks) {
  if (!use_sgemm<C>(g)) return 0;
  if (tasks > 1) return align64(plan.workspace_bytes) * static_cast<size_t>(tasks);
  return plan.workspace_bytes;
}

template <typename C>
void run_gemms(const GemmBatch& g, const C* a, const C* b, C* c, ThreadPool& pool, void* ws, int64_t tasks,
               const GemmPlan& plan) {
  const int64_t M = g.M, N = g.N, K = g.K;
  if constexpr (std::is_same_v<C, float>) {
    if (use_sgemm<C>(g)) {
      auto one = [&](int64_t i, ThreadPool* p, void* w) {
        int64_t a_off, b_off;
        g.offsets(i, a_off, b_off);
        sgemm(plan, g.trans_a, g.trans_b, M, N, K, 1.0f, a + a_off, g.lda, b + b_off, g.ldb, 0.0f, c + i * M * N, N, p,
              w);
      };
      if (tasks > 1) {
        const size_t per_task = align64(plan.workspace_bytes);
        pool.parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t)
            for (int64_t i = g.count * t / tasks; i < g.count * (t + 1) / tasks; ++i)
              one(i, nullptr, static_cast<char*>(ws) + per_task * static_cast<size_t>(t));
        });
      } else {
        for (int64_t i = 0; i < g.count; ++i) one(i, &pool, ws);
      }
      return;
    }
  }
  const int64_t rows = g.count * M;
  pool.parallel_for(rows, std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, N * K)), [&](int64_t begin,
                                                                                                int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row / M;
      const int64_t m = row - i * M;
      int64_t a_off, b_off;
      g.offsets(i, a_off, b_off);
      C* out = c + row * N;
      std::fill(out, out + N, C(0));
      const C* ab = a + a_off;
      const C* bb = b + b_off;
      if (!g.trans_b) {
        for (int64_t k = 0; k < K; ++k) {
          const C av = g.trans_a ? ab[k * g.lda + m] : ab[m * g.lda + k];
          const C* br = bb + k * g.ldb;
          for (int64_t n = 0; n < N; ++n) out[n] += av * br[n];
        }
      } else {
        for (int64_t n = 0; n < N; ++n) {
          C acc = C(0);
          const C* br = bb + n * g.ldb;
          for (int64_t k = 0; k < K; ++k) acc += (g.trans_a ? ab[k * g.lda + m] : ab[m * g.lda + k]) * br[k];
          out[n] = acc;
        }
      }
    }
  });
}

// Is `op` contiguous with exactly the labels `first`, then `second`, then
// `third`?
bool grouped_as(const Operand& op, const int* first, int n_first, const int* second, int n_second,
                const int* third, int n_third) {
  if (op.rank != n_first + n_second + n_third || !op.contiguous()) return false;
  int at = 0;
  for (const auto& [seq, n] : {std::pair{first, n_first}, std::pair{second, n_second}, std::pair{third, n_third}})
    for (int i = 0; i < n; ++i)
      if (op.labels[at++] != seq[i]) return false;
  return true;
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(const KernelCreateContext& ctx, Status& status) {
    const Attribute* eq = ctx.node().attr("equation");
    if (eq == nullptr) {
      status = ctx.error("attribute 'equation' is required");
      return;
    }
    equation_ = eq->s;
    const size_t arrow = equation_.find("->");
    const std::string lhs = equation_.substr(0, arrow);
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      Term t;
      status = parse_term(ctx, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start), t);
      if (!status.ok()) return;
      terms_.push_back(std::move(t));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (terms_.size() != ctx.num_inputs()) {
      status = ctx.error("equation '" + equation_ + "' has " + std::to_string(terms_.size()) +
                         " input terms but the node has " + std::to_string(ctx.num_inputs()) + " inputs");
      return;
    }
    bool any_ellipsis = false;
    int counts[kLetterLabels] = {};
    for (const Term& t : terms_) {
      any_ellipsis = any_ellipsis || t.has_ellipsis;
      for (int l : t.labels)
        if (l != kEllipsisMark) ++counts[l];
    }
    if (arrow != std::string::npos) {
      status = parse_term(ctx, equation_.substr(arrow + 2), output_);
      if (!status.ok()) return;
      uint64_t seen = 0;
      for (int l : output_.labels) {
        if (l == kEllipsisMark) continue;
        if (seen & (uint64_t{1} << l)) {
          status = ctx.error("equation '" + equation_ + "' repeats '" + std::string(1, label_char(l)) +
                             "' in its output");
          return;
        }
        seen |= uint64_t{1} << l;
        if (counts[l] == 0) {
          status = ctx.error("equation '" + equation_ + "' has output label '" + std::string(1, label_char(l)) +
                             "' that no input term has");
          return;
        }
      }
    } else {
      // Implicit: the ellipsis dims first, then the labels seen once, in
      // ASCII order.
      if (any_ellipsis) {
        output_.labels.push_back(kEllipsisMark);
        output_.has_ellipsis = true;
      }
      for (int l = 0; l < kLetterLabels; ++l)
        if (counts[l] == 1) {
          output_.labels.push_back(l);
          ++output_.letters;
        }
    }
  }

  bool prepares() const override { return true; }

  // Plans the float GEMMs (half types run in float too): the contraction
  // measured as run() measures it, each product's plan kept. Inputs run()
  // refuses get no plans.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    const DataType dtype = ctx.input(0) != nullptr ? ctx.input(0)->dtype() : DataType::kUndefined;
    if (dtype != DataType::kFloat && dtype != DataType::kFloat16 && dtype != DataType::kBfloat16)
      return std::unique_ptr<KernelState>(std::move(state));
    Labels labels;
    if (!analyse(ctx, labels).ok()) return std::unique_ptr<KernelState>(std::move(state));
    const Shared shared = labels.shared(ctx);
    Arena measure;
    measure.plans = &state->plans;
    (void)execute<float>(shared, measure, nullptr, nullptr);
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    Labels labels;
    SY_RETURN_IF_ERROR(analyse(ctx, labels));
    const DataType dtype = ctx.input(0)->dtype();
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, labels.out_shape));
    if (y->num_elements() == 0) return ok_status();
    const Shared shared = labels.shared(ctx);

    Status status;
    const bool supported = visit_type(NumericTypes{}, dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_typed<T>(ctx, shared, *y);
    });
    if (!supported) return kernel_error(ctx, "unsupported type " + ctx.input(0)->describe());
    return status;
  }

 private:
  struct Shared {
    const KernelContext& ctx;
    const int64_t* label_dims;
    const int* out_labels;
    const int64_t* out_dims;
    int n_out;
    uint64_t out_set;
    int64_t y_elements;
  };

  // Every label's length and the output's labels and shape.
  struct Labels {
    int64_t label_dims[kMaxLabels];
    int out_labels[kMaxAxes];
    int64_t out_dims[kMaxAxes];
    int n_out = 0;
    uint64_t out_set = 0;
    Shape out_shape;
    Shared shared(const KernelContext& ctx) const {
      return Shared{ctx, label_dims, out_labels, out_dims, n_out, out_set, out_shape.num_elements()};
    }
  };

  Status analyse(const KernelContext& ctx, Labels& labels) const {
    const size_t n_inputs = ctx.num_inputs();
    const DataType dtype = ctx.input(0)->dtype();
    for (size_t i = 0; i < n_inputs; ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
      if (t->dtype() != dtype)
        return kernel_error(ctx, "input " + std::to_string(i) + " is " + t->describe() + " but input 0 is " +
                                     ctx.input(0)->describe() + "; all inputs must share one type");
    }
    // Label lengths, checked across operands (equal, or 1 to broadcast).
    int64_t* label_dims = labels.label_dims;
    std::fill(label_dims, label_dims + kMaxLabels, int64_t{-1});
    int ellipsis_dims = 0;
    for (size_t i = 0; i < n_inputs; ++i) {
      Operand op;
      SY_RETURN_IF_ERROR(make_operand(ctx, i, op));
      for (int a = 0; a < op.rank; ++a) {
        const int l = op.labels[a];
        const int64_t d = op.dims[a];
        if (l >= kLetterLabels) ellipsis_dims = std::max(ellipsis_dims, kMaxLabels - l);
        for (int b = 0; b < a; ++b)
          if (op.labels[b] == l && op.dims[b] != d)
            return kernel_error(ctx, "label '" + std::string(1, label_char(l)) + "' repeats in input " +
                                         std::to_string(i) + " " + ctx.input(i)->describe() +
                                         " with different lengths (" + std::to_string(op.dims[b]) + " vs " +
                                         std::to_string(d) + ")");
        int64_t& cur = label_dims[l];
        if (cur < 0 || cur == 1) {
          cur = d;
        } else if (d != 1 && d != cur) {
          return kernel_error(ctx, "dimension " + std::to_string(d) + " of input " + std::to_string(i) + " " +
                                       ctx.input(i)->describe() + " for " + label_name(l) + " does not match " +
                                       std::to_string(cur) + " elsewhere in equation '" + equation_ + "'");
        }
      }
    }
    // The output's labels and shape.
    int* out_labels = labels.out_labels;
    int64_t* out_dims = labels.out_dims;
    int& n_out = labels.n_out;
    Shape& out_shape = labels.out_shape;
    for (int l : output_.labels) {
      if (l == kEllipsisMark) {
        for (int e = kMaxLabels - ellipsis_dims; e < kMaxLabels; ++e) out_labels[n_out++] = e;
      } else {
        out_labels[n_out++] = l;
      }
    }
    for (int i = 0; i < n_out; ++i) {
      out_dims[i] = label_dims[out_labels[i]];
      labels.out_set |= uint64_t{1} << out_labels[i];
      out_shape.push_back(out_dims[i]);
    }
    return ok_status();
  }

  static Status parse_term(const KernelCreateContext& ctx, const std::string& text, Term& term) {
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == ' ') continue;
      if (c == '.') {
        if (term.has_ellipsis || text.compare(i, 3, "...") != 0)
          return ctx.error("equation term '" + text + "' has a misplaced '.' (only one '...' per term is allowed)");
        term.has_ellipsis = true;
        term.labels.push_back(kEllipsisMark);
        i += 2;
        continue;
      }
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        return ctx.error("equation term '" + text + "' has an invalid character '" + std::string(1, c) + "'");
      term.labels.push_back(label_id(c));
      ++term.letters;
    }
    return ok_status();
  }

  static std::string label_name(int l) {
    return l < kLetterLabels ? "label '" + std::string(1, label_char(l)) + "'" : std::string("an ellipsis dimension");
  }

  // Input i as a labelled view of its tensor.
  Status make_operand(const KernelContext& ctx, size_t i, Operand& op) const {
    const Tensor& t = *ctx.input(i);
    const Term& term = terms_[i];
    const Shape& s = t.shape();
    const auto rank = static_cast<int>(s.rank());
    const int e = rank - term.letters;
    if (term.has_ellipsis ? e < 0 : e != 0)
      return kernel_error(ctx, "input " + std::to_string(i) + " " + t.describe() + " does not match its term in '" +
                                   equation_ + "' (expected rank " + (term.has_ellipsis ? ">= " : "") +
                                   std::to_string(term.letters) + ")");
    if (e > kMaxEllipsisDims || rank > kMaxAxes)
      return kernel_error(ctx, "input " + std::to_string(i) + " " + t.describe() + " has more dimensions than Einsum supports");
    op.rank = 0;
    for (int l : term.labels) {
      if (l == kEllipsisMark) {
        for (int k = 0; k < e; ++k) op.labels[op.rank++] = kMaxLabels - e + k;
      } else {
        op.labels[op.rank++] = l;
      }
    }
    for (int a = 0; a < rank; ++a) op.dims[a] = s[static_cast<size_t>(a)];
    set_contiguous(op);
    op.data = t.raw_data();
    return ok_status();
  }

  // The labels of inputs after i, as a set.
  uint64_t later_labels(const KernelContext& ctx, size_t i) const {
    uint64_t set = 0;
    for (size_t j = i + 1; j < terms_.size(); ++j) {
      const int e = static_cast<int>(ctx.input(j)->shape().rank()) - terms_[j].letters;
      for (int l : terms_[j].labels) {
        if (l != kEllipsisMark) {
          set |= uint64_t{1} << l;
        } else {
          for (int k = 0; k < e; ++k) set |= uint64_t{1} << (kMaxLabels - e + k);
        }
      }
    }
    return set;
  }

  template <typename T>
  Status run_typed(KernelContext& ctx, const Shared& sh, Tensor& y) const {
    if constexpr (kIsHalf<T>) {
      // 16-bit floats: the inputs widened to float in the tail of the
      // scratch, the work in float, the result narrowed.
      constexpr size_t kMaxHalfInputs = 64;
      if (terms_.size() > kMaxHalfInputs)
        return kernel_error(ctx, "Einsum on 16-bit floats supports at most " + std::to_string(kMaxHalfInputs) +
                                     " inputs; got " + std::to_string(terms_.size()));
      Arena measure;
      SY_RETURN_IF_ERROR(execute<float>(sh, measure, nullptr, nullptr));
      size_t bytes = measure.used + align64(static_cast<size_t>(sh.y_elements) * sizeof(float));
      for (size_t i = 0; i < terms_.size(); ++i)
        bytes += align64(static_cast<size_t>(ctx.input(i)->num_elements()) * sizeof(float));
      SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(bytes));
      auto* base = static_cast<unsigned char*>(scratch);
      auto* out = reinterpret_cast<float*>(base + measure.used);
      unsigned char* cursor = base + measure.used + align64(static_cast<size_t>(sh.y_elements) * sizeof(float));
      const void* inputs[kMaxHalfInputs];
      for (size_t i = 0; i < terms_.size(); ++i) {
        const Tensor& t = *ctx.input(i);
        auto* wide = reinterpret_cast<float*>(cursor);
        const T* in = t.data<T>();
        for (int64_t k = 0; k < t.num_elements(); ++k) wide[k] = load(in[k]);
        inputs[i] = wide;
        cursor += align64(static_cast<size_t>(t.num_elements()) * sizeof(float));
      }
      Arena arena{base, 0, false};
      SY_RETURN_IF_ERROR(execute<float>(sh, arena, inputs, out));
      T* dst = y.data<T>();
      for (int64_t k = 0; k < sh.y_elements; ++k) dst[k] = store<T>(out[k]);
      return ok_status();
    } else {
      Arena measure;
      SY_RETURN_IF_ERROR(execute<T>(sh, measure, nullptr, nullptr));
      SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(64, measure.used)));
      Arena arena{static_cast<unsigned char*>(scratch), 0, false};
      return execute<T>(sh, arena, nullptr, y.data<T>());
    }
  }

  // Runs (or, while the arena measures, sizes) the whole contraction.
  // `inputs` replaces the input tensors' data when given; `out` the output's.
  template <typename C>
  Status execute(const Shared& sh, Arena& arena, const void* const* inputs, C* y) const {
    const KernelContext& ctx = sh.ctx;
    ThreadPool& pool = ctx.thread_pool();
    // Any label of length 0 empties a sum: the output is zeros.
    for (int l = 0; l < kMaxLabels; ++l)
      if (sh.label_dims[l] == 0) {
        if (!arena.measuring) std::fill(y, y + sh.y_elements, C(0));
        return ok_status();
      }
    Operand cur;
    SY_RETURN_IF_ERROR(make_operand(ctx, 0, cur));
    if (inputs != nullptr) cur.data = inputs[0];
    if (terms_.size() == 1) {
      if (!arena.measuring) reduce_into<C>(cur, sh.out_labels, sh.out_dims, sh.n_out, y, pool);
      return ok_status();
    }
    for (size_t i = 1; i < terms_.size(); ++i) {
      Operand next;
      SY_RETURN_IF_ERROR(make_operand(ctx, i, next));
      if (inputs != nullptr) next.data = inputs[i];
      const bool last = i + 1 == terms_.size();
      const uint64_t keep = sh.out_set | later_labels(ctx, i);
      contract<C>(sh, arena, cur, next, keep, last, y);
    }
    // The last product's labels in the output's order.
    bool in_place = cur.rank == sh.n_out;
    for (int i = 0; in_place && i < sh.n_out; ++i) in_place = cur.labels[i] == sh.out_labels[i];
    if (!in_place && !arena.measuring) reduce_into<C>(cur, sh.out_labels, sh.out_dims, sh.n_out, y, pool);
    return ok_status();
  }

  // Sums away (and takes diagonals of) what only `op` has and `keep`
  // lacks, into a contiguous copy; `op` unchanged when there is nothing.
  template <typename C>
  static void reduce_operand(Operand& op, uint64_t other, uint64_t keep, Arena& arena, ThreadPool& pool) {
    bool needed = false;
    uint64_t seen = 0;
    int labels[kMaxAxes];
    int64_t dims[kMaxAxes];
    int n = 0;
    for (int i = 0; i < op.rank; ++i) {
      const uint64_t bit = uint64_t{1} << op.labels[i];
      if (seen & bit) {
        needed = true;  // a diagonal
        continue;
      }
      seen |= bit;
      if (!(other & bit) && !(keep & bit)) {
        needed = true;  // summed here
        continue;
      }
      labels[n] = op.labels[i];
      dims[n] = op.dims[i];
      ++n;
    }
    if (!needed) return;
    Operand r;
    r.rank = n;
    std::copy(labels, labels + n, r.labels);
    std::copy(dims, dims + n, r.dims);
    set_contiguous(r);
    r.data = group<C>(op, labels, dims, n, arena, pool);
    op = r;
  }

  // `a` becomes the product of a and b over the labels `keep` does not
  // need, with labels batch, M, N. Written to `final_out` when that is
  // given and the labels come out in the output's order.
  template <typename C>
  void contract(const Shared& sh, Arena& arena, Operand& a, Operand& b, uint64_t keep, bool last, C* final_out) const {
    ThreadPool& pool = sh.ctx.thread_pool();
    reduce_operand<C>(a, b.label_set(), keep, arena, pool);
    reduce_operand<C>(b, a.label_set(), keep, arena, pool);
    int batch[kMaxAxes], m_labels[kMaxAxes], k_labels[kMaxAxes], n_labels[kMaxAxes];
    int nb = 0, nm = 0, nk = 0, nn = 0;
    auto classify = [&] {
      const uint64_t in_b = b.label_set();
      const uint64_t in_a = a.label_set();
      nb = nm = nk = nn = 0;
      for (int i = 0; i < a.rank; ++i) {
        const int l = a.labels[i];
        const uint64_t bit = uint64_t{1} << l;
        if (!(in_b & bit)) {
          m_labels[nm++] = l;
        } else if (keep & bit) {
          batch[nb++] = l;
        } else {
          k_labels[nk++] = l;
        }
      }
      for (int i = 0; i < b.rank; ++i)
        if (!(in_a & (uint64_t{1} << b.labels[i]))) n_labels[nn++] = b.labels[i];
    };
    classify();
    if (last) {
      // An output ordered [batch, N, M] is the product with the operands
      // swapped: computing that saves a transpose of the result.
      auto output_is = [&](const int* s2, int n2, const int* s3, int n3) {
        if (nb + n2 + n3 != sh.n_out) return false;
        int at = 0;
        for (const auto& [seq, n] : {std::pair{static_cast<const int*>(batch), nb}, std::pair{s2, n2}, std::pair{s3, n3}})
          for (int i = 0; i < n; ++i)
            if (sh.out_labels[at++] != seq[i]) return false;
        return true;
      };
      if (!output_is(m_labels, nm, n_labels, nn) && output_is(n_labels, nn, m_labels, nm)) {
        std::swap(a, b);
        classify();
      }
    }

    GemmBatch g;
    g.n_batch = nb;
    for (int i = 0; i < nb; ++i) {
      g.batch_dims[i] = std::max(a.dim_of(batch[i]), b.dim_of(batch[i]));
      g.count *= g.batch_dims[i];
    }
    for (int i = 0; i < nm; ++i) g.M *= a.dim_of(m_labels[i]);
    for (int i = 0; i < nn; ++i) g.N *= b.dim_of(n_labels[i]);
    int64_t k_dims[kMaxAxes];
    for (int i = 0; i < nk; ++i) {
      k_dims[i] = sh.label_dims[k_labels[i]];
      g.K *= k_dims[i];
    }
    // A in place as [batch, M, K] or [batch, K, M] when its K axes are not
    // broadcast; otherwise grouped by a copy.
    bool k_full_a = true, k_full_b = true;
    for (int i = 0; i < nk; ++i) {
      k_full_a = k_full_a && a.dim_of(k_labels[i]) == k_dims[i];
      k_full_b = k_full_b && b.dim_of(k_labels[i]) == k_dims[i];
    }
    const C* a_data = static_cast<const C*>(a.data);
    if (k_full_a && grouped_as(a, batch, nb, m_labels, nm, k_labels, nk)) {
      g.trans_a = false;
    } else if (k_full_a && grouped_as(a, batch, nb, k_labels, nk, m_labels, nm)) {
      g.trans_a = true;
    } else {
      LabelLayout layout;
      layout.add(a, batch, nb);
      layout.add(a, m_labels, nm);
      layout.add_k(k_labels, k_dims, nk);
      a_data = group<C>(a, layout.labels, layout.dims, layout.n, arena, pool);
      g.trans_a = false;
    }
    g.lda = g.trans_a ? g.M : g.K;
    const C* b_data = static_cast<const C*>(b.data);
    if (k_full_b && grouped_as(b, batch, nb, k_labels, nk, n_labels, nn)) {
      g.trans_b = false;
    } else if (k_full_b && grouped_as(b, batch, nb, n_labels, nn, k_labels, nk)) {
      g.trans_b = true;
    } else {
      LabelLayout layout;
      layout.add(b, batch, nb);
      layout.add_k(k_labels, k_dims, nk);
      layout.add(b, n_labels, nn);
      b_data = group<C>(b, layout.labels, layout.dims, layout.n, arena, pool);
      g.trans_b = false;
    }
    g.ldb = g.trans_b ? g.K : g.N;
    // Batch strides: the operand's own (contiguous, grouped) layout, 0
    // where it broadcasts.
    int64_t a_stride = g.M * g.K, b_stride = g.K * g.N;
    for (int i = nb - 1; i >= 0; --i) {
      const int64_t ad = a.dim_of(batch[i]);
      const int64_t bd = b.dim_of(batch[i]);
      g.a_strides[i] = ad == 1 ? 0 : a_stride;
      g.b_strides[i] = bd == 1 ? 0 : b_stride;
      a_stride *= ad;
      b_stride *= bd;
    }

    Operand r;
    r.rank = 0;
    for (int i = 0; i < nb; ++i) {
      r.labels[r.rank] = batch[i];
      r.dims[r.rank++] = g.batch_dims[i];
    }
    for (int i = 0; i < nm; ++i) {
      r.labels[r.rank] = m_labels[i];
      r.dims[r.rank++] = a.dim_of(m_labels[i]);
    }
    for (int i = 0; i < nn; ++i) {
      r.labels[r.rank] = n_labels[i];
      r.dims[r.rank++] = b.dim_of(n_labels[i]);
    }
    set_contiguous(r);
    bool direct = last && r.rank == sh.n_out;
    for (int i = 0; direct && i < r.rank; ++i) direct = r.labels[i] == sh.out_labels[i];
    C* c = direct ? final_out : static_cast<C*>(arena.take(static_cast<size_t>(elements_of(r)) * sizeof(C)));
    int64_t tasks = 1;
    GemmPlan plan;
    if (use_sgemm<C>(g)) {
      ThreadPool* gemm_pool = nullptr;
      tasks = gemm_tasks(g, pool, &gemm_pool);
      if (arena.plans != nullptr) {
        arena.plans->add(g.M, g.N, g.K, gemm_pool);  // prepare(): only the plans matter
      } else {
        plan = gemm_plans(sh.ctx).get(g.M, g.N, g.K, gemm_pool);
      }
    }
    const size_t ws_bytes = gemm_workspace<C>(g, plan, tasks);
    void* ws = ws_bytes > 0 ? arena.take(ws_bytes) : nullptr;
    if (!arena.measuring) run_gemms<C>(g, a_data, b_data, c, pool, ws, tasks, plan);
    r.data = c;
    a = r;
  }

  // A contiguous copy of `op` with the axes `labels` of lengths `dims`,
  // summed over its other labels (a length-1 axis of `op` broadcasts).
  template <typename C>
  static const C* group(const Operand& op, const int* labels, const int64_t* dims, int n, Arena& arena,
                        ThreadPool& pool) {
    int64_t count = 1;
    for (int i = 0; i < n; ++i) count *= dims[i];
    auto* dst = static_cast<C*>(arena.take(static_cast<size_t>(count) * sizeof(C)));
    if (!arena.measuring) reduce_into<C>(op, labels, dims, n, dst, pool);
    return dst;
  }

  std::string equation_;
  std::vector<Term> terms_;
  Term output_;
};

const KernelDef kEinsumKernels[] = {
    {"", "Einsum", 12, kLatestVersion, 0, type_mask(NumericTypes{}), &make_kernel<EinsumKernel>},
};

}  // namespace

std::span<const KernelDef> einsum_kernels() { return kEinsumKernels; }

}  // namespace sy::cpu
