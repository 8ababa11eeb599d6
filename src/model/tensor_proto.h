// TensorProto <-> Tensor. Every ONNX element type is decoded, from raw_data
// (little-endian, sub-byte types packed low bits first) or from the typed
// fields (float_data, int32_data, ...), and the value count is checked
// against the dims. External data goes through an ExternalDataResolver.
#pragma once

#include <string>

#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace onnx {
class TensorProto;
class SparseTensorProto;
}  // namespace onnx

namespace sy {

class ExternalDataResolver;

// `what` names the tensor in errors ("initializer 'w'"). `resolver` may be
// null, in which case a tensor with external data is refused.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataResolver* resolver,
                                 const std::string& what);

// Like tensor_from_proto, but a large raw_data buffer is taken over rather
// than copied (so loading a model does not hold its weights twice); the
// proto's raw_data is left empty in that case.
Result<Tensor> take_tensor_from_proto(onnx::TensorProto& proto, const ExternalDataResolver* resolver,
                                      const std::string& what);

// A sparse tensor made dense (zeros where no value is given). Indices are
// either linear ([NNZ]) or coordinates ([NNZ, rank]).
Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto, const ExternalDataResolver* resolver,
                                        const std::string& what);

// Serializes a host tensor: strings to string_data, everything else to
// raw_data in ONNX's layout (which is ours).
Status tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

// Reads a file holding one serialized TensorProto (the ONNX backend tests'
// test_data_set_*/input_0.pb). External data, if any, is looked up beside
// the file. `name`, when given, receives the proto's name.
Result<Tensor> load_tensor_file(const std::string& path, std::string* name = nullptr);

// Writes `tensor` as a serialized TensorProto.
Status save_tensor_file(const Tensor& tensor, const std::string& path, const std::string& name = "");

}  // namespace sy
