// MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] matrix of
// triangular filters that maps a one-sided spectrogram to mel bands, made
// the way the spec's reference code makes it (its results are what the
// node test expects):
//   - num_mel_bins + 2 band edges evenly spaced on the mel scale
//     mel(f) = 2595 log10(1 + f / 700) from lower_edge_hertz to
//     upper_edge_hertz, the step being (high - low) / (num_mel_bins + 2);
//   - each edge back in hertz, then to the DFT bin
//     floor((dft_length + 1) hz / sample_rate);
//   - filter i rises from 0 at edge i to 1 at edge i + 1 and falls back
//     to 0 at edge i + 2 (a filter whose rising side is empty is 1 at its
//     centre).
// The mel values of the two edge frequencies are computed in the edges'
// own type (float for float, float16 and bfloat16), as numpy does for
// float32 inputs; the rest in double. An edge whose bin falls outside the
// matrix is an error (numpy would fail or wrap around).
#include <cmath>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/cpu/signal_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// numpy's floor_divide for floats: floor of the quotient computed from
// fmod, so that a quotient just below an integer is not rounded up to it
// first (as floor(a / b) would).
double floor_divide(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1.0;
  return floored;
}

// The mel value of the lowest edge and the step between edges, in C
// (float or double).
template <typename C>
void edge_mels(double lower_hz, double upper_hz, int64_t edges, double& low_mel, double& step) {
  const C low = C(2595) * std::log10(C(1) + static_cast<C>(lower_hz) / C(700));
  const C high = C(2595) * std::log10(C(1) + static_cast<C>(upper_hz) / C(700));
  low_mel = low;
  step = (high - low) / static_cast<C>(edges);
}

// A float input of one element, as double.
Status scalar_float_input(const KernelContext& ctx, size_t i, const std::string& name, double& out) {
  const Tensor& t = *ctx.input(i);
  if (t.num_elements() != 1 || t.shape().rank() > 1)
    return kernel_error(ctx, describe_input(ctx, i, name) + " must be a scalar");
  const bool known = visit_type(FloatTypes{}, t.dtype(),
                                [&]<typename T>(TypeTag<T>) { out = static_cast<double>(load(t.data<T>()[0])); });
  if (!known) return kernel_error(ctx, describe_input(ctx, i, name) + " must be a float type");
  return ok_status();
}

class MelWeightMatrixKernel final : public Kernel {
 public:
  MelWeightMatrixKernel(const KernelCreateContext& ctx, Status& status) {
    status = read_output_datatype(ctx, dtype_);
  }

  Status run(KernelContext& ctx) const override {
    int64_t mel_bins = 0;
    int64_t dft_length = 0;
    int64_t sample_rate = 0;
    double lower_hz = 0;
    double upper_hz = 0;
    SY_RETURN_IF_ERROR(scalar_int_input(ctx, 0, "num_mel_bins", mel_bins));
    SY_RETURN_IF_ERROR(scalar_int_input(ctx, 1, "dft_length", dft_length));
    SY_RETURN_IF_ERROR(scalar_int_input(ctx, 2, "sample_rate", sample_rate));
    SY_RETURN_IF_ERROR(scalar_float_input(ctx, 3, "lower_edge_hertz", lower_hz));
    SY_RETURN_IF_ERROR(scalar_float_input(ctx, 4, "upper_edge_hertz", upper_hz));
    if (mel_bins < 0 || dft_length < 1 || sample_rate < 1)
      return kernel_invalid_argument(ctx, "num_mel_bins must not be negative and dft_length and sample_rate must be "
                                          "positive, got " + std::to_string(mel_bins) + ", " +
                                          std::to_string(dft_length) + ", " + std::to_string(sample_rate));
    const int64_t spectrum_bins = dft_length / 2 + 1;
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_, Shape{spectrum_bins, mel_bins}));

    const int64_t edges = mel_bins + 2;
    ScratchCarver carver;
    const size_t weights_at = carver.add<double>(y->num_elements());
    const size_t edges_at = carver.add<int64_t>(edges);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
    double* weights = ScratchCarver::pointer<double>(scratch, weights_at);
    int64_t* edge_bin = ScratchCarver::pointer<int64_t>(scratch, edges_at);

    double low_mel = 0;
    double step = 0;
    if (ctx.input(3)->dtype() == DataType::kDouble) edge_mels<double>(lower_hz, upper_hz, edges, low_mel, step);
    else edge_mels<float>(lower_hz, upper_hz, edges, low_mel, step);
    const std::string edges_text = "lower_edge_hertz " + std::to_string(lower_hz) + " and upper_edge_hertz " +
                                   std::to_string(upper_hz) + " (sample_rate " + std::to_string(sample_rate) +
                                   ", dft_length " + std::to_string(dft_length) + ")";
    for (int64_t e = 0; e < edges; ++e) {
      const double mel = static_cast<double>(e) * step + low_mel;
      const double hz = 700 * (std::pow(10.0, mel / 2595) - 1);
      const double bin = floor_divide((static_cast<double>(dft_length) + 1) * hz, static_cast<double>(sample_rate));
      // Outside [-1, spectrum_bins] it can only index outside the matrix.
      if (!(bin >= -1 && bin <= static_cast<double>(spectrum_bins)))
        return kernel_invalid_argument(ctx, edges_text + " put a mel band edge at DFT bin " + std::to_string(bin) +
                                                ", outside the " + std::to_string(spectrum_bins) + " bins");
      edge_bin[e] = static_cast<int64_t>(bin);
    }

    std::fill(weights, weights + y->num_elements(), 0.0);
    bool inside = true;
    auto set = [&](int64_t row, int64_t band, double value) {
      if (row < 0 || row >= spectrum_bins) inside = false;
      else weights[row * mel_bins + band] = value;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t low = edge_bin[i];
      const int64_t centre = edge_bin[i + 1];
      const int64_t high = edge_bin[i + 2];
      if (centre == low) {
        set(centre, i, 1.0);
      } else {
        for (int64_t j = low; j <= centre; ++j)
          set(j, i, static_cast<double>(j - low) / static_cast<double>(centre - low));
      }
      if (high > centre) {
        for (int64_t j = centre; j < high; ++j)
          set(j, i, static_cast<double>(high - j) / static_cast<double>(high - centre));
      }
    }
    if (!inside)
      return kernel_invalid_argument(ctx, edges_text + " put a mel filter outside the " +
                                              std::to_string(spectrum_bins) + " DFT bins");
    store_values(*y, y->num_elements(), [&](int64_t i) { return weights[i]; });
    return ok_status();
  }

 private:
  DataType dtype_ = DataType::kFloat;
};

const KernelDef kMelWeightMatrixKernels[] = {
    {"", "MelWeightMatrix", 17, kLatestVersion, 0, kIndexTypes, &make_kernel<MelWeightMatrixKernel>},
};

}  // namespace

std::span<const KernelDef> mel_weight_matrix_kernels() { return kMelWeightMatrixKernels; }

}  // namespace sy::cpu
