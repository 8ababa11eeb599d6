// Host-side tests of the CUDA provider library: everything that does not
// need a GPU (options, the device arena over malloc, the algorithm cache,
// finding cuBLAS/cuDNN, and how the provider explains a missing device).
// Tests that need a GPU skip with "skipped: no CUDA device".
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "providers/cuda/conv_algo_cache.h"
#include "providers/cuda/cuda_common.h"
#include "providers/cuda/cuda_libraries.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/device_arena.h"
#include "switchyard/provider_abi.h"

extern "C" const sy_provider_api* sy_provider_get_api(uint32_t host_abi_version);

namespace sy::cuda {
namespace {

bool has_cuda_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- messages ----

TEST(CudaCommonTest, IntsStringFormatsListsForMessages) {
  const int64_t dims[3] = {1, -2, 30};
  EXPECT_EQ(ints_string(dims, 3), "[1,-2,30]");
  EXPECT_EQ(ints_string(dims, 0), "[]");
  EXPECT_EQ(ints_string(std::vector<int64_t>{4, 5}), "[4,5]");
  EXPECT_EQ(ints_string(std::vector<int64_t>{}), "[]");
}

// ---- options ----

TEST(CudaOptionsTest, DefaultsMatchOnnxRuntime) {
  CudaOptions o;
  ASSERT_TRUE(parse_cuda_options({}, o).ok());
  EXPECT_EQ(o.device_id, 0);
  EXPECT_EQ(o.gpu_mem_limit, SIZE_MAX);
  EXPECT_EQ(o.arena_extend_strategy, ArenaExtendStrategy::kNextPowerOfTwo);
  EXPECT_EQ(o.cudnn_conv_algo_search, ConvAlgoSearch::kExhaustive);
  EXPECT_TRUE(o.do_copy_in_default_stream);
  EXPECT_TRUE(o.use_tf32);
  EXPECT_FALSE(o.enable_cuda_graph);
}

TEST(CudaOptionsTest, EveryOptionParses) {
  CudaOptions o;
  const Status st = parse_cuda_options({{"device_id", "3"},
                                        {"gpu_mem_limit", "1073741824"},
                                        {"arena_extend_strategy", "kSameAsRequested"},
                                        {"cudnn_conv_algo_search", "HEURISTIC"},
                                        {"do_copy_in_default_stream", "0"},
                                        {"use_tf32", "false"},
                                        {"enable_cuda_graph", "1"}},
                                       o);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(o.device_id, 3);
  EXPECT_EQ(o.gpu_mem_limit, size_t{1} << 30);
  EXPECT_EQ(o.arena_extend_strategy, ArenaExtendStrategy::kSameAsRequested);
  EXPECT_EQ(o.cudnn_conv_algo_search, ConvAlgoSearch::kHeuristic);
  EXPECT_FALSE(o.do_copy_in_default_stream);
  EXPECT_FALSE(o.use_tf32);
  EXPECT_TRUE(o.enable_cuda_graph);
}

TEST(CudaOptionsTest, UnknownKeyListsWhatIsAccepted) {
  CudaOptions o;
  const Status st = parse_cuda_options({{"device", "0"}}, o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), SY_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(st.message(), "unknown option 'device'")) << st.message();
  EXPECT_TRUE(contains(st.message(), "device_id (an integer >= 0)")) << st.message();
  EXPECT_TRUE(contains(st.message(), "cudnn_conv_algo_search (EXHAUSTIVE, HEURISTIC or DEFAULT)")) << st.message();
}

TEST(CudaOptionsTest, BadValuesNameKeyValueAndRange) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"device_id", "-1"}, {"device_id", "one"}, {"gpu_mem_limit", "0"}, {"gpu_mem_limit", "99999999999999999999999"},
           {"arena_extend_strategy", "double"}, {"cudnn_conv_algo_search", "exhaustive"}, {"use_tf32", "yes"}}) {
    CudaOptions o;
    const Status st = parse_cuda_options({{key, value}}, o);
    ASSERT_FALSE(st.ok()) << key << "=" << value;
    EXPECT_TRUE(contains(st.message(), "option " + key + "='" + value + "' is invalid; expected")) << st.message();
  }
}

// ---- the device arena, over malloc ----

struct MallocBacking {
  size_t allocations = 0, frees = 0;
  size_t fail_above = SIZE_MAX;
  static void* allocate(void* state, size_t bytes, std::string& error) {
    auto* self = static_cast<MallocBacking*>(state);
    if (bytes > self->fail_above) {
      error = "the test backing refuses " + std::to_string(bytes) + " bytes";
      return nullptr;
    }
    ++self->allocations;
    return std::aligned_alloc(DeviceArena::kAlignment, (bytes + 255) / 256 * 256);
  }
  static void deallocate(void* state, void* p) {
    ++static_cast<MallocBacking*>(state)->frees;
    std::free(p);
  }
  ArenaBacking backing() { return {allocate, deallocate, this}; }
};

TEST(DeviceArenaTest, ReusesFreedMemoryWithoutNewRegions) {
  MallocBacking m;
  DeviceArena arena(m.backing(), SIZE_MAX, ArenaExtendStrategy::kNextPowerOfTwo, "test:0");
  void* a = arena.allocate(1000);
  void* b = arena.allocate(5000);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % DeviceArena::kAlignment, 0u);
  EXPECT_EQ(m.allocations, 1u);  // both from the first 2 MiB region
  arena.deallocate(a);
  void* c = arena.allocate(900);
  EXPECT_EQ(c, a);  // best fit: the freed 1024-byte block
  arena.deallocate(b);
  arena.deallocate(c);
  EXPECT_EQ(arena.stats().in_use, 0u);
  // Everything merged back: one allocation the size of the region fits.
  void* whole = arena.allocate(DeviceArena::kMinRegion);
  EXPECT_EQ(m.allocations, 1u);
  arena.deallocate(whole);
}

TEST(DeviceArenaTest, NextPowerOfTwoDoublesRegions) {
  MallocBacking m;
  DeviceArena arena(m.backing(), SIZE_MAX, ArenaExtendStrategy::kNextPowerOfTwo, "test:0");
  std::vector<void*> blocks;
  // Regions of 2, 4 (holding the 2nd and 3rd) and 8 MiB (the 4th).
  for (int i = 0; i < 4; ++i) blocks.push_back(arena.allocate(DeviceArena::kMinRegion));
  EXPECT_EQ(m.allocations, 3u);
  EXPECT_EQ(arena.stats().reserved, (size_t{2} + 4 + 8) << 20);
  for (void* p : blocks) arena.deallocate(p);
}

TEST(DeviceArenaTest, SameAsRequestedTakesExactRegions) {
  MallocBacking m;
  DeviceArena arena(m.backing(), SIZE_MAX, ArenaExtendStrategy::kSameAsRequested, "test:0");
  void* p = arena.allocate(1000);
  EXPECT_EQ(arena.stats().reserved, 1024u);
  arena.deallocate(p);
}

TEST(DeviceArenaTest, LimitFailureNamesAskedLimitHeldAndInUse) {
  MallocBacking m;
  DeviceArena arena(m.backing(), size_t{4} << 20, ArenaExtendStrategy::kNextPowerOfTwo, "cuda:0");
  void* a = arena.allocate(size_t{3} << 20);
  ASSERT_NE(a, nullptr);
  void* b = arena.allocate(size_t{2} << 20);
  EXPECT_EQ(b, nullptr);
  const std::string& e = DeviceArena::last_error();
  EXPECT_TRUE(contains(e, "out of memory on cuda:0: asked for 2.00 MiB (2097152 bytes)")) << e;
  EXPECT_TRUE(contains(e, "gpu_mem_limit is 4.00 MiB")) << e;
  EXPECT_TRUE(contains(e, "of which 3.00 MiB (3145728 bytes) is in use")) << e;
  arena.deallocate(a);
  // Once freed, the same request fits within the limit.
  void* c = arena.allocate(size_t{2} << 20);
  EXPECT_NE(c, nullptr);
  arena.deallocate(c);
}

TEST(DeviceArenaTest, BackingFailureIsReportedWithItsReason) {
  MallocBacking m;
  m.fail_above = size_t{8} << 20;
  DeviceArena arena(m.backing(), SIZE_MAX, ArenaExtendStrategy::kNextPowerOfTwo, "cuda:1");
  EXPECT_EQ(arena.allocate(size_t{16} << 20), nullptr);
  const std::string& e = DeviceArena::last_error();
  EXPECT_TRUE(contains(e, "out of memory on cuda:1: asked for 16.00 MiB")) << e;
  EXPECT_TRUE(contains(e, "the test backing refuses")) << e;
}

TEST(DeviceArenaTest, ManyRandomAllocationsKeepAccounting) {
  MallocBacking m;
  DeviceArena arena(m.backing(), SIZE_MAX, ArenaExtendStrategy::kNextPowerOfTwo, "test:0");
  std::vector<std::pair<void*, size_t>> live;
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int i = 0; i < 2000; ++i) {
    if (!live.empty() && next() % 3 == 0) {
      const size_t k = next() % live.size();
      arena.deallocate(live[k].first);
      live.erase(live.begin() + static_cast<long>(k));
    } else {
      const size_t n = 1 + next() % 300000;
      void* p = arena.allocate(n);
      ASSERT_NE(p, nullptr);
      // No overlap with any live block.
      for (const auto& [q, qn] : live) {
        const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
        ASSERT_TRUE(a + n <= b || b + qn <= a);
      }
      live.emplace_back(p, n);
    }
  }
  for (const auto& [p, n] : live) arena.deallocate(p);
  EXPECT_EQ(arena.stats().in_use, 0u);
}

// ---- the algorithm cache ----

TEST(ConvAlgoCacheTest, ChoicesSurviveIntoANewCache) {
  const std::string folder = (std::filesystem::temp_directory_path() / "sy_conv_cache_test").string();
  std::filesystem::remove_all(folder);
  {
    ConvAlgoCache cache;
    cache.configure(folder, "H100-sm90-cudnn90100-cuda13000-fp32-EXHAUSTIVE");
    ConvAlgoChoice c;
    EXPECT_FALSE(cache.find("model1", "n1c64h56w56_k64x64x3x3", c));
    cache.store("model1", "n1c64h56w56_k64x64x3x3", {6, 4096, 1});
  }
  ConvAlgoCache again;
  again.configure(folder, "H100-sm90-cudnn90100-cuda13000-fp32-EXHAUSTIVE");
  ConvAlgoChoice c;
  ASSERT_TRUE(again.find("model1", "n1c64h56w56_k64x64x3x3", c));
  EXPECT_EQ(c.algo, 6);
  EXPECT_EQ(c.workspace, 4096u);
  EXPECT_EQ(c.math_type, 1);
  EXPECT_EQ(again.hits(), 1);
  // Another model or another GPU/library identity does not see it.
  EXPECT_FALSE(again.find("model2", "n1c64h56w56_k64x64x3x3", c));
  ConvAlgoCache other_gpu;
  other_gpu.configure(folder, "A100-sm80-cudnn90100-cuda13000-fp32-EXHAUSTIVE");
  EXPECT_FALSE(other_gpu.find("model1", "n1c64h56w56_k64x64x3x3", c));
  std::filesystem::remove_all(folder);
}

// ---- libraries ----

TEST(CudaLibrariesTest, FindsCublasAndCudnnOrSaysWhereItLooked) {
  const CudaLibraries& libs = load_cuda_libraries();
  if (libs.ok()) {
    EXPECT_GE(libs.cudnn_load.version, 8000);
    EXPECT_FALSE(libs.cublas_load.path.empty());
    EXPECT_TRUE(libs.reason().empty());
  } else {
    EXPECT_TRUE(contains(libs.reason(), "not found; searched:")) << libs.reason();
    EXPECT_TRUE(contains(libs.reason(), "/usr/local/cuda/lib64")) << libs.reason();
    EXPECT_FALSE(libs.fix().empty());
  }
}

TEST(CudaLibrariesTest, CudnnVersionStrings) {
  EXPECT_EQ(cudnn_version_string(90100), "9.1.0");
  EXPECT_EQ(cudnn_version_string(91302), "9.13.2");
  EXPECT_EQ(cudnn_version_string(8907), "8.9.7");
}

// ---- the provider through its ABI table ----

void quiet_log(int, const char*) {}

sy_host_api log_only_host() {
  sy_host_api h{};
  h.abi_version = SY_PROVIDER_ABI_VERSION;
  h.size = sizeof(sy_host_api);
  h.log = quiet_log;
  return h;
}

TEST(CudaProviderApiTest, TableHasTheAbiVersionAndNames) {
  EXPECT_EQ(sy_provider_get_api(SY_PROVIDER_ABI_VERSION + 1), nullptr);
  const sy_provider_api* api = sy_provider_get_api(SY_PROVIDER_ABI_VERSION);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->abi_version, SY_PROVIDER_ABI_VERSION);
  EXPECT_EQ(api->size, sizeof(sy_provider_api));
  EXPECT_STREQ(api->name, "CUDAExecutionProvider");
  EXPECT_STREQ(api->short_name, "cuda");
}

TEST(CudaProviderApiTest, BadOptionIsAnError) {
  const sy_provider_api* api = sy_provider_get_api(SY_PROVIDER_ABI_VERSION);
  const sy_host_api host = log_only_host();
  const char* keys[] = {"use_tf32"};
  const char* values[] = {"maybe"};
  char error[512] = {};
  EXPECT_EQ(api->create(&host, keys, values, 1, error, sizeof error), nullptr);
  EXPECT_TRUE(contains(error, "option use_tf32='maybe' is invalid; expected 0 or 1")) << error;
}

TEST(CudaProviderApiTest, WithoutADeviceItSaysWhyAndHowToFix) {
  if (has_cuda_device()) GTEST_SKIP() << "a CUDA device is present";
  const sy_provider_api* api = sy_provider_get_api(SY_PROVIDER_ABI_VERSION);
  const sy_host_api host = log_only_host();
  char error[512] = {};
  sy_provider* p = api->create(&host, nullptr, nullptr, 0, error, sizeof error);
  ASSERT_NE(p, nullptr) << error;
  char reason[1024] = {}, fix[1024] = {};
  EXPECT_EQ(api->availability(p, reason, sizeof reason, fix, sizeof fix), 0);
  const std::string r = reason;
  EXPECT_TRUE(contains(r, "NVIDIA driver") || contains(r, "no CUDA device")) << r;
  EXPECT_FALSE(std::string(fix).empty());
  EXPECT_EQ(api->allocate(p, 100), nullptr);  // no arena without a device
  api->destroy(p);
}

TEST(CudaProviderApiTest, DeviceIdOutOfRangeIsNamed) {
  if (!has_cuda_device()) GTEST_SKIP() << "skipped: no CUDA device";
  const sy_provider_api* api = sy_provider_get_api(SY_PROVIDER_ABI_VERSION);
  const sy_host_api host = log_only_host();
  const char* keys[] = {"device_id"};
  const char* values[] = {"1000"};
  char error[512] = {};
  sy_provider* p = api->create(&host, keys, values, 1, error, sizeof error);
  ASSERT_NE(p, nullptr) << error;
  char reason[1024] = {}, fix[1024] = {};
  EXPECT_EQ(api->availability(p, reason, sizeof reason, fix, sizeof fix), 0);
  EXPECT_TRUE(contains(reason, "device_id 1000 is out of range")) << reason;
  api->destroy(p);
}

}  // namespace
}  // namespace sy::cuda
