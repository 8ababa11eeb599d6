// LSTM, GRU and RNN: one LSTM step computed by hand, bidirectional runs
// with sequence_lens against values PyTorch computed (packed sequences, so
// the reverse direction starts at each row's own last step), and sweeps of
// directions, layouts, constant or runtime weights, threads, clip, peepholes,
// input_forget and linear_before_reset against a naive double-precision
// reference written from the equations in the ONNX spec.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "model/resolve.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/kernel.h"
#include "providers/owning_kernel_context.h"
#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

// ---- one LSTM step by hand -------------------------------------------------------

TEST(Lstm, OneStepComputedByHand) {
  // input 2, hidden 1, batch 1, one step. Gate rows in ONNX order i, o, f, c.
  //   pre_i = 0.1*1 + 0.2*2 + 0.5*h0 + Wbi 0.1            = 0.85
  //   pre_o = 0.3*1 - 0.1*2 - 0.5*h0 + Rbo 0.1            = -0.05
  //   pre_f = -0.2*1 + 0.4*2 + 0.25*h0                    = 0.725
  //   pre_c = 0.5*1 + 0.5*2 + 1.0*h0 + Wbc -0.1           = 1.9
  //   i = sigmoid(0.85) = 0.70056714, o = sigmoid(-0.05) = 0.48750260,
  //   f = sigmoid(0.725) = 0.67370710, c~ = tanh(1.9) = 0.95623746
  //   C = f * c0 + i * c~ = 0.67370710 * 0.5 + 0.70056714 * 0.95623746 = 1.00676209
  //   H = o * tanh(C) = 0.37265648
  const Tensor x = make_tensor<float>({1, 1, 2}, {1.0f, 2.0f});
  const Tensor w = make_tensor<float>({1, 4, 2}, {0.1f, 0.2f, 0.3f, -0.1f, -0.2f, 0.4f, 0.5f, 0.5f});
  const Tensor r = make_tensor<float>({1, 4, 1}, {0.5f, -0.5f, 0.25f, 1.0f});
  const Tensor b = make_tensor<float>({1, 8}, {0.1f, 0.0f, 0.0f, -0.1f, 0.0f, 0.1f, 0.0f, 0.0f});
  const Tensor h0 = make_tensor<float>({1, 1, 1}, {0.5f});
  const Tensor c0 = make_tensor<float>({1, 1, 1}, {0.5f});
  for (bool constant : {true, false}) {
    NodeTest t("LSTM", 14);
    t.input(x);
    if (constant) {
      t.constant_input(w).constant_input(r).constant_input(b);
    } else {
      t.input(w).input(r).input(b);
    }
    auto out = t.missing_input().input(h0).input(c0).attr("hidden_size", int64_t{1}).outputs(3).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 1}, {0.37265648f}), 1e-5, 1e-6);
    expect_tensor_near(out->at(1), make_tensor<float>({1, 1, 1}, {0.37265648f}), 1e-5, 1e-6);
    expect_tensor_near(out->at(2), make_tensor<float>({1, 1, 1}, {1.00676209f}), 1e-5, 1e-6);
  }
}

// ---- bidirectional with sequence_lens, against PyTorch ----------------------------------
// torch.nn.LSTM / GRU (bidirectional, seed 1) over pack_padded_sequence, the
// weights reordered to ONNX's gate order; generated once, pasted here.

// LSTM: seq 3, batch 2, input 2, hidden 3, sequence_lens [3, 2].
const std::vector<float> kLstmX = {0.65921181f, -1.59639537f, -0.37687486f, -3.10203624f, -0.09946748f, -0.72125679f,
                                   1.27078223f, -0.00202251f, -1.09518492f, 0.60164505f,  0.69841421f,  -0.80052239f};
const std::vector<float> kLstmW = {
    0.29748735f,  -0.25482982f, -0.11192598f, 0.27099028f,  -0.54353881f, 0.34624693f,  0.50470036f, 0.17966570f,
    -0.21500884f, -0.34869725f, -0.09677294f, -0.24903466f, -0.11877556f, 0.29372340f,  0.08026149f, -0.07069317f,
    0.16013439f,  0.02848172f,  0.21086459f,  -0.22499397f, -0.04209389f, -0.05197730f, 0.08368343f, -0.00230641f,
    0.33909169f,  -0.33436412f, -0.51325393f, 0.42017749f,  -0.08561055f, 0.32473481f,  0.32550526f, 0.24999450f,
    -0.37320334f, -0.49099571f, 0.55419201f,  0.03014736f,  0.18560919f,  -0.43294069f, 0.11598868f, 0.13867757f,
    -0.38656986f, -0.27393669f, 0.19686237f,  0.10341646f,  -0.24558899f, -0.17477310f, 0.52878511f, -0.10682208f};
const std::vector<float> kLstmR = {
    -0.18501103f, 0.02764446f,  0.34417450f,  0.31381103f,  -0.56438923f, 0.35791126f,  0.16129081f,  0.54764873f,
    0.38108569f,  -0.27527004f, 0.31328988f,  -0.14034073f, 0.57506943f,  0.46279728f,  -0.02703363f, -0.38537154f,
    0.35158446f,  0.17918475f,  -0.52604556f, -0.54894948f, -0.27847457f, 0.50697803f,  -0.09616865f, 0.24708250f,
    -0.26830125f, 0.56650645f,  -0.24427600f, 0.43296927f,  0.00683678f,  -0.30415818f, 0.29676661f,  -0.30646914f,
    0.16980143f,  -0.16671404f, -0.06329745f, -0.55505770f, 0.39574939f,  0.11964510f,  0.18568897f,  0.43125674f,
    0.54745197f,  -0.38311866f, 0.07218551f,  0.43085185f,  0.41825280f,  0.41028389f,  0.36518350f,  0.14912748f,
    -0.39480373f, -0.48483479f, -0.26455379f, -0.06723007f, -0.35388812f, 0.21122570f,  0.35867220f,  -0.41783929f,
    -0.41575235f, -0.34916505f, 0.07253156f,  0.57542473f,  -0.36469808f, 0.30765894f,  -0.31955650f, -0.54283381f,
    -0.12270983f, 0.33265242f,  0.53599751f,  -0.35855690f, 0.12529148f,  0.49817255f,  0.38258320f,  0.35981801f};
const std::vector<float> kLstmB = {
    -0.37321061f, 0.37501475f,  0.35051039f,  -0.40970066f, 0.31408116f,  -0.13538398f, 0.51204902f, -0.32363924f,
    -0.09503530f, -0.01118435f, 0.08432633f,  -0.43816167f, 0.28202024f,  0.03291470f,  0.18956997f, -0.43561596f,
    0.03511120f,  -0.09838463f, 0.12695280f,  0.20992422f,  0.28619871f,  -0.53469104f, 0.29061010f, -0.40594837f,
    0.17868288f,  -0.13073248f, 0.22189924f,  -0.01983544f, -0.54494941f, -0.37159199f, 0.18659079f, 0.35249484f,
    0.38881287f,  -0.19552124f, 0.56408602f,  -0.06674616f, -0.33729002f, -0.24694595f, 0.41047847f, 0.12517819f,
    -0.21018472f, -0.12971599f, -0.18866712f, -0.43144298f, 0.22213545f,  0.18484998f,  0.37394437f, -0.29876268f};
const std::vector<float> kLstmH0 = {0.76907104f,  0.73365772f, 0.79755861f,  -0.76394522f, 0.50781482f,  -0.10097811f,
                                    -0.64323539f, 0.41155499f, -0.30503118f, -0.64799446f, -0.47170812f, 0.33417967f};
const std::vector<float> kLstmC0 = {0.58138818f, -0.16144408f, 0.93907583f, -0.28331321f, 0.20081609f, -0.05764238f,
                                    0.15852408f, 0.28142688f,  0.43308830f, -0.17638963f, 0.17411482f, 0.56853938f};
const std::vector<float> kLstmY = {0.05595183f,  0.12713420f, -0.00620886f, -0.06354000f, 0.09669774f, -0.22252813f,
                                   -0.04569215f, 0.15770459f, -0.07362546f, -0.03325583f, 0.16263625f, 0.05096393f,
                                   -0.01910410f, 0.18222481f, -0.19954787f, -0.13989998f, 0.09322958f, -0.17267977f,
                                   -0.02306838f, 0.18018505f, -0.11970675f, 0.12200583f,  0.05304523f, 0.15343022f,
                                   -0.06583148f, 0.17596582f, -0.28662530f, 0.00000000f,  0.00000000f, 0.00000000f,
                                   0.02613699f,  0.16147265f, -0.05864066f, 0.00000000f,  0.00000000f, 0.00000000f};
const std::vector<float> kLstmYh = {-0.06583148f, 0.17596582f, -0.28662530f, -0.13989998f, 0.09322958f, -0.17267977f,
                                    -0.04569215f, 0.15770459f, -0.07362546f, -0.03325583f, 0.16263625f, 0.05096393f};
const std::vector<float> kLstmYc = {-0.29236957f, 0.29612398f, -0.77825761f, -0.30784476f, 0.18028699f, -0.44128859f,
                                    -0.09355365f, 0.38038135f, -0.17190054f, -0.10059732f, 0.24068636f, 0.16568802f};

TEST(Lstm, BidirectionalWithSequenceLensMatchesPyTorch) {
  for (bool constant : {true, false}) {
    NodeTest t("LSTM", 14);
    t.input(make_tensor<float>({3, 2, 2}, kLstmX));
    const Tensor w = make_tensor<float>({2, 12, 2}, kLstmW);
    const Tensor r = make_tensor<float>({2, 12, 3}, kLstmR);
    const Tensor b = make_tensor<float>({2, 24}, kLstmB);
    if (constant) {
      t.constant_input(w).constant_input(r).constant_input(b);
    } else {
      t.input(w).input(r).input(b);
    }
    auto out = t.input(make_tensor<int32_t>({2}, {3, 2}))
                   .input(make_tensor<float>({2, 2, 3}, kLstmH0))
                   .input(make_tensor<float>({2, 2, 3}, kLstmC0))
                   .attr("hidden_size", int64_t{3})
                   .attr("direction", "bidirectional")
                   .outputs(3)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({3, 2, 2, 3}, kLstmY), 1e-4, 1e-6);
    expect_tensor_near(out->at(1), make_tensor<float>({2, 2, 3}, kLstmYh), 1e-4, 1e-6);
    expect_tensor_near(out->at(2), make_tensor<float>({2, 2, 3}, kLstmYc), 1e-4, 1e-6);
  }
}

// GRU (PyTorch's GRU is linear_before_reset = 1): seq 3, batch 2, input 2,
// hidden 3, sequence_lens [2, 3].
const std::vector<float> kGruX = {0.05814014f,  0.85052782f, -1.09043884f, -0.10891991f, -1.22772729f, 0.05486289f,
                                  -0.05585264f, 0.60216838f, -0.70367986f, -0.21983035f, -1.05080438f, -0.25132099f};
const std::vector<float> kGruW = {-0.11877556f, 0.29372340f,  0.08026149f,  -0.07069317f, 0.16013439f,  0.02848172f,
                                  0.29748735f,  -0.25482982f, -0.11192598f, 0.27099028f,  -0.54353881f, 0.34624693f,
                                  0.21086459f,  -0.22499397f, -0.04209389f, -0.05197730f, 0.08368343f,  -0.00230641f,
                                  -0.40970066f, 0.31408116f,  -0.13538398f, 0.28202024f,  0.03291470f,  0.18956997f,
                                  0.51204902f,  -0.32363924f, -0.09503530f, -0.01118435f, 0.08432633f,  -0.43816167f,
                                  0.12695280f,  0.20992422f,  0.28619871f,  -0.53469104f, 0.29061010f,  -0.40594837f};
const std::vector<float> kGruR = {
    0.31381103f,  -0.56438923f, 0.35791126f,  0.16129081f,  0.54764873f,  0.38108569f,  -0.52604556f, -0.54894948f,
    -0.27847457f, 0.50470036f,  0.17966570f,  -0.21500884f, -0.34869725f, -0.09677294f, -0.24903466f, -0.18501103f,
    0.02764446f,  0.34417450f,  0.50697803f,  -0.09616865f, 0.24708250f,  -0.26830125f, 0.56650645f,  -0.24427600f,
    0.43296927f,  0.00683678f,  -0.30415818f, 0.18560919f,  -0.43294069f, 0.11598868f,  0.13867757f,  -0.38656986f,
    -0.27393669f, 0.19686237f,  0.10341646f,  -0.24558899f, -0.43561596f, 0.03511120f,  -0.09838463f, 0.33909169f,
    -0.33436412f, -0.51325393f, 0.42017749f,  -0.08561055f, 0.32473481f,  -0.17477310f, 0.52878511f,  -0.10682208f,
    0.32550526f,  0.24999450f,  -0.37320334f, -0.49099571f, 0.55419201f,  0.03014736f};
const std::vector<float> kGruB = {-0.16671404f, -0.06329745f, -0.55505770f, 0.29676661f,  -0.30646914f, 0.16980143f,
                                  -0.27527004f, 0.31328988f,  -0.14034073f, -0.38537154f, 0.35158446f,  0.17918475f,
                                  0.57506943f,  0.46279728f,  -0.02703363f, -0.37321061f, 0.37501475f,  0.35051039f,
                                  0.43125674f,  0.54745197f,  -0.38311866f, 0.39574939f,  0.11964510f,  0.18568897f,
                                  0.07218551f,  0.43085185f,  0.41825280f,  -0.34916505f, 0.07253156f,  0.57542473f,
                                  0.35867220f,  -0.41783929f, -0.41575235f, -0.36469808f, 0.30765894f,  -0.31955650f};
const std::vector<float> kGruH0 = {-0.37940782f, -0.49160850f, 0.11777233f,  0.72817749f,  0.04113007f, -0.06144819f,
                                   -0.22096220f, 1.13207924f,  -0.88020414f, -0.24852900f, 0.12655576f, -0.80003512f};
const std::vector<float> kGruY = {-0.51212668f, -0.05614629f, 0.03985366f,  0.05393064f,  0.20909260f, 0.12601198f,
                                  0.16360310f,  0.66342992f,  -0.25241417f, -0.13014892f, 0.28347260f, -0.05680313f,
                                  -0.63591176f, 0.24506494f,  -0.07311851f, -0.32395753f, 0.32124019f, 0.08228316f,
                                  -0.03758048f, 0.87178922f,  -0.47725022f, -0.08089009f, 0.25208667f, -0.17545848f,
                                  0.00000000f,  0.00000000f,  0.00000000f,  -0.54810977f, 0.44253758f, -0.03530013f,
                                  0.00000000f,  0.00000000f,  0.00000000f,  -0.23387365f, 0.24153912f, -0.38491109f};
const std::vector<float> kGruYh = {-0.63591176f, 0.24506494f, -0.07311851f, -0.54810977f, 0.44253758f, -0.03530013f,
                                   0.16360310f,  0.66342992f, -0.25241417f, -0.13014892f, 0.28347260f, -0.05680313f};

TEST(Gru, BidirectionalLinearBeforeResetWithSequenceLensMatchesPyTorch) {
  for (bool constant : {true, false}) {
    NodeTest t("GRU", 14);
    t.input(make_tensor<float>({3, 2, 2}, kGruX));
    const Tensor w = make_tensor<float>({2, 9, 2}, kGruW);
    const Tensor r = make_tensor<float>({2, 9, 3}, kGruR);
    const Tensor b = make_tensor<float>({2, 18}, kGruB);
    if (constant) {
      t.constant_input(w).constant_input(r).constant_input(b);
    } else {
      t.input(w).input(r).input(b);
    }
    auto out = t.input(make_tensor<int32_t>({2}, {2, 3}))
                   .input(make_tensor<float>({2, 2, 3}, kGruH0))
                   .attr("hidden_size", int64_t{3})
                   .attr("direction", "bidirectional")
                   .attr("linear_before_reset", int64_t{1})
                   .outputs(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({3, 2, 2, 3}, kGruY), 1e-4, 1e-6);
    expect_tensor_near(out->at(1), make_tensor<float>({2, 2, 3}, kGruYh), 1e-4, 1e-6);
  }
}

// ---- a naive reference from the spec's equations ------------------------------------------

struct Act {
  std::string name;
  double alpha = 0.0;
  double beta = 0.0;
};

double apply(const Act& a, double x) {
  if (a.name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return std::max(x, 0.0);
  if (a.name == "Affine") return a.alpha * x + a.beta;
  if (a.name == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (a.name == "ThresholdedRelu") return x >= a.alpha ? x : 0.0;
  if (a.name == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (a.name == "HardSigmoid") return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (a.name == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
  if (a.name == "Softsign") return x / (1.0 + std::fabs(x));
  if (a.name == "Softplus") return std::log(1.0 + std::exp(x));
  ADD_FAILURE() << "unknown activation " << a.name;
  return 0.0;
}

struct Config {
  std::string op;  // LSTM, GRU, RNN
  int64_t seq = 4, batch = 13, input = 5, hidden = 72;
  std::string direction = "forward";
  int64_t layout = 0;
  float clip = 0.0f;  // 0: none
  bool input_forget = false;
  bool linear_before_reset = false;
  bool peephole = false;
  bool initial_state = true;
  bool short_lens = false;  // sequence_lens with some rows shorter than seq
  std::vector<Act> acts;    // per direction then repeated; empty: defaults
};

struct Data {
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

int64_t gate_count(const Config& c) { return c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1; }
int64_t dir_count(const Config& c) { return c.direction == "bidirectional" ? 2 : 1; }

Data make_data(const Config& c, uint32_t seed) {
  const int64_t G = gate_count(c), D = dir_count(c), H = c.hidden;
  Data d;
  d.x = random_floats(static_cast<size_t>(c.seq * c.batch * c.input), -1.5f, 1.5f, seed);
  d.w = random_floats(static_cast<size_t>(D * G * H * c.input), -0.4f, 0.4f, seed + 1);
  d.r = random_floats(static_cast<size_t>(D * G * H * H), -0.15f, 0.15f, seed + 2);
  d.b = random_floats(static_cast<size_t>(D * 2 * G * H), -0.3f, 0.3f, seed + 3);
  d.h0 = random_floats(static_cast<size_t>(D * c.batch * H), -0.8f, 0.8f, seed + 4);
  d.c0 = random_floats(static_cast<size_t>(D * c.batch * H), -0.8f, 0.8f, seed + 5);
  d.p = random_floats(static_cast<size_t>(D * 3 * H), -0.5f, 0.5f, seed + 6);
  if (c.short_lens)
    for (int64_t b = 0; b < c.batch; ++b) d.lens.push_back(static_cast<int32_t>((b * 3 + 1) % (c.seq + 1)));
  return d;
}

struct Outputs {
  std::vector<float> y, y_h, y_c;
};

Outputs reference(const Config& c, const Data& d) {
  const int64_t G = gate_count(c), D = dir_count(c), H = c.hidden, I = c.input, B = c.batch, S = c.seq;
  const bool bm = c.layout == 1;
  std::vector<Act> acts = c.acts;
  if (acts.empty()) {
    if (c.op == "LSTM") acts = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
    if (c.op == "GRU") acts = {{"Sigmoid"}, {"Tanh"}};
    if (c.op == "RNN") acts = {{"Tanh"}};
  }
  const size_t per_dir = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
  Outputs o;
  o.y.assign(static_cast<size_t>(S * D * B * H), 0.0f);
  o.y_h.assign(static_cast<size_t>(D * B * H), 0.0f);
  o.y_c.assign(static_cast<size_t>(D * B * H), 0.0f);
  const auto state_at = [&](int64_t dir, int64_t b, int64_t j) {
    return static_cast<size_t>(bm ? (b * D + dir) * H + j : (dir * B + b) * H + j);
  };
  const auto clip = [&](double v) { return c.clip > 0 ? std::min(std::max(v, -double{c.clip}), double{c.clip}) : v; };
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool rev = c.direction == "reverse" || dir == 1;
    const Act* a = &acts[(acts.size() == per_dir ? 0 : static_cast<size_t>(dir) * per_dir)];
    const float* W = d.w.data() + dir * G * H * I;
    const float* R = d.r.data() + dir * G * H * H;
    const float* Wb = d.b.data() + dir * 2 * G * H;
    const float* Rb = Wb + G * H;
    const float* P = d.p.data() + dir * 3 * H;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), cs(static_cast<size_t>(H), 0.0);
      if (c.initial_state)
        for (int64_t j = 0; j < H; ++j) {
          h[static_cast<size_t>(j)] = d.h0[state_at(dir, b, j)];
          cs[static_cast<size_t>(j)] = d.c0[state_at(dir, b, j)];
        }
      const int64_t len = d.lens.empty() ? S : d.lens[static_cast<size_t>(b)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        const float* x = d.x.data() + (bm ? (b * S + t) : (t * B + b)) * I;
        // xw[g][j] = W x + Wb, hr[g][j] = R h + Rb.
        std::vector<double> xw(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H));
        for (int64_t k = 0; k < G * H; ++k) {
          double sx = Wb[k], sh = Rb[k];
          for (int64_t i = 0; i < I; ++i) sx += double{W[k * I + i]} * x[i];
          for (int64_t i = 0; i < H; ++i) sh += double{R[k * H + i]} * h[static_cast<size_t>(i)];
          xw[static_cast<size_t>(k)] = sx;
          hr[static_cast<size_t>(k)] = sh;
        }
        std::vector<double> hn(static_cast<size_t>(H));
        if (c.op == "LSTM") {
          for (int64_t j = 0; j < H; ++j) {
            const auto u = static_cast<size_t>(j);
            const auto pre = [&](int64_t g) {
              return xw[static_cast<size_t>(g * H + j)] + hr[static_cast<size_t>(g * H + j)];
            };
            const double pi = c.peephole ? P[j] * cs[u] : 0.0;
            const double pf = c.peephole ? P[2 * H + j] * cs[u] : 0.0;
            const double ig = apply(a[0], clip(pre(0) + pi));
            const double fg = c.input_forget ? 1.0 - ig : apply(a[0], clip(pre(2) + pf));
            const double cg = apply(a[1], clip(pre(3)));
            cs[u] = fg * cs[u] + ig * cg;
            const double po = c.peephole ? P[H + j] * cs[u] : 0.0;
            const double og = apply(a[0], clip(pre(1) + po));
            hn[u] = og * apply(a[2], cs[u]);
          }
        } else if (c.op == "GRU") {
          std::vector<double> z(static_cast<size_t>(H)), r(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            const auto u = static_cast<size_t>(j);
            z[u] = apply(a[0], clip(xw[u] + hr[u]));
            r[u] = apply(a[0], clip(xw[static_cast<size_t>(H + j)] + hr[static_cast<size_t>(H + j)]));
          }
          for (int64_t j = 0; j < H; ++j) {
            const auto u = static_cast<size_t>(j);
            const auto k = static_cast<size_t>(2 * H + j);
            double pre;
            if (c.linear_before_reset) {
              pre = xw[k] + r[u] * hr[k];  // hr[k] = Rh h + Rbh
            } else {
              double rs = Rb[2 * H + j];
              for (int64_t i = 0; i < H; ++i)
                rs += double{R[(2 * H + j) * H + i]} * r[static_cast<size_t>(i)] * h[static_cast<size_t>(i)];
              pre = xw[k] + rs;
            }
            hn[u] = (1.0 - z[u]) * apply(a[1], clip(pre)) + z[u] * h[u];
          }
        } else {
          for (int64_t j = 0; j < H; ++j)
            hn[static_cast<size_t>(j)] = apply(a[0], clip(xw[static_cast<size_t>(j)] + hr[static_cast<size_t>(j)]));
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) {
          const int64_t yi = bm ? ((b * S + t) * D + dir) * H + j : ((t * D + dir) * B + b) * H + j;
          o.y[static_cast<size_t>(yi)] = static_cast<float>(h[static_cast<size_t>(j)]);
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        o.y_h[state_at(dir, b, j)] = static_cast<float>(h[static_cast<size_t>(j)]);
        o.y_c[state_at(dir, b, j)] = static_cast<float>(cs[static_cast<size_t>(j)]);
      }
    }
  }
  return o;
}

// Runs the node through NodeTest (weights constant or runtime inputs).
Result<std::vector<Tensor>> run_kernel(const Config& c, const Data& d, bool constant, int threads) {
  const int64_t G = gate_count(c), D = dir_count(c), H = c.hidden;
  const Shape xs = c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input};
  const Shape ss = c.layout == 0 ? Shape{D, c.batch, H} : Shape{c.batch, D, H};
  NodeTest t(c.op, 14);
  t.input(make_tensor<float>(xs, d.x));
  const Tensor w = make_tensor<float>({D, G * H, c.input}, d.w);
  const Tensor r = make_tensor<float>({D, G * H, H}, d.r);
  const Tensor b = make_tensor<float>({D, 2 * G * H}, d.b);
  if (constant) {
    t.constant_input(w).constant_input(r).constant_input(b);
  } else {
    t.input(w).input(r).input(b);
  }
  if (d.lens.empty()) {
    t.missing_input();
  } else {
    t.input(make_tensor<int32_t>({c.batch}, d.lens));
  }
  if (c.initial_state) {
    t.input(make_tensor<float>(ss, d.h0));
  } else {
    t.missing_input();
  }
  if (c.op == "LSTM") {
    if (c.initial_state) {
      t.input(make_tensor<float>(ss, d.c0));
    } else {
      t.missing_input();
    }
    if (c.peephole) t.input(make_tensor<float>({D, 3 * H}, d.p));
    if (c.input_forget) t.attr("input_forget", int64_t{1});
  }
  if (c.op == "GRU" && c.linear_before_reset) t.attr("linear_before_reset", int64_t{1});
  if (c.clip > 0) t.attr("clip", c.clip);
  t.attr("hidden_size", H).attr("direction", c.direction).attr("layout", c.layout);
  return t.outputs(c.op == "LSTM" ? 3 : 2).threads(threads).run();
}

void check_against_reference(const Config& c, uint32_t seed) {
  const Data d = make_data(c, seed);
  const Outputs want = reference(c, d);
  const int64_t D = dir_count(c), H = c.hidden;
  const Shape ys = c.layout == 0 ? Shape{c.seq, D, c.batch, H} : Shape{c.batch, c.seq, D, H};
  const Shape ss = c.layout == 0 ? Shape{D, c.batch, H} : Shape{c.batch, D, H};
  for (bool constant : {true, false}) {
    for (int threads : {1, 4}) {
      SCOPED_TRACE(c.op + " " + c.direction + " layout " + std::to_string(c.layout) +
                   (constant ? " constant" : " runtime") + " threads " + std::to_string(threads) +
                   (c.short_lens ? " short lens" : "") + (c.clip > 0 ? " clip" : "") + (c.peephole ? " peephole" : "") +
                   (c.input_forget ? " input_forget" : "") + (c.linear_before_reset ? " lbr" : ""));
      auto out = run_kernel(c, d, constant, threads);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      expect_tensor_near(out->at(0), make_tensor<float>(ys, want.y), 1e-4, 2e-6);
      expect_tensor_near(out->at(1), make_tensor<float>(ss, want.y_h), 1e-4, 2e-6);
      if (c.op == "LSTM") expect_tensor_near(out->at(2), make_tensor<float>(ss, want.y_c), 1e-4, 2e-6);
    }
  }
}

// The kernel cuts the hidden units into chunks of 64: hidden 72 (LSTM), 70
// (GRU) and 136 (RNN) end in a partial chunk after one full chunk (two for RNN), and
// batch 13 with 4 threads makes the kernel split the batch into blocks too.
TEST(Lstm, MatchesReferenceAcrossDirectionsLayoutsAndOptions) {
  uint32_t seed = 100;
  for (const char* dir : {"forward", "reverse", "bidirectional"})
    for (int64_t layout : {0, 1})
      for (bool short_lens : {false, true}) {
        Config c;
        c.op = "LSTM";
        c.direction = dir;
        c.layout = layout;
        c.short_lens = short_lens;
        check_against_reference(c, seed++);
      }
  Config c;
  c.op = "LSTM";
  c.direction = "bidirectional";
  c.peephole = true;
  c.clip = 0.7f;
  c.short_lens = true;
  check_against_reference(c, seed++);
  c.input_forget = true;
  c.initial_state = false;
  check_against_reference(c, seed++);
}

TEST(Gru, MatchesReferenceAcrossDirectionsLayoutsAndOptions) {
  uint32_t seed = 200;
  for (bool lbr : {false, true})
    for (const char* dir : {"forward", "reverse", "bidirectional"})
      for (int64_t layout : {0, 1}) {
        Config c;
        c.op = "GRU";
        c.hidden = 70;
        c.direction = dir;
        c.layout = layout;
        c.linear_before_reset = lbr;
        c.short_lens = layout == 1;
        c.initial_state = layout == 0;
        check_against_reference(c, seed++);
      }
  Config c;
  c.op = "GRU";
  c.hidden = 70;
  c.direction = "bidirectional";
  c.clip = 0.5f;
  c.short_lens = true;
  check_against_reference(c, seed++);
}

TEST(Rnn, MatchesReferenceAcrossDirectionsLayoutsAndOptions) {
  uint32_t seed = 300;
  for (const char* dir : {"forward", "reverse", "bidirectional"})
    for (int64_t layout : {0, 1}) {
      Config c;
      c.op = "RNN";
      c.hidden = 136;
      c.direction = dir;
      c.layout = layout;
      c.short_lens = layout == 1;
      check_against_reference(c, seed++);
    }
}

TEST(Lstm, Opset7WithOnlyYh) {
  // Version 7 has no layout; Y omitted, only Y_h asked for.
  Config c;
  c.op = "LSTM";
  c.hidden = 6;
  c.batch = 2;
  const Data d = make_data(c, 7);
  const Outputs want = reference(c, d);
  NodeTest t("LSTM", 7);
  auto out = t.input(make_tensor<float>({c.seq, 2, c.input}, d.x))
                 .constant_input(make_tensor<float>({1, 24, c.input}, d.w))
                 .constant_input(make_tensor<float>({1, 24, 6}, d.r))
                 .constant_input(make_tensor<float>({1, 48}, d.b))
                 .missing_input()
                 .input(make_tensor<float>({1, 2, 6}, d.h0))
                 .input(make_tensor<float>({1, 2, 6}, d.c0))
                 .attr("hidden_size", int64_t{6})
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(1), make_tensor<float>({1, 2, 6}, want.y_h), 1e-4, 2e-6);
}

// ---- activations: NodeTest has no string-list attributes, so this builds
// the node by hand, the way NodeTest does.

Result<std::vector<Tensor>> run_with_attributes(const std::string& op, const std::vector<Tensor>& inputs,
                                                std::vector<Attribute> attributes, int outputs) {
  Graph graph;
  graph.name = "rnn_test";
  graph.opsets[""] = 14;
  Node node;
  node.name = "test_node";
  node.op_type = op;
  node.attributes = std::move(attributes);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ValueId v =
        graph.add_value("input" + std::to_string(k), ValueType::tensor(inputs[k].dtype(), inputs[k].shape()));
    graph.values[static_cast<size_t>(v)].is_graph_input = true;
    graph.inputs.push_back(v);
    node.inputs.push_back(v);
  }
  for (int i = 0; i < outputs; ++i) {
    const ValueId v = graph.add_value("output" + std::to_string(i));
    graph.values[static_cast<size_t>(v)].is_graph_output = true;
    graph.outputs.push_back(v);
    node.outputs.push_back(v);
  }
  const NodeId id = graph.add_node(node);
  SY_RETURN_IF_ERROR(resolve(graph));
  const Node& resolved = graph.nodes[static_cast<size_t>(id)];
  std::string reason;
  const KernelDef* def = cpu::cpu_kernel_registry().find(graph, resolved, reason);
  if (def == nullptr) return not_implemented(reason);
  KernelCreateContext create_ctx(graph, resolved);
  SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(create_ctx));
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  ThreadPool pool(1);
  OwningKernelContext ctx(resolved, ptrs, &pool);
  SY_RETURN_IF_ERROR(run_kernel_once(*kernel, ctx));
  return std::move(ctx.outputs());
}

Attribute strings_attr(const std::string& name, std::vector<std::string> values) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kStrings;
  a.strings = std::move(values);
  return a;
}
Attribute floats_attr(const std::string& name, std::vector<float> values) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloats;
  a.floats = std::move(values);
  return a;
}
Attribute int_attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = v;
  return a;
}
Attribute string_attr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = v;
  return a;
}

// Every activation the spec lists, with alpha / beta handed out in order to
// the functions that take them (and defaults for the rest).
TEST(Lstm, ActivationsWithAlphaAndBeta) {
  struct Case {
    std::vector<std::string> names;  // two directions
    std::vector<float> alphas, betas;
    std::vector<Act> expected;  // the six activations the reference applies
  };
  const std::vector<Case> cases = {
      {{"HardSigmoid", "ScaledTanh", "Affine", "sigmoid", "Softsign", "LeakyRelu"},
       {0.3f, 0.9f, 1.5f, 0.2f},
       {0.4f, 0.7f, -0.1f},
       {{"HardSigmoid", 0.3, 0.4},
        {"ScaledTanh", 0.9, 0.7},
        {"Affine", 1.5, -0.1},
        {"Sigmoid"},
        {"Softsign"},
        {"LeakyRelu", 0.2}}},
      {{"Sigmoid", "Elu", "Softplus", "HardSigmoid", "Relu", "ThresholdedRelu"},
       {},
       {},
       {{"Sigmoid"}, {"Elu", 1.0}, {"Softplus"}, {"HardSigmoid", 0.2, 0.5}, {"Relu"}, {"ThresholdedRelu", 1.0}}},
  };
  for (const Case& k : cases) {
    Config c;
    c.op = "LSTM";
    c.hidden = 5;
    c.batch = 3;
    c.direction = "bidirectional";
    c.initial_state = false;
    c.acts = k.expected;
    const Data d = make_data(c, 42);
    const Outputs want = reference(c, d);
    std::vector<Tensor> inputs = {make_tensor<float>({c.seq, 3, c.input}, d.x),
                                  make_tensor<float>({2, 20, c.input}, d.w), make_tensor<float>({2, 20, 5}, d.r),
                                  make_tensor<float>({2, 40}, d.b)};
    std::vector<Attribute> attrs = {int_attr("hidden_size", 5), string_attr("direction", "bidirectional"),
                                    strings_attr("activations", k.names)};
    if (!k.alphas.empty()) attrs.push_back(floats_attr("activation_alpha", k.alphas));
    if (!k.betas.empty()) attrs.push_back(floats_attr("activation_beta", k.betas));
    auto out = run_with_attributes("LSTM", inputs, attrs, 3);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({c.seq, 2, 3, 5}, want.y), 1e-4, 2e-6);
    expect_tensor_near(out->at(2), make_tensor<float>({2, 3, 5}, want.y_c), 1e-4, 2e-6);
  }
}

TEST(Rnn, ActivationListedOnceForBothDirections) {
  // One name for a bidirectional RNN applies to both directions. No B and no
  // initial_h: the reference runs with zero biases and zero state.
  Config c;
  c.op = "RNN";
  c.hidden = 4;
  c.batch = 2;
  c.direction = "bidirectional";
  c.initial_state = false;
  c.acts = {{"Relu"}};
  Data d = make_data(c, 9);
  std::fill(d.b.begin(), d.b.end(), 0.0f);
  const Outputs want = reference(c, d);
  auto out = run_with_attributes(
      "RNN",
      {make_tensor<float>({c.seq, 2, c.input}, d.x), make_tensor<float>({2, 4, c.input}, d.w),
       make_tensor<float>({2, 4, 4}, d.r)},
      {int_attr("hidden_size", 4), string_attr("direction", "bidirectional"), strings_attr("activations", {"Relu"})},
      2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({c.seq, 2, 2, 4}, want.y), 1e-4, 2e-6);
  expect_tensor_near(out->at(1), make_tensor<float>({2, 2, 4}, want.y_h), 1e-4, 2e-6);
}

// ---- errors and inference --------------------------------------------------------

TEST(Lstm, UnknownActivationIsNotImplemented) {
  auto out =
      run_with_attributes("LSTM",
                          {make_tensor<float>({1, 1, 1}, {1}), make_tensor<float>({1, 4, 1}, {1, 1, 1, 1}),
                           make_tensor<float>({1, 4, 1}, {1, 1, 1, 1})},
                          {int_attr("hidden_size", 1), strings_attr("activations", {"Sigmoid", "Gelu", "Tanh"})}, 2);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kNotImplemented);
  EXPECT_NE(out.status().message().find("Gelu"), std::string::npos) << out.status().to_string();
}

TEST(Lstm, BadShapesAndSequenceLensAreErrors) {
  auto bad_w = NodeTest("LSTM", 14)
                   .input(make_tensor<float>({2, 1, 3}, std::vector<float>(6, 0.5f)))
                   .input(make_tensor<float>({1, 8, 2}, std::vector<float>(16, 0.1f)))
                   .input(make_tensor<float>({1, 8, 2}, std::vector<float>(16, 0.1f)))
                   .attr("hidden_size", int64_t{2})
                   .dynamic_shapes()
                   .outputs(2)
                   .run();
  ASSERT_FALSE(bad_w.ok());
  EXPECT_NE(bad_w.status().message().find("W must be [1,8,3]"), std::string::npos) << bad_w.status().to_string();

  auto bad_lens = NodeTest("LSTM", 14)
                      .input(make_tensor<float>({2, 1, 1}, {1, 2}))
                      .input(make_tensor<float>({1, 4, 1}, {1, 1, 1, 1}))
                      .input(make_tensor<float>({1, 4, 1}, {1, 1, 1, 1}))
                      .missing_input()
                      .input(make_tensor<int32_t>({1}, {3}))
                      .attr("hidden_size", int64_t{1})
                      .outputs(2)
                      .run();
  ASSERT_FALSE(bad_lens.ok());
  EXPECT_NE(bad_lens.status().message().find("sequence_lens[0] = 3"), std::string::npos)
      << bad_lens.status().to_string();
}

TEST(Gru, InfersOutputShapesForBothLayouts) {
  for (int64_t layout : {0, 1}) {
    NodeTest t("GRU", 14);
    const Shape xs = layout == 0 ? Shape{5, 2, 3} : Shape{2, 5, 3};
    auto out = t.input(make_tensor<float>(xs, std::vector<float>(30, 0.1f)))
                   .constant_input(make_tensor<float>({2, 12, 3}, std::vector<float>(72, 0.1f)))
                   .constant_input(make_tensor<float>({2, 12, 4}, std::vector<float>(96, 0.1f)))
                   .attr("hidden_size", int64_t{4})
                   .attr("direction", "bidirectional")
                   .attr("layout", layout)
                   .outputs(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const Shape ys = layout == 0 ? Shape{5, 2, 2, 4} : Shape{2, 5, 2, 4};
    const Shape hs = layout == 0 ? Shape{2, 2, 4} : Shape{2, 2, 4};
    EXPECT_EQ(out->at(0).shape(), ys);
    EXPECT_EQ(out->at(1).shape(), hs);
    const Graph& g = t.graph();
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].type.static_shape(), ys);
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[1])].type.static_shape(), hs);
  }
}

}  // namespace
}  // namespace sy::testing
