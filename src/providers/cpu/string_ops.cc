// StringNormalizer, StringSplit, StringConcat and RegexFullMatch.
//
// These kernels write std::string elements, and a string longer than its
// small-string buffer lives on the heap: unlike the numeric kernels, their
// run() allocates, once per output string and no more (each result is
// built in scratch memory and copied into its string in one go).
//
// Their results follow ONNX's reference implementation (Python's str
// methods and the re2 module), which produced the node tests' outputs.
#include <re2/re2.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "providers/cpu/elementwise_broadcast.h"
#include "providers/cpu/unicode_text.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Strings per parallel_for chunk: a string op costs tens of nanoseconds
// and up per element, so a few hundred make a chunk worth a wake-up.
constexpr int64_t kStringsPerChunk = 256;

// A set of strings that string_views look up without a copy.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringSet = std::unordered_set<std::string, StringViewHash, std::equal_to<>>;

// ---- StringNormalizer ------------------------------------------------------------

// Each string is cut at spaces into words; the stop words among them are
// dropped, the rest joined again with single spaces and case-changed.
// Where the result is empty the string is dropped from the output. That
// is what ONNX's reference does; the spec speaks of removing whole
// elements, which this does for every element that is one word.
//
// Without is_case_sensitive, words match stop words in the case the
// output takes (lower-cased when case_change_action is NONE).
//
// The `locale` attribute is accepted and has no effect: case changes
// follow Unicode's default mapping (providers/cpu/unicode_text.h), as the
// reference's str.lower() and str.upper() do whatever the locale. The
// reference also strips accents from non-ASCII text, which the spec does
// not ask for and this does not do.
class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const std::string action = node.attr_string("case_change_action", "NONE");
    if (action == "LOWER") {
      change_ = CaseChange::kLower;
    } else if (action == "UPPER") {
      change_ = CaseChange::kUpper;
    } else if (action != "NONE") {
      status = ctx.error("case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
      return;
    }
    const int64_t sensitive = node.attr_int("is_case_sensitive", 0);
    if (sensitive != 0 && sensitive != 1) {
      status = ctx.error("is_case_sensitive must be 0 or 1, got " + std::to_string(sensitive));
      return;
    }
    case_sensitive_ = sensitive == 1;
    key_change_ = change_ == CaseChange::kUpper ? CaseChange::kUpper : CaseChange::kLower;
    if (const Attribute* a = node.attr("stopwords")) {
      for (const std::string& word : a->strings) {
        if (case_sensitive_) {
          stopwords_.insert(word);
          continue;
        }
        std::string key(word.size() * kMaxCaseChangeGrowth, '\0');
        key.resize(change_case(word, key_change_, key.data()));
        stopwords_.insert(std::move(key));
      }
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    if (shape.rank() != 1 && shape.rank() != 2)
      return kernel_error(ctx, "input 0 (X) must have shape [C] or [1, C], got " + x.describe());
    const std::string* in = x.data<std::string>();
    const int64_t count = x.num_elements();
    size_t longest = 0;
    for (int64_t i = 0; i < count; ++i) longest = std::max(longest, in[i].size());
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(1, longest * kMaxCaseChangeGrowth)));
    char* buffer = static_cast<char*>(scratch);

    // A [B, C] input with B other than 1, which the spec does not allow,
    // keeps its shape, as in the reference: nothing is dropped.
    if (shape.rank() == 2 && shape[0] != 1) {
      SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, shape));
      std::string* out = y->data<std::string>();
      for (int64_t i = 0; i < count; ++i) out[i].assign(buffer, normalize(in[i], buffer));
      return ok_status();
    }
    // First count the strings left, to size the output; then write them.
    int64_t kept = 0;
    for (int64_t i = 0; i < count; ++i)
      if (normalize(in[i], buffer) > 0) ++kept;
    // With nothing left the output is one empty string, [1] or [1, 1].
    const int64_t width = std::max<int64_t>(kept, 1);
    const Shape out_shape = shape.rank() == 1 ? Shape{width} : Shape{1, width};
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, out_shape));
    std::string* out = y->data<std::string>();
    out[0].clear();
    int64_t j = 0;
    for (int64_t i = 0; i < count; ++i) {
      const size_t n = normalize(in[i], buffer);
      if (n > 0) out[j++].assign(buffer, n);
    }
    return ok_status();
  }

 private:
  // Writes the normalized `s` to `out` (room for kMaxCaseChangeGrowth
  // bytes per byte of s); returns its length.
  size_t normalize(std::string_view s, char* out) const {
    if (stopwords_.empty()) return change_case(s, change_, out);
    size_t n = 0;
    bool first = true;
    size_t begin = 0;
    while (true) {
      const size_t space = s.find(' ', begin);
      const size_t end = space == std::string_view::npos ? s.size() : space;
      const std::string_view word = s.substr(begin, end - begin);
      const size_t mark = n;
      if (!first) out[n++] = ' ';
      if (case_sensitive_) {
        if (stopwords_.contains(word)) {
          n = mark;
        } else {
          n += change_case(word, change_, out + n);
          first = false;
        }
      } else {
        // The word's key is written where the word goes, then checked.
        const size_t key_length = change_case(word, key_change_, out + n);
        if (stopwords_.contains(std::string_view(out + n, key_length))) {
          n = mark;
        } else {
          n += change_ == CaseChange::kNone ? change_case(word, change_, out + n) : key_length;
          first = false;
        }
      }
      if (space == std::string_view::npos) break;
      begin = space + 1;
    }
    return n;
  }

  CaseChange change_ = CaseChange::kNone;
  CaseChange key_change_ = CaseChange::kLower;  // for matching without case
  bool case_sensitive_ = false;
  StringSet stopwords_;  // as given, or as keys when case-insensitive
};

// ---- StringSplit ----------------------------------------------------------------

// Python's str.split(delimiter, maxsplit): a delimiter splits at every
// occurrence, keeping empty pieces; none (or "") splits at runs of
// whitespace and drops it at both ends. A negative maxsplit, or none, is
// no limit.
class StringSplitKernel final : public Kernel {
 public:
  StringSplitKernel(const KernelCreateContext& ctx, Status&)
      : delimiter_(ctx.node().attr_string("delimiter", "")), maxsplit_(ctx.node().attr_int("maxsplit", -1)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const std::string* in = x.data<std::string>();
    const int64_t count = x.num_elements();
    SY_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kInt64, x.shape()));
    int64_t* pieces = z->data<int64_t>();
    ctx.thread_pool().parallel_for(count, kStringsPerChunk, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pieces[i] = split(in[i], [](std::string_view) {});
    });
    int64_t widest = 0;
    for (int64_t i = 0; i < count; ++i) widest = std::max(widest, pieces[i]);
    Shape y_shape = x.shape();
    y_shape.push_back(widest);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, y_shape));
    std::string* out = y->data<std::string>();
    ctx.thread_pool().parallel_for(count, kStringsPerChunk, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        std::string* row = out + i * widest;
        int64_t k = 0;
        split(in[i], [&](std::string_view piece) { row[k++].assign(piece); });
        // Shorter rows are padded with empty strings.
        for (; k < widest; ++k) row[k].clear();
      }
    });
    return ok_status();
  }

 private:
  bool may_split(int64_t splits) const { return maxsplit_ < 0 || splits < maxsplit_; }

  // Calls emit(piece) for each piece of s, in order; returns their count.
  template <typename Emit>
  int64_t split(std::string_view s, Emit&& emit) const {
    return delimiter_.empty() ? split_whitespace(s, emit) : split_delimiter(s, emit);
  }

  template <typename Emit>
  int64_t split_delimiter(std::string_view s, Emit& emit) const {
    int64_t splits = 0;
    size_t begin = 0;
    while (may_split(splits)) {
      const size_t at = s.find(delimiter_, begin);
      if (at == std::string_view::npos) break;
      emit(s.substr(begin, at - begin));
      ++splits;
      begin = at + delimiter_.size();
    }
    emit(s.substr(begin));
    return splits + 1;
  }

  static size_t skip_whitespace(std::string_view s, size_t i) {
    while (i < s.size()) {
      const size_t w = whitespace_length(s, i);
      if (w == 0) break;
      i += w;
    }
    return i;
  }

  template <typename Emit>
  int64_t split_whitespace(std::string_view s, Emit& emit) const {
    int64_t pieces = 0;
    size_t i = 0;
    while (may_split(pieces)) {
      i = skip_whitespace(s, i);
      if (i == s.size()) return pieces;
      const size_t begin = i;
      // Byte by byte: a byte inside a multi-byte character never reads as
      // the start of whitespace.
      while (i < s.size() && whitespace_length(s, i) == 0) ++i;
      emit(s.substr(begin, i - begin));
      ++pieces;
    }
    // maxsplit reached: what is left, less its leading whitespace, is the
    // last piece.
    i = skip_whitespace(s, i);
    if (i == s.size()) return pieces;
    emit(s.substr(i));
    return pieces + 1;
  }

  std::string delimiter_;
  int64_t maxsplit_;
};

// ---- StringConcat ---------------------------------------------------------------

class StringConcatKernel final : public Kernel {
 public:
  StringConcatKernel(const KernelCreateContext&, Status&) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Shape* shapes[] = {&a.shape(), &b.shape()};
    Shape out_shape;
    SY_RETURN_IF_ERROR(broadcast_shapes(ctx, shapes, out_shape));
    SY_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(0, DataType::kString, out_shape));
    if (out_shape.num_elements() == 0) return ok_status();
    BroadcastPlan plan;
    SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, shapes, out_shape, plan));
    const std::string* pa = a.data<std::string>();
    const std::string* pb = b.data<std::string>();
    std::string* out = z->data<std::string>();
    ctx.thread_pool().parallel_for(plan.total, kStringsPerChunk, [&](int64_t begin, int64_t end) {
      for_each_run(plan, begin, end, [&](int64_t o, const int64_t* offs, int64_t length) {
        for (int64_t j = 0; j < length; ++j) {
          const std::string& left = pa[offs[0] + (plan.inner_moves[0] ? j : 0)];
          const std::string& right = pb[offs[1] + (plan.inner_moves[1] ? j : 0)];
          std::string& result = out[o + j];
          result.reserve(left.size() + right.size());
          result.assign(left);
          result.append(right);
        }
      });
    });
    return ok_status();
  }
};

// ---- RegexFullMatch -------------------------------------------------------------

// The pattern is compiled once, at creation; RE2 matches from several
// threads at once on one compiled pattern.
class RegexFullMatchKernel final : public Kernel {
 public:
  RegexFullMatchKernel(const KernelCreateContext& ctx, Status& status) {
    const Attribute* pattern = ctx.node().attr("pattern");
    if (pattern == nullptr || pattern->type != AttributeType::kString) {
      status = ctx.error("attribute 'pattern' (a string) is required");
      return;
    }
    RE2::Options options;
    options.set_log_errors(false);  // the error goes into the status instead
    regex_ = std::make_unique<RE2>(pattern->s, options);
    if (!regex_->ok())
      status = ctx.error("attribute pattern '" + pattern->s + "' is not valid RE2 syntax: " + regex_->error());
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const std::string* in = x.data<std::string>();
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, x.shape()));
    bool* out = y->data<bool>();
    const RE2& regex = *regex_;
    ctx.thread_pool().parallel_for(x.num_elements(), kStringsPerChunk, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = RE2::FullMatch(in[i], regex);
    });
    return ok_status();
  }

 private:
  std::unique_ptr<RE2> regex_;
};

constexpr uint64_t kStringOnly = type_bit(DataType::kString);

const KernelDef kStringOpsKernels[] = {
    {"", "StringNormalizer", 10, kLatestVersion, 0, kStringOnly, &make_kernel<StringNormalizerKernel>},
    {"", "StringSplit", 20, kLatestVersion, 0, kStringOnly, &make_kernel<StringSplitKernel>},
    {"", "StringConcat", 20, kLatestVersion, 0, kStringOnly, &make_kernel<StringConcatKernel>},
    {"", "RegexFullMatch", 20, kLatestVersion, 0, kStringOnly, &make_kernel<RegexFullMatchKernel>},
};

}  // namespace

std::span<const KernelDef> string_ops_kernels() { return kStringOpsKernels; }

}  // namespace sy::cpu
