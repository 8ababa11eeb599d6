// Helpers for the pass tests: load a built model as a resolved Graph, list
// what is left, make deterministic inputs, and compare a session at one
// optimization level with one at another.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/loader.h"
#include "model/resolve.h"
#include "optimizer/optimizer.h"
#include "optimizer/provider_rewrites.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy::testing {

inline std::vector<std::string> remaining_ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes)
    if (!n.removed) ops.push_back(n.op_type);
  return ops;
}

// The only live node of `op_type`, or nullptr (none, or several).
inline const Node* only_node(const Graph& g, const std::string& op_type) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes) {
    if (n.removed || n.op_type != op_type) continue;
    if (found != nullptr) return nullptr;
    found = &n;
  }
  return found;
}

// Values spread over [-scale, scale], from a fixed seed.
inline Tensor sample_tensor(const Shape& shape, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  uint32_t state = seed * 2654435761u + 1;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
  }
  return make_tensor<float>(shape, v);
}

// Optimizes the built model at `level`, with the CPU provider's rewrites
// (as a session whose nodes all run on the CPU) or only the generic passes
// (as before placement), hands the graph back when asked, and returns the
// pass counter `counter` (-1 when optimizing failed).
inline int optimize_and_count(const ModelBuilder& b, OptimizationLevel level, bool cpu_rewrites,
                              int PassStats::*counter, Graph* out = nullptr) {
  Graph g = load_resolved(b);
  PassStats stats;
  const Status status = cpu_rewrites ? optimize_for_cpu(g, level, &stats) : optimize(g, level, &stats);
  EXPECT_TRUE(status.ok()) << status.to_string();
  if (out != nullptr) *out = std::move(g);
  return status.ok() ? stats.*counter : -1;
}

inline Result<std::vector<Tensor>> run_at(const ModelBuilder& b, OptimizationLevel level,
                                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::string& optimized_path = "") {
  SessionOptions o;
  o.optimization_level = level;
  o.intra_op_threads = 1;
  o.optimized_model_path = optimized_path;
  const std::string bytes = b.build();
  SY_ASSIGN_OR_RETURN(auto s, Session::create_from_bytes(bytes.data(), bytes.size(), o));
  return s->run(feeds);
}

// Runs the model at basic and at all, and expects every output to agree
// within 1e-5 (relative, with the same absolute floor).
inline void expect_same_outputs(const ModelBuilder& b, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  auto basic = run_at(b, OptimizationLevel::kBasic, feeds);
  auto all = run_at(b, OptimizationLevel::kAll, feeds);
  ASSERT_TRUE(basic.ok()) << basic.status().to_string();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  ASSERT_EQ(basic->size(), all->size());
  for (size_t i = 0; i < basic->size(); ++i) expect_tensor_near((*all)[i], (*basic)[i], 1e-5, 1e-5);
}

// Reads the optimized model saved at `path` back without optimizing and
// expects its first output to match the unoptimized model's within 1e-5.
// The reloaded session and its outputs are handed back when asked for.
inline void expect_saved_model_matches_unoptimized(const std::string& path, const ModelBuilder& b,
                                                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                   std::unique_ptr<Session>* reloaded_out = nullptr,
                                                   std::vector<Tensor>* outputs_out = nullptr) {
  SessionOptions plain;
  plain.optimization_level = OptimizationLevel::kDisableAll;
  auto reloaded = Session::create(path, plain);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().to_string();
  auto again = (*reloaded)->run(feeds);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  auto unoptimized = run_at(b, OptimizationLevel::kDisableAll, feeds);
  ASSERT_TRUE(unoptimized.ok()) << unoptimized.status().to_string();
  expect_tensor_near((*again)[0], (*unoptimized)[0], 1e-5, 1e-5);
  if (reloaded_out != nullptr) *reloaded_out = std::move(reloaded).value();
  if (outputs_out != nullptr) *outputs_out = std::move(again).value();
}

// x -> Identity -> xi, read by both branches of an If (Relu / Neg) from
// the outer scope: the shape that tests subgraph reads across passes.
inline ModelBuilder identity_feeding_if_branches() {
  ModelBuilder then_branch(17);
  then_branch.node("Relu", {"xi"}, {"t_out"}, {}, "then_relu");
  then_branch.output("t_out", DataType::kFloat, {3});
  ModelBuilder else_branch(17);
  else_branch.node("Neg", {"xi"}, {"e_out"}, {}, "else_neg");
  else_branch.output("e_out", DataType::kFloat, {3});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  b.node("Identity", {"x"}, {"xi"}, {}, "identity");
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, "if");
  b.output("y", DataType::kFloat, {3});
  return b;
}

}  // namespace sy::testing
