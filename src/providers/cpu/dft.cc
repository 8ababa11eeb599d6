// DFT (opset 17: axis attribute; 20: axis input): the discrete Fourier
// transform along one axis of a real ([..., 1]) or complex ([..., 2])
// signal, forward or inverse, over dft_length points (the signal cut or
// zero-padded to it). onesided=1 keeps the first n/2 + 1 bins of a forward
// transform (RFFT) or, with inverse=1, reads n/2 + 1 bins of a Hermitian
// spectrum and returns the real signal (IRFFT, numpy's irfft: the imaginary
// parts of the zero and Nyquist bins do not count). Beyond what the spec
// promises, a one-sided forward transform of a complex input keeps the
// first bins of its full transform, and IRFFT reads a real input as a
// spectrum with zero imaginary parts.
//
// Every line along the axis is gathered into a complex buffer, transformed
// by the FFT plan of its length (fft.h) and scattered to the output. The
// inverse is conj(FFT(conj(X))) / n, the conjugations folded into the
// gather and scatter.
//
// float and double compute in double. Where the node tests expect a bin
// that is zero in exact arithmetic (the imaginary parts of a real
// signal's zero and Nyquist bins), numpy's value is within about 1e-14 of
// zero; a float FFT of their signals leaves about 1e-5 there, beyond the
// suite's absolute tolerance of 1e-7 (ONNX Runtime fails those tests for
// that reason), double about 1e-13. float16 and bfloat16 compute in
// float, which is plenty for their precision.
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/fft.h"
#include "providers/cpu/signal_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// One run's geometry: the input is [outer, in_len, inner, in_channels]
// around the axis, the output [outer, out_len, inner, out_channels].
struct DftGeometry {
  int64_t n = 0;  // transform length (dft_length)
  int64_t in_len = 0;
  int64_t out_len = 0;
  int64_t outer = 0;
  int64_t inner = 0;
  int64_t in_channels = 0;   // 1 real, 2 complex
  int64_t out_channels = 0;
  Shape out_shape;
};

class DftKernel final : public Kernel {
 public:
  DftKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const int64_t inverse = node.attr_int("inverse", 0);
    const int64_t onesided = node.attr_int("onesided", 0);
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1)) {
      status = ctx.error("inverse and onesided must be 0 or 1, got " + std::to_string(inverse) + " and " +
                         std::to_string(onesided));
      return;
    }
    inverse_ = inverse == 1;
    onesided_ = onesided == 1;
    axis_from_input_ = ctx.opset() >= 20;
    axis_attr_ = node.attr_int("axis", 1);
  }

  bool prepares() const override { return true; }

  // Plans the FFT for the length this run's inputs give. The plan is found
  // by its length, which run() checks, so a later run with other
  // dft_length or axis values under the same shapes plans in scratch
  // rather than use it. Inputs run() would refuse get no plan.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    DftGeometry g;
    if (!geometry(ctx, g).ok()) return std::unique_ptr<KernelState>();
    return make_fft_state(ctx.input(0)->dtype(), g.n);
  }

  Status run(KernelContext& ctx) const override {
    DftGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, g));
    const Tensor& x = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), g.out_shape));
    if (y->num_elements() == 0) return ok_status();
    Status status = ok_status();
    const bool known = visit_type(FloatTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      status = transform<T, FftComputeType<T>>(ctx, g, x.data<T>(), y->data<T>());
    });
    if (!known) return kernel_error(ctx, "input 0 (input) has unsupported type " + x.describe());
    return status;
  }

 private:
  Status geometry(const KernelContext& ctx, DftGeometry& g) const {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    if (rank < 2 || (s[s.rank() - 1] != 1 && s[s.rank() - 1] != 2))
      return kernel_error(ctx, describe_input(ctx, 0, "input") +
                                   " must be [..., signal, ..., 1] (real) or [..., 2] (complex)");
    int64_t axis = axis_attr_;
    if (axis_from_input_) {
      axis = -2;
      if (ctx.input(2) != nullptr) SY_RETURN_IF_ERROR(scalar_int_input(ctx, 2, "axis", axis));
    }
    // The last dim holds the real and imaginary parts: never the axis.
    if (axis < -rank || axis > rank - 2 || axis == -1)
      return kernel_error(ctx, "axis " + std::to_string(axis) + " is out of range for input of rank " +
                                   std::to_string(rank) + " (accepted: [-rank, -2] and [0, rank - 2])");
    if (axis < 0) axis += rank;
    const auto a = static_cast<size_t>(axis);
    g.in_len = s[a];
    const bool irfft = inverse_ && onesided_;
    if (ctx.input(1) != nullptr) {
      SY_RETURN_IF_ERROR(scalar_int_input(ctx, 1, "dft_length", g.n));
    } else {
      g.n = irfft ? 2 * (g.in_len - 1) : g.in_len;
    }
    if (g.n < 1 || g.n > kMaxFftLength)
      return kernel_invalid_argument(ctx, "dft_length " + std::to_string(g.n) + " is out of range [1, " +
                                              std::to_string(kMaxFftLength) + "]" +
                                              (ctx.input(1) == nullptr ? " (from the axis dim of the input)" : ""));
    g.out_len = onesided_ && !inverse_ ? g.n / 2 + 1 : g.n;
    g.outer = s.size_to(a);
    g.inner = s.size_from(a + 1) / s[s.rank() - 1];
    g.in_channels = s[s.rank() - 1];
    g.out_channels = irfft ? 1 : 2;
    g.out_shape = s;
    g.out_shape[a] = g.out_len;
    g.out_shape[s.rank() - 1] = g.out_channels;
    return ok_status();
  }

  // T: the tensors' element type; W: the type the FFT computes in.
  template <typename T, typename W>
  Status transform(KernelContext& ctx, const DftGeometry& g, const T* in, T* out) const {
    using Complex = std::complex<W>;
    const bool inverse = inverse_;
    const bool irfft = inverse_ && onesided_;
    const int64_t n = g.n;
    // IRFFT reads bins 0..n/2 and mirrors the rest: X[n - k] = conj(X[k]).
    const int64_t read_len = irfft ? n / 2 + 1 : n;
    const int64_t count = std::min(g.in_len, read_len);
    const int64_t in_step = g.inner * g.in_channels;
    const int64_t out_step = g.inner * g.out_channels;
    const W scale = inverse ? W(1) / static_cast<W>(n) : W(1);
    auto gather = [&](int64_t line, Complex* data) {
      const int64_t o = line / g.inner;
      const int64_t i = line % g.inner;
      const T* src = in + (o * g.in_len * g.inner + i) * g.in_channels;
      for (int64_t k = 0; k < count; ++k) {
        const T* p = src + k * in_step;
        const W re = static_cast<W>(load(p[0]));
        const W im = g.in_channels == 2 ? static_cast<W>(load(p[1])) : W(0);
        data[k] = Complex(re, inverse ? -im : im);
      }
      std::fill(data + count, data + read_len, Complex(0));
      // Conjugating the whole spectrum keeps the symmetry, so the mirror
      // is the same after the inverse's conjugation.
      if (irfft)
        for (int64_t k = read_len; k < n; ++k) data[k] = std::conj(data[n - k]);
    };
    auto scatter = [&](int64_t line, const Complex* data) {
      const int64_t o = line / g.inner;
      const int64_t i = line % g.inner;
      T* dst = out + (o * g.out_len * g.inner + i) * g.out_channels;
      for (int64_t k = 0; k < g.out_len; ++k) {
        T* p = dst + k * out_step;
        p[0] = store<T>(static_cast<compute_t<T>>(data[k].real() * scale));
        if (g.out_channels == 2) {
          const W im = data[k].imag() * scale;
          p[1] = store<T>(static_cast<compute_t<T>>(inverse ? -im : im));
        }
      }
    };
    return run_ffts<W>(ctx, n, g.outer * g.inner, gather, scatter);
  }

  bool inverse_ = false;
  bool onesided_ = false;
  bool axis_from_input_ = false;
  int64_t axis_attr_ = 1;
};

constexpr uint64_t kDftTypes = type_mask(FloatTypes{});

const KernelDef kDftKernels[] = {
    {"", "DFT", 17, kLatestVersion, 0, kDftTypes, &make_kernel<DftKernel>},
};

}  // namespace

std::span<const KernelDef> dft_kernels() { return kDftKernels; }

}  // namespace sy::cpu
