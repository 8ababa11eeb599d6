// Sliding-window geometry shared by Conv and the pooling kernels, the
// im2col loop Conv uses, and the fused-activation attributes.
//
// Fused activation: an optimizer pass that folds a following Relu or Clip
// into an ai.onnx Conv sets two attributes on the Conv node, which the CPU
// Conv kernel applies in its GEMM epilogue (no extra pass over the output):
//   sy_activation         string  "Relu" or "Clip"
//   sy_activation_params  floats  for "Clip": [min, max] (absent: -inf, +inf)
// A Clip whose min/max are inputs must be folded only when they are
// constants.
//
// Fused residual: the Conv+Add pass sets
//   sy_residual           int     1: input 3 (same shape as Y) is added to
//                                 the result, before the activation
// so such a Conv has four inputs (an empty bias slot when it had none).
// Other providers must decline a Conv carrying these attributes unless they
// apply them too.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "providers/cpu/conv/window_dim.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {

inline constexpr const char* kConvActivationAttr = "sy_activation";
inline constexpr const char* kConvActivationParamsAttr = "sy_activation_params";
inline constexpr const char* kConvResidualAttr = "sy_residual";

// Reads sy_activation / sy_activation_params into `ep` (activation only).
Status read_conv_activation(const KernelCreateContext& ctx, GemmEpilogue& ep);

// Applies ep's activation to `n` floats (for paths that do not go through
// the GEMM epilogue).
void apply_activation(float* y, int64_t n, const GemmEpilogue& ep);

inline constexpr int kMaxSpatialDims = 6;

// Window attributes as written on the node; empty lists mean defaults.
struct WindowAttributes {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  bool ceil_mode = false;
};

// Reads and checks auto_pad, kernel_shape, strides, dilations, pads and
// (when `has_ceil_mode`) ceil_mode.
Status read_window_attributes(const KernelCreateContext& ctx, bool kernel_required, bool has_ceil_mode,
                              WindowAttributes& out);

// The window over one input, for `rank` spatial dims.
struct WindowGeometry {
  int rank = 0;
  int64_t in[kMaxSpatialDims] = {};
  int64_t out[kMaxSpatialDims] = {};
  int64_t kernel[kMaxSpatialDims] = {};
  int64_t stride[kMaxSpatialDims] = {};
  int64_t dilation[kMaxSpatialDims] = {};
  int64_t pad_begin[kMaxSpatialDims] = {};
  int64_t pad_end[kMaxSpatialDims] = {};

  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
  bool no_padding() const;
};

// Output sizes and effective pads for input spatial dims `in`. `kernel`
// overrides the attribute (Conv takes it from W). Fails, naming the node,
// when the window does not fit.
Status compute_window_geometry(const KernelContext& ctx, const WindowAttributes& attrs,
                               std::span<const int64_t> kernel, std::span<const int64_t> in, WindowGeometry& g);

// Columns [p0, p1) of the im2col matrix of `x` (channels x in_size): row
// c * kernel_size + kernel offset, one column per output position. Rows are
// written `ld` floats apart.
void im2col(const float* x, int64_t channels, const WindowGeometry& g, int64_t p0, int64_t p1, float* col, int64_t ld,
            ThreadPool* pool);

}  // namespace sy::cpu
