// The runtime's edges under hostile input: thread counts, IO binding
// buffers, allocation failures, exceptions at the API boundary, bool bytes
// and external data that changes under a live session. Each case must end
// in an error that says what and where, never a crash or a silent overrun.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "switchyard/session.h"
#include "testing/child_process.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "unit/model/model_test_util.h"

namespace sy {
namespace {

using testing::ModelBuilder;

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::unique_ptr<Session> create_or_die(const std::string& bytes, const SessionOptions& options = {}) {
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::string relu_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.node("Relu", {"x"}, {"y"}, {}, "relu1");
  b.output("y", DataType::kFloat, {2, 3});
  return b.build();
}

// ---- thread counts ------------------------------------------------------------

Status create_with_threads(int intra, int inter) {
  SessionOptions o;
  o.intra_op_threads = intra;
  o.inter_op_threads = inter;
  const std::string bytes = relu_model();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  return s.ok() ? ok_status() : s.status();
}

TEST(RuntimeEdges, ThreadCountsAreBoundedBeforeAnythingStarts) {
  const int hw = ThreadPool::hardware_threads();
  const int limit = std::min(1024, std::max(64, 4 * hw));
  const auto start = std::chrono::steady_clock::now();
  const Status huge = create_with_threads(100000, 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("SessionOptions.intra_op_threads is 100000, more than the limit of " +
                                std::to_string(limit)),
            std::string::npos)
      << huge.message();
  EXPECT_LT(seconds, 1.0);  // refused, not attempted

  const Status negative = create_with_threads(-3, 1);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.message().find("SessionOptions.intra_op_threads is -3; it must be >= 0"), std::string::npos)
      << negative.message();

  const Status inter = create_with_threads(1, limit + 1);
  ASSERT_FALSE(inter.ok());
  EXPECT_NE(inter.message().find("SessionOptions.inter_op_threads is " + std::to_string(limit + 1)), std::string::npos)
      << inter.message();

  // The limit itself is allowed.
  EXPECT_TRUE(create_with_threads(2, 1).ok());
}

// Thread creation is made to fail with an address-space cap: every thread
// needs a stack mapping, and a cap of 48 MiB over what the test maps
// already fits only a few (as root, RLIMIT_NPROC is not enforced).
TEST(RuntimeEdges, RefusedThreadIsAnErrorWithWorkersJoined) {
  auto outcome = testing::run_in_child(
      [] {
        auto pool = ThreadPool::create(60);
        return pool.ok() ? std::string("created") : pool.status().to_string();
      },
      /*timeout_seconds=*/20, /*extra_address_space=*/48 * kMiB);
  ASSERT_TRUE(outcome.finished) << outcome.why;
  EXPECT_NE(outcome.output.find("ResourceExhausted: the system refused a thread after "), std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find("of the 59 worker threads asked for (intra-op threads 60)"), std::string::npos)
      << outcome.output;

  // Through a session: the error, not std::terminate.
  auto session = testing::run_in_child(
      [] {
        const Status st = create_with_threads(60, 1);
        return st.ok() ? std::string("created") : st.to_string();
      },
      20, 48 * kMiB);
  ASSERT_TRUE(session.finished) << session.why;
  EXPECT_NE(session.output.find("ResourceExhausted: starting the session's thread pool: the system refused a thread"),
            std::string::npos)
      << session.output;
}

TEST(RuntimeEdges, ThreadPoolCreateRunsWork) {
  auto pool = ThreadPool::create(3);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  EXPECT_EQ((*pool)->num_threads(), 3);
  std::vector<int> hits(1000, 0);
  (*pool)->parallel_for(1000, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  });
  for (int h : hits) ASSERT_EQ(h, 1);
}

// ---- IO binding ---------------------------------------------------------------

TEST(RuntimeEdges, BindingRefusesBadBuffersBeforeAnyRead) {
  IoBinding binding;
  const Status null = binding.bind_input("x", DataType::kFloat, Shape{2, 3}, nullptr, 24);
  ASSERT_FALSE(null.ok());
  EXPECT_EQ(null.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(null.message().find("input 'x': the data pointer is null, but float[2,3] needs 24 bytes"),
            std::string::npos)
      << null.message();

  float small[5] = {};
  const Status short_buffer = binding.bind_input("x", DataType::kFloat, Shape{2, 3}, small, sizeof small);
  ASSERT_FALSE(short_buffer.ok());
  EXPECT_NE(short_buffer.message().find("input 'x': the buffer has 20 bytes, but float[2,3] needs 24"),
            std::string::npos)
      << short_buffer.message();

  const Status negative = binding.bind_input("x", DataType::kFloat, Shape{2, -3}, small, sizeof small);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.message().find("input 'x': shape [2,-3] has a negative dimension -3"), std::string::npos)
      << negative.message();

  const int64_t big = int64_t{1} << 40;
  const Status overflow = binding.bind_input("x", DataType::kFloat, Shape{big, big}, small, sizeof small);
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.message().find("input 'x': shape"), std::string::npos) << overflow.message();

  const Status null_view = binding.bind_input("x", Tensor::view(DataType::kFloat, Shape{2, 3}, nullptr));
  ASSERT_FALSE(null_view.ok());
  EXPECT_NE(null_view.message().find("input 'x': the tensor bound for float[2,3] has a null data pointer"),
            std::string::npos)
      << null_view.message();

  const Status out_short = binding.bind_output("y", DataType::kFloat, Shape{2, 3}, small, sizeof small);
  ASSERT_FALSE(out_short.ok());
  EXPECT_NE(out_short.message().find("output 'y': the buffer has 20 bytes, but float[2,3] needs 24"),
            std::string::npos)
      << out_short.message();

  std::string strings[6];
  const Status out_strings = binding.bind_output("y", Tensor::view(DataType::kString, Shape{2, 3}, strings));
  ASSERT_FALSE(out_strings.ok());
  EXPECT_NE(out_strings.message().find("string outputs cannot be written into a bound tensor"), std::string::npos)
      << out_strings.message();
  // Nothing refused was bound.
  EXPECT_TRUE(binding.outputs().empty());
}

TEST(RuntimeEdges, BindingWritesIntoCheckedBuffers) {
  auto s = create_or_die(relu_model());
  ASSERT_NE(s, nullptr);
  const float x[6] = {-1.5f, 2.0f, -0.0f, 4.25f, -5.0f, 6.0f};
  float y[6];
  std::fill(std::begin(y), std::end(y), 99.0f);
  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", DataType::kFloat, Shape{2, 3}, const_cast<float*>(x), sizeof x).ok());
  ASSERT_TRUE(binding.bind_output("y", DataType::kFloat, Shape{2, 3}, y, sizeof y).ok());
  const Status st = s->run_with_binding(binding);
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
  EXPECT_EQ(binding.outputs()[0].raw_data(), static_cast<void*>(y));
}

TEST(RuntimeEdges, BindingWithWrongTypeOrShapeTouchesNoBuffer) {
  auto s = create_or_die(relu_model());
  ASSERT_NE(s, nullptr);
  int32_t x_int[6] = {1, 2, 3, 4, 5, 6};
  float y[6];
  std::fill(std::begin(y), std::end(y), 99.0f);

  IoBinding wrong_input;
  ASSERT_TRUE(wrong_input.bind_input("x", DataType::kInt32, Shape{2, 3}, x_int, sizeof x_int).ok());
  ASSERT_TRUE(wrong_input.bind_output("y", DataType::kFloat, Shape{2, 3}, y, sizeof y).ok());
  const Status input_type = s->run_with_binding(wrong_input);
  ASSERT_FALSE(input_type.ok());
  EXPECT_NE(input_type.message().find("input 'x': expected tensor(float), got tensor(int32)"), std::string::npos)
      << input_type.message();

  const float x[6] = {1, 2, 3, 4, 5, 6};
  IoBinding wrong_output;
  ASSERT_TRUE(wrong_output.bind_input("x", DataType::kFloat, Shape{2, 3}, const_cast<float*>(x), sizeof x).ok());
  ASSERT_TRUE(wrong_output.bind_output("y", DataType::kFloat, Shape{6}, y, sizeof y).ok());
  const Status output_shape = s->run_with_binding(wrong_output);
  ASSERT_FALSE(output_shape.ok());
  EXPECT_NE(output_shape.message().find("output 'y' is declared tensor(float) [2,3] but the tensor bound for it is "
                                        "float[6]"),
            std::string::npos)
      << output_shape.message();

  int32_t y_int[6] = {7, 7, 7, 7, 7, 7};
  ASSERT_TRUE(wrong_output.bind_output("y", DataType::kInt32, Shape{2, 3}, y_int, sizeof y_int).ok());
  EXPECT_FALSE(s->run_with_binding(wrong_output).ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(y[i], 99.0f) << i;
    EXPECT_EQ(y_int[i], 7) << i;
  }
}

// ---- allocation failures ----------------------------------------------------------

// ConstantOfShape to 2^30 floats (4 GiB) under a 1 GiB address-space cap:
// the error names the node, its output, the shape and the bytes, whether
// the value is a graph output (allocated on its own) or an intermediate
// (a planned slot).
TEST(RuntimeEdges, AllocationFailureNamesNodeOutputAndShape) {
  for (const bool intermediate : {false, true}) {
    ModelBuilder b(17);
    b.input("shape", DataType::kInt64, {1});
    b.node("ConstantOfShape", {"shape"}, {"big"}, {}, "fill");
    if (intermediate) {
      b.node("Relu", {"big"}, {"y"}, {}, "relu");
      b.output("y", DataType::kFloat, {"n"});
    } else {
      b.output("big", DataType::kFloat, {"n"});
    }
    const std::string bytes = b.build();
    auto outcome = testing::run_in_child(
        [&] {
          SessionOptions o;
          o.intra_op_threads = 1;
          auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
          if (!s.ok()) return "create: " + s.status().to_string();
          const Tensor shape = testing::make_tensor<int64_t>({1}, {int64_t{1} << 30});
          auto out = (*s)->run({{"shape", shape}});
          return out.ok() ? std::string("ran") : out.status().to_string();
        },
        20, 1024 * kMiB);
    ASSERT_TRUE(outcome.finished) << outcome.why;
    EXPECT_NE(outcome.output.find("OutOfMemory: node 'fill' (ConstantOfShape) output 'big' float[1073741824]: "
                                  "failed to allocate "),
              std::string::npos)
        << outcome.output;
    EXPECT_NE(outcome.output.find(" bytes on cpu"), std::string::npos) << outcome.output;
    EXPECT_NE(outcome.output.find("42949"), std::string::npos) << outcome.output;  // 4294967296, maybe rounded up
  }
}

// A graph of many nodes created under a range of address-space caps: at
// each, creation must return (a session or a Status), never abort on a
// std::bad_alloc thrown from a std::vector or the protobuf parser. Each
// creation runs in a fresh process (tests/tools/create_under_cap.cc): a
// child forked from this binary inherits the malloc arenas of the tests
// before it, which grow without counting against the cap.
TEST(RuntimeEdges, OutOfMemoryDuringCreationIsAStatus) {
  // Caps of a few MiB leave AddressSanitizer's own allocator no room, and
  // its runtime aborts (a property of the sanitizer, not of the code under
  // test). The other capped tests here leave it enough.
  if (testing::kAddressSanitizer) GTEST_SKIP() << "address-space caps of 2-128 MiB starve ASan's own allocator";
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n", 8});
  std::string prev = "x";
  for (int i = 0; i < 20000; ++i) {
    const std::string next = "v" + std::to_string(i);
    b.node(i % 2 ? "Relu" : "Neg", {prev}, {next});
    prev = next;
  }
  b.output(prev, DataType::kFloat, {"n", 8});
  testing::TempDir dir;
  const std::string model = (dir.path() / "chain.onnx").string();
  ASSERT_TRUE(b.save(model).ok());
  int refused = 0, caught_at_boundary = 0;
  for (const int cap : {2, 8, 32, 128}) {
    auto outcome = testing::run_in_child(
        [&] {
          const std::string command = std::string(SY_CREATE_UNDER_CAP) + " '" + model + "' " + std::to_string(cap);
          FILE* pipe = ::popen(command.c_str(), "r");
          if (pipe == nullptr) return std::string("popen failed");
          std::string out;
          char buffer[4096];
          for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
          const int status = ::pclose(pipe);
          if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            out += " [create_under_cap ended with status " + std::to_string(status) + "]";
          return out;
        },
        60);
    ASSERT_TRUE(outcome.finished) << "cap " << cap << " MiB: " << outcome.why;
    if (outcome.output != "created") {
      ++refused;
      if (outcome.output.find("out of memory (std::bad_alloc) while creating a session") != std::string::npos)
        ++caught_at_boundary;
      EXPECT_EQ(outcome.output.rfind("OutOfMemory: ", 0), 0u) << "cap " << cap << " MiB: " << outcome.output;
    }
  }
  EXPECT_GT(refused, 0) << "no cap was small enough to fail creation";
  // At the smallest caps the failure is a std::bad_alloc from deep inside
  // (protobuf, std::vector): caught at Session::create's boundary.
  EXPECT_GT(caught_at_boundary, 0);
}

// ---- bool bytes ---------------------------------------------------------------------

TEST(RuntimeEdges, BoolFeedWithOtherBytesIsRefused) {
  ModelBuilder b(17);
  b.input("mask", DataType::kBool, {4});
  b.node("Not", {"mask"}, {"y"}, {}, "not1");
  b.output("y", DataType::kBool, {4});
  auto s = create_or_die(b.build());
  ASSERT_NE(s, nullptr);
  uint8_t bytes[4] = {0, 1, 2, 0};
  auto bad = s->run({{"mask", Tensor::view(DataType::kBool, Shape{4}, bytes)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("input 'mask': bool element 2 of bool[4] is the byte 2; a bool must be 0 or 1"),
            std::string::npos)
      << bad.status().message();

  bytes[2] = 1;
  auto good = s->run({{"mask", Tensor::view(DataType::kBool, Shape{4}, bytes)}});
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  const auto* y = (*good)[0].data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{1, 0, 0, 1}));
}

// ---- external data: map or copy ---------------------------------------------------------

// y = Add(x, w) with w float[4] in weights.bin at offset 4096.
void write_external_model(const testing::TempDir& dir, const std::vector<float>& w) {
  std::string data(4096, '\0');
  data += testing::bytes_of(w);
  testing::write_file(dir.file("weights.bin"), data);
  onnx::ModelProto m = testing::relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  g->clear_input();
  g->clear_output();
  testing::set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"4"});
  testing::set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"4"});
  onnx::TensorProto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", "weights.bin");
  add("offset", "4096");
  add("length", "16");
  testing::add_node(g, "Add", {"x", "w"}, {"y"});
  testing::write_model(m, dir.file("model.onnx"));
}

TEST(RuntimeEdges, CopiedExternalDataSurvivesTheFileChanging) {
  testing::TempDir dir;
  write_external_model(dir, {1.0f, 2.0f, 3.0f, 4.0f});
  const std::string model = dir.file("model.onnx"), data = dir.file("weights.bin");
  // In a child: a regression to mapping would be a SIGBUS after the
  // truncation, reported as such instead of killing the test binary.
  auto outcome = testing::run_in_child(
      [&] {
        SessionOptions o;
        o.config["session.external_data"] = "copy";
        auto s = Session::create(model, o);
        if (!s.ok()) return s.status().to_string();
        const Tensor x = testing::make_tensor<float>({4}, {10, 20, 30, 40});
        std::string seen;
        auto run = [&] {
          auto out = (*s)->run({{"x", x}});
          if (!out.ok()) return out.status().to_string();
          std::string r;
          for (int i = 0; i < 4; ++i) r += std::to_string(static_cast<int>((*out)[0].data<float>()[i])) + " ";
          return r;
        };
        seen += run() + "| ";
        // Rewritten in place with other weights, then cut to nothing.
        std::string other(4096, '\0');
        other += testing::bytes_of(std::vector<float>{-7, -7, -7, -7});
        testing::write_file(data, other);
        seen += run() + "| ";
        std::filesystem::resize_file(data, 0);
        seen += run();
        return seen;
      },
      20);
  ASSERT_TRUE(outcome.finished) << outcome.why;
  EXPECT_EQ(outcome.output, "11 22 33 44 | 11 22 33 44 | 11 22 33 44 ");
}

TEST(RuntimeEdges, ExternalDataModeMustBeKnown) {
  testing::TempDir dir;
  write_external_model(dir, {1.0f, 2.0f, 3.0f, 4.0f});
  SessionOptions o;
  o.config["session.external_data"] = "mmap";
  auto s = Session::create(dir.file("model.onnx"), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("session config 'session.external_data' is 'mmap'; accepted: 'map' or 'copy'"),
            std::string::npos)
      << s.status().message();
  o.config["session.external_data"] = "map";
  EXPECT_TRUE(Session::create(dir.file("model.onnx"), o).ok());
}

}  // namespace
}  // namespace sy
