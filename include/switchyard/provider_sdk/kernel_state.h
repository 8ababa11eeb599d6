// KernelState: what a kernel's prepare phase (kernel.h) made for one set
// of input shapes (a chosen algorithm, a workspace size). The core keeps
// it with the run's frame and hands it to every run with those shapes,
// where the kernel reads it through RunContext::state<S>(), and only
// reads it: the kernel's own threads may share it. Part of the provider
// SDK (see axis.h).
#pragma once

namespace sy::provider_sdk {

class KernelState {
 public:
  virtual ~KernelState() = default;
};

}  // namespace sy::provider_sdk
