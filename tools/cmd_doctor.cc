// `switchyard doctor [MODEL] [--providers LIST]`: why each provider can or
// cannot run here; with a model, where its nodes would run.
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "providers/provider_factory.h"  // canonical_provider_name
#include "switchyard/doctor.h"

namespace sy::cli {

int cmd_doctor(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2, {"--providers", "--provider-option", "--threads", "--opt-level", "--min-partition-size"}, {"--strict"});
  if (!parsed.ok() || parsed->positional.size() > 1) {
    std::cerr << (parsed.ok() ? "" : parsed.status().message() + "\n")
              << "usage: switchyard doctor [MODEL] [--providers LIST]\n";
    return 2;
  }
  const std::vector<ProviderDiagnosis> report = doctor();
  std::cout << format_doctor(report);

  int status = 0;
  auto options = session_options_from(*parsed);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n";
    return 2;
  }
  // Every provider the user named must be usable; names resolve as sessions resolve them.
  for (const ProviderRequest& r : options->providers) {
    const Result<std::string> name = canonical_provider_name(r.name);
    if (!name.ok()) {
      std::cout << "requested provider: " << name.status().message() << "\n";
      status = 1;
      continue;
    }
    for (const ProviderDiagnosis& d : report) {
      if (d.name != *name || d.usable) continue;
      std::cout << "requested provider " << d.name << " cannot run here: " << d.reason << "\n";
      status = 1;
    }
  }

  if (parsed->positional.size() == 1) {
    options->fallback = {FallbackAction::kAllow, FallbackAction::kAllow};
    auto session = Session::create(parsed->positional[0], *options);
    if (!session.ok()) {
      std::cout << "model " << parsed->positional[0] << ": " << session.status().to_string() << "\n";
      return 1;
    }
    const PlacementSummary& p = (*session)->placement();
    std::cout << "model " << parsed->positional[0] << ":\n";
    for (const auto& [name, n] : p.nodes_per_provider) std::cout << "  " << name << " runs " << n << " nodes\n";
    std::cout << "  " << p.partitions << " partition(s):";
    int small = 0;
    for (size_t i = 0; i < p.partition_sizes.size(); ++i) {
      std::cout << " " << p.partition_providers[i] << "[" << p.partition_sizes[i] << "]";
      if (p.partition_sizes[i] < 3 && p.partition_providers[i] != "CPUExecutionProvider") ++small;
    }
    std::cout << "\n  device copies: " << p.copies_per_run << " per run, " << p.constant_copies
              << " weights copied once at creation\n";
    if (small > 0 && p.copies_per_run > 0)
      std::cout << "  hint: " << small << " partition(s) of fewer than 3 nodes on a device; each boundary costs a "
                << "copy and a synchronisation that can cost more than the nodes save. Try --min-partition-size 3 "
                   "or keep those ops on one provider.\n";
    std::cout << "per node:\n" << (*session)->assignment_report();
  }
  return status;
}

}  // namespace sy::cli
