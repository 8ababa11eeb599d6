#include "model/external_data.h"

#include <sys/stat.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <system_error>

#include "core/bool_bytes.h"
#include "onnx/onnx_pb.h"

namespace sy {

namespace fs = std::filesystem;

namespace {

Result<int64_t> parse_non_negative(const std::string& key, const std::string& text, const std::string& what) {
  int64_t v = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0)
    return invalid_graph(what + ": external data '" + key + "' must be a non-negative integer, got '" + text + "'");
  return v;
}

// The alignment a kernel may assume for the element type when it reads the
// tensor through a typed pointer.
size_t element_alignment(DataType dtype) {
  switch (dtype) {
    case DataType::kComplex64: return 4;
    case DataType::kComplex128: return 8;
    default: {
      const size_t s = element_size(dtype);
      return s == 0 ? 1 : s;
    }
  }
}

// True when every component of `base` is a leading component of `p`.
bool is_inside(const fs::path& base, const fs::path& p) {
  auto pi = p.begin();
  for (auto bi = base.begin(); bi != base.end(); ++bi, ++pi) {
    // A trailing separator shows up as an empty last component.
    if (bi->empty() && std::next(bi) == base.end()) break;
    if (pi == p.end() || *pi != *bi) return false;
  }
  return true;
}

}  // namespace

Result<ExternalDataInfo> parse_external_data_info(const onnx::TensorProto& proto, const std::string& what) {
  ExternalDataInfo info;
  bool has_location = false;
  for (const auto& entry : proto.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      info.location = entry.value();
      has_location = true;
    } else if (key == "offset") {
      SY_ASSIGN_OR_RETURN(info.offset, parse_non_negative(key, entry.value(), what));
    } else if (key == "length") {
      SY_ASSIGN_OR_RETURN(info.length, parse_non_negative(key, entry.value(), what));
    } else if (key == "checksum") {
      info.checksum = entry.value();
    }
  }
  if (!has_location || info.location.empty())
    return invalid_graph(what + ": data_location is EXTERNAL but external_data has no 'location'");
  return info;
}

Result<std::string> resolve_external_data_location(const std::string& model_dir, const std::string& location,
                                                   const std::string& real_model_dir) {
  if (location.empty()) return invalid_graph("external data location is empty");
  if (location.find('\0') != std::string::npos)
    return invalid_graph("external data location '" + location + "' contains a NUL character");
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_directory() || loc.has_root_name())
    return invalid_graph("external data location '" + location +
                         "' is an absolute path; only paths relative to the model's folder are allowed");
  for (const fs::path& part : loc)
    if (part == "..")
      return invalid_graph("external data location '" + location +
                           "' has a '..' component; it must stay inside the model's folder");

  std::error_code ec;
  const fs::path base = fs::canonical(model_dir.empty() ? fs::path(".") : fs::path(model_dir), ec);
  if (ec) return Status(StatusCode::kNoSuchFile, "No such file: model folder " + model_dir + " (" + ec.message() + ")");
  // weakly_canonical resolves every symlink in the existing prefix, so a
  // link anywhere on the way (not only the last component) is accounted for.
  const fs::path canon = fs::weakly_canonical(base / loc, ec);
  if (ec) return invalid_graph("external data location '" + location + "' cannot be resolved: " + ec.message());
  if (!is_inside(base, canon)) {
    fs::path real_base;
    if (!real_model_dir.empty()) real_base = fs::canonical(real_model_dir, ec);
    if (real_base.empty() || ec || !is_inside(real_base, canon)) {
      std::string also;
      if (!real_base.empty() && real_base != base)
        also = " and outside " + real_base.string() + ", the folder of the file the model links to";
      return invalid_graph("external data location '" + location + "' resolves to " + canon.string() +
                           ", outside the model's folder " + base.string() + also);
    }
  }
  const fs::file_status st = fs::status(canon, ec);
  if (ec || !fs::exists(st))
    return Status(StatusCode::kNoSuchFile, "No such file: " + (base / loc).string());
  if (!fs::is_regular_file(st))
    return invalid_graph("external data location '" + location + "' (" + canon.string() +
                         ") is not a regular file");
  return canon.string();
}

Result<ExternalDataMode> external_data_mode_from_config(const std::map<std::string, std::string>& config) {
  auto it = config.find(kExternalDataModeKey);
  if (it == config.end() || it->second == "map") return ExternalDataMode::kMap;
  if (it->second == "copy") return ExternalDataMode::kCopy;
  return invalid_argument(std::string("session config '") + kExternalDataModeKey + "' is '" + it->second +
                          "'; accepted: 'map' or 'copy'");
}

ExternalDataResolver::ExternalDataResolver(std::string model_dir, std::string model_name, std::string real_model_dir,
                                           ExternalDataMode mode)
    : model_dir_(std::move(model_dir)),
      model_name_(std::move(model_name)),
      real_model_dir_(std::move(real_model_dir)),
      mode_(mode) {}

size_t ExternalDataResolver::num_open_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.size();
}

Result<std::shared_ptr<MappedFile>> ExternalDataResolver::file_for(const std::string& location,
                                                                   const std::string& what) const {
  const std::string context = what + " of model " + model_name_;
  auto resolved = resolve_external_data_location(model_dir_, location, real_model_dir_);
  if (!resolved.ok()) return resolved.status().with_context(context);
  const std::string& canon = resolved.value();

  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(canon);
  if (it != files_.end()) return it->second;

  MappedFile::Options options;
  options.map_threshold = 0;  // always map: tensors view into it
  options.writable = true;
  // The canonical path has no links left; one appearing now is a race.
  options.no_follow = true;
  auto file = MappedFile::open(canon, options);
  if (!file.ok()) return file.status().with_context(context + ", external data location '" + location + "'");
  // Guards against the path being swapped between the check and the open.
  struct stat st {};
  if (::stat(canon.c_str(), &st) != 0 || st.st_dev != file.value()->device_id() ||
      st.st_ino != file.value()->inode())
    return invalid_graph(context + ": external data file '" + location + "' changed while it was opened");
  files_.emplace(canon, file.value());
  return file;
}

Result<Tensor> ExternalDataResolver::load(const ExternalDataInfo& info, DataType dtype, const Shape& shape,
                                          const std::string& what) const {
  const std::string where = what + " of model " + model_name_ + ", external data location '" + info.location + "'";
  if (dtype == DataType::kString)
    return invalid_graph(where + ": string tensors cannot be stored as external data");
  {
    Status sane = check_shape_is_sane(shape, dtype, what);
    if (!sane.ok()) return invalid_graph(sane.message());
  }
  const uint64_t bytes = storage_bytes(dtype, shape.num_elements());
  if (info.length >= 0 && static_cast<uint64_t>(info.length) != bytes)
    return invalid_graph(where + ": length " + std::to_string(info.length) + " does not match the tensor's size: " +
                         std::string(data_type_name(dtype)) + shape.to_string() + " needs " + std::to_string(bytes) +
                         " bytes");

  SY_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, file_for(info.location, what));
  const uint64_t offset = static_cast<uint64_t>(info.offset);
  if (offset > file->size() || bytes > file->size() - offset)
    return invalid_graph(where + ": offset " + std::to_string(offset) + " + length " + std::to_string(bytes) +
                         " runs past the end of the file (" + std::to_string(file->size()) + " bytes)");

  uint8_t* p = file->mutable_data() + offset;
  const bool view = mode_ == ExternalDataMode::kMap && dtype != DataType::kBool;
  if (view && bytes > 0 && reinterpret_cast<uintptr_t>(p) % element_alignment(dtype) == 0)
    return Tensor::shared(dtype, shape, p, std::shared_ptr<void>(file, file.get()));

  auto copy = Tensor::allocate_uninitialized(dtype, shape);
  if (!copy.ok()) return copy.status().with_context(where);
  if (bytes > 0) std::memcpy(copy->raw_data(), p, bytes);
  if (dtype == DataType::kBool) normalize_bool_bytes(copy->data<uint8_t>(), bytes);
  return copy;
}

}  // namespace sy
