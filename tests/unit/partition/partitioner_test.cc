// The provider chain without a GPU: the test provider (a simulated device)
// claims some ops, the rest fall through to the CPU, and copies appear
// wherever a value crosses devices.
#include "partition/partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "model/loader.h"
#include "model/resolve.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/owning_kernel_context.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "unit/partition/test_provider.h"

namespace sy::testing {
namespace {

// ---- helpers ----------------------------------------------------------------

NodeId node_named(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].removed && g.nodes[i].name == name) return static_cast<NodeId>(i);
  ADD_FAILURE() << "no node named " << name;
  return kNoNode;
}

bool is_copy(const Node& n) { return is_copy_node(n); }

// Copy nodes in the order, as "<op>(<input name>)".
std::vector<std::string> copies_in_order(const Graph& g, const PartitionResult& r) {
  std::vector<std::string> out;
  for (NodeId id : r.order) {
    const Node& n = g.nodes[static_cast<size_t>(id)];
    if (is_copy(n)) out.push_back(n.op_type + "(" + g.values[static_cast<size_t>(n.inputs[0])].name + ")");
  }
  return out;
}

std::string partitions_string(const PartitionResult& r, std::span<ExecutionProvider* const> chain) {
  std::string s;
  for (const Partition& p : r.partitions) {
    if (!s.empty()) s += " | ";
    s += chain[static_cast<size_t>(p.provider)]->short_name() + ":" + std::to_string(p.nodes.size());
  }
  return s;
}

SessionOptions test_then_cpu(std::map<std::string, std::string> test_options = {}) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", std::move(test_options)}, {"cpu", {}}};
  o.fallback.node_fallthrough = FallbackAction::kAllow;
  return o;
}

std::unique_ptr<Session> make_session(const ModelBuilder& b, const SessionOptions& options) {
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return nullptr;
  return std::move(s).value();
}

// x -> Add(x, w) -> Relu -> Shape -> Mul(shape, k) -> y
ModelBuilder add_relu_shape_mul(std::vector<DimSpec> x_dims = {2, 3}) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, std::move(x_dims));
  b.initializer("w", make_tensor<float>({3}, {1.0f, -2.0f, 0.5f}));
  b.initializer("k", make_tensor<int64_t>({2}, {10, 100}));
  b.node("Add", {"x", "w"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"r"}, {}, "relu");
  b.node("Shape", {"r"}, {"s"}, {}, "shape");
  b.node("Mul", {"s", "k"}, {"y"}, {}, "mul");
  b.output("y", DataType::kInt64, {2});
  return b;
}

// ---- the test provider itself ------------------------------------------------------

// The checks that make the session tests meaningful: a test-provider
// kernel refuses host inputs, and refuses outputs not on its device.
TEST(TestProviderTest, KernelsRejectHostMemory) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"}, {}, "relu");
  b.node("Shape", {"y"}, {"s"}, {}, "shape");
  b.output("s", DataType::kInt64, {1});
  Graph g = load_resolved(b);
  TestProvider test({"Relu"});
  const NodeId ids[] = {node_named(g, "relu"), node_named(g, "shape")};
  std::vector<NodeSupport> answers = test.capability(g, ids);
  ASSERT_EQ(answers.size(), 2u);
  ASSERT_TRUE(answers[0].supported) << answers[0].reason;
  EXPECT_FALSE(answers[1].supported);
  EXPECT_EQ(answers[1].reason, "op Shape not supported by the test provider");
  EXPECT_EQ(test.kernels_created(), 0);  // answering creates nothing
  Result<CreatedKernel> created = test.create_kernel(g, ids[0], {});
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  EXPECT_EQ(test.kernels_created(), 1);
  const Kernel& kernel = *created->kernel;

  ThreadPool pool(1);
  const Node& relu = g.nodes[static_cast<size_t>(ids[0])];
  Tensor host = make_tensor<float>({2}, {-1, 1});
  const Tensor* host_inputs[] = {&host};
  OwningKernelContext host_ctx(relu, host_inputs, &pool);
  Status st = run_kernel_once(kernel, host_ctx);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a device copy is missing"), std::string::npos) << st.to_string();

  // On-device input, but the context hands out host memory for the output.
  Tensor dev = Tensor::allocate(DataType::kFloat, Shape{2}, test.allocator()).value();
  EXPECT_EQ(dev.device(), kSimulatedDevice);
  const Tensor* dev_inputs[] = {&dev};
  OwningKernelContext dev_ctx(relu, dev_inputs, &pool);
  st = run_kernel_once(kernel, dev_ctx);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("output 0 was allocated on cpu"), std::string::npos) << st.to_string();
  EXPECT_EQ(test.kernel_runs(), 1);

  // Copies check their direction.
  Tensor host_dst = Tensor::allocate(DataType::kFloat, Shape{2}).value();
  EXPECT_FALSE(test.copy_to_host(host, host_dst).ok());
  EXPECT_TRUE(test.copy_to_host(dev, host_dst).ok());
  EXPECT_FALSE(test.copy_from_host(dev, host_dst).ok());
  EXPECT_TRUE(test.copy_from_host(host, dev).ok());
  EXPECT_EQ(dev.data<float>()[0], -1.0f);
  EXPECT_EQ(test.copies_to_host(), 1);
  EXPECT_EQ(test.copies_from_host(), 1);
}

TEST(TestProviderTest, DeclinesConfiguredDtype) {
  Graph g = load_resolved(add_relu_shape_mul());
  TestProvider test({"Add", "Mul"}, DataType::kInt64);
  const NodeId ids[] = {node_named(g, "add"), node_named(g, "mul")};
  std::vector<NodeSupport> answers = test.capability(g, ids);
  EXPECT_TRUE(answers[0].supported) << answers[0].reason;
  EXPECT_FALSE(answers[1].supported);
  EXPECT_EQ(answers[1].reason, "int64 not supported by the test provider");
}

// ---- partition_graph on a Graph built by hand -----------------------------------

TEST(PartitionerTest, HandBuiltGraphFallsThroughAndGroups) {
  Graph g;
  g.opsets[""] = 17;
  const ValueId x = g.add_value("x", ValueType::tensor(DataType::kFloat, {Dim::known(2), Dim::known(3)}));
  g.values[static_cast<size_t>(x)].is_graph_input = true;
  g.inputs.push_back(x);
  const ValueId a = g.add_value("a");
  const ValueId s = g.add_value("s");
  const ValueId y = g.add_value("y");
  g.values[static_cast<size_t>(y)].is_graph_output = true;
  g.outputs.push_back(y);
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {x};
  relu.outputs = {a};
  g.add_node(relu);
  Node shape;
  shape.name = "shape";
  shape.op_type = "Shape";
  shape.inputs = {a};
  shape.outputs = {s};
  g.add_node(shape);
  Node mul;
  mul.name = "mul";
  mul.op_type = "Mul";
  mul.inputs = {s, s};
  mul.outputs = {y};
  g.add_node(mul);
  ASSERT_TRUE(resolve(g).ok());

  TestProvider test;
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();

  EXPECT_EQ(r->node_provider[static_cast<size_t>(node_named(g, "relu"))], 0);
  EXPECT_EQ(r->node_provider[static_cast<size_t>(node_named(g, "shape"))], 1);
  EXPECT_EQ(r->node_provider[static_cast<size_t>(node_named(g, "mul"))], 0);
  const auto& declines = r->declines[static_cast<size_t>(node_named(g, "shape"))];
  ASSERT_EQ(declines.size(), 1u);
  EXPECT_EQ(declines[0].provider, 0);
  EXPECT_EQ(declines[0].reason, "op Shape not supported by the test provider");
  EXPECT_TRUE(r->declines[static_cast<size_t>(node_named(g, "relu"))].empty());

  // x up; a down for Shape; s up once although Mul reads it twice; y down.
  EXPECT_EQ(copies_in_order(g, *r),
            (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyToHost(a)", "MemcpyFromHost(s)",
                                      "MemcpyToHost(y@sim:0)"}));
  EXPECT_EQ(r->num_copies, 4);
  EXPECT_EQ(r->num_constant_copies, 0);
  const Node& mul_node = g.nodes[static_cast<size_t>(node_named(g, "mul"))];
  EXPECT_EQ(mul_node.inputs[0], mul_node.inputs[1]);
  EXPECT_EQ(g.values[static_cast<size_t>(mul_node.inputs[0])].name, "s@sim:0");
  EXPECT_EQ(partitions_string(*r, chain), "test:3 | cpu:1 | test:3");

  // The output keeps its name, now on the host copy.
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].name, "y");
  EXPECT_TRUE(g.values[static_cast<size_t>(g.outputs[0])].is_graph_output);
  EXPECT_EQ(g.find_value("y"), g.outputs[0]);
  const NodeId producer = g.values[static_cast<size_t>(g.outputs[0])].producer;
  ASSERT_NE(producer, kNoNode);
  EXPECT_EQ(g.nodes[static_cast<size_t>(producer)].op_type, kCopyToHostOp);
  // Every node appears once in the order, producers first.
  EXPECT_EQ(r->order.size(), g.num_live_nodes());
}

// ---- constants released as soon as their readers prepacked them ------------------

// y = MatMul(x, w) [+ extra readers of w]: the graph after partitioning.
struct PartitionedModel {
  Model model;
  PartitionResult result;
  const Tensor* w() const { return model.graph->constant(model.graph->find_value("w")); }
};

PartitionedModel partition_model(const ModelBuilder& b, std::span<ExecutionProvider* const> chain) {
  PartitionedModel out;
  const std::string bytes = b.build();
  auto model = load_model_from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return out;
  out.model = std::move(model).value();
  EXPECT_TRUE(resolve(*out.model.graph).ok());
  auto r = partition_graph(*out.model.graph, chain);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (r.ok()) out.result = std::move(r).value();
  return out;
}

ModelBuilder matmul_with_constant_w() {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n", 2});
  b.initializer("w", make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  b.node("MatMul", {"x", "w"}, {"y"}, {}, "matmul");
  b.output("y", DataType::kFloat, {"n", 2});
  return b;
}

TEST(EarlyConstantReleaseTest, WeightReadOnlyByPrepackingKernelsIsDropped) {
  ModelBuilder b = matmul_with_constant_w();
  b.node("MatMul", {"y", "w"}, {"z"}, {}, "matmul2");
  b.output("z", DataType::kFloat, {"n", 2});
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&cpu};
  PartitionedModel p = partition_model(b, chain);
  ASSERT_NE(p.w(), nullptr);
  EXPECT_EQ(p.w()->raw_data(), nullptr) << "both readers prepacked w; its data should be gone";
  EXPECT_EQ(p.w()->shape(), Shape({2, 2}));  // kernels still read its shape
}

TEST(EarlyConstantReleaseTest, WeightAlsoReadUnpackedIsKept) {
  ModelBuilder b = matmul_with_constant_w();
  b.node("Add", {"y", "w"}, {"z"}, {}, "add");  // reads w's values at run time
  b.output("z", DataType::kFloat, {"n", 2});
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&cpu};
  PartitionedModel p = partition_model(b, chain);
  ASSERT_NE(p.w(), nullptr);
  EXPECT_EQ(to_vector<float>(*p.w()), (std::vector<float>{1, 2, 3, 4}));
}

TEST(EarlyConstantReleaseTest, WeightThatIsAGraphOutputIsKept) {
  ModelBuilder b = matmul_with_constant_w();
  b.output("w", DataType::kFloat, {2, 2});
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&cpu};
  PartitionedModel p = partition_model(b, chain);
  ASSERT_NE(p.w(), nullptr);
  EXPECT_EQ(to_vector<float>(*p.w()), (std::vector<float>{1, 2, 3, 4}));
}

TEST(EarlyConstantReleaseTest, WeightReadOnADeviceIsKeptForItsCopy) {
  ModelBuilder b = matmul_with_constant_w();
  b.node("MatMul", {"y", "w"}, {"z"}, {}, "matmul2");
  b.node("Relu", {"z"}, {"r"}, {}, "relu");
  b.output("r", DataType::kFloat, {"n", 2});
  TestProvider test({"Relu", "MatMul"});
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  PartitionedModel p = partition_model(b, chain);
  ASSERT_NE(p.w(), nullptr);
  EXPECT_EQ(to_vector<float>(*p.w()), (std::vector<float>{1, 2, 3, 4}));
}

TEST(EarlyConstantReleaseTest, SessionWithSharedPrepackedWeightComputesRightValues) {
  ModelBuilder b = matmul_with_constant_w();
  b.node("MatMul", {"y", "w"}, {"z"}, {}, "matmul2");
  b.output("z", DataType::kFloat, {"n", 2});
  auto s = make_session(b, SessionOptions{});
  ASSERT_NE(s, nullptr);
  auto out = s->run({{"x", make_tensor<float>({1, 2}, {1, 1})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // [1,1] w = [4,6]; [4,6] w = [4+18, 8+24]
  EXPECT_EQ(to_vector<float>((*out)[0]), (std::vector<float>{4, 6}));
  EXPECT_EQ(to_vector<float>((*out)[1]), (std::vector<float>{22, 32}));
}

// ---- through the loader ---------------------------------------------------------

TEST(PartitionerTest, AddReluShapeMulMakesThreePartitions) {
  Graph g = load_resolved(add_relu_shape_mul());
  TestProvider test;
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->partitions.size(), 3u) << partitions_string(*r, chain);
  EXPECT_EQ(partitions_string(*r, chain), "test:5 | cpu:1 | test:4");
  EXPECT_EQ(copies_in_order(g, *r),
            (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyFromHost(w)", "MemcpyToHost(r)",
                                      "MemcpyFromHost(s)", "MemcpyFromHost(k)", "MemcpyToHost(y@sim:0)"}));
  EXPECT_EQ(r->num_copies, 6);
  EXPECT_EQ(r->num_constant_copies, 2);  // w and k
}

TEST(PartitionerTest, DeclinedDtypeFallsThroughWithReason) {
  Graph g = load_resolved(add_relu_shape_mul());
  TestProvider test({"Add", "Mul", "Relu", "MatMul"}, DataType::kInt64);
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const NodeId mul = node_named(g, "mul");
  EXPECT_EQ(r->node_provider[static_cast<size_t>(mul)], 1);
  ASSERT_EQ(r->declines[static_cast<size_t>(mul)].size(), 1u);
  EXPECT_EQ(r->declines[static_cast<size_t>(mul)][0].reason, "int64 not supported by the test provider");
  EXPECT_EQ(partitions_string(*r, chain), "test:5 | cpu:2");
  // y is produced on the host: no copy back.
  EXPECT_EQ(copies_in_order(g, *r),
            (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyFromHost(w)", "MemcpyToHost(r)"}));
}

TEST(PartitionerTest, ValueReadByTwoDeviceNodesIsCopiedOnce) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {4});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Mul", {"x", "r"}, {"m"}, {}, "mul");
  b.node("Add", {"m", "x"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {4});
  Graph g = load_resolved(b);
  TestProvider test;
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(copies_in_order(g, *r), (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyToHost(y@sim:0)"}));
  const ValueId x_dev = g.nodes[static_cast<size_t>(node_named(g, "relu"))].inputs[0];
  EXPECT_EQ(g.nodes[static_cast<size_t>(node_named(g, "mul"))].inputs[0], x_dev);
  EXPECT_EQ(g.nodes[static_cast<size_t>(node_named(g, "add"))].inputs[1], x_dev);
  EXPECT_EQ(partitions_string(*r, chain), "test:5");
}

TEST(PartitionerTest, OutputAlsoReadOnHostIsCopiedOnceAndKeepsItsName) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {2, 2});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Shape", {"r"}, {"s"}, {}, "shape");
  b.output("r", DataType::kFloat, {2, 2});
  b.output("s", DataType::kInt64, {2});
  Graph g = load_resolved(b);
  TestProvider test;
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&test, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(copies_in_order(g, *r), (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyToHost(r@sim:0)"}));
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].name, "r");
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[1])].name, "s");
  // Shape reads the host copy, which is the graph output.
  EXPECT_EQ(g.nodes[static_cast<size_t>(node_named(g, "shape"))].inputs[0], g.outputs[0]);
}

TEST(PartitionerTest, DeviceToDeviceGoesThroughHost) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {3});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Add", {"r", "r"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {3});
  Graph g = load_resolved(b);
  TestProvider sim0({"Relu"}, DataType::kUndefined, 0);
  TestProvider sim1({"Add"}, DataType::kUndefined, 1);
  cpu::CpuProvider cpu;
  ExecutionProvider* chain[] = {&sim0, &sim1, &cpu};
  auto r = partition_graph(g, chain);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(copies_in_order(g, *r),
            (std::vector<std::string>{"MemcpyFromHost(x)", "MemcpyToHost(r)", "MemcpyFromHost(r@cpu)",
                                      "MemcpyToHost(y@sim:1)"}));
  const NodeId add = node_named(g, "add");
  EXPECT_EQ(r->node_provider[static_cast<size_t>(add)], 1);
  ASSERT_EQ(r->declines[static_cast<size_t>(add)].size(), 1u);
  EXPECT_EQ(r->declines[static_cast<size_t>(add)][0].provider, 0);
}

TEST(PartitionerTest, NoProviderCanRunANodeNamesNodeAndEveryReason) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Shape", {"r"}, {"s"}, {}, "the_shape");
  b.output("s", DataType::kInt64, {1});
  Graph g = load_resolved(b);
  TestProvider first({"Relu"});
  TestProvider second({"Add"}, DataType::kUndefined, 1);
  ExecutionProvider* chain[] = {&first, &second};
  auto r = partition_graph(g, chain);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotImplemented);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("node 'the_shape' (Shape)"), std::string::npos) << m;
  EXPECT_NE(m.find("test: op Shape not supported by the test provider; test1: op Shape not supported"),
            std::string::npos)
      << m;
}

// ---- through a Session -------------------------------------------------------

TEST(PartitionerSessionTest, AssignmentRecordsProviderAndReasons) {
  auto s = make_session(add_relu_shape_mul({"n", 3}), test_then_cpu());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->providers(), (std::vector<std::string>{"TestExecutionProvider", "CPUExecutionProvider"}));
  bool saw_shape = false;
  for (const NodeAssignment& a : s->assignment()) {
    if (a.node_name == "shape") {
      saw_shape = true;
      EXPECT_EQ(a.provider, "CPUExecutionProvider");
      ASSERT_EQ(a.declined.size(), 1u);
      EXPECT_EQ(a.declined[0].provider, "TestExecutionProvider");
      EXPECT_EQ(a.declined[0].reason, "op Shape not supported by the test provider");
    } else if (a.node_name == "add" || a.node_name == "relu" || a.node_name == "mul") {
      EXPECT_EQ(a.provider, "TestExecutionProvider") << a.node_name;
      EXPECT_TRUE(a.declined.empty()) << a.node_name;
    }
  }
  EXPECT_TRUE(saw_shape);
  const std::string report = s->assignment_report();
  EXPECT_NE(report.find("shape (Shape) -> CPUExecutionProvider"), std::string::npos) << report;
  EXPECT_NE(report.find("declined by TestExecutionProvider: op Shape not supported by the test provider"),
            std::string::npos)
      << report;
}

TEST(PartitionerSessionTest, RunsOnSimulatedDeviceAndMatchesCpu) {
  const ModelBuilder b = add_relu_shape_mul({"n", 3});
  auto sim = make_session(b, test_then_cpu());
  ASSERT_NE(sim, nullptr);
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  auto cpu = make_session(b, SessionOptions{});
  ASSERT_NE(cpu, nullptr);

  Tensor x = make_tensor<float>({4, 3}, {1, 2, 3, -1, -2, -3, 0, 0, 0, 5, 5, 5});
  auto ys = sim->run({{"x", x}});
  ASSERT_TRUE(ys.ok()) << ys.status().to_string();
  auto yc = cpu->run({{"x", x}});
  ASSERT_TRUE(yc.ok()) << yc.status().to_string();
  ASSERT_EQ(ys->size(), 1u);
  EXPECT_TRUE((*ys)[0].device().is_cpu());
  EXPECT_EQ(to_vector<int64_t>((*ys)[0]), (std::vector<int64_t>{40, 300}));
  expect_tensor_eq((*ys)[0], (*yc)[0]);
  EXPECT_EQ(tp->kernel_runs(), 3);  // Add, Relu, Mul
}

TEST(PartitionerSessionTest, ConstantCopiesHappenOnceAtCreation) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n", 2});
  b.initializer("w", make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  b.initializer("bias", make_tensor<float>({2}, {0.5f, -0.5f}));
  b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "bias"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {"n", 2});
  auto s = make_session(b, test_then_cpu());
  ASSERT_NE(s, nullptr);
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->copies_from_host(), 2);  // w and bias, uploaded once
  EXPECT_EQ(tp->copies_to_host(), 0);

  for (int run = 1; run <= 2; ++run) {
    Tensor x = make_tensor<float>({1, 2}, {1.0f, static_cast<float>(run)});
    auto y = s->run({{"x", x}});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    // [1, run] x [[1,2],[3,4]] + [0.5,-0.5]
    EXPECT_EQ(to_vector<float>((*y)[0]),
              (std::vector<float>{1.0f + 3.0f * run + 0.5f, 2.0f + 4.0f * run - 0.5f}));
    EXPECT_EQ(tp->copies_from_host(), 2 + run) << "run " << run;  // x only
    EXPECT_EQ(tp->copies_to_host(), run) << "run " << run;        // y only
  }
  EXPECT_EQ(tp->kernel_runs(), 4);
}

TEST(PartitionerSessionTest, EveryTestProviderNodeSawDeviceInputs) {
  // Shapes change between runs, so slots are re-reserved; the kernels'
  // device checks must still pass.
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n"});
  b.input("z", DataType::kFloat, {"n"});
  b.node("Add", {"x", "z"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"r"}, {}, "relu");
  b.node("Mul", {"r", "z"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {"n"});
  auto s = make_session(b, test_then_cpu());
  ASSERT_NE(s, nullptr);
  for (int64_t n : {3, 1, 7}) {
    std::vector<float> xv, zv, expected;
    for (int64_t i = 0; i < n; ++i) {
      xv.push_back(static_cast<float>(i) - 2.0f);
      zv.push_back(0.5f * static_cast<float>(i + 1));
      const float a = xv.back() + zv.back();
      expected.push_back((a > 0 ? a : 0.0f) * zv.back());
    }
    auto y = s->run({{"x", make_tensor<float>({n}, xv)}, {"z", make_tensor<float>({n}, zv)}});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    EXPECT_EQ(to_vector<float>((*y)[0]), expected) << "n=" << n;
  }
}

TEST(PartitionerSessionTest, DecliningEveryNodeLeavesAllOnCpu) {
  auto s = make_session(add_relu_shape_mul({"n", 3}), test_then_cpu({{"ops", "Conv"}}));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->providers(), (std::vector<std::string>{"CPUExecutionProvider"}));
  EXPECT_EQ(s->requested_providers(), (std::vector<std::string>{"TestExecutionProvider", "CPUExecutionProvider"}));
  for (const NodeAssignment& a : s->assignment()) EXPECT_EQ(a.provider, "CPUExecutionProvider") << a.node_name;
  auto y = s->run({{"x", make_tensor<float>({1, 3}, {1, 1, 1})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(to_vector<int64_t>((*y)[0]), (std::vector<int64_t>{10, 300}));
}

// x -> Conv -> Relu -> Mul(k) -> y: the optimizer makes the first two one
// com.switchyard FusedConv.
ModelBuilder conv_relu_mul() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 2, 4, 4});
  b.initializer("w", make_tensor<float>({3, 2, 1, 1}, {1.0f, -1.0f, 0.5f, 0.5f, -2.0f, 1.0f}));
  b.initializer("b", make_tensor<float>({3}, {0.25f, -0.5f, 0.0f}));
  b.initializer("k", make_tensor<float>({1}, {3.0f}));
  b.node("Conv", {"x", "w", "b"}, {"c"}, {}, "conv");
  b.node("Relu", {"c"}, {"r"}, {}, "relu");
  b.node("Mul", {"r", "k"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {1, 3, 4, 4});
  return b;
}

// The ops of a session's assignment, in execution order, as "provider:op"
// with the provider's short name, copies left out.
std::vector<std::string> placed_ops(const Session& s) {
  std::vector<std::string> ops;
  for (const NodeAssignment& a : s.assignment()) {
    if (a.op_type.rfind("Memcpy", 0) == 0) continue;
    ops.push_back((a.provider == "CPUExecutionProvider" ? "cpu:" : "test:") + a.op_type);
  }
  return ops;
}

const Tensor& conv_relu_mul_input() {
  static const Tensor x = make_tensor<float>({1, 2, 4, 4}, std::vector<float>{-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2,
                                                                            2.5, 3, -3, 4, -4, 5, -5, 1, 2, 3, 4,
                                                                            -1, -2, -3, -4, 0.5, 0.25, 0, -0.25, 6,
                                                                            -6, 7, -7});
  return x;
}

// The unfused model on the CPU alone: the answer every placement must give.
Tensor conv_relu_mul_reference() {
  SessionOptions o;
  o.optimization_level = OptimizationLevel::kDisableAll;
  o.intra_op_threads = 1;
  auto s = make_session(conv_relu_mul(), o);
  EXPECT_NE(s, nullptr);
  auto y = s->run({{"x", conv_relu_mul_input()}});
  EXPECT_TRUE(y.ok()) << y.status().to_string();
  return (*y)[0];
}

TEST(PartitionerSessionTest, FusionsRunAfterPlacementForTheProvidersThatAskForThem) {
  const Tensor want = conv_relu_mul_reference();
  struct Case {
    const char* test_ops;  // what the test provider runs
    std::vector<std::string> placed;
  };
  const Case cases[] = {
      // It knows no FusedConv, so it asks for no Conv fusion: its Conv and
      // Relu stay two nodes on it, and nothing falls through to the CPU.
      {"Conv,Relu,Mul", {"test:Conv", "test:Relu", "test:Mul"}},
      // It runs FusedConv and asks for the Conv fusions (as CUDA does).
      {"Conv,Relu,Mul,FusedConv", {"test:FusedConv", "test:Mul"}},
      // Conv on it, Relu on the CPU: a fusion never spans two providers.
      {"Conv,Mul,FusedConv", {"test:Conv", "cpu:Relu", "test:Mul"}},
      // Nothing on it: the CPU fuses its own nodes.
      {"Add", {"cpu:FusedConv", "cpu:Mul"}},
  };
  for (const Case& c : cases) {
    SessionOptions o = test_then_cpu({{"ops", c.test_ops}});
    auto s = make_session(conv_relu_mul(), o);
    ASSERT_NE(s, nullptr) << c.test_ops;
    EXPECT_EQ(placed_ops(*s), c.placed) << c.test_ops << "\n" << s->assignment_report();
    auto y = s->run({{"x", conv_relu_mul_input()}});
    ASSERT_TRUE(y.ok()) << c.test_ops << ": " << y.status().to_string();
    expect_tensor_eq((*y)[0], want);
  }
}

TEST(PartitionerSessionTest, AKernelRefusedAtCreationMovesToTheNextProvider) {
  // The test provider says it can run Relu, then fails to create its
  // kernel: the Relu goes to the CPU with that reason; the Mul stays.
  ModelBuilder b;
  b.input("x", DataType::kFloat, {4});
  b.initializer("k", make_tensor<float>({1}, {2.0f}));
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Mul", {"r", "k"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {4});
  SessionOptions o = test_then_cpu({{"ops", "Relu,Mul"}, {"refuse_create", "Relu"}});
  o.fallback.node_fallthrough = FallbackAction::kAllow;
  auto s = make_session(b, o);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(placed_ops(*s), (std::vector<std::string>{"cpu:Relu", "test:Mul"})) << s->assignment_report();
  for (const NodeAssignment& a : s->assignment()) {
    if (a.op_type != "Relu") continue;
    ASSERT_EQ(a.declined.size(), 1u);
    EXPECT_EQ(a.declined[0].provider, "TestExecutionProvider");
    EXPECT_EQ(a.declined[0].reason, "the test provider refuses to create a kernel for Relu");
  }
  auto y = s->run({{"x", make_tensor<float>({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq((*y)[0], make_tensor<float>({4}, {0, 4, 0, 8}));

  // Under the strict policy that is a fall-through like any other.
  o.fallback = FallbackPolicy::strict();
  const std::string bytes = b.build();
  auto strict = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("fell through"), std::string::npos) << strict.status().message();
}

TEST(PartitionerSessionTest, KernelsAreCreatedOnlyForTheNodesKept) {
  // Relu -> Sigmoid -> Relu: the test provider could run both Relus, but
  // min_partition_size 2 hands each single-node run to the CPU. It is
  // asked, and creates no kernel for either.
  ModelBuilder b;
  b.input("x", DataType::kFloat, {4});
  b.node("Relu", {"x"}, {"a"}, {}, "relu1");
  b.node("Sigmoid", {"a"}, {"s"}, {}, "sigmoid");
  b.node("Relu", {"s"}, {"y"}, {}, "relu2");
  b.output("y", DataType::kFloat, {4});
  SessionOptions o = test_then_cpu({{"ops", "Relu"}});
  o.min_partition_size = 2;
  auto s = make_session(b, o);
  ASSERT_NE(s, nullptr);
  TestProvider* test = TestProvider::last_created();
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(test->kernels_created(), 0);
  for (const NodeAssignment& a : s->assignment()) {
    EXPECT_EQ(a.provider, "CPUExecutionProvider") << a.node_name;
    if (a.op_type != "Relu") continue;
    ASSERT_EQ(a.declined.size(), 1u) << a.node_name;
    EXPECT_EQ(a.declined[0].reason, "its partition would have 1 node(s), fewer than min_partition_size 2");
  }
}

TEST(PartitionerSessionTest, TwoSimulatedDevicesRunThroughHostCopies) {
  register_test_provider();
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n"});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Add", {"r", "x"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {"n"});
  SessionOptions o;
  o.providers = {{"test", {{"ops", "Relu"}}}, {"test1", {{"ops", "Add"}}}};
  o.fallback.node_fallthrough = FallbackAction::kAllow;
  auto s = make_session(b, o);
  ASSERT_NE(s, nullptr);
  TestProvider* second = TestProvider::last_created();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->name(), "TestExecutionProvider1");
  EXPECT_EQ(s->providers(), (std::vector<std::string>{"TestExecutionProvider", "TestExecutionProvider1"}));
  auto y = s->run({{"x", make_tensor<float>({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(to_vector<float>((*y)[0]), (std::vector<float>{-1, 4, -3, 8}));
  EXPECT_EQ(second->kernel_runs(), 1);
  EXPECT_EQ(second->copies_from_host(), 2);  // r (via the host) and x
  EXPECT_EQ(second->copies_to_host(), 1);    // y
}

TEST(PartitionerSessionTest, BadTestProviderOptionIsAnError) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {{"colour", "blue"}}}};
  const std::string bytes = add_relu_shape_mul().build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unknown option 'colour'"), std::string::npos) << s.status().to_string();
}

TEST(PartitionerSessionTest, StrictPolicyAcceptsAFullClaim) {
  // CPU is appended to the chain, but nothing falls through to it.
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n"});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Mul", {"r", "x"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {"n"});
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {}}};
  o.fallback = FallbackPolicy::strict();
  auto s = make_session(b, o);
  ASSERT_NE(s, nullptr);
  auto y = s->run({{"x", make_tensor<float>({3}, {-2, 3, 0.5f})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(to_vector<float>((*y)[0]), (std::vector<float>{0, 9, 0.25f}));
}

TEST(PartitionerSessionTest, DeviceOutputAlsoReadOnHostRuns) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n", 2});
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Shape", {"r"}, {"s"}, {}, "shape");
  b.node("Neg", {"r"}, {"neg"}, {}, "neg");
  b.output("r", DataType::kFloat, {"n", 2});
  b.output("s", DataType::kInt64, {2});
  b.output("neg", DataType::kFloat, {"n", 2});
  auto s = make_session(b, test_then_cpu());
  ASSERT_NE(s, nullptr);
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  auto y = s->run({{"x", make_tensor<float>({2, 2}, {-1, 2, 3, -4})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y->size(), 3u);
  EXPECT_EQ(to_vector<float>((*y)[0]), (std::vector<float>{0, 2, 3, 0}));
  EXPECT_EQ(to_vector<int64_t>((*y)[1]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(to_vector<float>((*y)[2]), (std::vector<float>{0, -2, -3, 0}));
  EXPECT_EQ(tp->copies_to_host(), 1);  // r once, for the output and both host readers
}

TEST(PartitionerSessionTest, StrictPolicyRejectsFallThrough) {
  SessionOptions o = test_then_cpu();
  o.fallback = FallbackPolicy::strict();
  const std::string bytes = add_relu_shape_mul({"n", 3}).build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("TestExecutionProvider -> CPUExecutionProvider: Shape"), std::string::npos)
      << s.status().to_string();
}

// x -> Relu -> Add(c) -> Sigmoid -> Mul(d) -> y: with the test provider
// running Relu, Add and Mul, two partitions of it around the CPU's Sigmoid.
ModelBuilder relu_add_sigmoid_mul(const std::string& relu_name = "relu") {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.initializer("c", make_tensor<float>({3}, {0.5f, -1.0f, 2.0f}));
  b.initializer("d", make_tensor<float>({1}, {3.0f}));
  b.node("Relu", {"x"}, {"r"}, {}, relu_name);
  b.node("Add", {"r", "c"}, {"a"}, {}, "add");
  b.node("Sigmoid", {"a"}, {"s"}, {}, "sigmoid");
  b.node("Mul", {"s", "d"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {2, 3});
  return b;
}

TEST(PartitionerSessionTest, AProviderThatCompilesGetsWholePartitions) {
  const Tensor x = make_tensor<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  SessionOptions cpu_options;
  cpu_options.intra_op_threads = 1;
  auto cpu = make_session(relu_add_sigmoid_mul(), cpu_options);
  ASSERT_NE(cpu, nullptr);
  auto want = cpu->run({{"x", x}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  auto s = make_session(relu_add_sigmoid_mul(), test_then_cpu({{"ops", "Relu,Add,Mul"}, {"compile", "1"}}));
  ASSERT_NE(s, nullptr);
  TestProvider* test = TestProvider::last_created();
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(test->partitions_compiled(), 2);  // {Relu, Add} and {Mul}
  EXPECT_EQ(test->kernels_created(), 0);      // no kernel per node
  auto y = s->run({{"x", x}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq((*y)[0], (*want)[0]);
  EXPECT_EQ(test->kernel_runs(), 3);  // the three nodes, inside two kernels
  // The report still lists the model's nodes, each on its provider.
  EXPECT_EQ(placed_ops(*s), (std::vector<std::string>{"test:Relu", "test:Add", "cpu:Sigmoid", "test:Mul"}))
      << s->assignment_report();
  EXPECT_EQ(s->placement().nodes_per_provider,
            (std::map<std::string, int>{{"CPUExecutionProvider", 1}, {"TestExecutionProvider", 3}}));

  // Cache keys: one per partition, the same for the same model in another
  // session, another for another model.
  const std::vector<std::string> keys = test->cache_keys();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_NE(keys[0], keys[1]);
  auto again = make_session(relu_add_sigmoid_mul(), test_then_cpu({{"ops", "Relu,Add,Mul"}, {"compile", "1"}}));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(TestProvider::last_created()->cache_keys(), keys);
  auto other = make_session(relu_add_sigmoid_mul("relu_renamed"),
                            test_then_cpu({{"ops", "Relu,Add,Mul"}, {"compile", "1"}}));
  ASSERT_NE(other, nullptr);
  EXPECT_NE(TestProvider::last_created()->cache_keys()[0], keys[0]);
}

}  // namespace
}  // namespace sy::testing
