// Schemas of the recurrent ops LSTM, GRU and RNN.
//
// The three share their shapes: X is [seq, batch, input] (layout 0) or
// [batch, seq, input] (layout 1, from version 14); Y is [seq, dirs, batch,
// hidden] or [batch, seq, dirs, hidden]; Y_h and Y_c are [dirs, batch,
// hidden] or [batch, dirs, hidden]. hidden comes from the hidden_size
// attribute, else from R's last dim.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_recurrent(InferenceContext& ctx) {
  const Node& n = ctx.node();
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_ASSIGN_OR_RETURN(const ValueType* r, required_input(ctx, 2));
  const std::string direction = n.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error("direction must be forward, reverse or bidirectional; got \"" + direction + "\"");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  // layout exists from version 14; earlier versions are always sequence-major.
  const int64_t layout = ctx.opset() >= 14 ? n.attr_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) return ctx.error("layout must be 0 or 1; got " + std::to_string(layout));
  if (x->has_shape && x->rank() != 3)
    return ctx.error("X must have rank 3 ([seq_length, batch_size, input_size] or batch-major); got " +
                     x->shape_string());
  Dim hidden = Dim::unknown();
  if (n.has_attr("hidden_size")) {
    const int64_t h = n.attr_int("hidden_size", 0);
    if (h <= 0) return ctx.error("hidden_size must be positive; got " + std::to_string(h));
    hidden = Dim::known(h);
  } else if (r->has_shape && r->rank() == 3) {
    hidden = r->dims[2];
  }
  Dim seq = Dim::unknown();
  Dim batch = Dim::unknown();
  if (x->has_shape) {
    seq = x->dims[layout == 0 ? 0 : 1];
    batch = x->dims[layout == 0 ? 1 : 0];
  }
  const bool shaped = x->has_shape;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ValueType t = ValueType::tensor(x->dtype);
    if (shaped) {
      t.has_shape = true;
      if (i == 0) {
        t.dims = layout == 0 ? std::vector<Dim>{seq, Dim::known(dirs), batch, hidden}
                             : std::vector<Dim>{batch, seq, Dim::known(dirs), hidden};
      } else {
        t.dims = layout == 0 ? std::vector<Dim>{Dim::known(dirs), batch, hidden}
                             : std::vector<Dim>{batch, Dim::known(dirs), hidden};
      }
    }
    ctx.output_type(i) = std::move(t);
  }
  return ok_status();
}

constexpr OpSchema kRnnSchemas[] = {
    {"", "LSTM", 1, 3, 8, 0, 3, &infer_recurrent},
    {"", "GRU", 1, 3, 6, 0, 2, &infer_recurrent},
    {"", "RNN", 1, 3, 6, 0, 2, &infer_recurrent},
};

}  // namespace

std::span<const OpSchema> rnn_schemas() { return kRnnSchemas; }

}  // namespace sy
