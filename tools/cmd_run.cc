// `switchyard run MODEL [--input NAME=FILE.npy ...] [--providers LIST] [--strict]`
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "switchyard/npy.h"

namespace sy::cli {

int cmd_run(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2,
                           {"--input", "--providers", "--fallback", "--threads", "--opt-level", "--max-partitions",
                            "--min-partition-size", "--max-copies", "--dim", "--seed",
                            "--runs", "--save-outputs"},
                           {"--strict", "--full-placement", "--show-assignment"});
  if (!parsed.ok() || parsed->positional.size() != 1) {
    std::cerr << (parsed.ok() ? "" : parsed.status().message() + "\n")
              << "usage: switchyard run MODEL [--input NAME=FILE.npy ...] [--providers LIST] [--strict]\n"
                 "         [--fallback allow|warn|error] [--threads N] [--opt-level disable|basic|extended|all]\n"
                 "         [--dim SYMBOL=VALUE ...] [--seed N] [--runs N] [--save-outputs DIR] [--show-assignment]\n";
    return 2;
  }
  const Args& args = *parsed;
  auto options = session_options_from(args);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n";
    return 2;
  }
  const std::string& model_path = args.positional[0];
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(model_path, *options);
  const auto t1 = std::chrono::steady_clock::now();
  if (!session.ok()) {
    std::cerr << "error: " << session.status().to_string() << "\n";
    return 1;
  }
  std::map<std::string, int64_t> dims;
  for (const std::string& d : args.all("--dim")) {
    const size_t eq = d.find('=');
    if (eq == std::string::npos) {
      std::cerr << "error: --dim takes SYMBOL=VALUE, got '" << d << "'\n";
      return 2;
    }
    dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
  }
  const uint32_t seed = static_cast<uint32_t>(std::stoul(args.get("--seed").value_or("0")));

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::map<std::string, std::string> files;
  for (const std::string& in : args.all("--input")) {
    const size_t eq = in.find('=');
    if (eq == std::string::npos) {
      std::cerr << "error: --input takes NAME=FILE.npy, got '" << in << "'\n";
      return 2;
    }
    files[in.substr(0, eq)] = in.substr(eq + 1);
  }
  for (const auto& [name, file] : files) {
    bool known = false;
    for (const ValueInfo& info : (*session)->inputs()) known |= info.name == name;
    if (!known) {
      std::cerr << "error: --input " << name << ": the model has no input of that name; its inputs are:";
      for (const ValueInfo& info : (*session)->inputs()) std::cerr << " " << info.name;
      std::cerr << "\n";
      return 2;
    }
  }
  uint32_t k = 0;
  for (const ValueInfo& info : (*session)->inputs()) {
    auto f = files.find(info.name);
    if (f != files.end()) {
      auto t = load_npy(f->second);
      if (!t.ok()) {
        std::cerr << "error: input '" << info.name << "': " << t.status().message() << "\n";
        return 1;
      }
      feeds.emplace_back(info.name, std::move(t).value());
      std::cout << "input  " << info.name << ": " << summarize(feeds.back().second) << " from " << f->second << "\n";
    } else {
      auto t = random_input(info, dims, seed + k++);
      if (!t.ok()) {
        std::cerr << "error: " << t.status().message() << "\n";
        return 1;
      }
      feeds.emplace_back(info.name, std::move(t).value());
      std::cout << "input  " << info.name << ": " << summarize(feeds.back().second) << " (random)\n";
    }
  }

  const int runs = std::max(1, std::stoi(args.get("--runs").value_or("1")));
  Result<std::vector<Tensor>> outputs = Status(StatusCode::kFail, "not run");
  double first_ms = 0;
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto a = std::chrono::steady_clock::now();
    outputs = (*session)->run(feeds);
    const auto b = std::chrono::steady_clock::now();
    if (!outputs.ok()) {
      std::cerr << "error: " << outputs.status().to_string() << "\n";
      return 1;
    }
    const double ms = std::chrono::duration<double, std::milli>(b - a).count();
    if (r == 0) {
      first_ms = ms;
    } else {
      times.push_back(ms);
    }
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = (*session)->outputs()[i].name;
    std::cout << "output " << name << ": " << summarize((*outputs)[i]) << "\n";
    if (auto dir = args.get("--save-outputs")) {
      Status st = save_npy((*outputs)[i], *dir + "/" + name + ".npy");
      if (!st.ok()) {
        std::cerr << "error: " << st.message() << "\n";
        return 1;
      }
    }
  }
  std::string providers;
  for (const std::string& p : (*session)->providers()) providers += (providers.empty() ? "" : ", ") + p;
  std::cout << "providers: " << providers << "\n";
  std::cout << "session creation " << format_ms(std::chrono::duration<double, std::milli>(t1 - t0).count())
            << ", first run " << format_ms(first_ms);
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    std::cout << "; after it, " << times.size() << " runs: median " << format_ms(times[times.size() / 2]) << ", min "
              << format_ms(times.front()) << ", max " << format_ms(times.back());
  }
  std::cout << "\n";
  if (args.has("--show-assignment")) std::cout << (*session)->assignment_report();
  return 0;
}

}  // namespace sy::cli
