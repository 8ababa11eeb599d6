// The glue between a provider written with the SDK and the ABI table
// (switchyard/provider_abi.h), so that a plugin author writes kernels, a
// kernel table and the provider's own entries (create, availability,
// device memory, copies) and no ABI plumbing. Part of the provider SDK
// (see axis.h). It gives:
//
//   - KernelTableProvider (BasicKernelTableProvider for a provider with
//     its own NodeInfo and RunContext subclasses): a base class for the
//     plugin's provider object, which claims nodes from its table (the
//     SDK's lookup and reasons), creates their kernels and runs them;
//   - KernelEntries<Provider>: the ABI entries supports, create_kernel,
//     kernel_run, kernel_destroy, kernel_prepare and kernel_state_destroy
//     for it, to put in sy_provider_api;
//   - report() and guarded(): for the plugin's other entries, a Status as
//     the ABI's int and message, and no C++ exception across the ABI.
//
// With this header the ABI's opaque sy_provider and sy_kernel are the
// SDK's (a plugin that includes it does not define them): the plugin's
// provider class derives from KernelTableProvider, which is an
// sy_provider, and its create() entry returns it as one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "switchyard/provider_abi.h"
#include "switchyard/provider_sdk/kernel.h"
#include "switchyard/provider_sdk/kernel_table.h"
#include "switchyard/provider_sdk/status.h"

// The ABI's plugin-owned handles, as the SDK defines them: a provider is a
// KernelTableProvider, a kernel a KernelHandle holding the SDK kernel.
// Virtual destructors, so the entries can delete through the handle.
struct sy_provider {
  virtual ~sy_provider() = default;
};
struct sy_kernel {
  virtual ~sy_kernel() = default;
};

namespace sy::provider_sdk {

// Writes `text` into a caller-owned ABI message buffer, cut to fit.
inline void write_message(char* buffer, size_t size, const std::string& text) {
  if (buffer == nullptr || size == 0) return;
  std::snprintf(buffer, size, "%s", text.c_str());
}

// A Status as an ABI entry returns it: its code, and its message in the
// buffer when it is not ok.
inline int report(const Status& status, char* error, size_t error_size) {
  if (!status.ok()) write_message(error, error_size, status.message());
  return status.code();
}

// Runs f (which returns an ABI status code), turning an escaping exception
// into a status and a message that names the provider `who`: an exception
// must not unwind into the core.
template <typename F>
int guarded(const char* who, char* error, size_t error_size, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    write_message(error, error_size, std::string(who) + ": out of host memory");
    return SY_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_message(error, error_size, std::string(who) + ": " + e.what());
    return SY_STATUS_FAIL;
  }
}

// A provider whose kernels come from a table of BasicKernelRow<Info,
// Context> rows: it claims nodes with the SDK's lookup, creates their
// kernels and runs them. A provider with its own NodeInfo and RunContext
// subclasses (the CUDA provider) derives from this and says how to make
// them; others derive from KernelTableProvider, below.
template <typename Info, typename Context>
class BasicKernelTableProvider : public sy_provider {
 public:
  using Row = BasicKernelRow<Info, Context>;
  using KernelType = BasicKernel<Context>;

  // `name` ("CUDAExecutionProvider") prefixes messages about exceptions;
  // `table` must outlive the provider.
  BasicKernelTableProvider(const char* name, const sy_host_api* host, std::span<const Row> table)
      : name_(name), host_(host), table_(table) {}

  const char* name() const { return name_; }
  const sy_host_api* host() const { return host_; }
  std::span<const Row> kernel_table() const { return table_; }

  // The row that runs `node`, or NotImplemented with the reason none does.
  // Creates nothing (the ABI's supports()).
  Status find_row(const sy_node* node, const Row*& row) { return lookup(node_info(node), row); }

  // The kernel for `node` and the inputs it reads from host memory.
  Status create_kernel(const sy_node* node, std::unique_ptr<KernelType>& kernel, uint64_t& host_inputs) {
    const Info info = node_info(node);
    const Row* row = nullptr;
    SY_SDK_RETURN_IF_ERROR(lookup(info, row));
    Status status;
    kernel = row->create(info, status);
    if (!status.ok()) return status;
    if (kernel == nullptr) return runtime_error(info.describe() + ": the kernel factory made no kernel");
    host_inputs = row->host_inputs;
    return ok_status();
  }

  // Runs a kernel in a Context made for this call (and does whatever the
  // provider needs around every run: the CUDA provider makes its device
  // current).
  virtual Status run_kernel(const KernelType& kernel, sy_kernel_context* ctx) = 0;
  // Its prepare phase, the same way.
  virtual Status prepare_kernel(const KernelType& kernel, sy_kernel_context* ctx,
                                std::unique_ptr<KernelState>& state) = 0;

 protected:
  // What the lookup and the factories see of a node.
  virtual Info node_info(const sy_node* node) = 0;
  // Checked before the table: what makes the provider decline any node
  // (the CUDA provider: its stream and handles could not be made).
  virtual Status check_node(const Info& node) {
    (void)node;
    return ok_status();
  }

 private:
  Status lookup(const Info& info, const Row*& row) {
    row = nullptr;
    SY_SDK_RETURN_IF_ERROR(check_node(info));
    if (info.num_inputs() > kMaxKernelInputs)
      return not_implemented("more than " + std::to_string(kMaxKernelInputs) + " inputs");
    std::string reason;
    row = find_kernel(table_, info, reason);
    return row != nullptr ? ok_status() : not_implemented(reason);
  }

  const char* name_;
  const sy_host_api* host_;
  std::span<const Row> table_;
};

// The provider of kernels written against NodeInfo and RunContext (Kernel,
// KernelRow): a plugin's provider class derives from it and adds its
// device, memory and copies.
class KernelTableProvider : public BasicKernelTableProvider<NodeInfo, RunContext> {
 public:
  using BasicKernelTableProvider::BasicKernelTableProvider;

  Status run_kernel(const Kernel& kernel, sy_kernel_context* ctx) override {
    RunContext run_ctx(host(), ctx);
    return kernel.run(run_ctx);
  }
  Status prepare_kernel(const Kernel& kernel, sy_kernel_context* ctx, std::unique_ptr<KernelState>& state) override {
    RunContext run_ctx(host(), ctx);
    return kernel.prepare(run_ctx, state);
  }

 protected:
  NodeInfo node_info(const sy_node* node) override { return NodeInfo(host(), node); }
};

// An SDK kernel as the ABI's sy_kernel.
template <typename Kernel>
struct KernelHandle final : sy_kernel {
  explicit KernelHandle(std::unique_ptr<Kernel> k) : kernel(std::move(k)) {}
  std::unique_ptr<Kernel> kernel;
};

// The ABI's kernel entries for Provider, a class derived from
// (Basic)KernelTableProvider whose create() entry hands the core a
// Provider*:
//   api.supports = KernelEntries<MyProvider>::supports; ...
template <typename Provider>
struct KernelEntries {
  using KernelType = typename Provider::KernelType;

  static int supports(sy_provider* p, const sy_node* node, char* reason, size_t reason_size) {
    Provider& provider = *static_cast<Provider*>(p);
    int supported = 0;
    guarded(provider.name(), reason, reason_size, [&] {
      const typename Provider::Row* row = nullptr;
      const Status st = provider.find_row(node, row);
      if (!st.ok()) return report(st, reason, reason_size);
      supported = 1;
      return 0;
    });
    return supported;
  }

  static int create_kernel(sy_provider* p, const sy_node* node, sy_kernel** kernel, uint64_t* host_inputs,
                           char* reason, size_t reason_size) {
    Provider& provider = *static_cast<Provider*>(p);
    *kernel = nullptr;
    *host_inputs = 0;
    int claimed = 0;
    guarded(provider.name(), reason, reason_size, [&] {
      std::unique_ptr<KernelType> k;
      uint64_t mask = 0;
      const Status st = provider.create_kernel(node, k, mask);
      if (!st.ok()) return report(st, reason, reason_size);
      *kernel = new KernelHandle<KernelType>(std::move(k));
      *host_inputs = mask;
      claimed = 1;
      return 0;
    });
    return claimed;
  }

  static int kernel_run(sy_provider* p, sy_kernel* kernel, sy_kernel_context* ctx, char* error, size_t error_size) {
    Provider& provider = *static_cast<Provider*>(p);
    const KernelType& k = *static_cast<KernelHandle<KernelType>*>(kernel)->kernel;
    return guarded(provider.name(), error, error_size,
                   [&] { return report(provider.run_kernel(k, ctx), error, error_size); });
  }

  static void kernel_destroy(sy_provider*, sy_kernel* kernel) { delete kernel; }

  // The prepare phase of kernels that have one; the state is the kernel's
  // KernelState, handed back by ctx_state() and freed below.
  static int kernel_prepare(sy_provider* p, sy_kernel* kernel, sy_kernel_context* ctx, void** state, char* error,
                            size_t error_size) {
    *state = nullptr;
    Provider& provider = *static_cast<Provider*>(p);
    const KernelType& k = *static_cast<KernelHandle<KernelType>*>(kernel)->kernel;
    if (!k.prepares()) return SY_STATUS_OK;
    return guarded(provider.name(), error, error_size, [&] {
      std::unique_ptr<KernelState> made;
      const Status st = provider.prepare_kernel(k, ctx, made);
      if (!st.ok()) return report(st, error, error_size);
      *state = made.release();
      return 0;
    });
  }

  static void kernel_state_destroy(sy_provider*, sy_kernel*, void* state) { delete static_cast<KernelState*>(state); }
};

}  // namespace sy::provider_sdk
