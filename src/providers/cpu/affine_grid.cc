// AffineGrid: the base grid of evenly spaced positions in [-1, 1] (pixel
// centres: -1 + (2i + 1) / n; with align_corners the corner pixels' centres
// are -1 and 1: -1 + 2i / (n - 1)), each mapped through its batch's theta.
// A one-pixel axis sits at 0 either way, as in PyTorch (ONNX's reference
// divides by zero there). Computed in double, as the reference does, and
// stored in theta's type; rows of the output run in parallel.
#include <algorithm>
#include <cstdint>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Position i of n along one axis of the base grid.
double base_position(int64_t i, int64_t n, bool align_corners) {
  if (n <= 1) return 0.0;
  if (align_corners) return -1.0 + static_cast<double>(i) * (2.0 / static_cast<double>(n - 1));
  const double step = 2.0 / static_cast<double>(n);
  return -1.0 + step / 2 + static_cast<double>(i) * step;
}

class AffineGridKernel final : public Kernel {
 public:
  AffineGridKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t align = ctx.node().attr_int("align_corners", 0);
    if (align != 0 && align != 1) {
      status = ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));
      return;
    }
    align_corners_ = align == 1;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* theta = ctx.input(0);
    const Tensor* size = ctx.input(1);
    if (theta == nullptr || size == nullptr) return kernel_error(ctx, "inputs theta and size are required");
    if (size->dtype() != DataType::kInt64 || size->shape().rank() != 1 ||
        (size->num_elements() != 4 && size->num_elements() != 5))
      return kernel_error(ctx, describe_input(ctx, 1, "size") + " must be int64 [N, C, H, W] or [N, C, D, H, W]");
    const int64_t* sz = size->data<int64_t>();
    const int64_t spatial = size->num_elements() - 2;
    const Shape& ts = theta->shape();
    if (ts.rank() != 3 || ts[0] != sz[0] || ts[1] != spatial || ts[2] != spatial + 1)
      return kernel_error(
          ctx, describe_input(ctx, 0, "theta") + " must have shape [" + std::to_string(sz[0]) + ", " +
                   std::to_string(spatial) + ", " + std::to_string(spatial + 1) + "] for size " +
                   Shape(std::span<const int64_t>(sz, static_cast<size_t>(size->num_elements()))).to_string());
    // Depth 1 for 2-D: one plane of H x W.
    const int64_t depth = spatial == 3 ? sz[2] : 1;
    const int64_t height = sz[spatial == 3 ? 3 : 2];
    const int64_t width = sz[spatial == 3 ? 4 : 3];
    Shape gs;
    gs.push_back(sz[0]);
    if (spatial == 3) gs.push_back(depth);
    gs.push_back(height);
    gs.push_back(width);
    gs.push_back(spatial);
    for (int64_t d : gs)
      if (d < 0) return kernel_invalid_argument(ctx, describe_input(ctx, 1, "size") + " holds a negative size");
    SY_ASSIGN_OR_RETURN(Tensor * grid, ctx.allocate_output(0, theta->dtype(), gs));
    if (grid->num_elements() == 0) return ok_status();

    const bool align = align_corners_;
    const int64_t rows = sz[0] * depth * height;
    const int64_t per_matrix = spatial * (spatial + 1);
    const bool handled = visit_type(FloatTypes{}, theta->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* th = theta->data<T>();
      T* out = grid->data<T>();
      parallel_range(ctx.thread_pool(), rows, std::max<int64_t>(1, kCheapChunk / (width * spatial)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t row = begin; row < end; ++row) {
                         const int64_t n = row / (depth * height);
                         const int64_t dz = row / height % depth;
                         const int64_t hy = row % height;
                         double t[12];
                         for (int64_t k = 0; k < per_matrix; ++k)
                           t[k] = static_cast<double>(load(th[n * per_matrix + k]));
                         const double y = base_position(hy, height, align);
                         const double z = base_position(dz, depth, align);
                         T* o = out + row * width * spatial;
                         for (int64_t wx = 0; wx < width; ++wx) {
                           const double x = base_position(wx, width, align);
                           // Homogeneous (x, y, 1) or (x, y, z, 1) through each row of theta.
                           for (int64_t r = 0; r < spatial; ++r) {
                             const double* tr = t + r * (spatial + 1);
                             const double v = spatial == 2 ? tr[0] * x + tr[1] * y + tr[2]
                                                           : tr[0] * x + tr[1] * y + tr[2] * z + tr[3];
                             o[wx * spatial + r] = store<T>(static_cast<compute_t<T>>(v));
                           }
                         }
                       }
                     });
    });
    if (!handled) return kernel_error(ctx, describe_input(ctx, 0, "theta") + " has an unsupported type");
    return ok_status();
  }

 private:
  bool align_corners_ = false;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

const KernelDef kAffineGridKernels[] = {
    {"", "AffineGrid", 20, kLatestVersion, 0, kFloatMask, &make_kernel<AffineGridKernel>},
};

}  // namespace

std::span<const KernelDef> affine_grid_kernels() { return kAffineGridKernels; }

}  // namespace sy::cpu
