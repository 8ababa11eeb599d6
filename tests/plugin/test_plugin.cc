// A provider plugin for tests, written only against the public ABI header
// (switchyard/provider_abi.h), as an out-of-tree provider would be. Its
// "device" is host memory tagged sim:7, so copies, host-memory inputs and
// device outputs can be checked without a GPU.
//
// Options: run_ops=1 makes it claim Relu (on its device) and Reshape (shape
// read on the host); otherwise it declines every node. compile=1 makes it
// compile each partition made only of Relus, in a chain, into one kernel
// (the ABI's compile slot), and decline to compile any other.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "switchyard/provider_abi.h"

struct sy_provider {
  const sy_host_api* host;
  bool run_ops;
  bool compile;
};
struct sy_kernel {
  int op;  // 0 Relu, 1 Reshape, 2 a compiled chain of Relus (Relu once: it is idempotent)
};

namespace {

constexpr sy_device kDevice{SY_DEVICE_SIMULATED, 7};

int64_t count(const sy_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

bool on_device(const sy_tensor& t) { return t.device.type == kDevice.type && t.device.id == kDevice.id; }

int fail(char* error, size_t size, const char* message) {
  std::snprintf(error, size, "%s", message);
  return SY_STATUS_RUNTIME_ERROR;
}

sy_provider* create(const sy_host_api* host, const char* const* keys, const char* const* values, size_t n, char* error,
                    size_t error_size) {
  bool run_ops = false, compile = false;
  for (size_t i = 0; i < n; ++i) {
    const bool flag = std::strcmp(values[i], "0") == 0 || std::strcmp(values[i], "1") == 0;
    if (std::strcmp(keys[i], "run_ops") == 0 && flag) {
      run_ops = values[i][0] == '1';
      continue;
    }
    if (std::strcmp(keys[i], "compile") == 0 && flag) {
      compile = values[i][0] == '1';
      continue;
    }
    std::snprintf(error, error_size, "unknown option '%s'; accepted: run_ops, compile (0 or 1)", keys[i]);
    return nullptr;
  }
  return new sy_provider{host, run_ops, compile};
}

void destroy(sy_provider* p) { delete p; }
int availability(sy_provider*, char*, size_t, char*, size_t) { return 1; }
sy_device device(sy_provider*) { return kDevice; }
void* allocate(sy_provider*, size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void deallocate(sy_provider*, void* p) { std::free(p); }

int copy(const sy_tensor* src, sy_tensor* dst, bool to_host, char* error, size_t error_size) {
  if (on_device(*src) != to_host || on_device(*dst) == to_host) return fail(error, error_size, "copy between the wrong devices");
  std::memcpy(dst->data, src->data, static_cast<size_t>(count(*src)) * 4);
  return 0;
}
int copy_to_host(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* e, size_t n) { return copy(src, dst, true, e, n); }
int copy_from_host(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* e, size_t n) { return copy(src, dst, false, e, n); }
int copy_on_device(sy_provider*, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  if (!on_device(*src) || !on_device(*dst)) return fail(error, error_size, "copy_on_device between the wrong devices");
  std::memcpy(dst->data, src->data, static_cast<size_t>(count(*src)) * 4);
  return 0;
}

int create_kernel(sy_provider* p, const sy_node* node, sy_kernel** kernel, uint64_t* host_inputs, char* reason,
                  size_t reason_size) {
  if (!p->run_ops) {
    std::snprintf(reason, reason_size, "the test plugin runs no ops");
    return 0;
  }
  const std::string op = p->host->node_op_type(node);
  sy_tensor type{};
  if (!p->host->node_input_type(node, 0, &type) || type.dtype != 1) {
    std::snprintf(reason, reason_size, "the test plugin takes float only");
    return 0;
  }
  if (op == "Relu") {
    *kernel = new sy_kernel{0};
    return 1;
  }
  if (op == "Reshape") {
    *kernel = new sy_kernel{1};
    *host_inputs = 1u << 1;  // the shape
    return 1;
  }
  std::snprintf(reason, reason_size, "the test plugin has no %s kernel", op.c_str());
  return 0;
}

// A partition of Relus, each reading the one before: one kernel. The cache
// key must be there (a real provider would name its engine file by it).
int compile(sy_provider* p, const sy_partition* part, const char* cache_key, sy_kernel** kernel, uint64_t* host_inputs,
            char* reason, size_t reason_size) {
  const sy_host_api* h = p->host;
  *host_inputs = 0;
  if (!p->compile) {
    std::snprintf(reason, reason_size, "compiling is off");
    return 0;
  }
  if (cache_key == nullptr || std::strlen(cache_key) < 16) {
    std::snprintf(reason, reason_size, "no cache key");
    return 0;
  }
  if (h->partition_num_inputs(part) != 1 || h->partition_num_outputs(part) != 1) {
    std::snprintf(reason, reason_size, "the test plugin compiles chains with one input and one output only");
    return 0;
  }
  const char* in_name = nullptr;
  const char* out_name = nullptr;
  sy_tensor type{};
  h->partition_input(part, 0, &in_name, &type);
  h->partition_output(part, 0, &out_name, &type);
  std::string previous = in_name;
  for (int32_t i = 0; i < h->partition_num_nodes(part); ++i) {
    const sy_node* node = h->partition_node(part, i);
    if (std::strcmp(h->node_op_type(node), "Relu") != 0 || previous != h->node_input_name(node, 0)) {
      std::snprintf(reason, reason_size, "the test plugin compiles chains of Relu only");
      return 0;
    }
    previous = h->node_output_name(node, 0);
  }
  if (previous != out_name) {
    std::snprintf(reason, reason_size, "the chain does not end in the partition's output");
    return 0;
  }
  *kernel = new sy_kernel{2};
  return 1;
}

int kernel_run(sy_provider* p, sy_kernel* k, sy_kernel_context* ctx, char* error, size_t error_size) {
  const sy_host_api* h = p->host;
  sy_tensor x{}, out{};
  if (!h->ctx_input(ctx, 0, &x) || !on_device(x)) return fail(error, error_size, "input 0 is not on sim:7");
  int64_t dims[SY_MAX_RANK];
  int32_t rank = x.rank;
  std::memcpy(dims, x.dims, sizeof dims);
  if (k->op == 1) {
    sy_tensor shape{};
    if (!h->ctx_input(ctx, 1, &shape) || shape.device.type != SY_DEVICE_CPU)
      return fail(error, error_size, "the shape input is not in host memory");
    rank = static_cast<int32_t>(count(shape));
    const auto* s = static_cast<const int64_t*>(shape.data);
    int64_t known = 1, infer = -1;
    for (int i = 0; i < rank; ++i) {
      dims[i] = s[i] == 0 ? x.dims[i] : s[i];
      if (dims[i] == -1) infer = i;
      else known *= dims[i];
    }
    if (infer >= 0) dims[infer] = count(x) / known;
  }
  const int code = h->ctx_allocate_output(ctx, 0, x.dtype, rank, dims, &out, error, error_size);
  if (code != 0) return code;
  if (!on_device(out)) return fail(error, error_size, "output 0 is not on sim:7");
  const auto* in = static_cast<const float*>(x.data);
  auto* o = static_cast<float*>(out.data);
  for (int64_t i = 0; i < count(x); ++i) o[i] = k->op != 1 ? (in[i] > 0 ? in[i] : 0) : in[i];
  return 0;
}

void kernel_destroy(sy_provider*, sy_kernel* k) { delete k; }

int describe(sy_provider*, char* text, size_t size) {
  std::snprintf(text, size, "sim:7: host memory posing as a device\n");
  return 0;
}

const sy_option_spec kOptions[] = {{"run_ops", "0 or 1"}, {"compile", "0 or 1"}, {nullptr, nullptr}};
// Nothing it opens; listed so that doctor's reading of the list is tested.
const char* const kLibraries[] = {"libc.so.6", nullptr};

const sy_provider_api kApi = {
    SY_PROVIDER_ABI_VERSION, sizeof(sy_provider_api), "TestPluginExecutionProvider", "testplugin",
    create, destroy, availability, device, allocate, deallocate, nullptr,
    copy_to_host, copy_from_host, copy_on_device, create_kernel, kernel_run, kernel_destroy, nullptr, describe,
    // No supports(): the core's fallback asks create_kernel at placement.
    // No rewrites.
    nullptr, nullptr, "test-plugin-1", compile, kOptions, kLibraries,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const sy_provider_api* sy_provider_get_api(uint32_t version) {
  return version == SY_PROVIDER_ABI_VERSION ? &kApi : nullptr;
}
