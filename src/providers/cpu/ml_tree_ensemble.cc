// TreeEnsemble (ai.onnx.ml 5), TreeEnsembleRegressor and
// TreeEnsembleClassifier (1 and 3).
//
// The three describe trees differently (v5 by node positions with separate
// leaves, the older two by (tree id, node id) pairs with weights keyed the
// same way); creation reads either into one SourceEnsemble, then lays every
// tree out depth-first in one contiguous node array (FlatEnsemble), true
// child right after its parent, leaves pointing at their range of (target,
// weight) pairs. run() walks blocks of rows through one tree at a time, so a
// tree's nodes stay in cache for the whole block; threads share out the
// rows, or the trees when there are too few rows to share.
//
// Semantics follow ONNX's reference implementation
// (onnx/reference/ops/aionnxml/op_tree_ensemble*.py): MIN and MAX start from
// the type's largest and lowest value, AVERAGE divides by the number of
// trees, base values are added after aggregation, and a classifier whose
// weights all name one class is binary: its other score is 1 - s (NONE,
// PROBIT) or -s (the other transforms) before the post transform.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/ml_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using ml::PostTransform;

// The numbering is TreeEnsemble-5's nodes_modes'; kLeaf is the older ops'
// "LEAF" (v5 keeps leaves apart).
enum NodeMode : uint8_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };
// The numbering is TreeEnsemble-5's aggregate_function's.
enum class Aggregate : uint8_t { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };

// ---- the ensemble as the attributes give it -------------------------------------

struct SourceNode {
  uint8_t mode = kLeaf;
  bool nan_true = false;  // where a NaN feature goes
  int64_t feature = 0;
  double threshold = 0;
  int64_t set = -1;         // kMember: index into SourceEnsemble::sets
  int64_t next_true = -1;   // branches: indices into SourceEnsemble::nodes
  int64_t next_false = -1;
  std::vector<std::pair<int64_t, double>> weights;  // leaves: (target, weight)
};

struct SourceEnsemble {
  std::vector<SourceNode> nodes;
  std::vector<int64_t> roots;  // one per tree, into nodes
  std::vector<std::vector<double>> sets;
  int64_t n_targets = 0;
  // The thresholds come as a double tensor (nodes_values_as_tensor, a
  // double nodes_splits): comparisons are then made in double whatever X's
  // type, as the reference's numpy promotion makes them.
  bool double_thresholds = false;
};

// ---- the flattened ensemble -------------------------------------------------------

template <typename Th>
struct FlatNode {
  Th threshold;
  int32_t feature;
  int32_t next_true;   // leaves: their first weight
  int32_t next_false;  // leaves: one past their last weight
  uint8_t mode;
  uint8_t nan_true;
  int32_t set;  // kMember: index into set_ranges_
};

template <typename Th>
struct LeafWeight {
  int32_t target;
  Th weight;
};

// Rows walked through one tree before the next tree: enough to reuse a
// tree's nodes from cache, few enough that the rows' scores stay there too.
constexpr int64_t kBlockRows = 64;
// Node visits a thread should get at least, so small batches stay on one.
constexpr int64_t kVisitsPerChunk = int64_t{1} << 15;

template <typename Th>
class FlatEnsemble {
 public:
  // Lays out `source`'s trees; an error when a tree is not a tree (a cycle,
  // a branch reached from two parents) or has more nodes than int32 counts.
  static Status build(const KernelCreateContext& ctx, const SourceEnsemble& source, FlatEnsemble& out);

  int64_t num_trees() const { return static_cast<int64_t>(roots_.size()); }
  int64_t n_targets() const { return n_targets_; }
  // X must have more columns than the largest feature id a branch reads.
  int64_t min_columns() const { return min_columns_; }

  // How many per-thread score arrays of rows * n_targets the caller gives
  // aggregate(): 0 unless the trees are split among threads (few rows, many
  // trees).
  int64_t lanes_for(const ThreadPool& pool, int64_t rows) const {
    const int64_t threads = pool.num_threads();
    if (threads <= 1 || rows >= 2 * threads || num_trees() < 2 * threads) return 0;
    return threads;
  }

  // scores[r * n_targets + t], for the rows of x (rows x cols, row-major):
  // every tree's leaf weights for target t combined by `agg` (summed for
  // kAverage: the caller divides). `lanes` holds lanes_for() arrays.
  template <typename In>
  void aggregate(ThreadPool& pool, const In* x, int64_t rows, int64_t cols, Aggregate agg, Th* scores,
                 Th* lanes) const {
    const int64_t total = rows * n_targets_;
    std::fill(scores, scores + total, identity(agg));
    const int64_t num_lanes = lanes_for(pool, rows);
    if (num_lanes == 0) {
      const int64_t visits_per_row = std::max<int64_t>(1, num_trees() * depth_estimate_);
      pool.parallel_for(rows, std::max<int64_t>(1, kVisitsPerChunk / visits_per_row), [&](int64_t b, int64_t e) {
        run_trees(0, num_trees(), x, b, e, cols, agg, scores);
      });
      return;
    }
    std::fill(lanes, lanes + num_lanes * total, identity(agg));
    const int64_t tasks = std::min(num_trees(), num_lanes * 4);
    pool.run_tasks(num_lanes, tasks, [&](int64_t lane, int64_t task) {
      run_trees(task * num_trees() / tasks, (task + 1) * num_trees() / tasks, x, 0, rows, cols, agg,
                lanes + lane * total);
    });
    for (int64_t lane = 0; lane < num_lanes; ++lane)
      for (int64_t i = 0; i < total; ++i) combine(agg, scores[i], lanes[lane * total + i]);
  }

 private:
  static Th identity(Aggregate agg) {
    if (agg == Aggregate::kMin) return std::numeric_limits<Th>::max();
    if (agg == Aggregate::kMax) return std::numeric_limits<Th>::lowest();
    return Th(0);
  }

  static void combine(Aggregate agg, Th& score, Th value) {
    switch (agg) {
      case Aggregate::kMin: score = std::min(score, value); break;
      case Aggregate::kMax: score = std::max(score, value); break;
      default: score += value; break;
    }
  }

  bool in_set(int32_t set, Th x) const {
    const auto [first, last] = set_ranges_[static_cast<size_t>(set)];
    for (int32_t i = first; i < last; ++i)
      if (set_values_[static_cast<size_t>(i)] == x) return true;
    return false;
  }

  // kMode is the mode every branch shares (the common case: LEQ for
  // scikit-learn, LT for LightGBM and XGBoost), or -1 to read each node's.
  template <int kMode>
  bool goes_true(const FlatNode<Th>& n, Th x) const {
    if constexpr (kMode == kLeq) {
      return x <= n.threshold || (n.nan_true && std::isnan(x));
    } else if constexpr (kMode == kLt) {
      return x < n.threshold || (n.nan_true && std::isnan(x));
    } else {
      if (std::isnan(x)) return n.nan_true != 0;
      switch (n.mode) {
        case kLeq: return x <= n.threshold;
        case kLt: return x < n.threshold;
        case kGte: return x >= n.threshold;
        case kGt: return x > n.threshold;
        case kEq: return x == n.threshold;
        case kNeq: return x != n.threshold;
        default: return in_set(n.set, x);
      }
    }
  }

  template <int kMode, typename In>
  const FlatNode<Th>& find_leaf(int32_t index, const In* row) const {
    const FlatNode<Th>* nodes = nodes_.data();
    while (nodes[index].mode != kLeaf) {
      const FlatNode<Th>& n = nodes[index];
      const Th x = static_cast<Th>(load(row[n.feature]));
      index = goes_true<kMode>(n, x) ? n.next_true : n.next_false;
    }
    return nodes[index];
  }

  template <int kMode, typename In>
  void run_trees_as(int64_t tree_begin, int64_t tree_end, const In* x, int64_t row_begin, int64_t row_end,
                    int64_t cols, Aggregate agg, Th* scores) const {
    for (int64_t block = row_begin; block < row_end; block += kBlockRows) {
      const int64_t block_end = std::min(block + kBlockRows, row_end);
      for (int64_t t = tree_begin; t < tree_end; ++t) {
        const int32_t root = roots_[static_cast<size_t>(t)];
        for (int64_t r = block; r < block_end; ++r) {
          const FlatNode<Th>& leaf = find_leaf<kMode>(root, x + r * cols);
          Th* row_scores = scores + r * n_targets_;
          for (int32_t w = leaf.next_true; w < leaf.next_false; ++w) {
            const LeafWeight<Th>& lw = weights_[static_cast<size_t>(w)];
            combine(agg, row_scores[lw.target], lw.weight);
          }
        }
      }
    }
  }

  template <typename In>
  void run_trees(int64_t tree_begin, int64_t tree_end, const In* x, int64_t row_begin, int64_t row_end, int64_t cols,
                 Aggregate agg, Th* scores) const {
    switch (uniform_mode_) {
      case kLeq: return run_trees_as<kLeq>(tree_begin, tree_end, x, row_begin, row_end, cols, agg, scores);
      case kLt: return run_trees_as<kLt>(tree_begin, tree_end, x, row_begin, row_end, cols, agg, scores);
      default: return run_trees_as<-1>(tree_begin, tree_end, x, row_begin, row_end, cols, agg, scores);
    }
  }

  std::vector<FlatNode<Th>> nodes_;
  std::vector<int32_t> roots_;
  std::vector<LeafWeight<Th>> weights_;
  std::vector<Th> set_values_;
  std::vector<std::pair<int32_t, int32_t>> set_ranges_;
  int64_t n_targets_ = 0;
  int64_t min_columns_ = 0;
  int64_t depth_estimate_ = 1;
  int uniform_mode_ = -1;  // kLeq or kLt when every branch has it, else -1
};

template <typename Th>
Status FlatEnsemble<Th>::build(const KernelCreateContext& ctx, const SourceEnsemble& source, FlatEnsemble& out) {
  constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();
  out.n_targets_ = source.n_targets;
  for (const std::vector<double>& set : source.sets) {
    out.set_ranges_.emplace_back(static_cast<int32_t>(out.set_values_.size()),
                                 static_cast<int32_t>(out.set_values_.size() + set.size()));
    for (double v : set) out.set_values_.push_back(static_cast<Th>(v));
  }
  if (static_cast<int64_t>(out.set_values_.size()) > kMaxIndex) return ctx.error("too many membership values");
  // Where each branch went in the flat array: a branch reached twice would
  // make the walk a graph (or loop forever); a leaf reached twice (v5 lets
  // nodes share a leaf) is copied.
  std::vector<char> placed(source.nodes.size(), 0);
  struct Pending {
    int64_t source;
    int64_t parent;  // flat index, -1 for a root
    bool true_side;
  };
  std::vector<Pending> stack;
  int mode_seen = -2;  // -2: no branch yet
  int64_t branches = 0;
  for (int64_t root : source.roots) {
    out.roots_.push_back(static_cast<int32_t>(out.nodes_.size()));
    stack.push_back({root, -1, true});
    while (!stack.empty()) {
      const Pending p = stack.back();
      stack.pop_back();
      const SourceNode& s = source.nodes[static_cast<size_t>(p.source)];
      const int64_t at = static_cast<int64_t>(out.nodes_.size());
      if (at >= kMaxIndex) return ctx.error("the ensemble has more than 2^31 nodes");
      if (p.parent >= 0) {
        FlatNode<Th>& parent = out.nodes_[static_cast<size_t>(p.parent)];
        (p.true_side ? parent.next_true : parent.next_false) = static_cast<int32_t>(at);
      }
      FlatNode<Th> n{};
      n.mode = s.mode;
      n.nan_true = s.nan_true ? 1 : 0;
      n.set = -1;
      if (s.mode == kLeaf) {
        n.next_true = static_cast<int32_t>(out.weights_.size());
        for (const auto& [target, weight] : s.weights)
          out.weights_.push_back({static_cast<int32_t>(target), static_cast<Th>(weight)});
        if (static_cast<int64_t>(out.weights_.size()) > kMaxIndex) return ctx.error("too many leaf weights");
        n.next_false = static_cast<int32_t>(out.weights_.size());
        out.nodes_.push_back(n);
        continue;
      }
      if (placed[static_cast<size_t>(p.source)])
        return ctx.error("node " + std::to_string(p.source) +
                         " is reached twice (from two parents, or through a cycle): the trees are not trees");
      placed[static_cast<size_t>(p.source)] = 1;
      if (s.feature < 0 || s.feature >= kMaxIndex)
        return ctx.error("node " + std::to_string(p.source) + " reads feature " + std::to_string(s.feature) +
                         ", out of range");
      n.threshold = static_cast<Th>(s.threshold);
      n.feature = static_cast<int32_t>(s.feature);
      n.set = static_cast<int32_t>(s.set);
      out.min_columns_ = std::max(out.min_columns_, s.feature + 1);
      out.nodes_.push_back(n);
      ++branches;
      // LT and LEQ have fast paths; NaN's own rule matters only for NEQ,
      // whose comparison alone would send NaN to the true side.
      mode_seen = mode_seen == -2 || mode_seen == s.mode ? s.mode : -1;
      // The false side is pushed first so the true side comes right after.
      stack.push_back({s.next_false, at, false});
      stack.push_back({s.next_true, at, true});
    }
  }
  out.uniform_mode_ = mode_seen == kLeq || mode_seen == kLt ? mode_seen : -1;
  const int64_t trees = std::max<int64_t>(1, out.num_trees());
  out.depth_estimate_ = 1 + static_cast<int64_t>(std::log2(1.0 + static_cast<double>(branches) / trees));
  return ok_status();
}

// The ensemble in the precision of the wider of X and the thresholds, as
// the reference compares them: double for double X or double thresholds,
// float otherwise. Both when X's type is unknown at creation.
struct Ensembles {
  std::optional<FlatEnsemble<float>> f32;
  std::optional<FlatEnsemble<double>> f64;

  Status build(const KernelCreateContext& ctx, const SourceEnsemble& source) {
    const DataType x = ctx.input_dtype(0);
    if (x != DataType::kDouble && !source.double_thresholds)
      SY_RETURN_IF_ERROR(FlatEnsemble<float>::build(ctx, source, f32.emplace()));
    if (x == DataType::kDouble || x == DataType::kUndefined || source.double_thresholds)
      SY_RETURN_IF_ERROR(FlatEnsemble<double>::build(ctx, source, f64.emplace()));
    return ok_status();
  }
  int64_t num_trees() const { return f32 ? f32->num_trees() : f64->num_trees(); }
};

// Aggregated scores of every row of X (rank 1 or 2) in scratch, in Th;
// `rows` is X's row count.
template <typename Th, typename In>
Result<Th*> score_rows(KernelContext& ctx, const FlatEnsemble<Th>& e, const Tensor& x, Aggregate agg, int64_t& rows) {
  int64_t cols = 0;
  SY_RETURN_IF_ERROR(ml::matrix_dims(ctx, x, rows, cols));
  if (cols < e.min_columns())
    return kernel_error(ctx, describe_input(ctx, 0, "X") + " has " + std::to_string(cols) +
                                 " features but the trees read feature " + std::to_string(e.min_columns() - 1));
  int64_t total = 0;
  if (!checked_mul(rows, e.n_targets(), total)) return kernel_invalid_argument(ctx, "too many scores");
  const int64_t lanes = e.lanes_for(ctx.thread_pool(), rows);
  ScratchCarver carver;
  const size_t scores_at = carver.add<Th>(total);
  const size_t lanes_at = carver.add<Th>(lanes * total);
  SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
  Th* scores = ScratchCarver::pointer<Th>(scratch, scores_at);
  e.aggregate(ctx.thread_pool(), x.data<In>(), rows, cols, agg, scores, ScratchCarver::pointer<Th>(scratch, lanes_at));
  return scores;
}

// Calls fn(ensemble, TypeTag<In>) for X's element type, with the ensemble of
// the matching precision.
template <typename Types, typename Fn>
Status with_ensemble(const KernelContext& ctx, const Ensembles& ensembles, const Tensor& x, Types types, Fn&& fn) {
  Status status = ok_status();
  const bool known = visit_type(types, x.dtype(), [&]<typename In>(TypeTag<In> tag) {
    if constexpr (std::is_same_v<In, double>) {
      status = ensembles.f64 ? fn(*ensembles.f64, tag)
                             : kernel_error(ctx, "X is double but the kernel was created for another type");
    } else if (ensembles.f32) {
      status = fn(*ensembles.f32, tag);
    } else {
      status = fn(*ensembles.f64, tag);
    }
  });
  if (!known) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
  return status;
}

// ---- reading the older ops' attributes ----------------------------------------------

bool parse_mode(const std::string& word, uint8_t& mode) {
  static constexpr std::pair<std::string_view, NodeMode> kModes[] = {
      {"BRANCH_LEQ", kLeq}, {"BRANCH_LT", kLt}, {"BRANCH_GTE", kGte}, {"BRANCH_GT", kGt},
      {"BRANCH_EQ", kEq},   {"BRANCH_NEQ", kNeq}, {"LEAF", kLeaf},
  };
  for (const auto& [name, value] : kModes) {
    if (word != name) continue;
    mode = value;
    return true;
  }
  return false;
}

// The nodes_* attributes of TreeEnsembleRegressor and TreeEnsembleClassifier
// and their weights, `prefix` "target" or "class"; weights name outputs in
// [0, n_outputs).
Status read_legacy_ensemble(const KernelCreateContext& ctx, const std::string& prefix, int64_t n_outputs,
                            SourceEnsemble& out) {
  const Node& node = ctx.node();
  const std::vector<int64_t> tree_ids = node.attr_ints("nodes_treeids");
  const std::vector<int64_t> node_ids = node.attr_ints("nodes_nodeids");
  const std::vector<int64_t> features = node.attr_ints("nodes_featureids");
  const std::vector<int64_t> trues = node.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> falses = node.attr_ints("nodes_falsenodeids");
  const std::vector<int64_t> missing = node.attr_ints("nodes_missing_value_tracks_true");
  const Attribute* modes = node.attr("nodes_modes");
  std::vector<double> values;
  SY_RETURN_IF_ERROR(ml::read_floats_or_tensor(ctx, "nodes_values", "nodes_values_as_tensor", values));
  const Attribute* values_tensor = node.attr("nodes_values_as_tensor");
  out.double_thresholds = values_tensor != nullptr && values_tensor->t.dtype() == DataType::kDouble;
  const size_t n = node_ids.size();
  if (n == 0) return ctx.error("attribute nodes_nodeids is empty: the ensemble has no nodes");
  const std::pair<const char*, size_t> sizes[] = {
      {"nodes_treeids", tree_ids.size()},     {"nodes_featureids", features.size()},
      {"nodes_truenodeids", trues.size()},    {"nodes_falsenodeids", falses.size()},
      {"nodes_modes", modes ? modes->strings.size() : 0}, {"nodes_values", values.size()},
  };
  for (const auto& [name, size] : sizes)
    if (size != n)
      return ctx.error(std::string("attribute ") + name + " has " + std::to_string(size) +
                       " entries, nodes_nodeids has " + std::to_string(n));
  if (!missing.empty() && missing.size() != n)
    return ctx.error("attribute nodes_missing_value_tracks_true has " + std::to_string(missing.size()) +
                     " entries, nodes_nodeids has " + std::to_string(n));
  std::map<std::pair<int64_t, int64_t>, int64_t> index;
  for (size_t i = 0; i < n; ++i)
    if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second)
      return ctx.error("node " + std::to_string(node_ids[i]) + " of tree " + std::to_string(tree_ids[i]) +
                       " is listed twice");
  auto find = [&](int64_t tree, int64_t id, int64_t& at) {
    auto it = index.find({tree, id});
    if (it == index.end()) return false;
    at = it->second;
    return true;
  };
  out.nodes.resize(n);
  std::map<int64_t, int64_t> roots;  // tree id -> its first node, in tree id order
  for (size_t i = 0; i < n; ++i) {
    SourceNode& s = out.nodes[i];
    const std::string& word = modes->strings[i];
    if (!parse_mode(word, s.mode))
      return ctx.error("nodes_modes[" + std::to_string(i) + "] is '" + word +
                       "'; expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF");
    roots.emplace(tree_ids[i], static_cast<int64_t>(i));
    if (s.mode == kLeaf) continue;
    s.nan_true = !missing.empty() && missing[i] != 0;
    s.feature = features[i];
    s.threshold = values[i];
    if (!find(tree_ids[i], trues[i], s.next_true) || !find(tree_ids[i], falses[i], s.next_false))
      return ctx.error("node " + std::to_string(node_ids[i]) + " of tree " + std::to_string(tree_ids[i]) +
                       " branches to node " + std::to_string(trues[i]) + " / " + std::to_string(falses[i]) +
                       ", which the tree does not have");
  }
  for (const auto& [tree, first] : roots) out.roots.push_back(first);

  const std::vector<int64_t> ids = node.attr_ints(prefix + "_ids");
  const std::vector<int64_t> w_trees = node.attr_ints(prefix + "_treeids");
  const std::vector<int64_t> w_nodes = node.attr_ints(prefix + "_nodeids");
  std::vector<double> weights;
  SY_RETURN_IF_ERROR(ml::read_floats_or_tensor(ctx, prefix + "_weights", prefix + "_weights_as_tensor", weights));
  if (w_trees.size() != ids.size() || w_nodes.size() != ids.size() || weights.size() != ids.size())
    return ctx.error("attributes " + prefix + "_ids, " + prefix + "_treeids, " + prefix + "_nodeids and " + prefix +
                     "_weights must have one entry each per weight; they have " + std::to_string(ids.size()) + ", " +
                     std::to_string(w_trees.size()) + ", " + std::to_string(w_nodes.size()) + " and " +
                     std::to_string(weights.size()));
  for (size_t k = 0; k < ids.size(); ++k) {
    int64_t at = 0;
    if (!find(w_trees[k], w_nodes[k], at))
      return ctx.error("weight " + std::to_string(k) + " is for node " + std::to_string(w_nodes[k]) + " of tree " +
                       std::to_string(w_trees[k]) + ", which the ensemble does not have");
    if (ids[k] < 0 || ids[k] >= n_outputs)
      return ctx.error(prefix + "_ids[" + std::to_string(k) + "] is " + std::to_string(ids[k]) +
                       ", out of range [0, " + std::to_string(n_outputs) + ")");
    // A weight on a branch is never reached (the reference reads weights at
    // leaves only).
    SourceNode& s = out.nodes[static_cast<size_t>(at)];
    if (s.mode == kLeaf) s.weights.emplace_back(ids[k], weights[k]);
  }
  out.n_targets = n_outputs;
  return ok_status();
}

// Base values: none, one for every output, or one for them all.
Status read_base_values(const KernelCreateContext& ctx, int64_t n_outputs, std::vector<double>& base) {
  SY_RETURN_IF_ERROR(ml::read_floats_or_tensor(ctx, "base_values", "base_values_as_tensor", base));
  if (base.size() == 1) base.assign(static_cast<size_t>(n_outputs), base[0]);
  if (!base.empty() && static_cast<int64_t>(base.size()) != n_outputs)
    return ctx.error("attribute base_values has " + std::to_string(base.size()) + " values; expected " +
                     std::to_string(n_outputs) + " (one per output) or 1");
  return ok_status();
}

// 1 + the largest of `ids`, for an n_targets the model leaves out.
int64_t count_from_ids(const std::vector<int64_t>& ids) {
  int64_t n = 0;
  for (int64_t id : ids) n = std::max(n, id + 1);
  return n;
}

// ---- TreeEnsembleRegressor --------------------------------------------------------------

class TreeEnsembleRegressorKernel final : public Kernel {
 public:
  TreeEnsembleRegressorKernel(const KernelCreateContext& ctx, Status& status) {
    status = init(ctx);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    return with_ensemble(ctx, ensembles_, x, ml::MlInputTypes{},
                         [&]<typename Th, typename In>(const FlatEnsemble<Th>& e, TypeTag<In>) -> Status {
                           int64_t rows = 0;
                           SY_ASSIGN_OR_RETURN(Th * scores, (score_rows<Th, In>(ctx, e, x, aggregate_, rows)));
                           const int64_t targets = e.n_targets();
                           SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, Shape{rows, targets}));
                           float* out = y->data<float>();
                           const Th trees = static_cast<Th>(e.num_trees());
                           for (int64_t r = 0; r < rows; ++r) {
                             Th* s = scores + r * targets;
                             for (int64_t t = 0; t < targets; ++t) {
                               if (aggregate_ == Aggregate::kAverage) s[t] /= trees;
                               if (!base_.empty()) s[t] += static_cast<Th>(base_[static_cast<size_t>(t)]);
                             }
                             ml::apply_post_transform(post_, s, targets);
                             for (int64_t t = 0; t < targets; ++t) out[r * targets + t] = static_cast<float>(s[t]);
                           }
                           return ok_status();
                         });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    const std::string agg = node.attr_string("aggregate_function", "SUM");
    if (agg == "SUM") aggregate_ = Aggregate::kSum;
    else if (agg == "AVERAGE") aggregate_ = Aggregate::kAverage;
    else if (agg == "MIN") aggregate_ = Aggregate::kMin;
    else if (agg == "MAX") aggregate_ = Aggregate::kMax;
    else return ctx.error("attribute aggregate_function must be SUM, AVERAGE, MIN or MAX, got '" + agg + "'");
    const int64_t n_targets = node.attr_int("n_targets", count_from_ids(node.attr_ints("target_ids")));
    if (n_targets <= 0) return ctx.error("attribute n_targets must be positive, got " + std::to_string(n_targets));
    SourceEnsemble source;
    SY_RETURN_IF_ERROR(read_legacy_ensemble(ctx, "target", n_targets, source));
    SY_RETURN_IF_ERROR(read_base_values(ctx, n_targets, base_));
    return ensembles_.build(ctx, source);
  }

  Ensembles ensembles_;
  std::vector<double> base_;
  Aggregate aggregate_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
};

// ---- TreeEnsembleClassifier ---------------------------------------------------------------

class TreeEnsembleClassifierKernel final : public Kernel {
 public:
  TreeEnsembleClassifierKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    return with_ensemble(ctx, ensembles_, x, ml::MlInputTypes{},
                         [&]<typename Th, typename In>(const FlatEnsemble<Th>& e, TypeTag<In>) -> Status {
                           int64_t rows = 0;
                           SY_ASSIGN_OR_RETURN(Th * scores, (score_rows<Th, In>(ctx, e, x, Aggregate::kSum, rows)));
                           return finish(ctx, scores, rows);
                         });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    SY_RETURN_IF_ERROR(labels_.read(ctx, "classlabels_int64s", true));
    n_classes_ = labels_.size();
    if (n_classes_ == 1 && labels_.type() == DataType::kString)
      return ctx.error("a single string class label is not supported (its negative class has no name)");
    const std::vector<int64_t> ids = node.attr_ints("class_ids");
    // Weights that all name one class make a binary classifier scoring that
    // class alone (GradientBoosting's binary trees).
    binary_ = n_classes_ <= 2 && !ids.empty() &&
              std::all_of(ids.begin(), ids.end(), [&](int64_t id) { return id == ids[0]; });
    binary_class_ = binary_ ? ids[0] : 0;
    score_columns_ = std::max<int64_t>(n_classes_, 2);
    if (!binary_) score_columns_ = n_classes_;
    SourceEnsemble source;
    SY_RETURN_IF_ERROR(read_legacy_ensemble(ctx, "class", n_classes_, source));
    SY_RETURN_IF_ERROR(read_base_values(ctx, n_classes_, base_));
    return ensembles_.build(ctx, source);
  }

  template <typename Th>
  Status finish(KernelContext& ctx, const Th* scores, int64_t rows) const {
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, labels_.type(), Shape{rows}));
    SY_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat, Shape{rows, score_columns_}));
    float* zs = z->data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const Th* s = scores + r * n_classes_;
      float* row = zs + r * score_columns_;
      for (int64_t c = 0; c < n_classes_; ++c)
        row[c] = static_cast<float>(s[c] + (base_.empty() ? Th(0) : static_cast<Th>(base_[static_cast<size_t>(c)])));
      if (binary_) {
        const float positive = row[binary_class_];
        row[1] = positive;
        row[0] = post_ == PostTransform::kNone || post_ == PostTransform::kProbit ? 1.0f - positive : -positive;
      }
      ml::apply_post_transform(post_, row, score_columns_);
      const int64_t best = ml::first_max_index(row, score_columns_);
      if (n_classes_ == 1) {
        // One label stands for the positive class; the negative one is 0.
        y->data<int64_t>()[r] = best == 1 ? labels_.ints[0] : 0;
      } else {
        labels_.write(*y, r, best);
      }
    }
    return ok_status();
  }

  Ensembles ensembles_;
  ml::ClassLabels labels_;
  std::vector<double> base_;
  int64_t n_classes_ = 0;
  int64_t score_columns_ = 0;
  bool binary_ = false;
  int64_t binary_class_ = 0;
  PostTransform post_ = PostTransform::kNone;
};

// ---- TreeEnsemble (v5) ----------------------------------------------------------------------

// The values of a tensor attribute; `required` ones must be given.
Status read_tensor_attribute(const KernelCreateContext& ctx, const std::string& name, bool required,
                             std::vector<double>& out) {
  out.clear();
  const Attribute* a = ctx.node().attr(name);
  if (a == nullptr) return required ? ctx.error("attribute " + name + " is required") : ok_status();
  if (!a->t.is_tensor() || !ml::tensor_as_doubles(a->t, out))
    return ctx.error("attribute " + name + " must be a numeric tensor, got " + a->t.describe());
  return ok_status();
}

Status read_tree_ensemble(const KernelCreateContext& ctx, SourceEnsemble& out) {
  const Node& node = ctx.node();
  const std::vector<int64_t> features = node.attr_ints("nodes_featureids");
  const std::vector<int64_t> trues = node.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> true_leafs = node.attr_ints("nodes_trueleafs");
  const std::vector<int64_t> falses = node.attr_ints("nodes_falsenodeids");
  const std::vector<int64_t> false_leafs = node.attr_ints("nodes_falseleafs");
  const std::vector<int64_t> missing = node.attr_ints("nodes_missing_value_tracks_true");
  const std::vector<int64_t> leaf_targets = node.attr_ints("leaf_targetids");
  const std::vector<int64_t> roots = node.attr_ints("tree_roots");
  std::vector<double> modes, splits, leaf_weights, members;
  SY_RETURN_IF_ERROR(read_tensor_attribute(ctx, "nodes_modes", true, modes));
  SY_RETURN_IF_ERROR(read_tensor_attribute(ctx, "nodes_splits", true, splits));
  SY_RETURN_IF_ERROR(read_tensor_attribute(ctx, "leaf_weights", true, leaf_weights));
  SY_RETURN_IF_ERROR(read_tensor_attribute(ctx, "membership_values", false, members));
  out.double_thresholds = node.attr("nodes_splits")->t.dtype() == DataType::kDouble;
  const size_t n = features.size();
  const std::pair<const char*, size_t> sizes[] = {
      {"nodes_modes", modes.size()},        {"nodes_splits", splits.size()},
      {"nodes_truenodeids", trues.size()},  {"nodes_trueleafs", true_leafs.size()},
      {"nodes_falsenodeids", falses.size()}, {"nodes_falseleafs", false_leafs.size()},
  };
  for (const auto& [name, size] : sizes)
    if (size != n)
      return ctx.error(std::string("attribute ") + name + " has " + std::to_string(size) +
                       " entries, nodes_featureids has " + std::to_string(n));
  if (!missing.empty() && missing.size() != n)
    return ctx.error("attribute nodes_missing_value_tracks_true has " + std::to_string(missing.size()) +
                     " entries, nodes_featureids has " + std::to_string(n));
  if (leaf_weights.size() != leaf_targets.size())
    return ctx.error("attributes leaf_targetids and leaf_weights have " + std::to_string(leaf_targets.size()) +
                     " and " + std::to_string(leaf_weights.size()) + " entries; they must match");
  const int64_t n_targets = node.attr_int("n_targets", count_from_ids(leaf_targets));
  if (n_targets <= 0) return ctx.error("attribute n_targets must be positive, got " + std::to_string(n_targets));
  out.n_targets = n_targets;

  // Nodes [0, n) are the branches, [n, n + leaves) the leaves.
  const size_t leaves = leaf_targets.size();
  out.nodes.resize(n + leaves);
  for (size_t k = 0; k < leaves; ++k) {
    if (leaf_targets[k] < 0 || leaf_targets[k] >= n_targets)
      return ctx.error("leaf_targetids[" + std::to_string(k) + "] is " + std::to_string(leaf_targets[k]) +
                       ", out of range [0, " + std::to_string(n_targets) + ")");
    out.nodes[n + k].weights.emplace_back(leaf_targets[k], leaf_weights[k]);
  }
  auto child = [&](size_t i, int64_t id, int64_t is_leaf, int64_t& at) {
    const int64_t limit = static_cast<int64_t>(is_leaf ? leaves : n);
    if (id < 0 || id >= limit)
      return ctx.error("node " + std::to_string(i) + " branches to " + (is_leaf ? "leaf " : "node ") +
                       std::to_string(id) + ", out of range [0, " + std::to_string(limit) + ")");
    at = is_leaf ? static_cast<int64_t>(n) + id : id;
    return ok_status();
  };
  // BRANCH_MEMBER nodes take the NaN-delimited runs of membership_values in
  // the order the nodes are listed.
  size_t member = 0;
  for (size_t i = 0; i < n; ++i) {
    SourceNode& s = out.nodes[i];
    if (!(modes[i] >= 0 && modes[i] <= 6) || modes[i] != std::floor(modes[i]))
      return ctx.error("nodes_modes[" + std::to_string(i) + "] is " + std::to_string(modes[i]) +
                       "; expected 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)");
    s.mode = static_cast<uint8_t>(modes[i]);
    s.feature = features[i];
    s.threshold = splits[i];
    // The reference tests `x <op> split or (missing_tracks_true and isnan(x))`:
    // NaN takes the false side unless so flagged, except for NEQ, whose
    // comparison is true for NaN.
    s.nan_true = (!missing.empty() && missing[i] != 0) || s.mode == kNeq;
    SY_RETURN_IF_ERROR(child(i, trues[i], true_leafs[i], s.next_true));
    SY_RETURN_IF_ERROR(child(i, falses[i], false_leafs[i], s.next_false));
    if (s.mode != kMember) continue;
    std::vector<double> set;
    while (member < members.size() && !std::isnan(members[member])) set.push_back(members[member++]);
    if (member >= members.size())
      return ctx.error("membership_values has fewer NaN-terminated sets than nodes_modes has BRANCH_MEMBER nodes");
    ++member;  // the NaN
    s.set = static_cast<int64_t>(out.sets.size());
    out.sets.push_back(std::move(set));
  }
  if (member != members.size())
    return ctx.error("membership_values has more sets than nodes_modes has BRANCH_MEMBER nodes");
  for (size_t t = 0; t < roots.size(); ++t) {
    const int64_t r = roots[t];
    if (r < 0 || r >= static_cast<int64_t>(n))
      return ctx.error("tree_roots[" + std::to_string(t) + "] is " + std::to_string(r) + ", out of range [0, " +
                       std::to_string(n) + ")");
    // A tree that is a single leaf: a root whose two sides are that leaf.
    const size_t i = static_cast<size_t>(r);
    const bool single_leaf = true_leafs[i] && false_leafs[i] && trues[i] == falses[i];
    out.roots.push_back(single_leaf ? out.nodes[i].next_true : r);
  }
  return ok_status();
}

class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    return with_ensemble(ctx, ensembles_, x, TypeList<float, double, Float16>{},
                         [&]<typename Th, typename In>(const FlatEnsemble<Th>& e, TypeTag<In>) -> Status {
                           int64_t rows = 0;
                           SY_ASSIGN_OR_RETURN(Th * scores, (score_rows<Th, In>(ctx, e, x, aggregate_, rows)));
                           const int64_t targets = e.n_targets();
                           SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), Shape{rows, targets}));
                           In* out = y->data<In>();
                           const Th trees = static_cast<Th>(e.num_trees());
                           for (int64_t r = 0; r < rows; ++r) {
                             Th* s = scores + r * targets;
                             if (aggregate_ == Aggregate::kAverage)
                               for (int64_t t = 0; t < targets; ++t) s[t] /= trees;
                             ml::apply_post_transform(post_, s, targets);
                             for (int64_t t = 0; t < targets; ++t)
                               out[r * targets + t] = store<In>(static_cast<compute_t<In>>(s[t]));
                           }
                           return ok_status();
                         });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    const int64_t agg = node.attr_int("aggregate_function", 1);
    if (agg < 0 || agg > 3)
      return ctx.error("attribute aggregate_function must be 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX), got " +
                       std::to_string(agg));
    aggregate_ = static_cast<Aggregate>(agg);
    const int64_t post = node.attr_int("post_transform", 0);
    if (post < 0 || post > 4)
      return ctx.error("attribute post_transform must be 0 (NONE) to 4 (PROBIT), got " + std::to_string(post));
    post_ = static_cast<PostTransform>(post);
    SourceEnsemble source;
    SY_RETURN_IF_ERROR(read_tree_ensemble(ctx, source));
    return ensembles_.build(ctx, source);
  }

  Ensembles ensembles_;
  Aggregate aggregate_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
};

constexpr uint64_t kLegacyInputs = type_mask(ml::MlInputTypes{});

const KernelDef kTreeEnsembleKernels[] = {
    {"ai.onnx.ml", "TreeEnsemble", 5, kLatestVersion, 0, type_mask(TypeList<float, double, Float16>{}),
     &make_kernel<TreeEnsembleKernel>},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 1, 4, 0, kLegacyInputs, &make_kernel<TreeEnsembleRegressorKernel>},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 1, 4, 0, kLegacyInputs, &make_kernel<TreeEnsembleClassifierKernel>},
};

}  // namespace

std::span<const KernelDef> ml_tree_ensemble_kernels() { return kTreeEnsembleKernels; }

}  // namespace sy::cpu
