// The convolution algorithms cuDNN's search picked, kept on disk so that a
// second session on the same model, GPU and library versions starts
// without searching again (an EXHAUSTIVE search runs every algorithm on
// every conv shape, which takes seconds on ResNet-50).
//
// One text file per (model, GPU, cuDNN version, CUDA runtime version,
// math settings), under $SWITCHYARD_CACHE_DIR, else $XDG_CACHE_HOME/switchyard,
// else ~/.cache/switchyard. Each line is "<conv key> <algo> <workspace bytes>
// <math type>". A file that cannot be read or written only costs a search.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace sy::cuda {

struct ConvAlgoChoice {
  int algo = 0;
  size_t workspace = 0;
  int math_type = 0;
};

class ConvAlgoCache {
 public:
  // `identity` names the GPU, library versions and settings; the model key
  // is added per lookup because one provider may serve one model only but
  // the file name needs both.
  void configure(std::string folder, std::string identity);

  // True and the choice when known (from this session or the file).
  bool find(const std::string& model_key, const std::string& conv_key, ConvAlgoChoice& choice);
  // Records a choice and appends it to the file.
  void store(const std::string& model_key, const std::string& conv_key, const ConvAlgoChoice& choice);

  // The file for a model ("" when no folder is configured).
  std::string file_for(const std::string& model_key) const;
  // Lookups answered from the file this session (for tests and logs).
  int hits() const { return hits_; }

 private:
  void load(const std::string& model_key);  // mutex held
  std::mutex mutex_;
  std::string folder_, identity_;
  std::map<std::string, bool> loaded_;  // model key -> file read
  std::map<std::string, ConvAlgoChoice> choices_;  // model key + conv key
  int hits_ = 0;
};

// The default folder from the environment, "" when none can be found.
std::string default_cache_folder();

}  // namespace sy::cuda
