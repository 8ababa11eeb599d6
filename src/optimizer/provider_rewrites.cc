#include "optimizer/provider_rewrites.h"

#include <algorithm>
#include <array>

namespace sy {
namespace {

Status run_qdq(Graph& graph, PassStats& s) { return fuse_qdq(graph, &s.qdq_fused); }
Status run_dynamic_quant_matmul(Graph& graph, PassStats& s) {
  return fuse_dynamic_quant_matmul(graph, &s.dynamic_quant_matmuls_fused);
}
Status run_conv_residual(Graph& graph, PassStats& s) { return fuse_conv_residual(graph, &s.conv_residuals_fused); }
Status run_conv_activation(Graph& graph, PassStats& s) {
  return fuse_conv_activation(graph, &s.conv_activations_fused);
}
Status run_attention(Graph& graph, PassStats& s) { return fuse_attention(graph, &s.attentions_fused); }
Status run_matmul_epilogue(Graph& graph, PassStats& s) {
  return fuse_matmul_epilogue(graph, &s.matmul_epilogues_fused);
}
Status run_conv_blocked_layout(Graph& graph, PassStats& s) {
  return block_conv_channels(graph, &s.conv_layouts_blocked);
}

constexpr std::array<ProviderRewrite, 7> kRewrites = {{
    {"qdq", OptimizationLevel::kExtended, run_qdq},
    {"dynamic_quant_matmul", OptimizationLevel::kExtended, run_dynamic_quant_matmul},
    {"conv_residual", OptimizationLevel::kExtended, run_conv_residual},
    {"conv_activation", OptimizationLevel::kExtended, run_conv_activation},
    {"attention", OptimizationLevel::kExtended, run_attention},
    {"matmul_epilogue", OptimizationLevel::kExtended, run_matmul_epilogue},
    {"conv_blocked_layout", OptimizationLevel::kAll, run_conv_blocked_layout},
}};

// The levels' numbers grow with what they enable (session.h).
bool level_enables(OptimizationLevel level, OptimizationLevel needed) {
  return level != OptimizationLevel::kDisableAll && static_cast<int>(level) >= static_cast<int>(needed);
}

}  // namespace

std::span<const ProviderRewrite> provider_rewrites() { return kRewrites; }

const ProviderRewrite* find_provider_rewrite(std::string_view name) {
  for (const ProviderRewrite& r : kRewrites)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> all_provider_rewrite_names() {
  std::vector<std::string> names;
  for (const ProviderRewrite& r : kRewrites) names.emplace_back(r.name);
  return names;
}

Status run_provider_rewrites(Graph& graph, int placement, const std::vector<std::string>& names,
                             OptimizationLevel level, PassStats* stats) {
  for (const std::string& name : names)
    if (find_provider_rewrite(name) == nullptr) {
      std::string known;
      for (const ProviderRewrite& r : kRewrites) known += (known.empty() ? "" : ", ") + std::string(r.name);
      return invalid_argument("unknown provider rewrite '" + name + "' (known: " + known + ")");
    }
  PassStats local;
  PassStats& s = stats ? *stats : local;
  graph.rewrite_scope = placement;
  Status status;
  for (const ProviderRewrite& r : kRewrites) {
    if (!level_enables(level, r.level) || std::find(names.begin(), names.end(), r.name) == names.end()) continue;
    status = r.run(graph, s);
    if (!status.ok()) break;
  }
  graph.rewrite_scope = -1;
  return status;
}

Status optimize_for_cpu(Graph& graph, OptimizationLevel level, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  SY_RETURN_IF_ERROR(optimize(graph, level, &s));
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  SY_RETURN_IF_ERROR(run_provider_rewrites(graph, -1, all_provider_rewrite_names(), level, &s));
  SY_RETURN_IF_ERROR(finish_rewrites(graph, level, &s));
  graph.compact();
  return ok_status();
}

Status finish_rewrites(Graph& graph, OptimizationLevel level, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  if (level_enables(level, OptimizationLevel::kAll)) {
    SY_RETURN_IF_ERROR(cancel_transposes(graph, &s.transposes_removed));
    SY_RETURN_IF_ERROR(collapse_reshapes(graph, &s.reshapes_removed));
  }
  // The constant weights' DequantizeLinear nodes the QDQ fusion left.
  SY_RETURN_IF_ERROR(fold_constant_dequantize(graph, &s.folded));
  SY_RETURN_IF_ERROR(eliminate_dead_nodes(graph, &s.dead_removed));
  return drop_unused_constants(graph, &s.constants_dropped);
}

}  // namespace sy
