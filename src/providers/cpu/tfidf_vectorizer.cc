// TfIdfVectorizer: counts, in each row of the input, the n-grams of a pool
// given as attributes, allowing up to max_skip_count items skipped between
// the items of an n-gram, and weights the counts.
//
// The pool becomes a trie once, at creation: every distinct pool item gets
// a token number, and the trie's edges (node, token) -> child sit in one
// hash table, so a lookup costs the same for a pool of ten n-grams or of a
// million. At run time each row is first turned into token numbers (one
// hash lookup per item, -1 for items outside the pool), and the n-grams
// starting at each position and skip are followed down the trie.
//
// The counting follows ONNX's reference implementation, which produced the
// node tests' outputs: 1-grams are counted once, not once per skip; the
// weights are indexed by output coordinate, like the counts.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/checked_math.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class TfIdfVectorizerKernel final : public Kernel {
 public:
  TfIdfVectorizerKernel(const KernelCreateContext& ctx, Status& status) { status = build(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    SY_RETURN_IF_ERROR(check_input_type(ctx, x.dtype()));
    const Shape& shape = x.shape();
    int64_t rows = 1;
    int64_t width = 1;  // a scalar is one row of one item
    Shape out_shape{output_size_};
    if (shape.rank() == 1) {
      width = shape[0];
    } else if (shape.rank() == 2) {
      rows = shape[0];
      width = shape[1];
      if (rows < 1) return kernel_error(ctx, "input 0 (X) of shape [N, C] needs N >= 1, got " + x.describe());
      out_shape = Shape{rows, output_size_};
    } else if (shape.rank() > 2) {
      return kernel_error(ctx, "input 0 (X) must have shape [C] or [N, C], got " + x.describe());
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, out_shape));

    // Each lane (a thread) has its row's tokens and counts in scratch.
    const int64_t lanes = std::min<int64_t>(ctx.thread_pool().num_threads(), rows);
    const size_t token_bytes = KernelContext::scratch_align(static_cast<size_t>(width) * sizeof(int32_t));
    const size_t count_bytes = KernelContext::scratch_align(static_cast<size_t>(output_size_) * sizeof(int64_t));
    int64_t lane_bytes = 0;
    int64_t total_bytes = 0;
    if (!checked_add(static_cast<int64_t>(token_bytes), static_cast<int64_t>(count_bytes), lane_bytes) ||
        !checked_mul(lane_bytes, lanes, total_bytes))
      return kernel_invalid_argument(ctx, "scratch memory for " + x.describe() + " overflows");
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(static_cast<size_t>(total_bytes)));
    auto* base = static_cast<char*>(scratch);
    float* out = y->data<float>();
    ctx.thread_pool().run_tasks(lanes, rows, [&](int64_t lane, int64_t row) {
      char* mine = base + lane * lane_bytes;
      auto* tokens = reinterpret_cast<int32_t*>(mine);
      auto* counts = reinterpret_cast<int64_t*>(mine + token_bytes);
      tokenize(x, row * width, width, tokens);
      count_row(tokens, width, counts);
      weigh_row(counts, out + row * output_size_);
    });
    return ok_status();
  }

 private:
  Status build(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    const std::string mode = node.attr_string("mode", "");
    if (mode == "TF") {
      weighting_ = Weighting::kTf;
    } else if (mode == "IDF") {
      weighting_ = Weighting::kIdf;
    } else if (mode == "TFIDF") {
      weighting_ = Weighting::kTfIdf;
    } else {
      return ctx.error("attribute mode must be TF, IDF or TFIDF, got '" + mode + "'");
    }
    for (const char* name : {"min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"})
      if (!node.has_attr(name)) return ctx.error(std::string("attribute ") + name + " is required");
    min_gram_ = node.attr_int("min_gram_length", 0);
    max_gram_ = node.attr_int("max_gram_length", 0);
    max_skip_ = node.attr_int("max_skip_count", 0);
    if (min_gram_ < 1 || max_gram_ < min_gram_)
      return ctx.error("need 1 <= min_gram_length <= max_gram_length, got " + std::to_string(min_gram_) + " and " +
                       std::to_string(max_gram_));
    if (max_skip_ < 0) return ctx.error("max_skip_count must be >= 0, got " + std::to_string(max_skip_));

    const Attribute* int_pool = node.attr("pool_int64s");
    const Attribute* string_pool = node.attr("pool_strings");
    if ((int_pool == nullptr) == (string_pool == nullptr))
      return ctx.error("exactly one of the attributes pool_int64s and pool_strings must be set");
    string_pool_ = string_pool != nullptr;
    const auto pool_size = static_cast<int64_t>(string_pool_ ? string_pool->strings.size() : int_pool->ints.size());
    if (pool_size >= (int64_t{1} << 31) - 1) return ctx.error("the pool holds too many items");
    SY_RETURN_IF_ERROR(check_input_type(ctx, ctx.input_dtype(0)));

    const std::vector<int64_t> starts = node.attr_ints("ngram_counts");
    const std::vector<int64_t> indexes = node.attr_ints("ngram_indexes");
    if (indexes.empty()) return ctx.error("attribute ngram_indexes must not be empty");
    for (int64_t index : indexes) {
      if (index < 0 || index == INT64_MAX)
        return ctx.error("ngram_indexes must be in [0, INT64_MAX), got " + std::to_string(index));
      output_size_ = std::max(output_size_, index + 1);
    }
    weights_ = node.attr_floats("weights");
    if (weighting_ != Weighting::kTf && !weights_.empty() && static_cast<int64_t>(weights_.size()) < output_size_)
      return ctx.error("weights has " + std::to_string(weights_.size()) + " values, but the output has " +
                       std::to_string(output_size_) + " coordinates to weigh");

    // The pool's n-grams are numbered in order, all lengths together; the
    // lengths outside [min_gram_length, max_gram_length] take their
    // numbers but stay out of the trie.
    nodes_.push_back(TrieNode{});
    int64_t ngram = 0;
    for (size_t level = 0; level < starts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t begin = starts[level];
      const int64_t end = level + 1 < starts.size() ? starts[level + 1] : pool_size;
      if (begin < 0 || begin > end || end > pool_size)
        return ctx.error("ngram_counts must be non-decreasing and within the pool of " + std::to_string(pool_size) +
                         " items; entry " + std::to_string(level) + " is " + std::to_string(begin));
      if ((end - begin) % n != 0)
        return ctx.error("the " + std::to_string(n) + "-grams take pool items [" + std::to_string(begin) + ", " +
                         std::to_string(end) + "), not a multiple of " + std::to_string(n));
      const int64_t count = (end - begin) / n;
      if (ngram + count > static_cast<int64_t>(indexes.size()))
        return ctx.error("ngram_indexes has " + std::to_string(indexes.size()) +
                         " values, fewer than the pool's n-grams");
      if (n < min_gram_ || n > max_gram_) {
        ngram += count;
        continue;
      }
      for (int64_t g = 0; g < count; ++g, ++ngram) {
        int32_t at = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t item = begin + g * n + k;
          at = child_or_new(at, string_pool_ ? string_token(string_pool->strings[static_cast<size_t>(item)])
                                             : int_token(int_pool->ints[static_cast<size_t>(item)]));
        }
        // A repeated n-gram counts toward its last index, as in the reference.
        nodes_[static_cast<size_t>(at)].output = indexes[static_cast<size_t>(ngram)];
        longest_gram_ = std::max(longest_gram_, n);
      }
    }
    return ok_status();
  }

  Status check_input_type(const KernelCreateContext& ctx, DataType dtype) const {
    return input_type_error(dtype).empty() ? ok_status() : ctx.error(input_type_error(dtype));
  }
  Status check_input_type(const KernelContext& ctx, DataType dtype) const {
    return input_type_error(dtype).empty() ? ok_status() : kernel_error(ctx, input_type_error(dtype));
  }
  std::string input_type_error(DataType dtype) const {
    if (dtype == DataType::kUndefined) return {};
    const bool is_string = dtype == DataType::kString;
    const bool is_int = dtype == DataType::kInt32 || dtype == DataType::kInt64;
    if (string_pool_ && !is_string)
      return "input 0 (X) must be string to match pool_strings, got " + std::string(data_type_name(dtype));
    if (!string_pool_ && !is_int)
      return "input 0 (X) must be int32 or int64 to match pool_int64s, got " + std::string(data_type_name(dtype));
    return {};
  }

  int32_t int_token(int64_t value) {
    return int_tokens_.emplace(value, static_cast<int32_t>(int_tokens_.size())).first->second;
  }
  int32_t string_token(const std::string& value) {
    return string_tokens_.emplace(value, static_cast<int32_t>(string_tokens_.size())).first->second;
  }

  static uint64_t edge_key(int32_t node, int32_t token) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) | static_cast<uint32_t>(token);
  }

  int32_t child_or_new(int32_t node, int32_t token) {
    const auto [it, added] = children_.emplace(edge_key(node, token), static_cast<int32_t>(nodes_.size()));
    if (added) {
      nodes_[static_cast<size_t>(node)].has_children = true;
      nodes_.push_back(TrieNode{});
    }
    return it->second;
  }

  // The token of each of the `width` items from `first` on; -1 for items
  // that are in no n-gram of the pool.
  void tokenize(const Tensor& x, int64_t first, int64_t width, int32_t* tokens) const {
    if (x.dtype() == DataType::kString) {
      const std::string* items = x.data<std::string>() + first;
      for (int64_t i = 0; i < width; ++i) {
        const auto it = string_tokens_.find(std::string_view(items[i]));
        tokens[i] = it == string_tokens_.end() ? -1 : it->second;
      }
    } else if (x.dtype() == DataType::kInt64) {
      tokenize_ints(x.data<int64_t>() + first, width, tokens);
    } else {
      tokenize_ints(x.data<int32_t>() + first, width, tokens);
    }
  }

  template <typename T>
  void tokenize_ints(const T* items, int64_t width, int32_t* tokens) const {
    for (int64_t i = 0; i < width; ++i) {
      const auto it = int_tokens_.find(static_cast<int64_t>(items[i]));
      tokens[i] = it == int_tokens_.end() ? -1 : it->second;
    }
  }

  // The count of each output coordinate's n-gram in one row of tokens.
  void count_row(const int32_t* tokens, int64_t width, int64_t* counts) const {
    std::fill(counts, counts + output_size_, int64_t{0});
    int64_t shortest = min_gram_;
    const int64_t longest = std::min(max_gram_, longest_gram_);
    if (shortest > longest) return;
    // A skip of `width` or more already leaves no room for a 2-gram.
    const int64_t last_distance = max_skip_ >= width ? std::max<int64_t>(width, 1) : max_skip_ + 1;
    for (int64_t distance = 1; distance <= last_distance; ++distance) {
      for (int64_t start = 0; start < width; ++start) {
        // No room left for an n-gram of the shortest length (the division
        // keeps start + distance * (shortest - 1) from overflowing).
        if (shortest - 1 > (width - 1 - start) / distance) break;
        int32_t at = 0;
        int64_t item = start;
        for (int64_t n = 1; n <= longest && item < width; ++n, item += distance) {
          if (!nodes_[static_cast<size_t>(at)].has_children || tokens[item] < 0) break;
          const auto it = children_.find(edge_key(at, tokens[item]));
          if (it == children_.end()) break;
          at = it->second;
          const int64_t output = nodes_[static_cast<size_t>(at)].output;
          if (n >= shortest && output >= 0) ++counts[output];
        }
      }
      // 1-grams do not depend on the skip: they are counted on the first
      // pass only.
      if (shortest == 1) {
        shortest = 2;
        if (shortest > longest) break;
      }
    }
  }

  void weigh_row(const int64_t* counts, float* out) const {
    const bool weighted = !weights_.empty();
    for (int64_t i = 0; i < output_size_; ++i) {
      const int64_t c = counts[i];
      const double w = weighted ? static_cast<double>(weights_[static_cast<size_t>(i)]) : 1.0;
      switch (weighting_) {
        case Weighting::kTf:
          out[i] = static_cast<float>(c);
          break;
        case Weighting::kIdf:
          out[i] = c > 0 ? static_cast<float>(w) : 0.0f;
          break;
        case Weighting::kTfIdf:
          out[i] = static_cast<float>(w * static_cast<double>(c));
          break;
      }
    }
  }

  struct TrieNode {
    int64_t output = -1;  // the output coordinate of the n-gram ending here; -1: none
    bool has_children = false;
  };

  Weighting weighting_ = Weighting::kTf;
  int64_t min_gram_ = 1;
  int64_t max_gram_ = 1;
  int64_t max_skip_ = 0;
  int64_t longest_gram_ = 0;  // of the n-grams in the trie
  int64_t output_size_ = 0;
  std::vector<float> weights_;
  bool string_pool_ = false;
  std::unordered_map<int64_t, int32_t> int_tokens_;
  std::unordered_map<std::string, int32_t, StringViewHash, std::equal_to<>> string_tokens_;
  std::unordered_map<uint64_t, int32_t> children_;  // edge_key(node, token) -> child node
  std::vector<TrieNode> nodes_;                     // nodes_[0] is the root
};

constexpr uint64_t kTfIdfInputTypes =
    type_bit(DataType::kString) | type_bit(DataType::kInt32) | type_bit(DataType::kInt64);

const KernelDef kTfidfVectorizerKernels[] = {
    {"", "TfIdfVectorizer", 9, kLatestVersion, 0, kTfIdfInputTypes, &make_kernel<TfIdfVectorizerKernel>},
};

}  // namespace

std::span<const KernelDef> tfidf_vectorizer_kernels() { return kTfidfVectorizerKernels; }

}  // namespace sy::cpu
