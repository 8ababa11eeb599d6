// The C++ API: a Session runs one model through the provider chain.
//
//   sy::SessionOptions options;
//   options.providers = {{"cpu", {}}};
//   auto session = sy::Session::create("model.onnx", options);
//   if (!session.ok()) { std::cerr << session.status().to_string(); ... }
//   auto outputs = (*session)->run({{"input", tensor}});
//
// run() is safe to call from several threads at once on one Session.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace sy {

// What to do when the assignment differs from the priority list the user gave.
enum class FallbackAction { kAllow, kWarn, kError };

struct FallbackPolicy {
  // A requested provider that cannot load here.
  FallbackAction unavailable_provider = FallbackAction::kWarn;
  // Nodes that fall through from a requested provider to a later one.
  FallbackAction node_fallthrough = FallbackAction::kWarn;
  // Both levels set to kError (SWITCHYARD_STRICT=1, --strict).
  static FallbackPolicy strict() { return {FallbackAction::kError, FallbackAction::kError}; }
};

// The levels ONNX Runtime users know (ORT_DISABLE_ALL ... ORT_ENABLE_ALL).
enum class OptimizationLevel { kDisableAll = 0, kBasic = 1, kExtended = 2, kAll = 99 };

struct ProviderRequest {
  std::string name;  // "cuda", "CUDAExecutionProvider", ...
  std::map<std::string, std::string> options;
};

enum class LogLevel { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kFatal = 4 };

struct SessionOptions {
  // Priority order; empty means {"cpu"}. CPU is appended when missing, as
  // the last resort, and the fallback policy decides how loudly it is used.
  std::vector<ProviderRequest> providers;
  FallbackPolicy fallback;
  // Thread counts: 0 means one per core. Session::create refuses a negative
  // count, or one above max(64, 4 x the hardware threads) capped at 1024,
  // before it loads anything, and returns ResourceExhausted when the system
  // refuses a thread.
  int intra_op_threads = 0;
  int inter_op_threads = 1;
  OptimizationLevel optimization_level = OptimizationLevel::kAll;
  std::string log_id;  // names the session in log lines; default "session<N>"
  LogLevel log_level = LogLevel::kWarning;
  // When set, the optimized graph is written there as an ONNX file.
  std::string optimized_model_path;
  // Placement limits. Breaking one is an error when the node fall-through
  // policy is kError (strict), a warning otherwise.
  bool require_full_placement = false;  // every node on the first provider listed
  int max_partitions = 0;               // 0: no limit
  int min_partition_size = 0;           // smaller runs stay on the next provider
  int max_copies = -1;                  // device copies per run; -1: no limit
  // Record the time of every node run; end_profiling() writes them.
  bool enable_profiling = false;
  std::string profile_file_prefix = "switchyard_profile";
  // Key/values, as ORT's add_session_config_entry sets them. Keys read:
  //   "session.allow_unknown_attributes": "1" keeps (and ignores) node
  //     attributes the ONNX spec does not list for the op version; by
  //     default ("0") such a model is refused with an error naming the
  //     node and the attribute.
  //   "session.external_data": "map" (default) keeps external data mapped
  //     from its file, which must then not change while the session lives
  //     (truncating it is a SIGBUS, rewriting it changes the weights);
  //     "copy" copies it into the session's memory while loading.
  //     docs/security.md has the details.
  std::map<std::string, std::string> config;
};

struct RunOptions {
  std::string run_tag;
  LogLevel log_level = LogLevel::kWarning;
  // When set and it becomes true (from another thread), run() stops before
  // its next node and fails with "terminated" (ORT's RunOptions.terminate).
  const std::atomic<bool>* terminate = nullptr;
};

// One dimension of a declared shape: value >= 0, or a symbol, or unknown.
struct DimInfo {
  int64_t value = -1;
  std::string symbol;
};

struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;  // a tensor's element type; kUndefined for a sequence or optional
  std::string type;  // "tensor(float)", "seq(tensor(float))", "optional(tensor(float))"
  // What a feed or a result of this type is, spelled out so that callers
  // building feeds (the Python module, the CLI) need not parse `type`:
  bool sequence = false;  // seq(...) or optional(seq(...)): a Tensor::sequence
  bool optional = false;  // optional(...): Tensor::none(), or what it holds
  // The element type of the tensors the value is or holds: `dtype` for a
  // tensor, the items' for a sequence (the type of an empty one).
  DataType element_dtype = DataType::kUndefined;
  bool has_shape = false;
  std::vector<DimInfo> shape;
};

struct ProviderDecline {
  std::string provider;
  std::string reason;
};

// Which provider runs a node, and why each provider ahead of it declined.
struct NodeAssignment {
  std::string node_name;
  std::string op_type;
  std::string provider;
  std::vector<ProviderDecline> declined;
};

// How the graph was split between providers.
struct PlacementSummary {
  int partitions = 0;
  std::vector<std::string> partition_providers;  // per partition, in execution order
  std::vector<int> partition_sizes;              // model nodes per partition
  int copies_per_run = 0;   // device copies each run performs
  int constant_copies = 0;  // weights copied once at creation
  std::map<std::string, int> nodes_per_provider;
};

struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::string domain;
  std::string description;
  std::string graph_description;
  int64_t version = 0;
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;
  std::map<std::string, std::string> custom_metadata;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const std::string& model_path, const SessionOptions& options = {});
  // External data is not allowed for models given as bytes.
  static Result<std::unique_ptr<Session>> create_from_bytes(const void* data, size_t size,
                                                            const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const std::vector<ValueInfo>& overridable_initializers() const;
  const ModelMetadata& metadata() const;
  // Long names of the providers that run at least one node, in priority order.
  std::vector<std::string> providers() const;
  // Long names of the providers requested (after alias resolution), in order.
  std::vector<std::string> requested_providers() const;
  const std::vector<NodeAssignment>& assignment() const;
  const PlacementSummary& placement() const;
  // A readable table of assignment(), one line per node.
  std::string assignment_report() const;

  // Runs the model. `output_names` empty: every output, in model order.
  // Feeds are checked against the model's inputs (name, type, rank, fixed
  // dims); errors name the input and the expected vs received type/shape.
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                  const std::vector<std::string>& output_names = {},
                                  const RunOptions& run_options = {}) const;

  // Runs with inputs and outputs bound ahead of time, possibly in device
  // memory (IoBinding below), so tensors can stay on a GPU between runs.
  Status run_with_binding(class IoBinding& binding, const RunOptions& run_options = {}) const;

  // A tensor in the memory of the provider of this session that owns
  // `device` (host memory for the CPU). The memory stays valid as long as
  // the tensor, even past the session.
  Result<Tensor> allocate_tensor(DataType dtype, const Shape& shape, Device device) const;
  // Copies between host memory and the devices of this session's
  // providers; dst already has src's type and shape.
  Status copy_tensor(const Tensor& src, Tensor& dst) const;

  // Writes the profile recorded since creation (or the last call) as a
  // Chrome trace JSON file "<prefix>_<date>.json" and returns its path;
  // an empty string when profiling is off.
  Result<std::string> end_profiling();

  // One node run recorded while enable_profiling is on.
  struct ProfileRecord {
    std::string node;
    std::string op;
    std::string provider;
    int64_t start_ns = 0;  // since the session was created
    int64_t duration_ns = 0;  // (the trace file has microseconds, as ORT's)
  };
  // A copy of what end_profiling() would write now, oldest first (empty
  // when profiling is off): for a caller that sums the records itself, as
  // `switchyard bench --profile` does for its timed runs only.
  std::vector<ProfileRecord> profile_records() const;
  // How many records profile_records() would return now, without the copy:
  // `switchyard bench` notes it after every timed run to split the records
  // by run.
  size_t profile_record_count() const;

  class Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  Result<std::string> write_profile();
  std::unique_ptr<Impl> impl_;
};

// Inputs and outputs bound to memory ahead of a run, as ONNX Runtime's
// IOBinding: an input may already be on a provider's device (it is used
// there without a copy when the nodes reading it run on that device); an
// output may be asked for on a device, where it stays, or written into a
// tensor the caller allocated.
//
// Every bind checks what it is given before any run reads or writes it: a
// type, a shape without negative or overflowing dimensions, a data pointer
// that is not null, and for a caller's raw buffer its byte size against
// the shape. A Tensor's own size cannot be checked: a Tensor::view must
// describe memory that really holds its shape; prefer the overloads that
// take the buffer's byte size.
class IoBinding {
 public:
  Status bind_input(const std::string& name, const Tensor& value);
  // A caller's buffer of `byte_size` bytes holding dtype[shape].
  Status bind_input(const std::string& name, DataType dtype, const Shape& shape, void* data, size_t byte_size,
                    Device device = kCpuDevice);
  // The output, on `device` (allocated by the run).
  Status bind_output(const std::string& name, Device device = kCpuDevice);
  // The output, written into `preallocated`, whose type and shape must
  // match the output's (checked against the declared output before the
  // run, and against the result before the copy).
  Status bind_output(const std::string& name, const Tensor& preallocated);
  // The output, written into a caller's buffer of `byte_size` bytes.
  Status bind_output(const std::string& name, DataType dtype, const Shape& shape, void* data, size_t byte_size,
                     Device device = kCpuDevice);
  void clear_inputs() { inputs_.clear(); }
  void clear_outputs() {
    outputs_.clear();
    results_.clear();
  }
  // After run_with_binding: one tensor per bound output, in bind order.
  const std::vector<Tensor>& outputs() const { return results_; }

 private:
  friend class Session;
  struct Output {
    std::string name;
    Device device;
    Tensor preallocated;  // undefined when the run allocates
  };
  std::vector<std::pair<std::string, Tensor>> inputs_;
  std::vector<Output> outputs_;
  std::vector<Tensor> results_;
};

// Where log messages go. Every line carries its severity and the log id of
// the session (or run tag) it comes from. By default warnings and worse are
// written to stderr; a callback takes every message at or above each
// session's or run's level instead. Pass nullptr to restore stderr.
using LogFunction = std::function<void(LogLevel level, const std::string& log_id, const std::string& message)>;
void set_log_function(LogFunction function);

// A declared shape as text: "[batch,3,224,224]", "[?]" when the rank is unknown.
std::string shape_string(const ValueInfo& info);

// Device memory without a session (onnxruntime's OrtValue on "cuda"): a
// process-wide provider instance per device serves these. The copy waits
// until the bytes have arrived. Fails, with the provider's reason, when
// the device cannot be used here.
Result<Tensor> allocate_device_tensor(DataType dtype, const Shape& shape, Device device);
Status copy_tensor(const Tensor& src, Tensor& dst);

// Long names of the providers that can load on this machine.
std::vector<std::string> available_providers();
// Long names of every provider Switchyard knows.
std::vector<std::string> all_providers();
const char* version_string();

}  // namespace sy

namespace switchyard = sy;
