// SWITCHYARD_MAX_ISA as doctor reports it. That the cap really moves the
// kernels' dispatch is shown by the op harness's cpu_portable and cpu_avx2
// configurations, which run in a child process under the cap and fail when
// best_cpu_isa() there is not the capped variant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/cpu_features.h"

namespace sy {
namespace {

// Sets the variable for one scope; the process's own dispatch is decided
// already and does not change.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(CpuIsaCap, ACapBelowTheCpuIsReported) {
  if (!cpu_supports(CpuIsa::kAvx2)) GTEST_SKIP() << "this CPU has only the portable variant";
  ScopedEnv cap("SWITCHYARD_MAX_ISA", "portable");
  EXPECT_EQ(cpu_isa_cap_setting(), "SWITCHYARD_MAX_ISA=portable");
}

TEST(CpuIsaCap, ACapAtOrAboveTheCpuIsNoCap) {
  ScopedEnv cap("SWITCHYARD_MAX_ISA", "avx512");
  EXPECT_EQ(cpu_isa_cap_setting(), "");
}

TEST(CpuIsaCap, AnUnknownValueIsNamedAndIgnored) {
  ScopedEnv cap("SWITCHYARD_MAX_ISA", "sse9");
  EXPECT_EQ(cpu_isa_cap_setting(), "SWITCHYARD_MAX_ISA=sse9 (unknown value, ignored)");
}

}  // namespace
}  // namespace sy
