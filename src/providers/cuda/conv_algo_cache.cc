#include "conv_algo_cache.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sy::cuda {
namespace {

// Keeps a file name to safe characters.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_') ? c : '_';
  return out;
}

}  // namespace

std::string default_cache_folder() {
  if (const char* dir = std::getenv("SWITCHYARD_CACHE_DIR"); dir && *dir) return std::string(dir) + "/cudnn";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/switchyard/cudnn";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/switchyard/cudnn";
  return {};
}

void ConvAlgoCache::configure(std::string folder, std::string identity) {
  std::lock_guard<std::mutex> lock(mutex_);
  folder_ = std::move(folder);
  identity_ = std::move(identity);
  loaded_.clear();
  choices_.clear();
}

std::string ConvAlgoCache::file_for(const std::string& model_key) const {
  if (folder_.empty()) return {};
  return folder_ + "/" + sanitize(identity_ + "-" + model_key) + ".txt";
}

void ConvAlgoCache::load(const std::string& model_key) {
  if (loaded_[model_key]) return;
  loaded_[model_key] = true;
  const std::string path = file_for(model_key);
  if (path.empty()) return;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    ConvAlgoChoice c;
    if (fields >> key >> c.algo >> c.workspace >> c.math_type) choices_[model_key + "|" + key] = c;
  }
}

bool ConvAlgoCache::find(const std::string& model_key, const std::string& conv_key, ConvAlgoChoice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  load(model_key);
  auto it = choices_.find(model_key + "|" + conv_key);
  if (it == choices_.end()) return false;
  choice = it->second;
  ++hits_;
  return true;
}

void ConvAlgoCache::store(const std::string& model_key, const std::string& conv_key, const ConvAlgoChoice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  load(model_key);
  choices_[model_key + "|" + conv_key] = choice;
  const std::string path = file_for(model_key);
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  std::ofstream out(path, std::ios::app);
  if (out) out << conv_key << ' ' << choice.algo << ' ' << choice.workspace << ' ' << choice.math_type << '\n';
}

}  // namespace sy::cuda
