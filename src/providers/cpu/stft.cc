// STFT: the short-time Fourier transform of a [batch, length, 1 or 2]
// signal (real or complex): frames of frame_length samples every
// frame_step samples, each multiplied by the window (none: all ones) and
// transformed by the FFT plan of its length (fft.h). The output is
// [batch, frames, bins, 2], with frames = 1 + (length - frame_length) /
// frame_step and bins = frame_length / 2 + 1 when onesided (the default),
// else frame_length. frame_length defaults to the window's length, or to
// the whole signal when there is no window either.
//
// Computes in double for float signals, as DFT does (dft.cc says why).
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/fft.h"
#include "providers/cpu/signal_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

struct StftGeometry {
  int64_t batch = 0;
  int64_t length = 0;    // samples per signal
  int64_t channels = 0;  // 1 real, 2 complex
  int64_t frame_length = 0;
  int64_t frame_step = 0;
  int64_t frames = 0;
  int64_t bins = 0;
};

class StftKernel final : public Kernel {
 public:
  StftKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t onesided = ctx.node().attr_int("onesided", 1);
    if (onesided != 0 && onesided != 1) {
      status = ctx.error("onesided must be 0 or 1, got " + std::to_string(onesided));
      return;
    }
    onesided_ = onesided == 1;
  }

  bool prepares() const override { return true; }

  // Plans the FFT of this run's frame length; run() checks the plan's
  // length, so a later frame_length value under the same shapes plans in
  // scratch instead of using it.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    StftGeometry g;
    if (!geometry(ctx, g).ok()) return std::unique_ptr<KernelState>();
    return make_fft_state(ctx.input(0)->dtype(), g.frame_length);
  }

  Status run(KernelContext& ctx) const override {
    StftGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, g));
    const Tensor& x = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), Shape{g.batch, g.frames, g.bins, 2}));
    if (y->num_elements() == 0) return ok_status();
    const Tensor* window = ctx.input(2);
    Status status = ok_status();
    const bool known = visit_type(FloatTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      status = transform<T, FftComputeType<T>>(ctx, g, x.data<T>(), window ? window->data<T>() : nullptr,
                                               y->data<T>());
    });
    if (!known) return kernel_error(ctx, "input 0 (signal) has unsupported type " + x.describe());
    return status;
  }

 private:
  Status geometry(const KernelContext& ctx, StftGeometry& g) const {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    if (s.rank() != 3 || (s[2] != 1 && s[2] != 2))
      return kernel_error(ctx, describe_input(ctx, 0, "signal") +
                                   " must be [batch, length, 1] (real) or [batch, length, 2] (complex)");
    g.batch = s[0];
    g.length = s[1];
    g.channels = s[2];
    SY_RETURN_IF_ERROR(scalar_int_input(ctx, 1, "frame_step", g.frame_step));
    if (g.frame_step < 1) return kernel_error(ctx, "frame_step must be positive, got " + std::to_string(g.frame_step));
    const Tensor* window = ctx.input(2);
    if (window != nullptr && (window->shape().rank() != 1 || window->dtype() != x.dtype()))
      return kernel_error(ctx, describe_input(ctx, 2, "window") + " must be 1-D, of the signal's type " +
                                   std::string(data_type_name(x.dtype())));
    if (ctx.input(3) != nullptr) {
      SY_RETURN_IF_ERROR(scalar_int_input(ctx, 3, "frame_length", g.frame_length));
      if (window != nullptr && window->shape()[0] != g.frame_length)
        return kernel_error(ctx, "the window has " + std::to_string(window->shape()[0]) +
                                     " samples but frame_length is " + std::to_string(g.frame_length));
    } else {
      g.frame_length = window != nullptr ? window->shape()[0] : g.length;
    }
    if (g.frame_length < 1 || g.frame_length > g.length || g.frame_length > kMaxFftLength)
      return kernel_error(ctx, "frame_length " + std::to_string(g.frame_length) + " is out of range [1, " +
                                   std::to_string(std::min(g.length, kMaxFftLength)) + "] (the signal's length)");
    g.frames = 1 + (g.length - g.frame_length) / g.frame_step;
    g.bins = onesided_ ? g.frame_length / 2 + 1 : g.frame_length;
    return ok_status();
  }

  // T: the tensors' element type; W: the type the FFT computes in.
  template <typename T, typename W>
  Status transform(KernelContext& ctx, const StftGeometry& g, const T* in, const T* window, T* out) const {
    using Complex = std::complex<W>;
    const int64_t n = g.frame_length;
    auto gather = [&](int64_t line, Complex* data) {
      const int64_t b = line / g.frames;
      const int64_t f = line % g.frames;
      const T* src = in + (b * g.length + f * g.frame_step) * g.channels;
      for (int64_t k = 0; k < n; ++k) {
        const T* p = src + k * g.channels;
        const W w = window != nullptr ? static_cast<W>(load(window[k])) : W(1);
        const W re = static_cast<W>(load(p[0]));
        const W im = g.channels == 2 ? static_cast<W>(load(p[1])) : W(0);
        data[k] = Complex(re * w, im * w);
      }
    };
    auto scatter = [&](int64_t line, const Complex* data) {
      T* dst = out + line * g.bins * 2;
      for (int64_t k = 0; k < g.bins; ++k) {
        dst[2 * k] = store<T>(static_cast<compute_t<T>>(data[k].real()));
        dst[2 * k + 1] = store<T>(static_cast<compute_t<T>>(data[k].imag()));
      }
    };
    return run_ffts<W>(ctx, n, g.batch * g.frames, gather, scatter);
  }

  bool onesided_ = true;
};

const KernelDef kStftKernels[] = {
    {"", "STFT", 17, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<StftKernel>},
};

}  // namespace

std::span<const KernelDef> stft_kernels() { return kStftKernels; }

}  // namespace sy::cpu
