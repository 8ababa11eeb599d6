#include "providers/cpu/gemm/fused_epilogue.h"

#include <limits>
#include <string>
#include <vector>

#include "schema/fused.h"

namespace sy::cpu {

bool is_fused_op(const KernelCreateContext& ctx) { return ctx.node().domain == kSwitchyardDomain; }

Status read_fused_activation(const KernelCreateContext& ctx, GemmEpilogue& ep) {
  const Node& n = ctx.node();
  const std::string kind = n.attr_string(kActivationAttr, "");
  const std::vector<float> params = n.attr_floats(kActivationParamsAttr);
  if (kind.empty()) return ok_status();
  if (kind == "Relu") {
    ep.activation = GemmActivation::kRelu;
    return ok_status();
  }
  if (kind == "Gelu") {
    ep.activation = GemmActivation::kGeluErf;
    return ok_status();
  }
  if (kind == "GeluTanh") {
    ep.activation = GemmActivation::kGeluTanh;
    return ok_status();
  }
  if (kind == "Clip") {
    if (!params.empty() && params.size() != 2)
      return ctx.error(std::string(kActivationParamsAttr) + " for Clip must be [min, max]; got " +
                       std::to_string(params.size()) + " values");
    ep.activation = GemmActivation::kClip;
    ep.clip_min = params.empty() ? -std::numeric_limits<float>::infinity() : params[0];
    ep.clip_max = params.empty() ? std::numeric_limits<float>::infinity() : params[1];
    return ok_status();
  }
  return ctx.error(std::string(kActivationAttr) + " must be \"Relu\", \"Clip\", \"Gelu\" or \"GeluTanh\"; got \"" +
                   kind + "\"");
}

}  // namespace sy::cpu
