// A provider plugin that depends on a library the loader cannot find.
#include "switchyard/provider_abi.h"

extern "C" int sy_missing_dependency_marker();

extern "C" __attribute__((visibility("default"))) const sy_provider_api* sy_provider_get_api(uint32_t) {
  return sy_missing_dependency_marker() == 42 ? nullptr : nullptr;
}
