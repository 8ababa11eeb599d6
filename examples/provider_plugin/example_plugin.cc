// A Switchyard provider plugin built out of tree, against the installed
// provider SDK only (see CMakeLists.txt beside it). It runs Relu, Add and
// Mul on float tensors on a "device" that is host memory tagged sim:1, so
// the core copies inputs to it and outputs back as it would for a GPU.
//
// What a plugin author writes with the SDK: kernels (classes with a
// constructor that reads the node and a run()), a kernel table, and the
// provider's own ABI entries: create, availability, device, memory and
// copies. switchyard/provider_sdk/plugin.h claims nodes from the table (with
// the same reasons as the CPU provider's), creates and runs the kernels.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "switchyard/provider_sdk/plugin.h"

namespace {

namespace sdk = sy::provider_sdk;
using sdk::Status;

constexpr const char* kName = "ExampleExecutionProvider";
constexpr sy_device kDevice{SY_DEVICE_SIMULATED, 1};
constexpr uint64_t kFloatOnly = sy::type_bit(sy::DataType::kFloat);

bool on_device(const sy_device& d) { return d.type == kDevice.type && d.id == kDevice.id; }

// The core hands a kernel its inputs on the provider's device; checking it
// here makes a wrong copy fail loudly instead of reading the wrong memory.
Status device_input(const sdk::RunContext& ctx, int i, const sdk::TensorView*& t) {
  t = ctx.input(i);
  if (t == nullptr || !on_device(t->device())) return sdk::runtime_error("input " + std::to_string(i) + " is not on sim:1");
  return sdk::ok_status();
}

// y = max(x, 0)
class ReluKernel final : public sdk::Kernel {
 public:
  ReluKernel(const sdk::NodeInfo&, Status&) {}

  Status run(sdk::RunContext& ctx) const override {
    const sdk::TensorView* x = nullptr;
    SY_SDK_RETURN_IF_ERROR(device_input(ctx, 0, x));
    sdk::TensorView y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), x->dims(), y));
    const float* in = x->data<const float>();
    float* out = y.data<float>();
    for (int64_t i = 0; i < x->num_elements(); ++i) out[i] = in[i] > 0 ? in[i] : 0;
    return sdk::ok_status();
  }
};

// c = op(a, b) for two inputs of one shape. Their ranks must match when
// the node is claimed, and each dimension known on both sides must agree;
// a node that broadcasts is declined at creation and goes to the next
// provider with the reason. Dimensions known only at run time are checked
// by the prepare phase, once per shape: its state holds the element count
// run() loops over.
template <typename Op>
class BinaryKernel final : public sdk::Kernel {
 public:
  BinaryKernel(const sdk::NodeInfo& info, Status& status) {
    sdk::TensorView a, b;
    bool same = info.input_type(0, a) && info.input_type(1, b) && a.rank() >= 0 && a.rank() == b.rank();
    for (int d = 0; same && d < a.rank(); ++d) same = a.dim(d) < 0 || b.dim(d) < 0 || a.dim(d) == b.dim(d);
    if (!same) status = info.unsupported("the example plugin takes two inputs of one shape (no broadcasting)");
  }

  struct Prepared final : sdk::KernelState {
    int64_t count = 0;
  };

  bool prepares() const override { return true; }

  Status prepare(sdk::RunContext& ctx, std::unique_ptr<sdk::KernelState>& state) const override {
    const sdk::TensorView* a = ctx.input(0);
    const sdk::TensorView* b = ctx.input(1);
    if (a == nullptr || b == nullptr || a->describe() != b->describe())
      return sdk::runtime_error("inputs " + (a ? a->describe() : std::string("none")) + " and " +
                                (b ? b->describe() : std::string("none")) + " differ in shape");
    auto made = std::make_unique<Prepared>();
    made->count = a->num_elements();
    state = std::move(made);
    return sdk::ok_status();
  }

  Status run(sdk::RunContext& ctx) const override {
    const Prepared* prepared = ctx.state<Prepared>();
    if (prepared == nullptr) return sdk::runtime_error("run without its prepare phase");
    const sdk::TensorView* a = nullptr;
    const sdk::TensorView* b = nullptr;
    SY_SDK_RETURN_IF_ERROR(device_input(ctx, 0, a));
    SY_SDK_RETURN_IF_ERROR(device_input(ctx, 1, b));
    sdk::TensorView c;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, a->t.dtype, a->rank(), a->dims(), c));
    const float* pa = a->data<const float>();
    const float* pb = b->data<const float>();
    float* out = c.data<float>();
    for (int64_t i = 0; i < prepared->count; ++i) out[i] = Op{}(pa[i], pb[i]);
    return sdk::ok_status();
  }
};

// Every version from the one named on; float only (input 0's type).
const sdk::KernelRow kKernels[] = {
    {"", "Relu", 6, sdk::kLatestVersion, 0, kFloatOnly, 0, &sdk::make_kernel<ReluKernel>},
    {"", "Add", 7, sdk::kLatestVersion, 0, kFloatOnly, 0, &sdk::make_kernel<BinaryKernel<std::plus<float>>>},
    {"", "Mul", 7, sdk::kLatestVersion, 0, kFloatOnly, 0, &sdk::make_kernel<BinaryKernel<std::multiplies<float>>>},
};

// One per session. All it adds to the SDK's base is the table; its device
// is stateless host memory.
class ExampleProvider final : public sdk::KernelTableProvider {
 public:
  explicit ExampleProvider(const sy_host_api* host) : KernelTableProvider(kName, host, kKernels) {}
};

using Entries = sdk::KernelEntries<ExampleProvider>;

// ---- the provider's own entries --------------------------------------------

sy_provider* create(const sy_host_api* host, const char* const* keys, const char* const*, size_t count, char* error,
                    size_t error_size) {
  if (count > 0) {
    sdk::write_message(error, error_size, std::string(kName) + ": unknown option '" + keys[0] + "'; accepted: none");
    return nullptr;
  }
  sy_provider* provider = nullptr;
  sdk::guarded(kName, error, error_size, [&] {
    provider = new ExampleProvider(host);
    return SY_STATUS_OK;
  });
  return provider;
}

void destroy(sy_provider* p) { delete p; }
int availability(sy_provider*, char*, size_t, char*, size_t) { return 1; }
sy_device device(sy_provider*) { return kDevice; }
void* allocate(sy_provider*, size_t bytes) { return std::malloc(bytes > 0 ? bytes : 1); }
void deallocate(sy_provider*, void* pointer) { std::free(pointer); }

// A copy between host memory and sim:1 (also host memory), checking that
// each side is where the core says it is.
int copy(const sy_tensor* src, bool src_on_device, sy_tensor* dst, bool dst_on_device, char* error,
         size_t error_size) {
  if (on_device(src->device) != src_on_device || on_device(dst->device) != dst_on_device)
    return sdk::report(sdk::runtime_error("copy between the wrong devices"), error, error_size);
  std::memcpy(dst->data, src->data, sdk::TensorView{*src}.byte_size());
  return SY_STATUS_OK;
}
int copy_to_host(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return copy(src, true, dst, false, error, error_size);
}
int copy_from_host(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return copy(src, false, dst, true, error, error_size);
}
int copy_on_device(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return copy(src, true, dst, true, error, error_size);
}

int describe(sy_provider*, char* text, size_t text_size) {
  sdk::write_message(text, text_size, "sim:1: host memory posing as a device\n");
  return SY_STATUS_OK;
}

const sy_option_spec kOptions[] = {{nullptr, nullptr}};

const sy_provider_api kApi = {
    SY_PROVIDER_ABI_VERSION,
    sizeof(sy_provider_api),
    kName,
    "example",
    create,
    destroy,
    availability,
    device,
    allocate,
    deallocate,
    nullptr,  // last_error: malloc says nothing more
    copy_to_host,
    copy_from_host,
    copy_on_device,
    Entries::create_kernel,
    Entries::kernel_run,
    Entries::kernel_destroy,
    nullptr,  // synchronize: kernels finish before they return
    describe,
    Entries::supports,
    nullptr,  // rewrites: none
    "1.0.0",
    nullptr,  // compile: a kernel per node
    kOptions,
    nullptr,  // libraries: none opened at run time
    Entries::kernel_prepare,
    Entries::kernel_state_destroy,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const sy_provider_api* sy_provider_get_api(uint32_t host_abi_version) {
  return host_abi_version == SY_PROVIDER_ABI_VERSION ? &kApi : nullptr;
}
