// Checks DESIGN.md's rule "nothing allocates on the heap per node in the
// steady state of run": after a warm-up run, the number of heap
// allocations a run makes must not grow with the number of nodes.
//
// This is its own executable because it replaces the global operator new
// to count allocations; the host tensor allocator has its own counter.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "switchyard/session.h"
#include "testing/model_builder.h"

namespace {
std::atomic<uint64_t> g_news{0};
}  // namespace

void* operator new(size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace sy {
namespace {

// A chain of `n` Add/Relu/Mul nodes over a [batch, 64] input.
std::string chain_model(int n) {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", 64});
  std::string prev = "x";
  const char* ops[] = {"Relu", "Sigmoid", "Tanh"};
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    b.node(ops[i % 3], {prev}, {out});
    prev = out;
  }
  b.output("y", DataType::kFloat, {"batch", 64});
  return b.build();
}

struct Counts {
  uint64_t news;
  uint64_t tensor_allocs;
};

// The chain of chain_model(n) inside the then branch of an If on `cond`,
// whose else branch is a Neg: the branches read x from the outer scope.
std::string if_model(int n) {
  testing::ModelBuilder then_branch(17);
  std::string prev = "x";
  const char* ops[] = {"Relu", "Sigmoid", "Tanh"};
  for (int i = 0; i < n; ++i) {
    const std::string out = "t" + std::to_string(i);
    then_branch.node(ops[i % 3], {prev}, {out});
    prev = out;
  }
  then_branch.output(prev, DataType::kFloat, {"batch", 64});
  testing::ModelBuilder else_branch(17);
  else_branch.node("Neg", {"x"}, {"e"});
  else_branch.output("e", DataType::kFloat, {"batch", 64});
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", 64});
  b.input("cond", DataType::kBool, {});
  b.node("If", {"cond"}, {"y"},
         {testing::AttrSpec("then_branch", then_branch), testing::AttrSpec("else_branch", else_branch)});
  b.output("y", DataType::kFloat, {"batch", 64});
  return b.build();
}

Counts count_second_run(const std::string& bytes, const std::vector<std::pair<std::string, Tensor>>& extra_feeds = {}) {
  SessionOptions options;
  options.intra_op_threads = 2;
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  Tensor x = Tensor::allocate(DataType::kFloat, Shape{8, 64}).value();
  for (int i = 0; i < 8 * 64; ++i) x.data<float>()[i] = static_cast<float>(i % 17) * 0.1f - 0.8f;
  std::vector<std::pair<std::string, Tensor>> feeds{{"x", x}};
  feeds.insert(feeds.end(), extra_feeds.begin(), extra_feeds.end());
  EXPECT_TRUE((*session)->run(feeds).ok());  // warm-up: slots are sized here
  const uint64_t news_before = g_news.load();
  const uint64_t tensors_before = cpu_allocation_count();
  auto out = (*session)->run(feeds);
  const Counts c{g_news.load() - news_before, cpu_allocation_count() - tensors_before};
  EXPECT_TRUE(out.ok());
  return c;
}

TEST(SteadyState, RunAllocationsDoNotGrowWithNodeCount) {
  const Counts small = count_second_run(chain_model(3));
  const Counts large = count_second_run(chain_model(60));
  // Per-run bookkeeping (the result vector, the output tensor) is allowed;
  // anything per node would make the 60-node count larger.
  EXPECT_EQ(small.news, large.news) << "operator new calls per run: 3 nodes " << small.news << ", 60 nodes "
                                    << large.news;
  EXPECT_EQ(small.tensor_allocs, large.tensor_allocs);
  EXPECT_LE(large.tensor_allocs, 1u) << "only the graph output should be allocated";
}

// An If runs its branch on a frame it keeps (the If's prepared state), so a
// run through an If allocates what a run of the branch's chain alone does:
// nothing per node, only the graph output.
TEST(SteadyState, AnIfAllocatesNothingMoreThanItsBranch) {
  Tensor cond = Tensor::allocate(DataType::kBool, Shape{}).value();
  cond.data<bool>()[0] = true;
  const Counts plain = count_second_run(chain_model(30));
  const Counts branched = count_second_run(if_model(30), {{"cond", cond}});
  EXPECT_EQ(plain.news, branched.news) << "operator new calls per run: chain " << plain.news << ", If " << branched.news;
  EXPECT_EQ(plain.tensor_allocs, branched.tensor_allocs);
  EXPECT_LE(branched.tensor_allocs, 1u) << "only the graph output should be allocated";
}

// x = Loop(M) over a body that runs a chain of `n` nodes and an If on the
// outer-scope `flag` (Relu or Neg) on the loop-carried x: the If in a loop.
std::string loop_model(int n) {
  testing::ModelBuilder then_branch(17);
  then_branch.node("Relu", {"t"}, {"r"});
  then_branch.output("r", DataType::kFloat, {"batch", 64});
  testing::ModelBuilder else_branch(17);
  else_branch.node("Neg", {"t"}, {"e"});
  else_branch.output("e", DataType::kFloat, {"batch", 64});
  testing::ModelBuilder body(17);
  body.input("i", DataType::kInt64, {});
  body.input("cond_in", DataType::kBool, {});
  body.input("x_in", DataType::kFloat, {"batch", 64});
  std::string prev = "x_in";
  const char* ops[] = {"Tanh", "Sigmoid", "Relu"};
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "t" : "c" + std::to_string(i);
    body.node(ops[i % 3], {prev}, {out});
    prev = out;
  }
  body.node("If", {"flag"}, {"x_out"},
            {testing::AttrSpec("then_branch", then_branch), testing::AttrSpec("else_branch", else_branch)});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out", DataType::kBool, {});
  body.output("x_out", DataType::kFloat, {"batch", 64});
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", 64});
  b.input("M", DataType::kInt64, {});
  b.input("flag", DataType::kBool, {});
  b.node("Loop", {"M", "", "x"}, {"y"}, {testing::AttrSpec("body", body)});
  b.output("y", DataType::kFloat, {"batch", 64});
  return b.build();
}

// A Loop's iterations alternate between two frames it keeps, its carried
// value is swapped between them, and the If inside keeps its branches'
// frames in each: 1000 iterations allocate what one does, which is what a
// plain graph's run does (the result, the graph output).
TEST(SteadyState, ALoopOfAThousandIterationsAllocatesWhatOneDoes) {
  Tensor flag = Tensor::allocate(DataType::kBool, Shape{}).value();
  flag.data<bool>()[0] = true;
  auto trips = [](int64_t m) {
    Tensor t = Tensor::allocate(DataType::kInt64, Shape{}).value();
    t.data<int64_t>()[0] = m;
    return t;
  };
  const std::string model = loop_model(12);
  const Counts one = count_second_run(model, {{"M", trips(1)}, {"flag", flag}});
  const Counts thousand = count_second_run(model, {{"M", trips(1000)}, {"flag", flag}});
  // Nor does the Loop itself allocate per run: a run of it costs what a
  // run of a plain chain does.
  const Counts plain = count_second_run(chain_model(12));
  EXPECT_EQ(plain.news, thousand.news) << "operator new calls per run: chain " << plain.news << ", Loop "
                                       << thousand.news;
  EXPECT_EQ(one.news, thousand.news) << "operator new calls per run: 1 iteration " << one.news << ", 1000 iterations "
                                     << thousand.news;
  EXPECT_EQ(one.tensor_allocs, thousand.tensor_allocs);
  EXPECT_LE(thousand.tensor_allocs, 1u) << "only the graph output should be allocated";
  flag.data<bool>()[0] = false;
  const Counts other_branch = count_second_run(model, {{"M", trips(1000)}, {"flag", flag}});
  EXPECT_EQ(one.news, other_branch.news);
}

}  // namespace
}  // namespace sy
