// A provider's kernels, as the core's (src/providers/kernel.h) have three
// phases: a factory reads the node (NodeInfo) once, checks attributes and
// may prepack constants; prepare(), for kernels that have one, runs when
// the input shapes change (the ABI's kernel_prepare) and makes a
// KernelState for those shapes, which the core keeps with the run's frame;
// run() sees one run's tensors (RunContext) and that state, must not
// allocate on the heap, and may be called from several threads at once,
// hence const. Part of the provider SDK (see axis.h).
//
// Kernel and its factory are written against NodeInfo and RunContext. A
// provider whose kernels need more of their own (the CUDA provider: its
// stream and library handles) subclasses both and uses BasicKernel and
// BasicKernelFactory with its subclasses.
#pragma once

#include <memory>

#include "switchyard/provider_sdk/kernel_state.h"
#include "switchyard/provider_sdk/node_info.h"
#include "switchyard/provider_sdk/run_context.h"
#include "switchyard/provider_sdk/status.h"

namespace sy::provider_sdk {

template <typename Context>
class BasicKernel {
 public:
  using RunContextType = Context;
  virtual ~BasicKernel() = default;
  // Whether prepare() does anything; the glue skips it otherwise.
  virtual bool prepares() const { return false; }
  // The prepare phase: ctx holds the inputs (allocate_output and scratch
  // fail). What it sets in `state` must follow from the inputs' shapes,
  // not their values; it serves every later run with the same shapes.
  virtual Status prepare(Context& ctx, std::unique_ptr<KernelState>& state) const {
    (void)ctx;
    state.reset();
    return ok_status();
  }
  virtual Status run(Context& ctx) const = 0;
};

// A table row's factory: the kernel, or null with `status` saying why not
// (unsupported(): the node goes to the next provider; error(): it is wrong).
template <typename Info, typename Context>
using BasicKernelFactory = std::unique_ptr<BasicKernel<Context>> (*)(const Info& info, Status& status);

using Kernel = BasicKernel<RunContext>;
using KernelFactory = BasicKernelFactory<NodeInfo, RunContext>;

// The factory of kernel class K, built by its constructor
// K(const Info&, Status&); Info is deduced from the row it is put in.
template <typename K, typename Info = NodeInfo>
std::unique_ptr<BasicKernel<typename K::RunContextType>> make_kernel(const Info& info, Status& status) {
  auto k = std::make_unique<K>(info, status);
  if (!status.ok()) return nullptr;
  return k;
}

}  // namespace sy::provider_sdk
