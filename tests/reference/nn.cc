// References for the ops of src/schema/nn.cc: 2-D NCHW, explicit pads
// (no auto_pad), floor output sizes (ceil_mode 0).
#include <algorithm>
#include <limits>

#include "reference/reference.h"

namespace sy::reference {
namespace {

// The 2-D window geometry every op here shares.
struct Window {
  int64_t kh, kw;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;

  int64_t out_h(int64_t h) const { return (h + pad_top + pad_bottom - (dilation_h * (kh - 1) + 1)) / stride_h + 1; }
  int64_t out_w(int64_t w) const { return (w + pad_left + pad_right - (dilation_w * (kw - 1) + 1)) / stride_w + 1; }
};

Window window_of(const std::vector<AttrSpec>& attrs, int64_t kh, int64_t kw) {
  const std::vector<int64_t> strides = attr_ints(attrs, "strides", {1, 1});
  const std::vector<int64_t> dilations = attr_ints(attrs, "dilations", {1, 1});
  const std::vector<int64_t> pads = attr_ints(attrs, "pads", {0, 0, 0, 0});
  return {kh, kw, strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[1], pads[2], pads[3]};
}

// Max or average over each window of each channel.
std::vector<Tensor> pool(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs, bool max) {
  const Array x = to_array(inputs[0]);
  const std::vector<int64_t> kernel = attr_ints(attrs, "kernel_shape", {});
  const Window w = window_of(attrs, kernel[0], kernel[1]);
  const bool count_pad = attr_int(attrs, "count_include_pad", 0) != 0;
  const int64_t planes = x.dims[0] * x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t oh = w.out_h(h), ow = w.out_w(wd);
  Array out;
  out.dims = {x.dims[0], x.dims[1], oh, ow};
  out.v.resize(static_cast<size_t>(out.size()));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        double sum = 0.0;
        int64_t count = 0;
        for (int64_t a = 0; a < w.kh; ++a)
          for (int64_t b = 0; b < w.kw; ++b) {
            const int64_t y = i * w.stride_h - w.pad_top + a * w.dilation_h;
            const int64_t z = j * w.stride_w - w.pad_left + b * w.dilation_w;
            const bool inside = y >= 0 && y < h && z >= 0 && z < wd;
            // count_include_pad counts the padding cells, not those past it.
            const bool in_padded = y < h + w.pad_bottom && z < wd + w.pad_right;
            if (inside) {
              const double v = x.v[static_cast<size_t>((p * h + y) * wd + z)];
              best = std::max(best, v);
              sum += v;
              ++count;
            } else if (count_pad && in_padded) {
              ++count;
            }
          }
        out.v[static_cast<size_t>((p * oh + i) * ow + j)] = max ? best : sum / static_cast<double>(count);
      }
  return {to_tensor(out, inputs[0].dtype())};
}

}  // namespace

// X [N, C, H, W], W [M, C/group, kH, kW], optional B [M].
std::vector<Tensor> conv(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  const Array x = to_array(inputs[0]);
  const Array wt = to_array(inputs[1]);
  const bool has_bias = inputs.size() > 2 && inputs[2].defined();
  const Array bias = has_bias ? to_array(inputs[2]) : Array{};
  const int64_t group = attr_int(attrs, "group", 1);
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t m = wt.dims[0], cg = wt.dims[1];
  const Window w = window_of(attrs, wt.dims[2], wt.dims[3]);
  const int64_t oh = w.out_h(h), ow = w.out_w(wd);
  const int64_t m_per_group = m / group;
  Array out;
  out.dims = {n, m, oh, ow};
  out.v.resize(static_cast<size_t>(out.size()));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < m; ++f) {
      const int64_t first_channel = (f / m_per_group) * cg;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = has_bias ? bias.v[static_cast<size_t>(f)] : 0.0;
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t p = 0; p < w.kh; ++p)
              for (int64_t q = 0; q < w.kw; ++q) {
                const int64_t y = i * w.stride_h - w.pad_top + p * w.dilation_h;
                const int64_t z = j * w.stride_w - w.pad_left + q * w.dilation_w;
                if (y < 0 || y >= h || z < 0 || z >= wd) continue;
                sum += x.v[static_cast<size_t>(((b * c + first_channel + ch) * h + y) * wd + z)] *
                       wt.v[static_cast<size_t>(((f * cg + ch) * w.kh + p) * w.kw + q)];
              }
          out.v[static_cast<size_t>(((b * m + f) * oh + i) * ow + j)] = sum;
        }
    }
  return {to_tensor(out, inputs[0].dtype())};
}

std::vector<Tensor> max_pool(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  return pool(inputs, attrs, true);
}

std::vector<Tensor> average_pool(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  return pool(inputs, attrs, false);
}

}  // namespace sy::reference
