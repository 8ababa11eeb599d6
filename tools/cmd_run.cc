// `switchyard run MODEL [--input NAME=FILE.npy ...] [--providers LIST] [--strict]`
// A sequence input is given as --input NAME=A.npy,B.npy; sequence outputs
// are printed (and saved) element by element, an empty optional as "none".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "switchyard/npy.h"  // save_npy

namespace sy::cli {
namespace {

// The file an output is saved to in --save-outputs DIR. The name comes from
// the model, which may be hostile: "../../x" or "/etc/x" must not choose
// where the file goes. Every character but letters, digits, '-', '_' and a
// '.' after the first becomes '_' ("logits/BiasAdd:0" -> logits_BiasAdd_0),
// so the name is one plain file inside DIR, never "..", never hidden.
std::string output_file_name(const std::string& name) {
  std::string out = name.empty() ? "_" : name;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       c == '_' || (c == '.' && i > 0);
    if (!plain) out[i] = '_';
  }
  return out + ".npy";
}

}  // namespace

int cmd_run(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2,
                           {"--input", "--providers", "--provider-option", "--fallback", "--threads", "--opt-level", "--max-partitions",
                            "--min-partition-size", "--max-copies", "--dim", "--seed",
                            "--runs", "--save-outputs", "--save-optimized"},
                           {"--strict", "--full-placement", "--show-assignment"});
  if (!parsed.ok() || parsed->positional.size() != 1) {
    std::cerr << (parsed.ok() ? "" : parsed.status().message() + "\n")
              << "usage: switchyard run MODEL [--input NAME=FILE.npy ...] [--providers LIST] [--strict]\n"
                 "         [--fallback allow|warn|error] [--threads N] [--opt-level disable|basic|extended|all]\n"
                 "         [--dim SYMBOL=VALUE ...] [--seed N] [--runs N] [--save-outputs DIR] [--show-assignment]\n"
                 "         [--save-optimized FILE.onnx]\n";
    return 2;
  }
  const Args& args = *parsed;
  auto options = session_options_from(args);
  // Checked before the model loads, so a typo costs no load time.
  auto runs = int_flag(args, "--runs", 1, 1, kMaxRuns);
  for (const Status& st : {options.status(), runs.status()}) {
    if (!st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 2;
    }
  }
  const std::string& model_path = args.positional[0];
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(model_path, *options);
  const auto t1 = std::chrono::steady_clock::now();
  if (!session.ok()) {
    std::cerr << "error: " << session.status().to_string() << "\n";
    return 1;
  }
  auto feeds = make_feeds(args, **session);
  if (!feeds.ok()) {
    std::cerr << "error: " << feeds.status().message() << "\n";
    return feeds.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  for (size_t i = 0; i < feeds->tensors.size(); ++i) {
    // The source ends the summary's first line: a sequence's element lines follow it.
    std::string summary = summarize(feeds->tensors[i].second);
    summary.insert(std::min(summary.find('\n'), summary.size()), " " + feeds->sources[i]);
    std::cout << "input  " << feeds->tensors[i].first << ": " << summary << "\n";
  }

  Result<std::vector<Tensor>> outputs = Status(StatusCode::kFail, "not run");
  double first_ms = 0;
  std::vector<double> times;
  for (int64_t r = 0; r < *runs; ++r) {
    const auto a = std::chrono::steady_clock::now();
    outputs = (*session)->run(feeds->tensors);
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
  std::map<std::string, std::string> saved;  // file name -> the output saved there
  if (auto dir = args.get("--save-outputs")) {
    // Made when missing, as `mkdir -p` would: a typo'd parent still fails.
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) {
      std::cerr << "error: --save-outputs: cannot create folder " << *dir << ": " << ec.message() << "\n";
      return 1;
    }
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = (*session)->outputs()[i].name;
    std::cout << "output " << name << ": " << summarize((*outputs)[i]) << "\n";
    if (auto dir = args.get("--save-outputs")) {
      // A sequence is saved one file per element (NAME.0.npy, NAME.1.npy,
      // ...); an empty optional has nothing to save.
      const Tensor& value = (*outputs)[i];
      std::vector<std::pair<std::string, Tensor>> files;
      if (value.kind() == ValueKind::kSequence) {
        for (size_t k = 0; k < value.items().size(); ++k)
          files.emplace_back(output_file_name(name + "." + std::to_string(k)), value.items()[k]);
      } else if (value.kind() == ValueKind::kTensor) {
        files.emplace_back(output_file_name(name), value);
      }
      for (const auto& [file, tensor] : files) {
        // Two names that differ only in replaced characters would share a
        // file, and the second would silently replace the first.
        if (auto [it, fresh] = saved.emplace(file, name); !fresh) {
          std::cerr << "error: --save-outputs: outputs '" << it->second << "' and '" << name
                    << "' would both be saved as " << file << "\n";
          return 1;
        }
        Status st = save_npy(tensor, *dir + "/" + file);
        if (!st.ok()) {
          std::cerr << "error: " << st.message() << "\n";
          return 1;
        }
        std::cout << "  saved to " << *dir << "/" << file << "\n";
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
