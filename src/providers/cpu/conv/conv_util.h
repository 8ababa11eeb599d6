// Sliding-window geometry shared by Conv and the pooling kernels, and the
// im2col loop Conv uses.
//
// How FusedConv's activation is read is in gemm/fused_epilogue.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/provider_sdk/window_dim.h"
#include "providers/cpu/gemm/fused_epilogue.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {

// The provider SDK's window arithmetic, shared with the CUDA provider.
using provider_sdk::AutoPad;
using provider_sdk::parse_auto_pad;
using provider_sdk::window_dim;
using provider_sdk::WindowDim;

inline constexpr int kMaxSpatialDims = 6;

// "[1,2,3]", for error messages about window attributes.
std::string ints_string(const std::vector<int64_t>& v);

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

// The im2col matrix transposed, from a 2-D `x` in NCHW16c (blocked_layout.h,
// channels a multiple of 16): row p (one per output position) holds its
// window tap by tap, each tap's `channels` values in channel order, so
// element (p, t * channels + c), zero where the tap falls in the padding.
// A GEMM reads the rows in place (k contiguous) against W^T packed in the
// same (tap, channel) order.
void im2row_blocked(const float* x, int64_t channels, const WindowGeometry& g, float* rows, ThreadPool* pool);

}  // namespace sy::cpu
