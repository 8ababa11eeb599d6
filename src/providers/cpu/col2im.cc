// Col2Im (PyTorch's fold) for any number of spatial dims: column (c, k) of
// block l is added to the image pixel that kernel offset k of sliding
// block l covers, when that pixel lies inside the image (not in the
// padding). Blocks and kernel offsets are enumerated row-major, kernel
// offsets outermost as in ONNX's reference, so float sums round the same
// way. The (n, c) planes are independent and run in parallel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr int kMaxImageDims = 8;

struct FoldGeometry {
  int rank = 0;
  int64_t image[kMaxImageDims] = {};
  int64_t block[kMaxImageDims] = {};
  int64_t blocks[kMaxImageDims] = {};  // sliding blocks along each dim
  int64_t stride[kMaxImageDims] = {};
  int64_t dilation[kMaxImageDims] = {};
  int64_t pad[kMaxImageDims] = {};  // at the start of each dim
  int64_t kernel_size = 1;          // prod(block)
  int64_t num_blocks = 1;           // prod(blocks), L
  int64_t image_size = 1;           // prod(image)
};

template <typename T>
void accumulate(T& dst, const T& v) {
  if constexpr (kIsHalf<T>) {
    dst = store<T>(load(dst) + load(v));
  } else if constexpr (kWraps<T>) {
    dst = wrap_add(dst, v);
  } else {
    dst += v;
  }
}

// One (n, c) plane: `cols` is [kernel_size, num_blocks], `image` the plane.
template <typename T>
void fold_plane(const FoldGeometry& g, const T* cols, T* image) {
  std::fill(image, image + g.image_size, store<T>(0));
  const int rank = g.rank;
  int64_t offset[kMaxImageDims] = {};  // the kernel offset, per dim
  for (int64_t k = 0; k < g.kernel_size; ++k) {
    const T* src = cols + k * g.num_blocks;
    int64_t at[kMaxImageDims] = {};  // the block, per dim
    for (int64_t l = 0; l < g.num_blocks; ++l) {
      int64_t index = 0;
      bool inside = true;
      for (int d = 0; d < rank && inside; ++d) {
        const int64_t pos = at[d] * g.stride[d] - g.pad[d] + offset[d] * g.dilation[d];
        inside = pos >= 0 && pos < g.image[d];
        index = index * g.image[d] + pos;
      }
      if (inside) accumulate(image[index], src[l]);
      for (int d = rank - 1; d >= 0 && ++at[d] == g.blocks[d]; --d) at[d] = 0;
    }
    for (int d = rank - 1; d >= 0 && ++offset[d] == g.block[d]; --d) offset[d] = 0;
  }
}

class Col2ImKernel final : public Kernel {
 public:
  Col2ImKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    dilations_ = node.attr_ints("dilations");
    pads_ = node.attr_ints("pads");
    strides_ = node.attr_ints("strides");
    for (int64_t v : dilations_)
      if (v < 1) status = ctx.error("dilations must be 1 or more, got " + std::to_string(v));
    for (int64_t v : strides_)
      if (v < 1) status = ctx.error("strides must be 1 or more, got " + std::to_string(v));
    for (int64_t v : pads_)
      if (v < 0) status = ctx.error("pads must be 0 or more, got " + std::to_string(v));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    const Tensor* image_shape = ctx.input(1);
    const Tensor* block_shape = ctx.input(2);
    if (in == nullptr || image_shape == nullptr || block_shape == nullptr)
      return kernel_error(ctx, "inputs input, image_shape and block_shape are required");
    if (in->shape().rank() != 3)
      return kernel_error(ctx, describe_input(ctx, 0, "input") + " must have rank 3 [N, C * prod(block_shape), L]");
    FoldGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, *in, *image_shape, *block_shape, g));
    const Shape& is = in->shape();
    const int64_t channels = is[1] / g.kernel_size;
    Shape os;
    os.push_back(is[0]);
    os.push_back(channels);
    for (int d = 0; d < g.rank; ++d) os.push_back(g.image[d]);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), os));
    if (out->num_elements() == 0) return ok_status();
    const int64_t planes = is[0] * channels;
    const int64_t per_plane = std::max<int64_t>(1, g.kernel_size * g.num_blocks * g.rank);
    const bool handled = visit_type(NumericTypes{}, in->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in->data<T>();
      T* dst = out->data<T>();
      parallel_range(ctx.thread_pool(), planes, std::max<int64_t>(1, kCheapChunk / per_plane),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t p = begin; p < end; ++p)
                         fold_plane(g, src + p * g.kernel_size * g.num_blocks, dst + p * g.image_size);
                     });
    });
    if (!handled) return kernel_error(ctx, describe_input(ctx, 0, "input") + " has an unsupported type");
    return ok_status();
  }

 private:
  static Status check_dims_input(const KernelContext& ctx, const Tensor& t, size_t i, const char* name) {
    if (t.dtype() == DataType::kInt64 && t.shape().rank() == 1 && t.num_elements() >= 1 &&
        t.num_elements() <= kMaxImageDims)
      return ok_status();
    return kernel_error(ctx, describe_input(ctx, i, name) + " must be a 1-D int64 tensor of 1 to " +
                                 std::to_string(kMaxImageDims) + " values");
  }

  Status geometry(const KernelContext& ctx, const Tensor& in, const Tensor& image_shape, const Tensor& block_shape,
                  FoldGeometry& g) const {
    SY_RETURN_IF_ERROR(check_dims_input(ctx, image_shape, 1, "image_shape"));
    SY_RETURN_IF_ERROR(check_dims_input(ctx, block_shape, 2, "block_shape"));
    const int64_t rank = image_shape.num_elements();
    if (block_shape.num_elements() != rank)
      return kernel_error(ctx, describe_input(ctx, 1, "image_shape") + " and " + describe_input(ctx, 2, "block_shape") +
                                   " must have one length");
    const auto r = static_cast<size_t>(rank);
    if ((!dilations_.empty() && dilations_.size() != r) || (!strides_.empty() && strides_.size() != r) ||
        (!pads_.empty() && pads_.size() != 2 * r))
      return kernel_error(ctx, "dilations and strides must have " + std::to_string(rank) + " values and pads " +
                                   std::to_string(2 * rank) + " (one per image dim)");
    g.rank = static_cast<int>(rank);
    const int64_t* image = image_shape.data<int64_t>();
    const int64_t* block = block_shape.data<int64_t>();
    for (size_t d = 0; d < r; ++d) {
      g.image[d] = image[d];
      g.block[d] = block[d];
      g.dilation[d] = dilations_.empty() ? 1 : dilations_[d];
      g.stride[d] = strides_.empty() ? 1 : strides_[d];
      g.pad[d] = pads_.empty() ? 0 : pads_[d];
      const int64_t pad_end = pads_.empty() ? 0 : pads_[d + r];
      if (image[d] < 0 || block[d] < 1)
        return kernel_invalid_argument(ctx, "image_shape must be 0 or more and block_shape 1 or more, got " +
                                                std::to_string(image[d]) + " and " + std::to_string(block[d]) +
                                                " for dim " + std::to_string(d));
      // span = dilation * (block - 1) + 1; room = image + pads - span.
      int64_t span = 0, room = 0;
      if (!checked_mul(g.dilation[d], block[d] - 1, span) || !checked_add(span, 1, span) ||
          !checked_add(image[d], g.pad[d], room) || !checked_add(room, pad_end, room) ||
          !checked_sub(room, span, room) || room < 0)
        return kernel_invalid_argument(ctx, "the block of " + std::to_string(block[d]) + " (dilation " +
                                                std::to_string(g.dilation[d]) + ") does not fit image dim " +
                                                std::to_string(d) + " of " + std::to_string(image[d]) +
                                                " with its padding");
      g.blocks[d] = room / g.stride[d] + 1;
      if (!checked_mul(g.kernel_size, block[d], g.kernel_size) ||
          !checked_mul(g.num_blocks, g.blocks[d], g.num_blocks) || !checked_mul(g.image_size, image[d], g.image_size))
        return kernel_invalid_argument(ctx, "image_shape or block_shape is too large");
    }
    const Shape& is = in.shape();
    if (is[1] % g.kernel_size != 0 || is[2] != g.num_blocks)
      return kernel_error(ctx, describe_input(ctx, 0, "input") + " must have shape [N, C * " +
                                   std::to_string(g.kernel_size) + ", " + std::to_string(g.num_blocks) +
                                   "] (C times the block's size, and the number of sliding blocks)");
    return ok_status();
  }

  std::vector<int64_t> dilations_, pads_, strides_;
};

constexpr uint64_t kNumericMask = type_mask(NumericTypes{});

const KernelDef kCol2ImKernels[] = {
    {"", "Col2Im", 18, kLatestVersion, 0, kNumericMask, &make_kernel<Col2ImKernel>},
};

}  // namespace

std::span<const KernelDef> col2im_kernels() { return kCol2ImKernels; }

}  // namespace sy::cpu
