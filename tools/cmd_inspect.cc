// `switchyard inspect MODEL [--providers LIST]`: what the model declares,
// what it is made of, and where each node would run and why.
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "model/loader.h"
#include "model/resolve.h"

namespace sy::cli {
namespace {

void count_ops(const Graph& graph, std::map<std::string, int>& histogram) {
  for (const Node& n : graph.nodes) {
    if (n.removed) continue;
    ++histogram[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    for (const Attribute& a : n.attributes) {
      if (a.g) count_ops(*a.g, histogram);
      for (const auto& g : a.graphs) count_ops(*g, histogram);
    }
  }
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2, {"--providers", "--provider-option", "--fallback", "--threads", "--opt-level", "--max-partitions", "--min-partition-size", "--max-copies"},
                           {"--strict", "--full-placement"});
  if (!parsed.ok() || parsed->positional.size() != 1) {
    std::cerr << (parsed.ok() ? "" : parsed.status().message() + "\n")
              << "usage: switchyard inspect MODEL [--providers LIST] [--opt-level LEVEL] [--strict]\n";
    return 2;
  }
  const std::string& path = parsed->positional[0];
  auto model = load_model(path);
  if (!model.ok()) {
    std::cerr << "error: " << model.status().to_string() << "\n";
    return 1;
  }
  std::cout << "model: " << path << "\n";
  std::cout << "  ir_version " << model->ir_version << ", producer " << model->producer_name << " "
            << model->producer_version << "\n  opsets:";
  for (const auto& [domain, version] : model->opsets)
    std::cout << " " << (domain.empty() ? "ai.onnx" : domain) << "=" << version;
  std::cout << "\n";
  std::map<std::string, int> histogram;
  count_ops(*model->graph, histogram);
  std::cout << "  " << model->graph->num_live_nodes() << " nodes, " << model->graph->initializers.size()
            << " initializers\n  ops:";
  for (const auto& [op, n] : histogram) std::cout << " " << op << " x" << n;
  std::cout << "\n";
  // Nodes of opsets 1-6 that load as newer op versions (model/version_adapter.h).
  if (resolve(*model->graph).ok() && !model->graph->version_adaptations.empty()) {
    std::cout << "  adapted from old op versions (" << model->graph->version_adaptations.size() << " nodes):\n";
    for (const std::string& line : model->graph->version_adaptations) std::cout << "    " << line << "\n";
  }

  auto options = session_options_from(*parsed);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n";
    return 2;
  }
  auto session = Session::create(path, *options);
  if (!session.ok()) {
    std::cerr << "error: " << session.status().to_string() << "\n";
    return 1;
  }
  std::cout << "inputs:\n";
  for (const ValueInfo& i : (*session)->inputs()) std::cout << "  " << i.name << ": " << i.type << " " << shape_string(i) << "\n";
  std::cout << "outputs:\n";
  for (const ValueInfo& o : (*session)->outputs()) std::cout << "  " << o.name << ": " << o.type << " " << shape_string(o) << "\n";
  std::cout << "providers requested:";
  for (const std::string& p : (*session)->requested_providers()) std::cout << " " << p;
  std::cout << "\nproviders running nodes:";
  for (const std::string& p : (*session)->providers()) std::cout << " " << p;
  std::map<std::string, int> per_provider;
  for (const NodeAssignment& a : (*session)->assignment()) ++per_provider[a.provider];
  std::cout << "\nassignment after optimization (" << (*session)->assignment().size() << " nodes:";
  for (const auto& [p, n] : per_provider) std::cout << " " << p << " " << n;
  std::cout << "):\n" << (*session)->assignment_report();
  return 0;
}

}  // namespace sy::cli
