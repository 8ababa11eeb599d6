// Loads the out-of-tree example plugin (examples/provider_plugin, built by
// tests/plugin/out_of_tree_plugin.sh against the installed SDK only) into
// a session and checks where each node of a small model runs, why the
// plugin declines the ones it does, and the outputs against values worked
// out here. Exits 0 and prints "example_plugin_check: passed" only when
// all of it holds.
//
//   example_plugin_check PLUGIN_DIR
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "providers/plugin_loader.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"

namespace sy {
namespace {

constexpr const char* kProvider = "ExampleExecutionProvider";
int failures = 0;

template <typename T>
Tensor tensor(const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(DataTypeOf<T>::value, shape).value();
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "example_plugin_check: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// z = (Relu(x) + y) * x and the last three nodes on the plugin; b = z + 0.5
// broadcasts, which the plugin declines when making its kernel; m =
// Relu(n) on int32, which its table declines. The rows are known at run
// time only: the plugin's Add and Mul prepare for each new count.
std::string model() {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"rows", 3});
  b.input("y", DataType::kFloat, {"rows", 3});
  b.input("n", DataType::kInt32, {4});
  b.initializer("half", tensor<float>({1}, {0.5f}));
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.node("Add", {"r", "y"}, {"s"}, {}, "add");
  b.node("Mul", {"s", "x"}, {"z"}, {}, "mul");
  b.node("Add", {"z", "half"}, {"b"}, {}, "add_broadcast");
  b.node("Relu", {"n"}, {"m"}, {}, "relu_int32");
  b.output("z", DataType::kFloat, {"rows", 3});
  b.output("b", DataType::kFloat, {"rows", 3});
  b.output("m", DataType::kInt32, {4});
  return b.build();
}

const NodeAssignment* find(const std::vector<NodeAssignment>& all, const std::string& node) {
  for (const NodeAssignment& a : all)
    if (a.node_name == node) return &a;
  return nullptr;
}

std::string reason_of(const NodeAssignment* a) {
  if (a == nullptr) return "(no such node)";
  for (const ProviderDecline& d : a->declined)
    if (d.provider == kProvider) return d.reason;
  return "(not declined by " + std::string(kProvider) + ")";
}

int run(const std::string& plugin_dir) {
  setenv("SWITCHYARD_PROVIDER_PATH", plugin_dir.c_str(), 1);
  register_plugin_provider({kProvider, "example", true}, "libswitchyard_example_plugin.so");

  SessionOptions options;
  options.providers = {{"example", {}}, {"cpu", {}}};
  const std::string bytes = model();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  if (!session.ok()) {
    std::fprintf(stderr, "example_plugin_check: FAILED: session: %s\n", session.status().to_string().c_str());
    return 1;
  }

  const std::vector<NodeAssignment>& assignment = (*session)->assignment();
  for (const char* node : {"relu", "add", "mul"}) {
    const NodeAssignment* a = find(assignment, node);
    check(a != nullptr && a->provider == kProvider,
          std::string(node) + " runs on " + (a ? a->provider : "nothing") + ", not on " + kProvider);
  }
  for (const char* node : {"add_broadcast", "relu_int32"}) {
    const NodeAssignment* a = find(assignment, node);
    check(a != nullptr && a->provider == "CPUExecutionProvider", std::string(node) + " does not fall to the CPU");
  }
  // The plugin's reasons: its kernel's, and the SDK lookup's (the CPU
  // provider's words).
  const std::string broadcast = reason_of(find(assignment, "add_broadcast"));
  check(broadcast == "the example plugin takes two inputs of one shape (no broadcasting)",
        "add_broadcast declined with '" + broadcast + "'");
  const std::string int32 = reason_of(find(assignment, "relu_int32"));
  check(int32 == "int32 not supported for input 0 (supports float)", "relu_int32 declined with '" + int32 + "'");

  // Rows 2, 2, 5, 2: the second run reuses the first's prepared state,
  // the third needs a new one (a stale count would leave rows unwritten),
  // the fourth another.
  for (int64_t rows : {2, 2, 5, 2}) {
    std::vector<float> x(static_cast<size_t>(rows * 3)), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(i % 2 == 0 ? -static_cast<int>(i) - 1 : static_cast<int>(i) + 1);
      y[i] = static_cast<float>(10 * (i + 1) + rows);
    }
    auto out = (*session)->run({{"x", tensor<float>({rows, 3}, x)},
                                {"y", tensor<float>({rows, 3}, y)},
                                {"n", tensor<int32_t>({4}, {-2, -1, 0, 7})}});
    if (!out.ok()) {
      std::fprintf(stderr, "example_plugin_check: FAILED: run of %lld rows: %s\n", static_cast<long long>(rows),
                   out.status().to_string().c_str());
      return 1;
    }
    const Tensor& z = (*out)[0];
    const Tensor& b = (*out)[1];
    const Tensor& m = (*out)[2];
    check(z.shape() == Shape{rows, 3} && b.shape() == Shape{rows, 3} && m.shape() == Shape{4}, "output shapes");
    for (size_t i = 0; i < x.size() && failures == 0; ++i) {
      const float want = ((x[i] > 0 ? x[i] : 0) + y[i]) * x[i];  // exact in float for these values
      check(z.data<float>()[i] == want, std::to_string(rows) + " rows: z[" + std::to_string(i) + "] = " +
                                            std::to_string(z.data<float>()[i]) + ", want " + std::to_string(want));
      check(b.data<float>()[i] == want + 0.5f,
            std::to_string(rows) + " rows: b[" + std::to_string(i) + "] = " + std::to_string(b.data<float>()[i]));
    }
    const std::vector<int32_t> want_m = {0, 0, 0, 7};
    for (size_t i = 0; i < want_m.size(); ++i) check(m.data<int32_t>()[i] == want_m[i], "m[" + std::to_string(i) + "]");
  }

  if (failures > 0) return 1;
  std::printf("example_plugin_check: passed (relu, add, mul on %s; add_broadcast and relu_int32 on the CPU)\n",
              kProvider);
  return 0;
}

}  // namespace
}  // namespace sy

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: example_plugin_check PLUGIN_DIR\n");
    return 2;
  }
  return sy::run(argv[1]);
}
