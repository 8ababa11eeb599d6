// Reference kernels for the op test harness (tests/testing/op_test.h): one
// function per op, plain scalar loops in double precision, written from the
// ONNX spec and sharing no code with the kernels under test.
//
// Files mirror the schema families: the reference of an op declared in
// src/schema/<family>.cc lives in tests/reference/<family>.cc, so whoever
// adds a kernel finds where its reference goes. array.cc holds the few
// helpers they share (tensor <-> Array, broadcasting, attributes).
//
// A reference takes the node's inputs in order (an omitted optional input
// is an undefined Tensor) and its attributes, and returns the outputs.
// Attributes are read with the ONNX defaults, so a case lists only those it
// sets. References check little: a case that feeds them nonsense is a bug
// in the case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/tensor.h"
#include "testing/model_builder.h"

namespace sy::reference {

using testing::AttrSpec;

// A tensor's values as doubles (row-major) with its dims.
struct Array {
  std::vector<int64_t> dims;
  std::vector<double> v;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t size() const;  // product of dims; 1 for a scalar
};

using ReferenceFn = std::vector<Tensor> (*)(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- array.cc: helpers shared by the references --------------------------
Array to_array(const Tensor& t);
// The values rounded to `dtype` (float, double, int32, int64, bool).
Tensor to_tensor(const Array& a, DataType dtype);
// The row-major strides of dims.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
// The numpy broadcast of two shapes.
std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// The flat index into an array of `dims` (right-aligned, size-1 dims
// broadcast) for the multi-index `index` of the broadcast result.
int64_t broadcast_offset(const std::vector<int64_t>& index, const std::vector<int64_t>& dims);
// The multi-index of flat position `flat` in an array of `dims`.
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& dims);
// An axis in [-rank, rank) as [0, rank).
int64_t normalize_axis(int64_t axis, int64_t rank);
// Attribute lookups with the spec's default when the case does not set it.
int64_t attr_int(const std::vector<AttrSpec>& attrs, const std::string& name, int64_t fallback);
float attr_float(const std::vector<AttrSpec>& attrs, const std::string& name, float fallback);
std::vector<int64_t> attr_ints(const std::vector<AttrSpec>& attrs, const std::string& name,
                               std::vector<int64_t> fallback);

// --- elementwise.cc (src/schema/elementwise.cc) ---------------------------
std::vector<Tensor> add(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> sub(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> mul(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> div(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> relu(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> sigmoid(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> tanh(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> exp(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> erf(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> where(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- normalization.cc (src/schema/normalization.cc) -----------------------
// Softmax-13: over one axis (default -1).
std::vector<Tensor> softmax(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
// LayerNormalization-17, output Y only.
std::vector<Tensor> layer_normalization(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- matmul.cc (src/schema/matmul.cc) -------------------------------------
std::vector<Tensor> matmul(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> gemm(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- nn.cc (src/schema/nn.cc): 2-D NCHW only -------------------------------
std::vector<Tensor> conv(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> max_pool(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> average_pool(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- reduce.cc (src/schema/reduce.cc) -------------------------------------
// Axes from the "axes" attribute, or from input 1 when given (ReduceSum-13,
// ReduceMean-18); none: every axis.
std::vector<Tensor> reduce_sum(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> reduce_mean(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

// --- tensor.cc (src/schema/tensor.cc) -------------------------------------
std::vector<Tensor> transpose(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> concat(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
std::vector<Tensor> gather(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);
// Slice-13: starts, ends, axes, steps as inputs.
std::vector<Tensor> slice(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs);

}  // namespace sy::reference
