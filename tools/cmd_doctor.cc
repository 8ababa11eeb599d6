// `switchyard doctor [MODEL] [--providers LIST]`: why each provider can or
// cannot run here; with a model, where its nodes would run.
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "switchyard/doctor.h"

namespace sy::cli {

int cmd_doctor(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2, {"--providers", "--threads", "--opt-level"}, {"--strict"});
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
  // Every provider the user named must be usable.
  for (const ProviderRequest& r : options->providers) {
    bool found = false;
    for (const ProviderDiagnosis& d : report) {
      if (d.short_name != r.name && d.name != r.name) continue;
      found = true;
      if (!d.usable) {
        std::cout << "requested provider " << d.name << " cannot run here: " << d.reason << "\n";
        status = 1;
      }
    }
    if (!found) {
      std::cout << "requested provider '" << r.name << "' is not a known provider\n";
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
    std::map<std::string, int> per_provider;
    for (const NodeAssignment& a : (*session)->assignment()) ++per_provider[a.provider];
    std::cout << "model " << parsed->positional[0] << ":";
    for (const auto& [p, n] : per_provider) std::cout << " " << p << " runs " << n << " nodes;";
    std::cout << "\n" << (*session)->assignment_report();
  }
  return status;
}

}  // namespace sy::cli
