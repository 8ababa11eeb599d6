// OwningKernelContext: runs one kernel outside a session plan, giving every
// output its own newly allocated host tensor. Used for constant folding at
// load time and by single-node tests; not on the run() hot path.
#pragma once

#include <span>
#include <vector>

#include "providers/kernel.h"

namespace sy {

class OwningKernelContext final : public KernelContext {
 public:
  OwningKernelContext(const Node& node, std::span<const Tensor* const> inputs, ThreadPool* pool)
      : outputs_(node.outputs.size()) {
    inputs_ = inputs;
    num_outputs_ = node.outputs.size();
    pool_ = pool;
    node_ = &node;
  }
  bool output_requested(size_t i) const override { return i < node_->outputs.size() && node_->outputs[i] != kNoValue; }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    if (i >= outputs_.size()) return invalid_argument(node_->describe() + ": output index out of range");
    SY_ASSIGN_OR_RETURN(outputs_[i], Tensor::allocate(dtype, shape));
    return &outputs_[i];
  }
  Status set_output(size_t i, const Tensor& value) override {
    if (i >= outputs_.size()) return invalid_argument(node_->describe() + ": output index out of range");
    outputs_[i] = value;
    return ok_status();
  }
  Result<void*> scratch(size_t bytes) override {
    SY_ASSIGN_OR_RETURN(scratch_, Tensor::allocate(DataType::kUint8, Shape{static_cast<int64_t>(bytes)}));
    return scratch_.raw_data();
  }
  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  std::vector<Tensor> outputs_;
  Tensor scratch_;
};

}  // namespace sy
