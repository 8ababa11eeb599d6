// Kernels of the CUDA provider. Like the core's (providers/kernel.h) they
// have two phases: creation reads attributes through KernelCreateInfo and
// may prepack constants; run() sees tensors through KernelRunContext, only
// queues work on the provider's stream and never calls cudaMalloc (outputs
// and scratch come from the context, backed by the device arena).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuda_common.h"

namespace sy::cuda {

class CudaProvider;

// The node being claimed, through the host's ABI table.
class KernelCreateInfo {
 public:
  KernelCreateInfo(const sy_host_api* host, const sy_node* node, CudaProvider* provider)
      : host_(host), node_(node), provider_(provider) {}

  std::string op_type() const { return host_->node_op_type(node_); }
  std::string domain() const { return host_->node_domain(node_); }
  int since_version() const { return host_->node_since_version(node_); }
  int num_inputs() const { return host_->node_num_inputs(node_); }
  int num_outputs() const { return host_->node_num_outputs(node_); }
  // False when input i is omitted. Unknown rank is -1, unknown dims -1.
  bool input_type(int i, TensorRef& type) const { return host_->node_input_type(node_, i, &type.t) != 0; }
  bool output_type(int i, TensorRef& type) const { return host_->node_output_type(node_, i, &type.t) != 0; }
  int32_t input_dtype(int i) const {
    TensorRef t;
    return input_type(i, t) ? t.t.dtype : 0;
  }
  bool has_input(int i) const {
    TensorRef t;
    return i < num_inputs() && input_type(i, t);
  }
  // Host memory, valid for the session's life.
  bool constant_input(int i, TensorRef& value) const { return host_->node_constant_input(node_, i, &value.t) != 0; }

  int64_t attr_int(const char* name, int64_t default_value) const {
    int64_t v = 0;
    return host_->node_attr_int(node_, name, &v) ? v : default_value;
  }
  float attr_float(const char* name, float default_value) const {
    float v = 0;
    return host_->node_attr_float(node_, name, &v) ? v : default_value;
  }
  std::vector<int64_t> attr_ints(const char* name) const {
    const int64_t* p = nullptr;
    size_t n = 0;
    return host_->node_attr_ints(node_, name, &p, &n) ? std::vector<int64_t>(p, p + n) : std::vector<int64_t>();
  }
  bool has_attr_ints(const char* name) const {
    const int64_t* p = nullptr;
    size_t n = 0;
    return host_->node_attr_ints(node_, name, &p, &n) != 0;
  }
  std::vector<float> attr_floats(const char* name) const {
    const float* p = nullptr;
    size_t n = 0;
    return host_->node_attr_floats(node_, name, &p, &n) ? std::vector<float>(p, p + n) : std::vector<float>();
  }
  std::string attr_string(const char* name, const std::string& default_value) const {
    const char* p = nullptr;
    size_t n = 0;
    return host_->node_attr_string(node_, name, &p, &n) ? std::string(p, n) : default_value;
  }
  bool attr_tensor(const char* name, TensorRef& value) const { return host_->node_attr_tensor(node_, name, &value.t) != 0; }
  std::string model_key() const { return host_->node_model_key(node_); }

  // "node 'x' (Op)"
  std::string describe() const { return host_->node_describe(node_); }
  // An invalid attribute or input: the node is wrong, not just unsupported.
  Status error(const std::string& message) const { return invalid_graph(describe() + ": " + message); }
  // Valid but not handled here: the node falls through to the next provider
  // with this reason.
  Status unsupported(const std::string& message) const { return not_implemented(message); }

  CudaProvider& provider() const { return *provider_; }
  const sy_host_api* host() const { return host_; }

 private:
  const sy_host_api* host_;
  const sy_node* node_;
  CudaProvider* provider_;
};

// The most inputs a CUDA kernel takes: create_kernel declines nodes with
// more, so KernelRunContext and the variadic kernels hold this many.
inline constexpr int kMaxKernelInputs = 64;

// A kernel's view of one run.
class KernelRunContext {
 public:
  KernelRunContext(const sy_host_api* host, sy_kernel_context* ctx, CudaProvider* provider);

  int num_inputs() const { return num_inputs_; }
  // nullptr when input i is omitted.
  const TensorRef* input(int i) const { return i < num_inputs_ && present_[i] ? &inputs_[i].ref : nullptr; }
  int num_outputs() const { return host_->ctx_num_outputs(ctx_); }
  bool output_requested(int i) const { return host_->ctx_output_requested(ctx_, i) != 0; }
  Status allocate_output(int i, int32_t dtype, int rank, const int64_t* dims, TensorRef& out);
  // Device memory valid until run() returns; nullptr-free: fails instead.
  Status scratch(size_t bytes, void** memory);

  cudaStream_t stream() const;
  CudaProvider& provider() const { return *provider_; }

 private:
  static constexpr int kMaxInputs = kMaxKernelInputs;
  const sy_host_api* host_;
  sy_kernel_context* ctx_;
  CudaProvider* provider_;
  int num_inputs_ = 0;
  // Storage for up to 64 inputs, left uninitialised: a context is made for
  // every kernel call, and only the node's own inputs are filled in.
  union Slot {
    Slot() {}
    TensorRef ref;
  };
  Slot inputs_[kMaxInputs];
  bool present_[kMaxInputs];
};

class CudaKernel {
 public:
  virtual ~CudaKernel() = default;
  virtual Status run(KernelRunContext& ctx) const = 0;
};

using CudaKernelFactory = std::unique_ptr<CudaKernel> (*)(const KernelCreateInfo& info, Status& status);

// Builds K from its constructor K(const KernelCreateInfo&, Status&).
template <typename K>
std::unique_ptr<CudaKernel> make_cuda_kernel(const KernelCreateInfo& info, Status& status) {
  auto k = std::make_unique<K>(info, status);
  if (!status.ok()) return nullptr;
  return k;
}

inline constexpr int kLatest = 1 << 30;
// Type masks use type_bit from switchyard/data_type.h.
inline constexpr uint64_t kFloatTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

// One row of the CUDA kernel table.
struct CudaKernelDef {
  const char* domain;  // "" for ai.onnx
  const char* op_type;
  int since_version;  // first op version handled
  int end_version;    // last, inclusive (kLatest: open-ended)
  int type_input;     // input whose dtype must be in type_mask; -1 for none
  uint64_t type_mask;
  // Bit i: input i is read from host memory (shape arguments), so the
  // partitioner leaves or copies it there.
  uint64_t host_inputs;
  CudaKernelFactory create;
};

// Each op family's table is defined beside its kernels, in sy::cuda and at
// the start of a line, as
//   std::span<const CudaKernelDef> <family>_kernel_defs() {
// The build finds these definitions in src/providers/cuda/ and generates
// cuda_kernel_families() (cmake/table_list.cmake), so adding a family is
// writing its file.
using CudaKernelTableFunction = std::span<const CudaKernelDef> (*)();
// Every family's table function, ordered by the family's name.
std::span<const CudaKernelTableFunction> cuda_kernel_families();

// All of their rows, in that order.
const std::vector<CudaKernelDef>& cuda_kernel_table();

}  // namespace sy::cuda
