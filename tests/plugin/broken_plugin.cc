// A provider plugin that depends on a library the loader cannot find.
#include <cstddef>

extern "C" int sy_missing_dependency_marker();

extern "C" __attribute__((visibility("default"))) int sy_provider_abi_version() {
  return sy_missing_dependency_marker() == 42 ? 1 : 0;
}
