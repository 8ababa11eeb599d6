// Conv on the GPU through cuDNN, NCHW, 1-D to 3-D, float32, float16 and
// bfloat16 (accumulating in float).
//
// The algorithm is chosen per input shape, as cudnn_conv_algo_search says:
// EXHAUSTIVE times every algorithm on the real buffers, HEURISTIC asks
// cuDNN's heuristics, DEFAULT takes implicit-precomputed GEMM. The choice is
// made in the kernel's prepare phase, kept by the core with the run's frame
// until the shapes change, and in ConvAlgoCache on disk, so a second
// session on the same model, GPU and libraries does not search.
//
// The same kernel runs FusedConv (com.switchyard, schema/fused.cc in the
// core): Conv plus a residual input 3 (the optimizer's Conv+Add pass) and
// an activation (its Conv+Relu/Clip pass). Bias, residual and activation
// run as one epilogue kernel over the output instead of cuDNN's
// bias-activation call, which only fuses Relu and only with one algorithm.
// FusedConv's channel-blocked layouts (NCHW16c, the CPU's) are declined:
// cuDNN reads and writes NCHW here.
#include <algorithm>
#include <cfloat>
#include <memory>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "cuda_provider.h"
#include "cuda_types.cuh"

namespace sy::cuda {
namespace {

cudnnDataType_t cudnn_type(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat16: return CUDNN_DATA_HALF;
    case DataType::kBfloat16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// y[n, c, i] = act(y[n, c, i] + bias[c] + z[n, c, i])
template <typename T>
__global__ void bias_activation_kernel(T* y, const T* bias, const T* z, int64_t channels, int64_t spatial,
                                       int64_t total, int activation, float lo, float hi) {
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    float v = to_float(y[i]);
    if (bias != nullptr) v += to_float(bias[(i / spatial) % channels]);
    if (z != nullptr) v += to_float(z[i]);
    // As the separate Relu and Clip kernels (elementwise.cu) do: a NaN
    // stays NaN, where fmaxf / fminf and v > 0 ? v : 0 would make it 0.
    if (activation == 1) v = v < 0.0f ? 0.0f : v;
    if (activation == 2) {
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
    }
    y[i] = from_float<T>(v);
  }
}

// Per-shape state: descriptors and the chosen algorithm. Built on the
// first run with a shape; later runs with it allocate nothing.
// cuDNN's descriptors and algorithm for one pair of X and W shapes: made by
// the kernel's prepare phase, kept by the core with the run's frame.
struct ConvPlan final : provider_sdk::KernelState {
  const CudnnApi* api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  size_t workspace = 0;
  std::vector<int64_t> y_dims;
  ~ConvPlan() override {
    if (api == nullptr) return;
    if (x) api->DestroyTensorDescriptor(x);
    if (y) api->DestroyTensorDescriptor(y);
    if (w) api->DestroyFilterDescriptor(w);
    if (conv) api->DestroyConvolutionDescriptor(conv);
  }
};

class ConvKernel final : public CudaKernel {
 public:
  ConvKernel(const KernelCreateInfo& info, Status& status) {
    dtype_ = info.input_dtype(0);
    group_ = info.attr_int("group", 1);
    auto_pad_ = info.attr_string("auto_pad", "NOTSET");
    kernel_shape_ = info.attr_ints("kernel_shape");
    strides_ = info.attr_ints("strides");
    dilations_ = info.attr_ints("dilations");
    pads_ = info.attr_ints("pads");
    model_key_ = info.model_key();
    if (group_ < 1) {
      status = info.error("group must be >= 1");
      return;
    }
    if (auto_pad_ != "NOTSET" && auto_pad_ != "SAME_UPPER" && auto_pad_ != "SAME_LOWER" && auto_pad_ != "VALID") {
      status = info.error("auto_pad '" + auto_pad_ + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
      return;
    }
    TensorRef w;
    if (info.input_type(1, w) && w.rank() >= 0 && (w.rank() < 3 || w.rank() > 5)) {
      status = info.unsupported("cuDNN Conv takes 1-D to 3-D convolutions, not rank " + std::to_string(w.rank()) +
                                " weights");
      return;
    }
    if (info.input_dtype(1) != dtype_ || (info.has_input(2) && info.input_dtype(2) != dtype_)) {
      status = info.unsupported("mixed input types");
      return;
    }
    for (size_t i = 0; i < pads_.size() / 2; ++i) {
      if (pads_[i] != pads_[i + pads_.size() / 2]) {
        status = info.unsupported("asymmetric pads (cuDNN pads both sides of an axis alike)");
        return;
      }
    }
    if (info.domain() == "com.switchyard") status = read_fused(info);
  }

  bool prepares() const override { return true; }

  // The descriptors and algorithm for these shapes (cuDNN's search, or the
  // on-disk choice), once per change of shapes in a frame.
  Status prepare(KernelRunContext& ctx, std::unique_ptr<provider_sdk::KernelState>& state) const override {
    const TensorRef* x = ctx.input(0);
    const TensorRef* w = ctx.input(1);
    if (x->rank() != w->rank() || x->rank() < 3 || x->rank() > 5)
      return runtime_error("Conv: X " + x->describe() + " and W " + w->describe() + " must have the same rank, 3 to 5");
    if (x->dim(1) != w->dim(1) * group_)
      return runtime_error("Conv: X has " + std::to_string(x->dim(1)) + " channels but W expects " +
                           std::to_string(w->dim(1) * group_) + " (group " + std::to_string(group_) + ")");
    auto plan = std::make_unique<ConvPlan>();
    SY_SDK_RETURN_IF_ERROR(build_plan(ctx, *x, *w, *plan));
    state = std::move(plan);
    return ok_status();
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    const TensorRef* w = ctx.input(1);
    const TensorRef* b = ctx.input(2);
    const ConvPlan* plan = ctx.state<ConvPlan>();
    if (plan == nullptr) return runtime_error("Conv: run without its prepare phase");
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(
        ctx.allocate_output(0, dtype_, static_cast<int>(plan->y_dims.size()), plan->y_dims.data(), y));
    if (y.num_elements() == 0) return ok_status();
    CudaProvider& p = ctx.provider();
    void* workspace = nullptr;
    SY_SDK_RETURN_IF_ERROR(ctx.scratch(plan->workspace, &workspace));
    const float one = 1.0f, zero = 0.0f;
    SY_SDK_RETURN_IF_ERROR(p.cudnn_status(
        p.libs().cudnn.ConvolutionForward(p.cudnn(), &one, plan->x, x->data(), plan->w, w->data(), plan->conv,
                                          plan->algo, workspace, plan->workspace, &zero, plan->y, y.data()),
        "cudnnConvolutionForward"));
    const TensorRef* z = residual_ ? ctx.input(3) : nullptr;
    if (z != nullptr && z->num_elements() != y.num_elements())
      return runtime_error("Conv: the residual input 3 " + z->describe() + " does not have the output's shape");
    if (b == nullptr && z == nullptr && activation_ == 0) return ok_status();
    const int64_t channels = plan->y_dims[1];
    const int64_t spatial = y.num_elements() / (plan->y_dims[0] * channels);
    bool launched = false;
    dispatch_float_type(dtype_, [&]<typename T>() {
      bias_activation_kernel<T><<<grid_size(y.num_elements()), kThreadsPerBlock, 0, ctx.stream()>>>(
          y.data<T>(), b ? b->data<const T>() : nullptr, z ? z->data<const T>() : nullptr, channels, spatial,
          y.num_elements(), activation_, lo_, hi_);
      launched = true;
    });
    if (!launched) return runtime_error("Conv: unexpected type");
    return check_launch("conv bias/activation");
  }

 private:
  // Output size per spatial axis and the symmetric padding cuDNN takes.
  Status geometry(const TensorRef& x, const TensorRef& w, std::vector<int>& pads, std::vector<int>& strides,
                  std::vector<int>& dilations, std::vector<int64_t>& y_dims, int& pre_pad_extra) const {
    const int spatial = x.rank() - 2;
    y_dims = {x.dim(0), w.dim(0)};
    pre_pad_extra = 0;
    for (int i = 0; i < spatial; ++i) {
      const int64_t in = x.dim(2 + i);
      const int64_t k = w.dim(2 + i);
      if (!kernel_shape_.empty() && (static_cast<int>(kernel_shape_.size()) != spatial || kernel_shape_[i] != k))
        return runtime_error("Conv: kernel_shape does not match W " + w.describe());
      const int64_t s = strides_.empty() ? 1 : strides_[i];
      const int64_t d = dilations_.empty() ? 1 : dilations_[i];
      const int64_t effective = (k - 1) * d + 1;
      int64_t begin = 0, end = 0;
      if (auto_pad_ == "NOTSET") {
        if (!pads_.empty()) {
          begin = pads_[i];
          end = pads_[i + spatial];
        }
      } else if (auto_pad_ != "VALID") {
        const int64_t out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + effective - in);
        begin = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        end = total - begin;
      }
      // cuDNN pads both sides alike: an asymmetric pad is not expressible.
      if (begin != end) pre_pad_extra = 1;
      pads.push_back(static_cast<int>(begin));
      strides.push_back(static_cast<int>(s));
      dilations.push_back(static_cast<int>(d));
      const int64_t out = (in + begin + end - effective) / s + 1;
      if (out < 0) return runtime_error("Conv: the kernel is larger than the padded input " + x.describe());
      y_dims.push_back(out);
    }
    return ok_status();
  }

  Status build_plan(KernelRunContext& ctx, const TensorRef& x, const TensorRef& w, ConvPlan& plan) const {
    CudaProvider& p = ctx.provider();
    const CudnnApi& api = p.libs().cudnn;
    plan.api = &api;
    std::vector<int> pads, strides, dilations;
    int asymmetric = 0;
    SY_SDK_RETURN_IF_ERROR(geometry(x, w, pads, strides, dilations, plan.y_dims, asymmetric));
    if (asymmetric)
      return not_implemented("Conv: asymmetric padding is not supported by the cuDNN path (pads " +
                             std::to_string(pads.size()) + " axes)");
    // cuDNN wants at least 4-D tensors: a 1-D conv becomes 2-D with height 1.
    std::vector<int> xd(x.dims(), x.dims() + x.rank()), wd(w.dims(), w.dims() + w.rank());
    std::vector<int> yd(plan.y_dims.begin(), plan.y_dims.end());
    if (x.rank() == 3) {
      xd.insert(xd.begin() + 2, 1);
      wd.insert(wd.begin() + 2, 1);
      yd.insert(yd.begin() + 2, 1);
      pads.insert(pads.begin(), 0);
      strides.insert(strides.begin(), 1);
      dilations.insert(dilations.begin(), 1);
    }
    auto packed_strides = [](const std::vector<int>& dims) {
      std::vector<int> s(dims.size(), 1);
      for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
      return s;
    };
    const cudnnDataType_t type = cudnn_type(dtype_);
    const std::vector<int> xs = packed_strides(xd), ys = packed_strides(yd);
    auto cs = [&p](cudnnStatus_t s, const char* what) { return p.cudnn_status(s, what); };
    SY_SDK_RETURN_IF_ERROR(cs(api.CreateTensorDescriptor(&plan.x), "cudnnCreateTensorDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.CreateTensorDescriptor(&plan.y), "cudnnCreateTensorDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.CreateFilterDescriptor(&plan.w), "cudnnCreateFilterDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.CreateConvolutionDescriptor(&plan.conv), "cudnnCreateConvolutionDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.SetTensorNdDescriptor(plan.x, type, static_cast<int>(xd.size()), xd.data(), xs.data()),
                               "cudnnSetTensorNdDescriptor (X)"));
    SY_SDK_RETURN_IF_ERROR(cs(api.SetTensorNdDescriptor(plan.y, type, static_cast<int>(yd.size()), yd.data(), ys.data()),
                               "cudnnSetTensorNdDescriptor (Y)"));
    SY_SDK_RETURN_IF_ERROR(cs(api.SetFilterNdDescriptor(plan.w, type, CUDNN_TENSOR_NCHW, static_cast<int>(wd.size()), wd.data()),
                               "cudnnSetFilterNdDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.SetConvolutionNdDescriptor(plan.conv, static_cast<int>(pads.size()), pads.data(),
                                                              strides.data(), dilations.data(), CUDNN_CROSS_CORRELATION,
                                                              CUDNN_DATA_FLOAT),
                               "cudnnSetConvolutionNdDescriptor"));
    SY_SDK_RETURN_IF_ERROR(cs(api.SetConvolutionGroupCount(plan.conv, static_cast<int>(group_)), "cudnnSetConvolutionGroupCount"));
    // Tensor cores for 16-bit types; for float32 TF32 only when use_tf32.
    const bool fp32 = dtype_ == static_cast<int32_t>(DataType::kFloat);
    const cudnnMathType_t math =
        !fp32 ? CUDNN_TENSOR_OP_MATH : (p.options().use_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
    SY_SDK_RETURN_IF_ERROR(cs(api.SetConvolutionMathType(plan.conv, math), "cudnnSetConvolutionMathType"));
    return choose_algorithm(ctx, x, w, plan, math);
  }

  Status choose_algorithm(KernelRunContext& ctx, const TensorRef& x, const TensorRef& w, ConvPlan& plan,
                          cudnnMathType_t math) const {
    CudaProvider& p = ctx.provider();
    const CudnnApi& api = p.libs().cudnn;
    std::string conv_key = "t" + std::to_string(dtype_) + "_x";
    for (int i = 0; i < x.rank(); ++i) conv_key += std::to_string(x.dim(i)) + ".";
    conv_key += "_w";
    for (int i = 0; i < w.rank(); ++i) conv_key += std::to_string(w.dim(i)) + ".";
    conv_key += "_g" + std::to_string(group_) + "_" + auto_pad_;
    for (int64_t v : pads_) conv_key += "p" + std::to_string(v);
    for (int64_t v : strides_) conv_key += "s" + std::to_string(v);
    for (int64_t v : dilations_) conv_key += "d" + std::to_string(v);

    ConvAlgoChoice choice;
    if (p.conv_algo_cache().find(model_key_, conv_key, choice)) {
      plan.algo = static_cast<cudnnConvolutionFwdAlgo_t>(choice.algo);
      plan.workspace = choice.workspace;
      return ok_status();
    }
    const ConvAlgoSearch search = p.options().cudnn_conv_algo_search;
    if (search == ConvAlgoSearch::kDefault) {
      plan.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    } else if (search == ConvAlgoSearch::kHeuristic) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      SY_SDK_RETURN_IF_ERROR(p.cudnn_status(api.GetConvolutionForwardAlgorithm_v7(p.cudnn(), plan.x, plan.w, plan.conv, plan.y,
                                                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                                             "cudnnGetConvolutionForwardAlgorithm_v7"));
      bool chosen = false;
      for (int i = 0; i < found && !chosen; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        plan.algo = perf[i].algo;
        chosen = true;
      }
      if (!chosen) plan.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    } else {
      // Times every algorithm on the real input and weights, writing into a
      // throwaway output in memory of its own (the prepare phase has no
      // scratch), freed when the search is done; its workspace limit is the
      // search's.
      constexpr size_t kSearchWorkspace = size_t{256} << 20;
      size_t y_bytes = dtype_size(dtype_);
      for (int64_t d : plan.y_dims) y_bytes *= static_cast<size_t>(d);
      struct SearchMemory {
        CudaProvider& p;
        void* memory;
        ~SearchMemory() {
          if (memory != nullptr) p.deallocate(memory);
        }
      } search_memory{p, p.allocate(y_bytes + kSearchWorkspace)};
      if (search_memory.memory == nullptr)
        return out_of_memory("Conv: " + format_bytes(y_bytes + kSearchWorkspace) + " for cuDNN's algorithm search on " +
                             p.device_name() + ": " + p.last_error());
      void* scratch = search_memory.memory;
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      SY_SDK_RETURN_IF_ERROR(p.cudnn_status(
          api.FindConvolutionForwardAlgorithmEx(p.cudnn(), plan.x, x.data(), plan.w, w.data(), plan.conv, plan.y, scratch,
                                                CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf,
                                                static_cast<char*>(scratch) + ((y_bytes + 255) / 256 * 256),
                                                kSearchWorkspace - 256),
          "cudnnFindConvolutionForwardAlgorithmEx"));
      bool chosen = false;
      for (int i = 0; i < found && !chosen; ++i) {  // sorted fastest first
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        // FMA math must not come back as a tensor-op (TF32) algorithm.
        if (math == CUDNN_FMA_MATH && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
        plan.algo = perf[i].algo;
        chosen = true;
      }
      if (!chosen) plan.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    }
    SY_SDK_RETURN_IF_ERROR(p.cudnn_status(api.GetConvolutionForwardWorkspaceSize(p.cudnn(), plan.x, plan.w, plan.conv,
                                                                                  plan.y, plan.algo, &plan.workspace),
                                           "cudnnGetConvolutionForwardWorkspaceSize"));
    p.conv_algo_cache().store(model_key_, conv_key, {static_cast<int>(plan.algo), plan.workspace, static_cast<int>(math)});
    return ok_status();
  }

  // FusedConv's attributes and residual. A layout other than NCHW is the
  // CPU kernels' channel-blocked hand-off (a model optimized for the CPU
  // and saved): the node stays on the CPU, with this reason.
  Status read_fused(const KernelCreateInfo& info) {
    for (const char* layout_attr : {"input_layout", "output_layout", "residual_layout"}) {
      const std::string layout = info.attr_string(layout_attr, "NCHW");
      if (layout != "NCHW")
        return info.unsupported(std::string(layout_attr) + " " + layout + " (the CUDA Conv takes NCHW only)");
    }
    residual_ = info.has_input(3);
    if (residual_ && info.input_dtype(3) != dtype_)
      return info.unsupported("a residual input 3 of another type than X");
    const std::string act = info.attr_string("activation", "");
    if (act == "Relu") {
      activation_ = 1;
    } else if (act == "Clip") {
      activation_ = 2;
      const std::vector<float> p = info.attr_floats("activation_params");
      lo_ = p.size() >= 1 ? p[0] : -FLT_MAX;
      hi_ = p.size() >= 2 ? p[1] : FLT_MAX;
    } else if (!act.empty()) {
      return info.unsupported("fused activation " + act);
    }
    return ok_status();
  }

  int32_t dtype_ = 0;
  int64_t group_ = 1;
  std::string auto_pad_;
  std::vector<int64_t> kernel_shape_, strides_, dilations_, pads_;
  std::string model_key_;
  int activation_ = 0;  // 0 none, 1 Relu, 2 Clip
  bool residual_ = false;
  float lo_ = -FLT_MAX, hi_ = FLT_MAX;
};

const CudaKernelDef kConvDefs[] = {
    {"", "Conv", 1, 10, 0, kFloatTypes, 0, make_kernel<ConvKernel>},
    {"", "Conv", 11, kLatest, 0, kFloatTypes, 0, make_kernel<ConvKernel>},
    {"com.switchyard", "FusedConv", 1, kLatest, 0, kFloatTypes, 0, make_kernel<ConvKernel>},
};

}  // namespace

std::span<const CudaKernelDef> conv_kernel_defs() { return kConvDefs; }

}  // namespace sy::cuda
