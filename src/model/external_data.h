// External data: tensors whose bytes live in files beside the model
// (TensorProto.data_location = EXTERNAL). A model is untrusted input, so a
// location may only name a regular file inside the model's folder: absolute
// paths, ".." components and symlinks leading outside are refused, and
// offset/length must lie within the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/mapped_file.h"
#include "switchyard/data_type.h"
#include "switchyard/shape.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace onnx {
class TensorProto;
}

namespace sy {

// The recognised external_data keys of one tensor. Unknown keys (and
// "basepath", which onnx's Python helpers add) are ignored.
struct ExternalDataInfo {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: not given; the tensor's byte size is used
  std::string checksum;
};

// Parses and checks the key/values: location present, offset and length
// non-negative decimal integers. Errors name `what`.
Result<ExternalDataInfo> parse_external_data_info(const onnx::TensorProto& proto, const std::string& what);

// The canonical path of `location` inside `model_dir`, or an error when it
// is absolute, has a ".." component, resolves (through symlinks) outside the
// folder, does not exist (kNoSuchFile) or is not a regular file.
//
// `real_model_dir`, when given, is the folder of the model file after its
// symlinks are resolved; a location may also resolve inside it. That is the
// Hugging Face cache layout: snapshots/<rev>/model.onnx and model.onnx_data
// are both links into blobs/, which is outside snapshots/<rev>.
Result<std::string> resolve_external_data_location(const std::string& model_dir, const std::string& location,
                                                   const std::string& real_model_dir = "");

// How a session holds external data (session config "session.external_data").
enum class ExternalDataMode {
  // Tensors view into the mapped file: no copy, but the file must not
  // change while a session lives (truncating it makes the next read of a
  // lost page a SIGBUS; rewriting it changes the weights).
  kMap,
  // Tensors are copied into memory of their own during loading, and the
  // file is closed when loading ends; later changes to it do not matter.
  kCopy,
};

// The config key and its parser: "map" (the default) or "copy".
inline constexpr const char* kExternalDataModeKey = "session.external_data";
Result<ExternalDataMode> external_data_mode_from_config(const std::map<std::string, std::string>& config);

// Serves external tensor data for one model load. Each data file is mapped
// once and shared by every tensor in it; under kMap, tensors view into the
// mapping when the offset is suitably aligned (and copy otherwise), so the
// mapping lives as long as any such tensor. Bool tensors are always copied,
// to make every byte 0 or 1.
class ExternalDataResolver {
 public:
  // `model_dir`: the folder locations are relative to. `model_name`: the
  // model file (or a description), named in error messages.
  // `real_model_dir`: see resolve_external_data_location().
  ExternalDataResolver(std::string model_dir, std::string model_name, std::string real_model_dir = "",
                       ExternalDataMode mode = ExternalDataMode::kMap);

  // The tensor `what` of `dtype` and `shape` stored as `info` says.
  Result<Tensor> load(const ExternalDataInfo& info, DataType dtype, const Shape& shape,
                      const std::string& what) const;

  const std::string& model_dir() const { return model_dir_; }
  const std::string& model_name() const { return model_name_; }
  size_t num_open_files() const;

 private:
  Result<std::shared_ptr<MappedFile>> file_for(const std::string& location, const std::string& what) const;

  std::string model_dir_;
  std::string model_name_;
  std::string real_model_dir_;
  ExternalDataMode mode_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<MappedFile>> files_;  // by canonical path
};

}  // namespace sy
