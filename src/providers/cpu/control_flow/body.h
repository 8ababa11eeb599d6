// What the control-flow kernels (If, Loop, Scan, SequenceMap) share: a body
// as they run it.
//
// A body is a CompiledSubgraph (session/compiled_subgraph.h) the session
// made once, before the kernel; running it is binding values into a frame
// of the body's plan and executing that plan with the session's executor.
// The frames live in the kernel's state for the enclosing frame (made by
// prepare(), kept by the frame), so a steady state plans nothing, creates
// nothing and allocates nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "providers/kernel.h"
#include "session/compiled_subgraph.h"
#include "session/execution_frame.h"

namespace sy::cpu {

struct Body {
  const CompiledSubgraph* compiled = nullptr;
  std::string attribute;  // "then_branch", "body"
  // For each outer-scope value the body reads, the kernel input that holds
  // it (a step's inputs after the node's own are its implicit inputs, in
  // order) and the body's value.
  std::vector<std::pair<size_t, ValueId>> bindings;

  const Graph& graph() const { return *compiled->graph; }
  size_t num_inputs() const { return compiled->graph->inputs.size(); }
  size_t num_outputs() const { return compiled->graph->outputs.size(); }
  // "body input 2 ('x_in')", for errors.
  std::string input_name(size_t i) const;
  std::string output_name(size_t i) const;
};

// Finds the compiled body of the node's graph attribute `attribute` and
// its outer-scope bindings.
Status make_body(const KernelCreateContext& ctx, const char* attribute, Body& body);

// A new frame for running `body`.
std::unique_ptr<ExecutionFrame> make_body_frame(const Body& body);

// Binds the body's outer-scope values (the kernel's implicit inputs) into
// `frame` for as long as it lives, and drops them again at its end, so that
// a frame kept between runs holds no reference to the enclosing frame's
// values.
class OuterBinding {
 public:
  OuterBinding(const KernelContext& ctx, const Body& body, ExecutionFrame& frame);
  ~OuterBinding();
  OuterBinding(const OuterBinding&) = delete;
  OuterBinding& operator=(const OuterBinding&) = delete;

 private:
  const Body& body_;
  ExecutionFrame& frame_;
};

// Body input i takes `value` (a view: the caller keeps it alive while the
// body runs).
inline void bind_body_input(const Body& body, ExecutionFrame& frame, size_t i, const Tensor& value) {
  frame.values[static_cast<size_t>(body.graph().inputs[i])] = value;
}

// Drops what the body inputs hold.
void unbind_body_inputs(const Body& body, ExecutionFrame& frame);

// Executes the body's plan on `frame`, whose inputs are bound, under the
// enclosing run's options (its terminate flag stops the body too). Errors
// name the node and the body.
Status execute_body(KernelContext& ctx, const Body& body, ExecutionFrame& frame);

// Body output i after a run: a value of the frame, or a constant of the
// plan. An error when the body left it unset.
Result<const Tensor*> body_output(const KernelContext& ctx, const Body& body, const ExecutionFrame& frame, size_t i);

// Where body output i lives between runs: in a slot of the frame (valid
// until that frame runs again), or in something that outlives the run (a
// constant, an outer-scope value), or it is a body input handed straight
// through (valid as long as that input's value).
enum class OutputSource { kSlot, kStable, kBodyInput };
OutputSource body_output_source(const Body& body, size_t i);

// ---- values carried from one iteration to the next (Loop, Scan) -------------------
//
// Carried values are swapped, not copied: iterations alternate between two
// frames of the body, so an iteration reads the previous one's outputs
// where that one left them (in the other frame's slots) while writing its
// own. A body output that hands a body input straight through is the one
// case copied, into one of two buffers per value alternating the same way,
// since the frame it points into runs next.

// `out` (body output `output`, from `source`) becomes the carried value for
// the next iteration; `spare` is this iteration's buffer for the value.
Status carry_value(const KernelContext& ctx, const Tensor& out, OutputSource source, GrowableBuffer& spare,
                   Tensor& carried);

// A carried value keeps its kind and element type (its shape may change);
// else an error naming body output `output` and iteration `iteration`.
Status check_carried(const KernelContext& ctx, const Body& body, size_t output, const Tensor& initial,
                     const Tensor& out, int64_t iteration, const char* what);

// "float[2,3]", "a sequence of float", "an empty optional", "nothing".
std::string describe_value(const Tensor* t);

inline bool is_scalar_of(const Tensor* t, DataType dtype) {
  return t != nullptr && t->is_tensor() && t->dtype() == dtype && t->num_elements() == 1;
}

}  // namespace sy::cpu
