// The CUDA provider's options, with ONNX Runtime's names, parsed and
// validated from the string pairs a session passes. An unknown key or a bad
// value is an error that lists what is accepted.
#pragma once

#include "switchyard/provider_abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda_common.h"

namespace sy::cuda {

enum class ArenaExtendStrategy { kNextPowerOfTwo, kSameAsRequested };
enum class ConvAlgoSearch { kExhaustive, kHeuristic, kDefault };

struct CudaOptions {
  int device_id = 0;
  size_t gpu_mem_limit = SIZE_MAX;  // bytes the arena may hold; SIZE_MAX: no limit
  ArenaExtendStrategy arena_extend_strategy = ArenaExtendStrategy::kNextPowerOfTwo;
  ConvAlgoSearch cudnn_conv_algo_search = ConvAlgoSearch::kExhaustive;
  bool do_copy_in_default_stream = true;
  bool use_tf32 = true;
  bool enable_cuda_graph = false;
};

// Fills `options` from key/value pairs; on error names the key, the value
// and what is accepted.
Status parse_cuda_options(const std::vector<std::pair<std::string, std::string>>& pairs, CudaOptions& options);

// "device_id (an integer >= 0), gpu_mem_limit (...), ..."
std::string accepted_cuda_options();
// The same rules as the ABI states them (sy_provider_api.options), ended
// by {nullptr, nullptr}: doctor's list, with no copy in the core.
const sy_option_spec* cuda_option_specs();

const char* conv_algo_search_name(ConvAlgoSearch s);

}  // namespace sy::cuda
