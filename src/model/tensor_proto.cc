#include "model/tensor_proto.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <filesystem>

#include "core/bool_bytes.h"
#include "core/mapped_file.h"
#include "model/external_data.h"
#include "onnx/onnx_pb.h"

namespace sy {

// raw_data and external files are little-endian; on such a host they are
// our in-memory layout and can be used as they are.
static_assert(std::endian::native == std::endian::little, "tensor decoding assumes a little-endian host");

namespace {

// Below this a raw_data buffer is copied rather than taken over: the saving
// is nil and the tensor then gets the allocator's 64-byte alignment.
constexpr size_t kTakeOverBytes = 4096;

// A sparse tensor is made dense at load. Its dims are declared, not carried
// by bytes, so a model of a few bytes could ask for gigabytes of zeros; past
// this size the dense tensor must be backed by at least one value given per
// kMaxSparseExpansion elements.
constexpr uint64_t kSparseDenseFreeBytes = uint64_t{16} << 20;
constexpr uint64_t kMaxSparseExpansion = 1024;

std::string type_and_shape(DataType dt, const Shape& shape) {
  return std::string(data_type_name(dt)) + shape.to_string();
}

Result<DataType> proto_data_type(int32_t value, const std::string& what) {
  if (value == 0) return invalid_graph(what + ": the tensor has no data_type");
  if (!is_valid_data_type(value))
    return not_implemented(what + ": element type " + std::to_string(value) +
                           " is not supported by this build (it may be newer than ONNX IR 13)");
  return static_cast<DataType>(value);
}

Result<Shape> proto_shape(const onnx::TensorProto& proto, DataType dt, const std::string& what) {
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_graph(what + ": negative dimension " + std::to_string(d) + " in its dims");
    shape.push_back(d);
  }
  Status sane = check_shape_is_sane(shape, dt, what);
  if (!sane.ok()) return invalid_graph(sane.message());
  return shape;
}

template <typename Dst, typename Field>
void copy_values(const Field& src, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(src[static_cast<int>(i)]);
}

// int32_data carries the narrow integer types and the bit patterns of the
// 16- and 8-bit float types, one element per entry.
template <typename Dst>
void narrow_int32(const google::protobuf::RepeatedField<int32_t>& src, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(static_cast<uint32_t>(src[static_cast<int>(i)]));
}

// The typed field that holds the values of `dt` when there is no raw_data,
// how many entries it has and how many it needs.
struct TypedField {
  const char* name = "";
  int64_t have = 0;
  int64_t need = 0;
  int64_t need_packed = -1;  // the packed byte count, for sub-byte types
};

TypedField typed_field(const onnx::TensorProto& proto, DataType dt, int64_t n) {
  switch (dt) {
    case DataType::kFloat: return {"float_data", proto.float_data_size(), n};
    case DataType::kComplex64: return {"float_data", proto.float_data_size(), 2 * n};
    case DataType::kDouble: return {"double_data", proto.double_data_size(), n};
    case DataType::kComplex128: return {"double_data", proto.double_data_size(), 2 * n};
    case DataType::kInt64: return {"int64_data", proto.int64_data_size(), n};
    case DataType::kUint64:
    case DataType::kUint32: return {"uint64_data", proto.uint64_data_size(), n};
    case DataType::kString: return {"string_data", proto.string_data_size(), n};
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kUint2:
    case DataType::kInt2:
      return {"int32_data", proto.int32_data_size(), n, static_cast<int64_t>(storage_bytes(dt, n))};
    default: return {"int32_data", proto.int32_data_size(), n};
  }
}

// Called before the tensor is allocated: a model of a few bytes must not
// make the loader allocate what its dims declare and only then find that
// the values are missing.
Status check_typed_count(const onnx::TensorProto& proto, DataType dt, const Shape& shape, const std::string& what) {
  const TypedField f = typed_field(proto, dt, shape.num_elements());
  if (f.have == f.need || f.have == f.need_packed) return ok_status();
  if (f.need_packed >= 0)
    return invalid_graph(what + ": " + type_and_shape(dt, shape) + " needs " + std::to_string(f.need) +
                         " values (one per element) or " + std::to_string(f.need_packed) + " packed bytes in " +
                         f.name + " but it has " + std::to_string(f.have));
  return invalid_graph(what + ": " + type_and_shape(dt, shape) + " needs " + std::to_string(f.need) + " values in " +
                       f.name + " but it has " + std::to_string(f.have));
}

// Sub-byte types in int32_data: current exporters store the packed bytes
// (one byte per entry, as in raw_data); older writers stored one element
// per entry. The entry count tells which.
void decode_packed_int32(const onnx::TensorProto& proto, DataType dt, int64_t n, int bits, uint8_t* dst) {
  const auto bytes = static_cast<int64_t>(storage_bytes(dt, n));
  const int per_byte = 8 / bits;
  const uint32_t mask = (1u << bits) - 1u;
  if (proto.int32_data_size() == n) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t v = static_cast<uint32_t>(proto.int32_data(static_cast<int>(i))) & mask;
      dst[i / per_byte] = static_cast<uint8_t>(dst[i / per_byte] | (v << (bits * (i % per_byte))));
    }
    return;
  }
  for (int64_t i = 0; i < bytes; ++i)
    dst[i] = static_cast<uint8_t>(static_cast<uint32_t>(proto.int32_data(static_cast<int>(i))) & 0xffu);
}

// The value counts were checked by check_typed_count().
void decode_typed(const onnx::TensorProto& proto, Tensor& t) {
  const int64_t n = t.num_elements();
  switch (t.dtype()) {
    case DataType::kFloat: copy_values(proto.float_data(), t.data<float>(), n); return;
    case DataType::kComplex64: copy_values(proto.float_data(), t.data<float>(), 2 * n); return;
    case DataType::kDouble: copy_values(proto.double_data(), t.data<double>(), n); return;
    case DataType::kComplex128: copy_values(proto.double_data(), t.data<double>(), 2 * n); return;
    case DataType::kInt64: copy_values(proto.int64_data(), t.data<int64_t>(), n); return;
    case DataType::kUint64: copy_values(proto.uint64_data(), t.data<uint64_t>(), n); return;
    case DataType::kUint32: copy_values(proto.uint64_data(), t.data<uint32_t>(), n); return;
    case DataType::kInt32: copy_values(proto.int32_data(), t.data<int32_t>(), n); return;
    case DataType::kInt16: narrow_int32(proto.int32_data(), t.data<int16_t>(), n); return;
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBfloat16: narrow_int32(proto.int32_data(), t.data<uint16_t>(), n); return;
    case DataType::kInt8: narrow_int32(proto.int32_data(), t.data<int8_t>(), n); return;
    case DataType::kUint8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: narrow_int32(proto.int32_data(), t.data<uint8_t>(), n); return;
    case DataType::kBool: {
      auto* dst = t.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = proto.int32_data(static_cast<int>(i)) != 0 ? 1 : 0;
      return;
    }
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: decode_packed_int32(proto, t.dtype(), n, 4, t.data<uint8_t>()); return;
    case DataType::kUint2:
    case DataType::kInt2: decode_packed_int32(proto, t.dtype(), n, 2, t.data<uint8_t>()); return;
    case DataType::kString: {
      auto* dst = t.data<std::string>();
      for (int64_t i = 0; i < n; ++i) dst[i] = proto.string_data(static_cast<int>(i));
      return;
    }
    case DataType::kUndefined: return;
  }
}

Result<Tensor> allocate_for(DataType dt, const Shape& shape, const std::string& what) {
  auto t = Tensor::allocate(dt, shape);
  if (!t.ok()) return t.status().with_context(what);
  return t;
}

// `raw_owner`, when not null, is the proto's own raw_data, which may be
// moved out instead of copied.
Result<Tensor> decode(const onnx::TensorProto& proto, std::string* raw_owner, const ExternalDataResolver* resolver,
                      const std::string& what) {
  SY_ASSIGN_OR_RETURN(const DataType dt, proto_data_type(proto.data_type(), what));
  SY_ASSIGN_OR_RETURN(Shape shape, proto_shape(proto, dt, what));
  if (proto.has_segment()) return not_implemented(what + ": segmented tensors (TensorProto.segment) are not supported");

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    SY_ASSIGN_OR_RETURN(ExternalDataInfo info, parse_external_data_info(proto, what));
    if (resolver == nullptr)
      return invalid_graph(what + ": its data is in the external file '" + info.location +
                           "', but the model was loaded from bytes with no external data folder; "
                           "pass the folder holding that file as external_data_dir");
    return resolver->load(info, dt, shape, what);
  }

  const size_t bytes = storage_bytes(dt, shape.num_elements());
  if (!proto.has_raw_data()) {
    SY_RETURN_IF_ERROR(check_typed_count(proto, dt, shape, what));
    SY_ASSIGN_OR_RETURN(Tensor t, allocate_for(dt, shape, what));
    decode_typed(proto, t);
    return t;
  }

  if (dt == DataType::kString) return invalid_graph(what + ": string tensors cannot be stored in raw_data");
  const std::string& raw = proto.raw_data();
  if (raw.size() != bytes)
    return invalid_graph(what + ": raw_data has " + std::to_string(raw.size()) + " bytes but " +
                         type_and_shape(dt, shape) + " needs " + std::to_string(bytes));
  // A heap-allocated string keeps its buffer when moved, so the alignment
  // seen here is the one the tensor gets.
  const size_t align = element_size(dt) == 0 ? 1 : std::min<size_t>(element_size(dt), 8);
  if (raw_owner != nullptr && dt != DataType::kBool && bytes >= kTakeOverBytes &&
      reinterpret_cast<uintptr_t>(raw_owner->data()) % align == 0) {
    auto owner = std::make_shared<std::string>(std::move(*raw_owner));
    raw_owner->clear();
    void* p = owner->data();
    return Tensor::shared(dt, shape, p, std::move(owner));
  }
  SY_ASSIGN_OR_RETURN(Tensor t, allocate_for(dt, shape, what));
  if (bytes > 0) std::memcpy(t.raw_data(), raw.data(), bytes);
  if (dt == DataType::kBool) normalize_bool_bytes(t.data<uint8_t>(), bytes);
  return t;
}

}  // namespace

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataResolver* resolver,
                                 const std::string& what) {
  return decode(proto, nullptr, resolver, what);
}

Result<Tensor> take_tensor_from_proto(onnx::TensorProto& proto, const ExternalDataResolver* resolver,
                                      const std::string& what) {
  std::string* raw = proto.has_raw_data() ? proto.mutable_raw_data() : nullptr;
  return decode(proto, raw, resolver, what);
}

Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto, const ExternalDataResolver* resolver,
                                        const std::string& what) {
  SY_ASSIGN_OR_RETURN(Tensor values, tensor_from_proto(proto.values(), resolver, what + " (values)"));
  SY_ASSIGN_OR_RETURN(Tensor indices, tensor_from_proto(proto.indices(), resolver, what + " (indices)"));
  const DataType dt = values.dtype();
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_graph(what + ": negative dimension " + std::to_string(d) + " in its dims");
    shape.push_back(d);
  }
  {
    Status sane = check_shape_is_sane(shape, dt, what);
    if (!sane.ok()) return invalid_graph(sane.message());
  }
  if (element_size(dt) == 0)
    return not_implemented(what + ": sparse tensors of " + std::string(data_type_name(dt)) + " are not supported");
  if (values.shape().rank() != 1)
    return invalid_graph(what + ": values must be 1-D, got " + values.shape().to_string());
  if (indices.dtype() != DataType::kInt64)
    return invalid_graph(what + ": indices must be int64, got " + std::string(data_type_name(indices.dtype())));
  const int64_t nnz = values.shape()[0];
  const int64_t total = shape.num_elements();
  const size_t rank = shape.rank();
  const bool linear = indices.shape().rank() == 1;
  if (linear ? indices.shape()[0] != nnz
             : (indices.shape().rank() != 2 || indices.shape()[0] != nnz ||
                indices.shape()[1] != static_cast<int64_t>(rank)))
    return invalid_graph(what + ": indices of shape " + indices.shape().to_string() + " do not fit " +
                         std::to_string(nnz) + " values of a rank-" + std::to_string(rank) + " tensor");

  const uint64_t dense_bytes = storage_bytes(dt, total);
  const auto per_value = static_cast<uint64_t>(total / std::max<int64_t>(nnz, 1));
  if (dense_bytes > kSparseDenseFreeBytes && per_value > kMaxSparseExpansion)
    return invalid_graph(what + ": " + std::to_string(nnz) + " values would become a dense " +
                         type_and_shape(dt, shape) + " of " + std::to_string(dense_bytes) +
                         " bytes; past " + std::to_string(kSparseDenseFreeBytes) + " bytes a sparse tensor needs " +
                         "a value for every " + std::to_string(kMaxSparseExpansion) + " elements");
  SY_ASSIGN_OR_RETURN(Tensor dense, allocate_for(dt, shape, what));
  const int64_t* idx = indices.data<int64_t>();
  const size_t esize = element_size(dt);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t pos = 0;
    if (linear) {
      pos = idx[k];
    } else {
      for (size_t d = 0; d < rank; ++d) {
        const int64_t c = idx[static_cast<size_t>(k) * rank + d];
        if (c < 0 || c >= shape[d])
          return invalid_graph(what + ": index " + std::to_string(c) + " of value " + std::to_string(k) +
                               " is out of range for dimension " + std::to_string(d) + " of size " +
                               std::to_string(shape[d]));
        pos = pos * shape[d] + c;
      }
    }
    if (pos < 0 || pos >= total)
      return invalid_graph(what + ": index " + std::to_string(pos) + " of value " + std::to_string(k) +
                           " is out of range for " + std::to_string(total) + " elements");
    if (dt == DataType::kString) {
      dense.data<std::string>()[pos] = values.data<std::string>()[k];
    } else {
      std::memcpy(static_cast<uint8_t*>(dense.raw_data()) + static_cast<size_t>(pos) * esize,
                  static_cast<const uint8_t*>(values.raw_data()) + static_cast<size_t>(k) * esize, esize);
    }
  }
  return dense;
}

Status tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  if (!tensor.defined()) return invalid_argument("cannot serialize an undefined tensor '" + name + "'");
  if (!tensor.device().is_cpu())
    return invalid_argument("cannot serialize tensor '" + name + "' on " + tensor.device().to_string() +
                            "; copy it to the host first");
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    const auto* s = tensor.data<std::string>();
    for (int64_t i = 0, n = tensor.num_elements(); i < n; ++i) proto->add_string_data(s[i]);
  } else {
    proto->set_raw_data(tensor.raw_data(), tensor.byte_size());
  }
  return ok_status();
}

Result<Tensor> load_tensor_file(const std::string& path, std::string* name) {
  SY_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  if (file->size() > static_cast<size_t>(INT_MAX))
    return Status(StatusCode::kInvalidProtobuf,
                  path + " is " + std::to_string(file->size()) + " bytes; protobuf cannot parse more than 2 GiB");
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(file->data(), static_cast<int>(file->size())))
    return Status(StatusCode::kInvalidProtobuf,
                  path + " is not a serialized TensorProto (protobuf parse failed; the file may be truncated)");
  file.reset();
  if (name != nullptr) *name = proto.name();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  ExternalDataResolver resolver(dir.empty() ? "." : dir, path);
  const std::string what = "tensor '" + proto.name() + "' in " + path;
  return take_tensor_from_proto(proto, &resolver, what);
}

Status save_tensor_file(const Tensor& tensor, const std::string& path, const std::string& name) {
  onnx::TensorProto proto;
  SY_RETURN_IF_ERROR(tensor_to_proto(tensor, name, &proto));
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return fail("cannot serialize " + tensor.describe() + " (protobuf messages are limited to 2 GiB)");
  return write_file(path, bytes);
}

}  // namespace sy
