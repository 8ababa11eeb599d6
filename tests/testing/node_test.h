// NodeTest: builds a one-node graph, resolves it (version, type and shape
// inference) and runs it through the CPU kernel registry. Kernel tests use
// it to compare against hand-computed or numpy-computed values.
//
//   auto out = NodeTest("Add", 14)
//                  .input(make_tensor<float>({2}, {1, 2}))
//                  .input(make_tensor<float>({2}, {3, 4}))
//                  .run();
//   ASSERT_TRUE(out.ok()) << out.status().to_string();
//   expect_near(out->at(0), make_tensor<float>({2}, {4, 6}));
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/graph.h"
#include "switchyard/tensor.h"

namespace sy::testing {

template <typename T>
Tensor make_tensor(const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(DataTypeOf<T>::value, shape).value();
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.num_elements()) << "make_tensor: wrong value count";
  T* d = t.data<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < shape.num_elements(); ++i) d[i] = values[i];
  return t;
}

// bool needs its own because std::vector<bool> is packed.
Tensor make_bool_tensor(const Shape& shape, const std::vector<int>& values);

template <typename T>
std::vector<T> to_vector(const Tensor& t) {
  const T* d = t.data<T>();
  return std::vector<T>(d, d + t.num_elements());
}

class NodeTest {
 public:
  NodeTest(std::string op_type, int opset, std::string domain = "");

  // A runtime input (a graph input with this tensor's type and shape).
  NodeTest& input(Tensor t);
  // A constant input (an initializer), which kernels may prepack.
  NodeTest& constant_input(Tensor t);
  // An omitted optional input.
  NodeTest& missing_input();
  // Graph inputs declared with unknown dims, so only run-time shapes count.
  NodeTest& dynamic_shapes();

  NodeTest& attr(const std::string& name, int64_t v);
  NodeTest& attr(const std::string& name, int v) { return attr(name, static_cast<int64_t>(v)); }
  NodeTest& attr(const std::string& name, float v);
  NodeTest& attr(const std::string& name, const std::string& v);
  NodeTest& attr(const std::string& name, const char* v) { return attr(name, std::string(v)); }
  NodeTest& attr(const std::string& name, std::vector<int64_t> v);
  NodeTest& attr(const std::string& name, std::vector<float> v);
  NodeTest& attr(const std::string& name, std::vector<std::string> v);
  NodeTest& attr(const std::string& name, Tensor v);
  // A TYPE_PROTO attribute, in the spelling the loader keeps ("seq(tensor(int64))").
  NodeTest& type_attr(const std::string& name, const std::string& type);

  // Number of outputs (default 1).
  NodeTest& outputs(int n);
  // Threads in the pool the kernel gets (default 1).
  NodeTest& threads(int n);

  // Resolves, creates the CPU kernel, runs it; the outputs in order.
  Result<std::vector<Tensor>> run();

  // The graph after resolve(), to check inferred output types.
  const Graph& graph() const { return graph_; }

 private:
  Graph graph_;
  Node node_;
  std::vector<Tensor> feeds_;  // runtime inputs, in node input order
  std::vector<int> feed_slot_;
  bool dynamic_ = false;
  int num_outputs_ = 1;
  int threads_ = 1;
};

// Element-wise comparison with rtol/atol (NaN equals NaN); exact for ints.
void expect_tensor_near(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-6);
void expect_tensor_eq(const Tensor& actual, const Tensor& expected);

class ModelBuilder;
// The model's graph, loaded and resolved (ops bound to their schemas) as a
// session would before optimizing; a failure is a test failure and gives an
// empty graph.
Graph load_resolved(const ModelBuilder& b);

}  // namespace sy::testing
