// The libFuzzer target over the whole pipeline: bytes -> load -> resolve ->
// optimize -> partition -> plan -> run on small generated inputs.
//
// Any input may be a model: the fuzzer mutates the node suite's model.onnx
// files (the seed corpus) and whatever they turn into. A finding is a
// crash, a hang, a sanitizer report or an allocation over the fuzzer's
// limit; a model that is refused with an error is the expected outcome for
// most inputs. tests/fuzz/README.md has the commands.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "switchyard/session.h"

namespace {

// Inputs larger than this are not fed: a run must stay small and quick.
constexpr int64_t kMaxInputElements = 1 << 16;
// The value a symbolic dimension gets.
constexpr int64_t kSymbolicDim = 2;

// Deterministic contents from the model bytes, so a crash reproduces.
uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// A small tensor for a declared input, or an undefined tensor when the
// input cannot be made here (unknown type, sequence, huge fixed shape).
sy::Tensor make_input(const sy::ValueInfo& info, uint64_t seed) {
  if (info.dtype == sy::DataType::kUndefined || info.type.rfind("tensor(", 0) != 0) return {};
  sy::Shape shape;
  int64_t count = 1;
  for (const sy::DimInfo& d : info.shape) {
    const int64_t v = d.value >= 0 ? d.value : kSymbolicDim;
    if (v > kMaxInputElements || count * std::max<int64_t>(v, 1) > kMaxInputElements) return {};
    shape.push_back(v);
    count *= std::max<int64_t>(v, 1);
  }
  auto t = sy::Tensor::allocate(info.dtype, shape);
  if (!t.ok()) return {};
  if (info.dtype == sy::DataType::kString) {
    auto* s = t->data<std::string>();
    for (int64_t i = 0; i < t->num_elements(); ++i) s[i] = (mix(seed + static_cast<uint64_t>(i)) & 1) ? "1.5" : "ab";
    return std::move(t).value();
  }
  // Small values in every type, with zeros among them (indices, shapes,
  // sizes and masks are the usual inputs). Floats take bytes of at most
  // 0x3f, which read as modest finite values. Integers take values 0 to
  // 63 element by element: bytes of 0x3f make an int32 of 1,061,109,567,
  // and a window or Range of that length is a legitimate minute-long run
  // that the fuzzer would report as a hang. A bool is 0 or 1 (any other
  // byte is not a bool: the session refuses such feeds).
  auto* bytes = static_cast<uint8_t*>(t->raw_data());
  const size_t n = t->byte_size();
  const size_t width = sy::element_size(info.dtype);
  const bool whole_elements = info.dtype == sy::DataType::kBool || sy::is_integer_type(info.dtype);
  const uint8_t mask = info.dtype == sy::DataType::kBool ? 0x01 : 0x3f;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = static_cast<uint8_t>(mix(seed + i) % 3 == 0 ? 0 : (mix(seed ^ i) & mask));
    // Little-endian: an element's value sits in its first byte.
    bytes[i] = (whole_elements && width > 0 && i % width != 0) ? 0 : b;
  }
  return std::move(t).value();
}

// A run longer than this is stopped with RunOptions.terminate: a Loop
// whose trip count comes from the inputs (Range's expanded form divides by
// a delta that may be tiny) is a legitimate computation of any length, not
// a hang, and terminate is how a user stops one. The fuzzer's own timeout
// (20 s) then only catches what terminate cannot stop.
constexpr auto kRunLimit = std::chrono::seconds(3);

// One watchdog for every run: sets `stop` once the deadline passes.
struct Watchdog {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> deadline_ns{0};  // 0: no run under way

  Watchdog() {
    std::thread([this] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const int64_t d = deadline_ns.load();
        if (d != 0 && now_ns() > d) stop = true;
      }
    }).detach();
  }
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Logging off: an error is the normal outcome and would flood the output.
  static const bool quiet = [] {
    sy::set_log_function([](sy::LogLevel, const std::string&, const std::string&) {});
    return true;
  }();
  (void)quiet;
  sy::SessionOptions options;
  options.intra_op_threads = 1;
  options.log_level = sy::LogLevel::kFatal;
  // The last byte picks the optimization level, so both the unoptimized
  // graph and the rewritten one are run.
  if (size > 0 && (data[size - 1] & 1) != 0) options.optimization_level = sy::OptimizationLevel::kDisableAll;
  auto session = sy::Session::create_from_bytes(data, size, options);
  if (!session.ok()) return 0;
  uint64_t seed = size;
  for (size_t i = 0; i < size && i < 64; ++i) seed = mix(seed + data[i]);
  std::vector<std::pair<std::string, sy::Tensor>> feeds;
  for (const sy::ValueInfo& info : (*session)->inputs()) {
    sy::Tensor t = make_input(info, seed++);
    if (!t.defined()) return 0;
    feeds.emplace_back(info.name, std::move(t));
  }
  static Watchdog watchdog;
  watchdog.stop = false;
  watchdog.deadline_ns = Watchdog::now_ns() + std::chrono::nanoseconds(kRunLimit).count();
  sy::RunOptions run_options;
  run_options.terminate = &watchdog.stop;
  auto outputs = (*session)->run(feeds, {}, run_options);
  watchdog.deadline_ns = 0;
  (void)outputs;
  return 0;
}
