// LSTM, GRU and RNN (float32, versions 7 and later; layout from 14).
//
// One kernel class serves the three: they differ only in the gate math.
// Per direction:
// 1. The input projection of every timestep at once, XW = X * W^T + biases:
//    one GEMM of (seq * batch) x (gates * hidden) x input, with W packed at
//    creation when it is constant. The recurrence bias Rb is folded into the
//    same bias wherever it is simply added (everything except GRU's hidden
//    gate under linear_before_reset).
// 2. The steps. The hidden units are cut into chunks of kChunkUnits; R is
//    packed per chunk with that chunk's rows of every gate side by side, so
//    one small GEMM H_{t-1} * R_chunk^T gives a chunk everything its gate
//    math needs, which then runs while the product is still in cache. The
//    chunks (times blocks of batch rows when the batch is large) are the
//    tasks of one parallel_for per step; GRU with linear_before_reset = 0
//    needs two, because its hidden gate multiplies (r (.) H_{t-1}) by R_h
//    and so needs the whole reset gate first.
//
// sequence_lens: row b runs only its first len[b] steps; the reverse
// direction walks each row from its own last valid step back to 0. Y is
// zero past a row's length, and Y_h / Y_c hold the state after its last
// valid step.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/activation_simd.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gemm/gemm_state.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Hidden units per chunk of the step GEMM. Each chunk is one GEMM call, and
// each call repacks H_{t-1} (padded to the micro-tile height), so chunks
// should not be too small: 64 units (LSTM: 256 columns, four AVX-512
// micro-tiles) ran a batch-1, hidden-512 LSTM 7% faster than 32 and 17%
// faster than 16, and still give hidden 512 eight chunks to spread over the
// threads.
constexpr int64_t kChunkUnits = 64;
// Multiply-adds per step below which the steps stay on one thread: a
// parallel_for per step costs a few microseconds.
constexpr int64_t kMinParallelStepWork = int64_t{1} << 16;
// Batch rows per block when a large batch is split too: the GEMM micro-tile
// height, so that blocks keep full tiles.
constexpr int64_t kBatchRowsGranule = 6;

enum class Cell { kLstm, kGru, kRnn };

// ---- activations -------------------------------------------------------------

enum class ActKind {
  kSigmoid,
  kTanh,
  kRelu,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Activation {
  ActKind kind = ActKind::kSigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct ActivationInfo {
  const char* name;  // lower case
  ActKind kind;
  bool uses_alpha;
  bool uses_beta;
  // The defaults of the ONNX operators of the same name, as the spec asks.
  float default_alpha;
  float default_beta;
};

constexpr ActivationInfo kActivations[] = {
    {"sigmoid", ActKind::kSigmoid, false, false, 0.0f, 0.0f},
    {"tanh", ActKind::kTanh, false, false, 0.0f, 0.0f},
    {"relu", ActKind::kRelu, false, false, 0.0f, 0.0f},
    {"affine", ActKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ActKind::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"scaledtanh", ActKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::kElu, true, false, 1.0f, 0.0f},
    {"softsign", ActKind::kSoftsign, false, false, 0.0f, 0.0f},
    {"softplus", ActKind::kSoftplus, false, false, 0.0f, 0.0f},
};

// x[0, n) = act(x[0, n)). The switch sits outside the loops so that each
// loop vectorizes (the fast_* functions are branch-free).
void apply_activation(const Activation& a, float* x, int64_t n) {
  const float alpha = a.alpha;
  const float beta = a.beta;
  switch (a.kind) {
    case ActKind::kSigmoid:  // the default gates: the per-ISA loop
      activation_f32(SimdActivation::kSigmoid, x, x, n);
      break;
    case ActKind::kTanh:
      activation_f32(SimdActivation::kTanh, x, x, n);
      break;
    case ActKind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = select(x[i] > 0.0f, x[i], 0.0f);
      break;
    case ActKind::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
      break;
    case ActKind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = select(x[i] >= 0.0f, x[i], alpha * x[i]);
      break;
    case ActKind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = select(x[i] >= alpha, x[i], 0.0f);
      break;
    case ActKind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * fast_tanh(beta * x[i]);
      break;
    case ActKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(alpha * x[i] + beta, 0.0f), 1.0f);
      break;
    case ActKind::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * std::expm1(x[i]);
      break;
    case ActKind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
      break;
    case ActKind::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] > 0.0f ? x[i] + std::log1p(std::exp(-x[i])) : std::log1p(std::exp(x[i]));
      break;
  }
}

void clip_values(float* x, int64_t n, float limit) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], -limit), limit);
}

void add_into(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

// ---- the kernel ----------------------------------------------------------------

// Rows of R packed together for one step GEMM: `count` gates from `first`.
struct GateGroup {
  int first;
  int count;
};

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }
// Scratch regions start 64-byte aligned.
constexpr auto align64 = KernelContext::scratch_align;

// Everything one direction's steps read and write, for the per-chunk work.
struct DirectionState {
  int64_t seq = 0, batch = 0, hidden = 0, dirs = 1, dir = 0;
  bool reverse = false;
  bool batch_major = false;       // layout 1
  const int32_t* lens = nullptr;  // nullptr: every row runs seq steps
  const float* xw = nullptr;      // [rows of X][gates * hidden], biases added
  const float* r = nullptr;       // this direction's R, [gates * hidden][hidden]
  const GemmPlans* plans = nullptr;  // the recurrent products' (prepare())
  float* gates = nullptr;         // per chunk: [batch][gates * units]
  float* h_prev = nullptr;        // [batch][hidden]
  float* h_next = nullptr;
  float* cell = nullptr;                    // LSTM: [batch][hidden], updated in place
  float* reset_h = nullptr;                 // GRU, linear_before_reset = 0: r (.) H_{t-1}
  const float* peephole = nullptr;          // LSTM: [3 * hidden] (i, o, f), or nullptr
  const float* recurrent_h_bias = nullptr;  // GRU, linear_before_reset = 1: Rbh
  float* y = nullptr;                       // nullptr when Y is not requested
  bool h_is_zero = false;                   // H_{t-1} is all zeros (first step, no initial_h)

  // The timestep row b works on at step s; false when s is past its length.
  bool time_of(int64_t s, int64_t b, int64_t& t) const {
    const int64_t len = lens != nullptr ? lens[b] : seq;
    if (s >= len) return false;
    t = reverse ? len - 1 - s : s;
    return true;
  }
  const float* xw_row(int64_t t, int64_t b, int64_t gates_count) const {
    const int64_t row = batch_major ? b * seq + t : t * batch + b;
    return xw + row * gates_count * hidden;
  }
  float* y_row(int64_t t, int64_t b) const {
    if (y == nullptr) return nullptr;
    const int64_t off = batch_major ? ((b * seq + t) * dirs + dir) * hidden : ((t * dirs + dir) * batch + b) * hidden;
    return y + off;
  }
};

class RecurrentKernel : public Kernel {
 public:
  RecurrentKernel(const KernelCreateContext& ctx, Status& status, Cell cell) : cell_(cell) {
    const Node& n = ctx.node();
    switch (cell_) {
      case Cell::kLstm:
        gates_ = 4;
        groups_ = {GateGroup{0, 4}};
        break;
      case Cell::kGru:
        gates_ = 3;
        groups_ = {GateGroup{0, 2}, GateGroup{2, 1}};  // z and r together; h apart (it may need r first)
        break;
      case Cell::kRnn:
        gates_ = 1;
        groups_ = {GateGroup{0, 1}};
        break;
    }
    const std::string direction = n.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
      status = ctx.error("direction must be forward, reverse or bidirectional; got \"" + direction + "\"");
      return;
    }
    dirs_ = direction == "bidirectional" ? 2 : 1;
    first_reverse_ = direction == "reverse";
    layout_ = ctx.opset() >= 14 ? n.attr_int("layout", 0) : 0;
    if (layout_ != 0 && layout_ != 1) {
      status = ctx.error("layout must be 0 or 1; got " + std::to_string(layout_));
      return;
    }
    if (n.has_attr("hidden_size")) {
      hidden_ = n.attr_int("hidden_size", 0);
      if (hidden_ <= 0) {
        status = ctx.error("hidden_size must be positive; got " + std::to_string(hidden_));
        return;
      }
    }
    if (n.has_attr("clip")) {
      clip_ = n.attr_float("clip", 0.0f);
      has_clip_ = true;
      if (!(clip_ > 0.0f)) {
        status = ctx.error("clip must be positive; got " + std::to_string(clip_));
        return;
      }
    }
    if (cell_ == Cell::kLstm) {
      input_forget_ = n.attr_int("input_forget", 0) != 0;
    }
    if (cell_ == Cell::kGru) {
      linear_before_reset_ = n.attr_int("linear_before_reset", 0) != 0;
    }
    status = read_activations(ctx);
    if (!status.ok()) return;
    status = prepare_constants(ctx);
  }

  bool prepares() const override { return true; }

  // Plans the input projection (threaded) and the recurrent products
  // (single-threaded, per batch block and chunk of units) of these shapes.
  // Shapes run() refuses get no plans.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    const Tensor* x = ctx.input(0);
    const Tensor* r = ctx.input(2);
    if (x == nullptr || r == nullptr || x->shape().rank() != 3) return std::unique_ptr<KernelState>(std::move(state));
    const Shape& xs = x->shape();
    const int64_t seq = layout_ == 0 ? xs[0] : xs[1];
    const int64_t batch = layout_ == 0 ? xs[1] : xs[0];
    const int64_t input = xs[2];
    const int64_t hidden = hidden_ > 0 ? hidden_ : (r->shape().rank() == 3 ? r->shape()[2] : -1);
    if (batch <= 0 || hidden <= 0) return std::unique_ptr<KernelState>(std::move(state));
    const int64_t gh = gates_ * hidden;
    ThreadPool& pool = ctx.thread_pool();
    GemmPlans& plans = state->plans;
    plans.add(seq * batch, gh, input, &pool, projection_packed(input, gh));
    const StepSplit split = split_steps(batch, hidden, pool);
    const int64_t last_rows = batch - (split.batch_blocks - 1) * split.block_rows;
    const int64_t last_units = hidden - (split.chunks - 1) * kChunkUnits;
    for (int64_t rows : {split.block_rows, last_rows})
      for (int64_t units : {std::min(kChunkUnits, hidden), last_units})
        for (const GateGroup& g : groups_) {
          plans.add(rows, g.count * units, hidden, nullptr, true);
          plans.add(rows, units, hidden, nullptr, false);
        }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* r = ctx.input(2);
    if (x == nullptr || w == nullptr || r == nullptr) return kernel_error(ctx, "inputs X, W and R are required");
    const Tensor* b_in = ctx.input(3);
    const Tensor* lens_in = ctx.input(4);
    const Tensor* h0_in = ctx.input(5);
    const Tensor* c0_in = cell_ == Cell::kLstm ? ctx.input(6) : nullptr;
    const Tensor* p_in = cell_ == Cell::kLstm ? ctx.input(7) : nullptr;

    // ---- shapes
    const Shape& xs = x->shape();
    if (xs.rank() != 3)
      return kernel_error(ctx, "X must have rank 3 (" +
                                   std::string(layout_ == 0 ? "[seq_length, batch_size, input_size]"
                                                            : "[batch_size, seq_length, input_size]") +
                                   "); got " + xs.to_string());
    for (const Tensor* t : {x, w, r, b_in, h0_in, c0_in, p_in})
      if (t != nullptr && t->dtype() != DataType::kFloat)
        return kernel_error(ctx, "only float inputs are implemented; got " + t->describe());
    const int64_t seq = layout_ == 0 ? xs[0] : xs[1];
    const int64_t batch = layout_ == 0 ? xs[1] : xs[0];
    const int64_t input = xs[2];
    const int64_t hidden = hidden_ > 0 ? hidden_ : (r->shape().rank() == 3 ? r->shape()[2] : -1);
    if (hidden <= 0) return kernel_error(ctx, "R must have rank 3; got " + r->shape().to_string());
    const int64_t gh = gates_ * hidden;
    if (w->shape() != Shape{dirs_, gh, input})
      return kernel_error(ctx, "W must be " + Shape{dirs_, gh, input}.to_string() + " (num_directions, " +
                                   std::to_string(gates_) + "*hidden_size, input_size); got " + w->shape().to_string());
    if (r->shape() != Shape{dirs_, gh, hidden})
      return kernel_error(ctx, "R must be " + Shape{dirs_, gh, hidden}.to_string() + " (num_directions, " +
                                   std::to_string(gates_) + "*hidden_size, hidden_size); got " +
                                   r->shape().to_string());
    if (b_in != nullptr && b_in->shape() != Shape{dirs_, 2 * gh})
      return kernel_error(ctx, "B must be " + Shape{dirs_, 2 * gh}.to_string() + "; got " + b_in->shape().to_string());
    const Shape state_shape = layout_ == 0 ? Shape{dirs_, batch, hidden} : Shape{batch, dirs_, hidden};
    if (h0_in != nullptr && h0_in->shape() != state_shape)
      return kernel_error(ctx, "initial_h must be " + state_shape.to_string() + "; got " + h0_in->shape().to_string());
    if (c0_in != nullptr && c0_in->shape() != state_shape)
      return kernel_error(ctx, "initial_c must be " + state_shape.to_string() + "; got " + c0_in->shape().to_string());
    if (p_in != nullptr && p_in->shape() != Shape{dirs_, 3 * hidden})
      return kernel_error(ctx,
                          "P must be " + Shape{dirs_, 3 * hidden}.to_string() + "; got " + p_in->shape().to_string());
    const int32_t* lens = nullptr;
    bool short_rows = false;
    if (lens_in != nullptr) {
      if (lens_in->dtype() != DataType::kInt32)
        return kernel_error(ctx, "sequence_lens must be int32; got " + lens_in->describe());
      if (lens_in->shape() != Shape{batch})
        return kernel_error(
            ctx, "sequence_lens must be [" + std::to_string(batch) + "]; got " + lens_in->shape().to_string());
      lens = lens_in->data<int32_t>();
      for (int64_t b = 0; b < batch; ++b) {
        if (lens[b] < 0 || lens[b] > seq)
          return kernel_error(ctx, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                                       " is outside [0, " + std::to_string(seq) + "]");
        short_rows = short_rows || lens[b] < seq;
      }
    }

    // ---- outputs
    float* y = nullptr;
    float* y_h = nullptr;
    float* y_c = nullptr;
    if (ctx.num_outputs() > 0 && ctx.output_requested(0)) {
      const Shape ys = layout_ == 0 ? Shape{seq, dirs_, batch, hidden} : Shape{batch, seq, dirs_, hidden};
      SY_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(0, DataType::kFloat, ys));
      y = t->data<float>();
      // Steps past a row's length leave zeros.
      if (short_rows) std::fill(y, y + t->num_elements(), 0.0f);
    }
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      SY_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DataType::kFloat, state_shape));
      y_h = t->data<float>();
    }
    if (cell_ == Cell::kLstm && ctx.num_outputs() > 2 && ctx.output_requested(2)) {
      SY_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, DataType::kFloat, state_shape));
      y_c = t->data<float>();
    }
    if (batch == 0 || hidden == 0) return ok_status();

    // ---- threading plan for the steps
    ThreadPool& pool = ctx.thread_pool();
    const StepSplit split = split_steps(batch, hidden, pool);
    const int64_t chunks = split.chunks, block_rows = split.block_rows, batch_blocks = split.batch_blocks;
    const int64_t tasks = split.tasks;
    const GemmPlans& plans = gemm_plans(ctx);

    // ---- scratch
    int max_group = 1;
    for (const GateGroup& g : groups_) max_group = std::max(max_group, g.count);
    const auto floats_bytes = [](int64_t floats) { return align64(static_cast<size_t>(floats) * sizeof(float)); };
    const size_t step_ws =
        align64(sgemm_workspace_bound(block_rows, max_group * std::min(hidden, kChunkUnits), hidden));
    const size_t xw_bytes = floats_bytes(seq * batch * gh);
    const size_t gates_bytes = floats_bytes(batch * gh);
    const size_t state_bytes = floats_bytes(batch * hidden);
    const bool runtime_bias = b_in != nullptr && bias_.empty();
    const size_t bias_bytes = runtime_bias ? floats_bytes(dirs_ * (gh + hidden)) : 0;
    const GemmPlan proj_plan = plans.get(seq * batch, gh, input, &pool, projection_packed(input, gh));
    const size_t proj_ws = align64(proj_plan.workspace_bytes);
    const size_t total =
        xw_bytes + gates_bytes + 4 * state_bytes + bias_bytes + proj_ws + step_ws * static_cast<size_t>(tasks) + 64;
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(total));
    char* p = static_cast<char*>(mem);
    const auto take = [&p](size_t bytes) {
      char* q = p;
      p += bytes;
      return q;
    };
    auto* xw = reinterpret_cast<float*>(take(xw_bytes));
    auto* gates = reinterpret_cast<float*>(take(gates_bytes));
    auto* h_a = reinterpret_cast<float*>(take(state_bytes));
    auto* h_b = reinterpret_cast<float*>(take(state_bytes));
    auto* cell = reinterpret_cast<float*>(take(state_bytes));
    auto* reset_h = reinterpret_cast<float*>(take(state_bytes));
    auto* bias_mem = reinterpret_cast<float*>(take(bias_bytes));
    void* proj_workspace = take(proj_ws);
    char* step_workspaces = take(step_ws * static_cast<size_t>(tasks));

    const float* bias_all = nullptr;  // [dirs][gh]
    const float* rbh_all = nullptr;   // [dirs][hidden], GRU with linear_before_reset only
    if (!bias_.empty()) {
      bias_all = bias_.data();
      rbh_all = bias_.data() + dirs_ * gh;
    } else if (runtime_bias) {
      fold_biases(b_in->data<float>(), hidden, bias_mem, bias_mem + dirs_ * gh);
      bias_all = bias_mem;
      rbh_all = bias_mem + dirs_ * gh;
    }

    for (int64_t d = 0; d < dirs_; ++d) {
      // 1. XW = X * W_d^T + bias, all timesteps at once.
      GemmEpilogue ep;
      if (bias_all != nullptr) ep.bias = bias_all + d * gh;
      const int64_t rows = seq * batch;
      const PackedMatrix* pw =
          d < static_cast<int64_t>(packed_w_.size()) ? &packed_w_[static_cast<size_t>(d)] : nullptr;
      if (rows > 0) {
        if (pw != nullptr && !pw->empty() && pw->rows() == input && pw->cols() == gh) {
          sgemm_packed_b(proj_plan, false, rows, gh, input, 1.0f, x->data<float>(), input, *pw, 0.0f, xw, gh, &pool,
                         proj_workspace, ep);
        } else {
          sgemm(proj_plan, false, true, rows, gh, input, 1.0f, x->data<float>(), input,
                w->data<float>() + d * gh * input, input, 0.0f, xw, gh, &pool, proj_workspace, ep);
        }
      }

      // 2. Initial state.
      DirectionState st;
      st.seq = seq;
      st.batch = batch;
      st.hidden = hidden;
      st.dirs = dirs_;
      st.dir = d;
      st.reverse = d == 1 || first_reverse_;
      st.batch_major = layout_ == 1;
      st.lens = lens;
      st.xw = xw;
      st.r = r->data<float>() + d * gh * hidden;
      st.plans = &plans;
      st.gates = gates;
      st.h_prev = h_a;
      st.h_next = h_b;
      st.cell = cell;
      st.reset_h = reset_h;
      st.peephole = p_in != nullptr ? p_in->data<float>() + d * 3 * hidden : nullptr;
      st.recurrent_h_bias = rbh_all != nullptr ? rbh_all + d * hidden : nullptr;
      st.y = y;
      load_state(h0_in, d, batch, hidden, h_a);
      st.h_is_zero = h0_in == nullptr;
      if (cell_ == Cell::kLstm) load_state(c0_in, d, batch, hidden, cell);

      // 3. The steps.
      for (int64_t s = 0; s < seq; ++s) {
        run_step(st, s, chunks, block_rows, batch_blocks, tasks, step_workspaces, step_ws, pool);
        std::swap(st.h_prev, st.h_next);
        st.h_is_zero = false;
      }

      // 4. Final state.
      store_state(y_h, d, batch, hidden, st.h_prev);
      if (cell_ == Cell::kLstm) store_state(y_c, d, batch, hidden, cell);
    }
    return ok_status();
  }

 private:
  Status read_activations(const KernelCreateContext& ctx) {
    static const char* const kLstmDefaults[] = {"sigmoid", "tanh", "tanh"};
    static const char* const kGruDefaults[] = {"sigmoid", "tanh"};
    static const char* const kRnnDefaults[] = {"tanh"};
    const char* const* defaults = cell_ == Cell::kLstm  ? kLstmDefaults
                                  : cell_ == Cell::kGru ? kGruDefaults
                                                        : kRnnDefaults;
    per_dir_ = cell_ == Cell::kLstm ? 3 : cell_ == Cell::kGru ? 2 : 1;
    const Node& n = ctx.node();
    std::vector<std::string> names;
    if (const Attribute* a = n.attr("activations")) names = a->strings;
    const auto needed = static_cast<size_t>(per_dir_ * dirs_);
    if (names.empty()) {
      for (int64_t d = 0; d < dirs_; ++d)
        for (int i = 0; i < per_dir_; ++i) names.emplace_back(defaults[i]);
    } else if (names.size() == static_cast<size_t>(per_dir_) && dirs_ == 2) {
      // One set for both directions.
      for (int i = 0; i < per_dir_; ++i) names.push_back(names[static_cast<size_t>(i)]);
    } else if (names.size() == 2 * static_cast<size_t>(per_dir_) && dirs_ == 1) {
      // Two sets for one direction: the spec writes RNN's default that way
      // (['Tanh', 'Tanh']); the first set applies.
      names.resize(needed);
    }
    if (names.size() != needed)
      return ctx.error("activations must list " + std::to_string(needed) + " functions (" + std::to_string(per_dir_) +
                       " per direction); got " + std::to_string(names.size()));
    const std::vector<float> alphas = n.attr_floats("activation_alpha");
    const std::vector<float> betas = n.attr_floats("activation_beta");
    // alpha and beta values go, in order, to the functions that take them.
    size_t next_alpha = 0, next_beta = 0;
    for (size_t k = 0; k < needed; ++k) {
      std::string lower = names[k];
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      const ActivationInfo* info = nullptr;
      for (const ActivationInfo& candidate : kActivations)
        if (lower == candidate.name) info = &candidate;
      if (info == nullptr)
        return ctx.unsupported("activation \"" + names[k] +
                               "\" is not implemented (Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, "
                               "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus are)");
      Activation& act = activations_[k / static_cast<size_t>(per_dir_)][k % static_cast<size_t>(per_dir_)];
      act.kind = info->kind;
      act.alpha = info->default_alpha;
      act.beta = info->default_beta;
      if (info->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
      if (info->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    }
    return ok_status();
  }

  // Packs constant W and R, and folds a constant B, once.
  Status prepare_constants(const KernelCreateContext& ctx) {
    const Tensor* w = ctx.constant_input(1);
    const Tensor* r = ctx.constant_input(2);
    const Tensor* b = ctx.constant_input(3);
    int64_t hidden = hidden_;
    if (hidden <= 0 && r != nullptr && r->shape().rank() == 3) hidden = r->shape()[2];
    if (hidden <= 0) return ok_status();
    const int64_t gh = gates_ * hidden;
    const auto oom = [&ctx]() {
      return Status(StatusCode::kOutOfMemory, ctx.node().describe() + ": cannot allocate packed weights");
    };
    if (w != nullptr && w->dtype() == DataType::kFloat && w->shape().rank() == 3 && w->shape()[0] == dirs_ &&
        w->shape()[1] == gh && w->shape()[2] > 0) {
      const int64_t input = w->shape()[2];
      for (int64_t d = 0; d < dirs_; ++d) {
        packed_w_.push_back(pack_b(true, input, gh, w->data<float>() + d * gh * input, input));
        if (packed_w_.back().empty()) return oom();
      }
    }
    if (r != nullptr && r->dtype() == DataType::kFloat && r->shape() == Shape{dirs_, gh, hidden}) {
      // Per chunk, the chunk's rows of each gate of the group, one after the
      // other: row g * units + j of the packed operand is R row
      // (first + g) * hidden + j0 + j.
      std::vector<float> rows;
      for (int64_t d = 0; d < dirs_; ++d) {
        const float* rd = r->data<float>() + d * gh * hidden;
        for (size_t gi = 0; gi < groups_.size(); ++gi) {
          const GateGroup& g = groups_[gi];
          std::vector<PackedMatrix>& out = packed_r_[static_cast<size_t>(d)][gi];
          for (int64_t j0 = 0; j0 < hidden; j0 += kChunkUnits) {
            const int64_t units = std::min(kChunkUnits, hidden - j0);
            rows.assign(static_cast<size_t>(g.count * units * hidden), 0.0f);
            for (int k = 0; k < g.count; ++k)
              std::memcpy(rows.data() + k * units * hidden, rd + ((g.first + k) * hidden + j0) * hidden,
                          static_cast<size_t>(units * hidden) * sizeof(float));
            out.push_back(pack_b(true, hidden, g.count * units, rows.data(), hidden));
            if (out.back().empty()) return oom();
          }
        }
      }
    }
    if (b != nullptr && b->dtype() == DataType::kFloat && b->shape() == Shape{dirs_, 2 * gh}) {
      bias_.assign(static_cast<size_t>(dirs_ * (gh + hidden)), 0.0f);
      fold_biases(b->data<float>(), hidden, bias_.data(), bias_.data() + dirs_ * gh);
    }
    return ok_status();
  }

  // B = [Wb, Rb] per direction -> bias[d][gh] added to XW, plus for GRU with
  // linear_before_reset the hidden gate's Rb apart in rbh[d][hidden] (it is
  // multiplied by r); elsewhere Rb simply adds to Wb.
  void fold_biases(const float* b, int64_t hidden, float* bias, float* rbh) const {
    const int64_t gh = gates_ * hidden;
    for (int64_t d = 0; d < dirs_; ++d) {
      const float* wb = b + d * 2 * gh;
      const float* rb = wb + gh;
      float* out = bias + d * gh;
      for (int64_t k = 0; k < gh; ++k) out[k] = wb[k] + rb[k];
      float* rh = rbh + d * hidden;
      std::fill(rh, rh + hidden, 0.0f);
      if (cell_ == Cell::kGru && linear_before_reset_) {
        for (int64_t j = 0; j < hidden; ++j) {
          out[2 * hidden + j] = wb[2 * hidden + j];
          rh[j] = rb[2 * hidden + j];
        }
      }
    }
  }

  // How the steps are threaded: items of (chunk of units, block of batch
  // rows), `tasks` threads taking them.
  struct StepSplit {
    int64_t chunks = 1, block_rows = 1, batch_blocks = 1, tasks = 1;
  };
  StepSplit split_steps(int64_t batch, int64_t hidden, const ThreadPool& pool) const {
    StepSplit sp;
    sp.chunks = ceil_div(hidden, kChunkUnits);
    const int64_t step_work = batch * gates_ * hidden * hidden;
    const int64_t want = pool.num_threads() > 1 && step_work >= kMinParallelStepWork ? pool.num_threads() : 1;
    sp.block_rows = batch;
    if (sp.chunks < want) {
      // Too few chunks for the threads: split the batch too, in whole tiles.
      const int64_t blocks = std::min(ceil_div(want, sp.chunks), ceil_div(batch, kBatchRowsGranule));
      sp.block_rows = round_up(ceil_div(batch, std::max<int64_t>(blocks, 1)), kBatchRowsGranule);
    }
    sp.batch_blocks = ceil_div(batch, sp.block_rows);
    sp.tasks = std::min(want, sp.chunks * sp.batch_blocks);
    return sp;
  }

  // Whether direction 0's W was packed at creation for this projection
  // (every direction's is, or none).
  bool projection_packed(int64_t input, int64_t gh) const {
    return !packed_w_.empty() && !packed_w_[0].empty() && packed_w_[0].rows() == input && packed_w_[0].cols() == gh;
  }

  // initial_h / initial_c of direction d into dst [batch][hidden] (zeros
  // when absent).
  void load_state(const Tensor* t, int64_t d, int64_t batch, int64_t hidden, float* dst) const {
    if (t == nullptr) {
      std::fill(dst, dst + batch * hidden, 0.0f);
      return;
    }
    const float* src = t->data<float>();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t off = layout_ == 0 ? (d * batch + b) * hidden : (b * dirs_ + d) * hidden;
      std::copy(src + off, src + off + hidden, dst + b * hidden);
    }
  }

  void store_state(float* out, int64_t d, int64_t batch, int64_t hidden, const float* src) const {
    if (out == nullptr) return;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t off = layout_ == 0 ? (d * batch + b) * hidden : (b * dirs_ + d) * hidden;
      std::copy(src + b * hidden, src + (b + 1) * hidden, out + off);
    }
  }

  // out[rows][count * units] (leading dim ldc) = a[rows][hidden] * R_rows^T
  // for the rows of gate group `group`, chunk `chunk`: packed when R was
  // constant, else straight from R, one gate at a time.
  void recurrent_gemm(const DirectionState& st, size_t group, int64_t chunk, const float* a, int64_t rows, float* out,
                      int64_t ldc, void* ws) const {
    const GateGroup& g = groups_[group];
    const int64_t hidden = st.hidden;
    const int64_t j0 = chunk * kChunkUnits;
    const int64_t units = std::min(kChunkUnits, hidden - j0);
    const std::vector<PackedMatrix>& packed = packed_r_[static_cast<size_t>(st.dir)][group];
    if (static_cast<int64_t>(packed.size()) > chunk && packed[static_cast<size_t>(chunk)].rows() == hidden &&
        packed[static_cast<size_t>(chunk)].cols() == g.count * units) {
      const GemmPlan plan = st.plans->get(rows, g.count * units, hidden, nullptr, true);
      sgemm_packed_b(plan, false, rows, g.count * units, hidden, 1.0f, a, hidden, packed[static_cast<size_t>(chunk)],
                     0.0f, out, ldc, nullptr, ws);
      return;
    }
    const GemmPlan plan = st.plans->get(rows, units, hidden, nullptr, false);
    for (int k = 0; k < g.count; ++k)
      sgemm(plan, false, true, rows, units, hidden, 1.0f, a, hidden, st.r + ((g.first + k) * hidden + j0) * hidden,
            hidden, 0.0f, out + k * units, ldc, nullptr, ws);
  }

  // One timestep over every (chunk, batch block) item, on `tasks` threads.
  void run_step(const DirectionState& st, int64_t s, int64_t chunks, int64_t block_rows, int64_t batch_blocks,
                int64_t tasks, char* workspaces, size_t ws_bytes, ThreadPool& pool) const {
    const int64_t items = chunks * batch_blocks;
    const int phases = cell_ == Cell::kGru && !linear_before_reset_ ? 2 : 1;
    for (int phase = 0; phase < phases; ++phase) {
      auto run_tasks = [&](int64_t t_begin, int64_t t_end) {
        for (int64_t t = t_begin; t < t_end; ++t) {
          void* ws = workspaces + ws_bytes * static_cast<size_t>(t);
          // Every other step walks its items backwards: the R chunks the
          // last step read most recently are then still in this core's L2
          // (R is usually several times L2, and a forward walk would evict
          // each chunk just before it is needed again).
          const int64_t first = items * t / tasks, last = items * (t + 1) / tasks;
          for (int64_t i = first; i < last; ++i) {
            const int64_t item = s % 2 == 0 ? i : first + last - 1 - i;
            const int64_t chunk = item / batch_blocks;
            const int64_t b0 = (item % batch_blocks) * block_rows;
            const int64_t b1 = std::min(st.batch, b0 + block_rows);
            run_item(st, s, phase, chunk, b0, b1, ws);
          }
        }
      };
      if (tasks <= 1) {
        run_tasks(0, 1);
      } else {
        pool.parallel_for(tasks, 1, run_tasks);
      }
    }
  }

  void run_item(const DirectionState& st, int64_t s, int phase, int64_t chunk, int64_t b0, int64_t b1, void* ws) const {
    const int64_t hidden = st.hidden;
    const int64_t j0 = chunk * kChunkUnits;
    const int64_t units = std::min(kChunkUnits, hidden - j0);
    const int64_t ldg = gates_ * units;
    // This chunk's gate block: [batch][gates * units], rows b0..b1 here.
    float* g = st.gates + st.batch * gates_ * j0 + b0 * ldg;
    switch (cell_) {
      case Cell::kLstm: lstm_item(st, s, chunk, j0, units, b0, b1, g, ws); break;
      case Cell::kGru: gru_item(st, s, phase, chunk, j0, units, b0, b1, g, ws); break;
      case Cell::kRnn: rnn_item(st, s, chunk, j0, units, b0, b1, g, ws); break;
    }
  }

  // The recurrent term of group `group` for rows b0..b1 into g (or zeros
  // when the state it multiplies is zero).
  void recurrent_term(const DirectionState& st, size_t group, int64_t chunk, const float* a, bool a_is_zero, int64_t b0,
                      int64_t b1, float* g, int64_t ldg, int64_t col, int64_t width, void* ws) const {
    if (a_is_zero) {
      for (int64_t b = b0; b < b1; ++b) std::fill(g + (b - b0) * ldg + col, g + (b - b0) * ldg + col + width, 0.0f);
      return;
    }
    recurrent_gemm(st, group, chunk, a + b0 * st.hidden, b1 - b0, g + col, ldg, ws);
  }

  void carry_state(const DirectionState& st, int64_t b, int64_t j0, int64_t units) const {
    const float* src = st.h_prev + b * st.hidden + j0;
    std::copy(src, src + units, st.h_next + b * st.hidden + j0);
  }

  void lstm_item(const DirectionState& st, int64_t s, int64_t chunk, int64_t j0, int64_t n, int64_t b0, int64_t b1,
                 float* g, void* ws) const {
    const int64_t H = st.hidden;
    const int64_t ldg = 4 * n;
    recurrent_term(st, 0, chunk, st.h_prev, st.h_is_zero, b0, b1, g, ldg, 0, ldg, ws);
    const Activation& f = activations_[st.dir][0];
    const Activation& gg = activations_[st.dir][1];
    const Activation& h = activations_[st.dir][2];
    for (int64_t b = b0; b < b1; ++b) {
      int64_t t = 0;
      if (!st.time_of(s, b, t)) {
        carry_state(st, b, j0, n);
        continue;
      }
      float* pi = g + (b - b0) * ldg;  // gates in ONNX order i, o, f, c
      float* po = pi + n;
      float* pf = po + n;
      float* pc = pf + n;
      const float* xw = st.xw_row(t, b, 4) + j0;
      add_into(pi, xw, n);
      add_into(po, xw + H, n);
      add_into(pf, xw + 2 * H, n);
      add_into(pc, xw + 3 * H, n);
      float* c = st.cell + b * H + j0;
      if (st.peephole != nullptr) {
        const float* p_i = st.peephole + j0;
        const float* p_f = st.peephole + 2 * H + j0;
        for (int64_t j = 0; j < n; ++j) {
          pi[j] += p_i[j] * c[j];
          pf[j] += p_f[j] * c[j];
        }
      }
      if (has_clip_) {
        clip_values(pi, n, clip_);
        clip_values(pf, n, clip_);
        clip_values(pc, n, clip_);
      }
      apply_activation(f, pi, n);
      if (input_forget_) {
        // Coupled gates: the forget gate is 1 - i.
        for (int64_t j = 0; j < n; ++j) pf[j] = 1.0f - pi[j];
      } else {
        apply_activation(f, pf, n);
      }
      apply_activation(gg, pc, n);
      for (int64_t j = 0; j < n; ++j) c[j] = pf[j] * c[j] + pi[j] * pc[j];
      if (st.peephole != nullptr) {
        const float* p_o = st.peephole + H + j0;
        for (int64_t j = 0; j < n; ++j) po[j] += p_o[j] * c[j];
      }
      if (has_clip_) clip_values(po, n, clip_);
      apply_activation(f, po, n);
      // h(C_t) into the spent cell-gate slot, then H_t = o (.) h(C_t).
      std::copy(c, c + n, pc);
      apply_activation(h, pc, n);
      float* out = st.h_next + b * H + j0;
      for (int64_t j = 0; j < n; ++j) out[j] = po[j] * pc[j];
      if (float* y = st.y_row(t, b)) std::copy(out, out + n, y + j0);
    }
  }

  void gru_item(const DirectionState& st, int64_t s, int phase, int64_t chunk, int64_t j0, int64_t n, int64_t b0,
                int64_t b1, float* g, void* ws) const {
    const int64_t H = st.hidden;
    const int64_t ldg = 3 * n;
    const Activation& f = activations_[st.dir][0];
    const Activation& gg = activations_[st.dir][1];
    // Phase 0: z and r (and, with linear_before_reset, everything). Phase 1
    // (linear_before_reset = 0 only): the hidden gate from r (.) H_{t-1}.
    if (phase == 0) {
      recurrent_term(st, 0, chunk, st.h_prev, st.h_is_zero, b0, b1, g, ldg, 0, 2 * n, ws);
      if (linear_before_reset_) recurrent_term(st, 1, chunk, st.h_prev, st.h_is_zero, b0, b1, g, ldg, 2 * n, n, ws);
      for (int64_t b = b0; b < b1; ++b) {
        int64_t t = 0;
        if (!st.time_of(s, b, t)) {
          if (linear_before_reset_) {
            carry_state(st, b, j0, n);
          } else {
            std::fill(st.reset_h + b * H + j0, st.reset_h + b * H + j0 + n, 0.0f);
          }
          continue;
        }
        float* pz = g + (b - b0) * ldg;  // gates in ONNX order z, r, h
        float* pr = pz + n;
        const float* xw = st.xw_row(t, b, 3) + j0;
        add_into(pz, xw, n);
        add_into(pr, xw + H, n);
        if (has_clip_) {
          clip_values(pz, n, clip_);
          clip_values(pr, n, clip_);
        }
        apply_activation(f, pz, n);
        apply_activation(f, pr, n);
        const float* hp = st.h_prev + b * H + j0;
        if (!linear_before_reset_) {
          float* rh = st.reset_h + b * H + j0;
          for (int64_t j = 0; j < n; ++j) rh[j] = pr[j] * hp[j];
          continue;
        }
        // h = g(Xh W^T + Wbh + r (.) (H_{t-1} Rh^T + Rbh))
        float* ph = pr + n;
        const float* xh = xw + 2 * H;
        if (st.recurrent_h_bias != nullptr) add_into(ph, st.recurrent_h_bias + j0, n);
        for (int64_t j = 0; j < n; ++j) ph[j] = xh[j] + pr[j] * ph[j];
        finish_gru_row(st, b, t, j0, n, pz, ph, gg);
      }
      return;
    }
    recurrent_term(st, 1, chunk, st.reset_h, st.h_is_zero, b0, b1, g, ldg, 2 * n, n, ws);
    for (int64_t b = b0; b < b1; ++b) {
      int64_t t = 0;
      if (!st.time_of(s, b, t)) {
        carry_state(st, b, j0, n);
        continue;
      }
      float* pz = g + (b - b0) * ldg;
      float* ph = pz + 2 * n;
      add_into(ph, st.xw_row(t, b, 3) + j0 + 2 * H, n);
      finish_gru_row(st, b, t, j0, n, pz, ph, gg);
    }
  }

  // ph holds the hidden gate's pre-activation, pz the update gate:
  // H_t = (1 - z) (.) g(ph) + z (.) H_{t-1}.
  void finish_gru_row(const DirectionState& st, int64_t b, int64_t t, int64_t j0, int64_t n, const float* pz, float* ph,
                      const Activation& gg) const {
    if (has_clip_) clip_values(ph, n, clip_);
    apply_activation(gg, ph, n);
    const float* hp = st.h_prev + b * st.hidden + j0;
    float* out = st.h_next + b * st.hidden + j0;
    for (int64_t j = 0; j < n; ++j) out[j] = (1.0f - pz[j]) * ph[j] + pz[j] * hp[j];
    if (float* y = st.y_row(t, b)) std::copy(out, out + n, y + j0);
  }

  void rnn_item(const DirectionState& st, int64_t s, int64_t chunk, int64_t j0, int64_t n, int64_t b0, int64_t b1,
                float* g, void* ws) const {
    const int64_t H = st.hidden;
    recurrent_term(st, 0, chunk, st.h_prev, st.h_is_zero, b0, b1, g, n, 0, n, ws);
    const Activation& f = activations_[st.dir][0];
    for (int64_t b = b0; b < b1; ++b) {
      int64_t t = 0;
      if (!st.time_of(s, b, t)) {
        carry_state(st, b, j0, n);
        continue;
      }
      float* pre = g + (b - b0) * n;
      add_into(pre, st.xw_row(t, b, 1) + j0, n);
      if (has_clip_) clip_values(pre, n, clip_);
      apply_activation(f, pre, n);
      float* out = st.h_next + b * H + j0;
      std::copy(pre, pre + n, out);
      if (float* y = st.y_row(t, b)) std::copy(out, out + n, y + j0);
    }
  }

  Cell cell_;
  int64_t gates_ = 1;
  std::vector<GateGroup> groups_;
  int64_t dirs_ = 1;
  bool first_reverse_ = false;  // direction == "reverse"
  int64_t layout_ = 0;
  int64_t hidden_ = 0;  // 0: taken from R at run time
  float clip_ = 0.0f;
  bool has_clip_ = false;
  bool input_forget_ = false;
  bool linear_before_reset_ = false;
  int per_dir_ = 1;
  Activation activations_[2][3];
  std::vector<PackedMatrix> packed_w_;        // per direction, when W is constant
  std::vector<PackedMatrix> packed_r_[2][2];  // [direction][gate group][chunk], when R is constant
  std::vector<float> bias_;                   // folded constant B: [dirs][gh] then [dirs][hidden]
};

class LstmKernel final : public RecurrentKernel {
 public:
  LstmKernel(const KernelCreateContext& ctx, Status& status) : RecurrentKernel(ctx, status, Cell::kLstm) {}
};
class GruKernel final : public RecurrentKernel {
 public:
  GruKernel(const KernelCreateContext& ctx, Status& status) : RecurrentKernel(ctx, status, Cell::kGru) {}
};
class RnnKernel final : public RecurrentKernel {
 public:
  RnnKernel(const KernelCreateContext& ctx, Status& status) : RecurrentKernel(ctx, status, Cell::kRnn) {}
};

const KernelDef kRnnKernels[] = {
    {"", "LSTM", 7, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<LstmKernel>},
    {"", "GRU", 7, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<GruKernel>},
    {"", "RNN", 7, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<RnnKernel>},
};

}  // namespace

std::span<const KernelDef> rnn_kernels() { return kRnnKernels; }

}  // namespace sy::cpu
