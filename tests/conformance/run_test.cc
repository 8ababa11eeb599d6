#include "run_test.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/tensor_proto.h"
// onnx_pb.h defines ONNX_API, which onnx-data.pb.h needs first.
#include "onnx/onnx_pb.h"
// clang-format off
#include "onnx/onnx-data.pb.h"
// clang-format on

namespace sy::conformance {
namespace fs = std::filesystem;

namespace {

// Files named <prefix><number><suffix> in `dir`, in numeric order (so that
// input_10.pb comes after input_9.pb).
std::vector<fs::path> numbered_entries(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    found.emplace_back(std::stol(digits), entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

bool is_supported_type(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: return true;
    case onnx::TypeProto::kSequenceType:
      return type.sequence_type().elem_type().value_case() == onnx::TypeProto::kTensorType;
    case onnx::TypeProto::kOptionalType: return is_supported_type(type.optional_type().elem_type());
    default: return false;
  }
}

Result<Tensor> sequence_from_proto(const onnx::SequenceProto& seq, const std::string& what) {
  std::vector<Tensor> items;
  for (int i = 0; i < seq.tensor_values_size(); ++i) {
    SY_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(seq.tensor_values(i), nullptr, what));
    items.push_back(std::move(t));
  }
  if (seq.sparse_tensor_values_size() > 0 || seq.sequence_values_size() > 0 || seq.map_values_size() > 0)
    return not_implemented(what + ": only sequences of tensors are supported");
  const DataType element = items.empty() ? DataType::kUndefined : items.front().dtype();
  return Tensor::sequence(element, std::move(items));
}

// Reads a test data file as the proto the model's type calls for:
// TensorProto, SequenceProto or OptionalProto.
Result<Tensor> load_value_file(const std::string& path, const std::string& type, std::string* name) {
  const bool is_seq = type.rfind("seq(", 0) == 0;
  const bool is_opt = type.rfind("optional(", 0) == 0;
  if (!is_seq && !is_opt) return load_tensor_file(path, name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNoSuchFile, "cannot open " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (is_seq) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromString(bytes)) return Status(StatusCode::kInvalidProtobuf, path + " is not a SequenceProto");
    if (name) *name = seq.name();
    return sequence_from_proto(seq, path);
  }
  onnx::OptionalProto opt;
  if (!opt.ParseFromString(bytes)) return Status(StatusCode::kInvalidProtobuf, path + " is not an OptionalProto");
  if (name) *name = opt.name();
  if (opt.has_tensor_value()) return tensor_from_proto(opt.tensor_value(), nullptr, path);
  if (opt.has_sequence_value()) return sequence_from_proto(opt.sequence_value(), path);
  return Tensor::none();
}

// Compares tensors, sequences (element by element) and optionals.
std::string compare_values(const Tensor& got, const Tensor& expected, const Tolerance& tolerance) {
  if (got.kind() != expected.kind()) return "got " + got.describe() + ", expected " + expected.describe();
  if (got.kind() == ValueKind::kNone) return {};
  if (got.kind() == ValueKind::kSequence) {
    if (got.items().size() != expected.items().size())
      return "sequence of " + std::to_string(got.items().size()) + ", expected " + std::to_string(expected.items().size());
    for (size_t i = 0; i < got.items().size(); ++i) {
      std::string diff = compare_tensors(got.items()[i], expected.items()[i], tolerance);
      if (!diff.empty()) return "sequence element " + std::to_string(i) + ": " + diff;
    }
    return {};
  }
  return compare_tensors(got, expected, tolerance);
}

// The runtime takes tensors, sequences of tensors and optionals of those;
// a model whose graph inputs or outputs are maps cannot be fed or checked.
std::string unsupported_io(const std::string& model_path) {
  std::ifstream in(model_path, std::ios::binary);
  if (!in) return {};  // Session::create reports the missing file
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return {};  // and the bad protobuf
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  for (const auto& input : model.graph().input()) {
    if (initializers.count(input.name()) != 0) continue;
    if (input.has_type() && !is_supported_type(input.type())) return "map and sparse inputs not supported yet";
  }
  for (const auto& output : model.graph().output()) {
    if (output.has_type() && !is_supported_type(output.type())) return "map and sparse outputs not supported yet";
  }
  return {};
}

std::string run_data_set(const Session& session, const fs::path& data_dir, const TestConfig& config) {
  const std::vector<ValueInfo>& model_inputs = session.inputs();
  std::set<std::string> input_names;
  for (const auto& vi : model_inputs) input_names.insert(vi.name);

  std::vector<std::pair<std::string, Tensor>> feeds;
  const std::vector<fs::path> input_files = numbered_entries(data_dir, "input_", ".pb");
  for (size_t k = 0; k < input_files.size(); ++k) {
    std::string name;
    const std::string type = k < model_inputs.size() ? model_inputs[k].type : std::string();
    Result<Tensor> tensor = load_value_file(input_files[k].string(), type, &name);
    if (!tensor.ok())
      return "cannot read " + input_files[k].filename().string() + ": " + one_line(tensor.status().message());
    // The ONNX runner feeds by position; a name, when the file has one and
    // the model knows it, is the more reliable key.
    if (name.empty() || input_names.count(name) == 0) {
      if (k >= model_inputs.size())
        return input_files[k].filename().string() + " has no model input at position " + std::to_string(k) +
               " (the model has " + std::to_string(model_inputs.size()) + " inputs)";
      name = model_inputs[k].name;
    }
    feeds.emplace_back(std::move(name), std::move(tensor).value());
  }

  Result<std::vector<Tensor>> outputs = session.run(feeds);
  if (!outputs.ok()) return one_line(outputs.status().to_string());

  const std::vector<fs::path> output_files = numbered_entries(data_dir, "output_", ".pb");
  if (outputs->size() < output_files.size())
    return "got " + std::to_string(outputs->size()) + " outputs, expected " + std::to_string(output_files.size());
  const std::vector<ValueInfo>& model_outputs = session.outputs();
  for (size_t k = 0; k < output_files.size(); ++k) {
    std::string name;
    const std::string type = k < model_outputs.size() ? model_outputs[k].type : std::string();
    Result<Tensor> expected = load_value_file(output_files[k].string(), type, &name);
    if (!expected.ok())
      return "cannot read " + output_files[k].filename().string() + ": " + one_line(expected.status().message());
    if (k < model_outputs.size()) name = model_outputs[k].name;
    std::string diff = compare_values((*outputs)[k], *expected, config.tolerance);
    if (!diff.empty()) return "output " + std::to_string(k) + " '" + name + "': " + diff;
  }
  return {};
}

// Messages name the model by its full path; the expectations file must not
// depend on where the test data lives.
std::string strip_test_dir(std::string reason, const std::string& test_dir) {
  const std::string prefix = test_dir + "/";
  for (size_t at = reason.find(prefix); at != std::string::npos; at = reason.find(prefix, at))
    reason.erase(at, prefix.size());
  return reason;
}

std::string run_node_test_in(const std::string& test_dir, const TestConfig& config) {
  const fs::path dir(test_dir);
  const std::string model_path = (dir / "model.onnx").string();
  std::string unsupported = unsupported_io(model_path);
  if (!unsupported.empty()) return unsupported;

  SessionOptions options;
  options.providers = config.providers;
  options.fallback.node_fallthrough = FallbackAction::kAllow;
  if (config.strict) options.fallback = FallbackPolicy::strict();
  options.intra_op_threads = config.intra_op_threads;
  options.optimization_level = config.optimization_level;
  options.log_level = LogLevel::kError;
  Result<std::unique_ptr<Session>> session = Session::create(model_path, options);
  if (!session.ok()) return one_line(session.status().to_string());

  const std::vector<fs::path> data_sets = numbered_entries(dir, "test_data_set_", "");
  if (data_sets.empty()) return "no test_data_set_* folder in " + test_dir;
  for (const fs::path& data_dir : data_sets) {
    std::string reason = run_data_set(**session, data_dir, config);
    if (reason.empty()) continue;
    if (data_sets.size() > 1) return data_dir.filename().string() + ": " + reason;
    return reason;
  }
  return {};
}

}  // namespace

std::string one_line(const std::string& text) {
  constexpr size_t kMaxLength = 400;
  std::string line = text.substr(0, text.find('\n'));
  std::replace(line.begin(), line.end(), '\t', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  if (line.size() > kMaxLength) line = line.substr(0, kMaxLength) + "...";
  return line;
}

std::string run_node_test(const std::string& test_dir, const TestConfig& config) {
  return strip_test_dir(run_node_test_in(test_dir, config), test_dir);
}

}  // namespace sy::conformance
