// A provider plugin for tests: built as its own shared library and loaded
// through the plugin loader. It declines every node (with a reason), so
// sessions fall through to the CPU; what the tests check is the loading.
#include <cstring>
#include <string>

#include "providers/plugin_loader.h"

namespace {

class DecliningProvider final : public sy::ExecutionProvider {
 public:
  std::string name() const override { return "TestPluginExecutionProvider"; }
  std::string short_name() const override { return "testplugin"; }
  sy::Availability availability() const override { return {}; }
  sy::Device device() const override { return sy::kCpuDevice; }
  sy::Allocator* allocator() override { return sy::cpu_allocator(); }
  std::vector<sy::NodeClaim> claim(const sy::Graph&, std::span<const sy::NodeId> candidates) override {
    std::vector<sy::NodeClaim> claims;
    for (sy::NodeId id : candidates) {
      sy::NodeClaim c;
      c.node = id;
      c.reason = "the test plugin runs no ops";
      claims.push_back(std::move(c));
    }
    return claims;
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int sy_provider_abi_version() { return sy::kProviderAbiVersion; }

extern "C" __attribute__((visibility("default"))) sy::ExecutionProvider* sy_provider_create(
    const char* const* keys, const char* const*, size_t count, char* error, size_t error_size) {
  if (count > 0) {
    std::snprintf(error, error_size, "unknown option '%s'; accepted: none", keys[0]);
    return nullptr;
  }
  return new DecliningProvider();
}
