// Hostile model files (issue 32): what is not a regular file, a path with a
// NUL byte, an IR version from the future, and a few bytes that declare
// gigabytes. Each gets a clear error, quickly and without the memory.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "model/loader.h"
#include "model_test_util.h"
#include "onnx/onnx_pb.h"
#include "switchyard/session.h"
#include "testing/child_process.h"

namespace sy {
namespace {

using testing::TempDir;

// Load and session creation run in a child: one that blocks (a FIFO opened
// for reading waits for a writer) fails the test instead of hanging it.
std::string errors_in_child(const std::string& path) {
  auto outcome = testing::run_in_child(
      [&] {
        auto model = load_model(path);
        auto session = Session::create(path);
        return (model.ok() ? std::string("loaded") : model.status().to_string()) + "\n" +
               (session.ok() ? std::string("created") : session.status().to_string());
      },
      /*timeout_seconds=*/20);
  EXPECT_TRUE(outcome.finished) << path << ": " << outcome.why;
  return outcome.output;
}

TEST(ModelFileTest, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("model.onnx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string errors = errors_in_child(fifo);
  const std::string expected = fifo + " is a FIFO (named pipe), not a regular file";
  // Both the loader and Session::create say so.
  const size_t first = errors.find(expected);
  ASSERT_NE(first, std::string::npos) << errors;
  EXPECT_NE(errors.find(expected, first + 1), std::string::npos) << errors;
}

TEST(ModelFileTest, SocketDeviceAndDirectoryAreRefused) {
  TempDir dir;
  const std::string socket_path = dir.file("model.sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(address.sun_path));
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  std::string errors = errors_in_child(socket_path);
  ::close(fd);
  EXPECT_NE(errors.find(socket_path + " is a socket, not a regular file"), std::string::npos) << errors;

  errors = errors_in_child("/dev/zero");
  EXPECT_NE(errors.find("/dev/zero is a character device, not a regular file"), std::string::npos) << errors;

  auto folder = load_model(dir.path().string());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(folder.status().message().find(dir.path().string() + " is a directory"), std::string::npos)
      << folder.status().to_string();
}

TEST(ModelFileTest, PathWithANulByteIsRefused) {
  TempDir dir;
  const std::string good = dir.file("model.onnx");
  testing::write_model(testing::relu_model(), good);
  ASSERT_TRUE(load_model(good).ok());
  // Truncated at the NUL, the path names a model that loads.
  const std::string with_nul = good + std::string("\0.txt", 5);
  auto model = load_model(with_nul);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("'" + good + "\\0.txt' contains a NUL byte"), std::string::npos)
      << model.status().to_string();
  auto session = Session::create(with_nul);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("NUL"), std::string::npos) << session.status().to_string();
}

TEST(ModelFileTest, IrVersionNewerThanSupportedIsRefused) {
  TempDir dir;
  onnx::ModelProto m = testing::relu_model();
  m.set_ir_version(99);
  testing::write_model(m, dir.file("future.onnx"));
  auto future = load_model(dir.file("future.onnx"));
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), StatusCode::kNotImplemented);
  EXPECT_NE(future.status().message().find(dir.file("future.onnx") + " has ir_version 99, newer than the newest "
                                                                     "this build supports (13)"),
            std::string::npos)
      << future.status().to_string();

  m.set_ir_version(14);
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  auto from_bytes = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(from_bytes.ok());
  EXPECT_NE(from_bytes.status().message().find("ir_version 14"), std::string::npos) << from_bytes.status().to_string();

  // Every version up to the newest still loads: 1 (no attribute types yet) and 13.
  for (int64_t ir : {int64_t{1}, int64_t{3}, int64_t{13}}) {
    m.set_ir_version(ir);
    ASSERT_TRUE(m.SerializeToString(&bytes));
    auto model = load_model_from_bytes(bytes.data(), bytes.size());
    EXPECT_TRUE(model.ok()) << "ir_version " << ir << ": " << model.status().to_string();
  }
}

// An initializer declaring 1.25e9 floats (5 GB) with no data at all: the
// whole model is under 100 bytes.
std::string huge_declared_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1250000000);
  testing::set_tensor_type(g->add_output(), "w", onnx::TensorProto::FLOAT, {"1250000000"});
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return bytes;
}

TEST(ModelFileTest, DeclaredSizeIsCheckedBeforeAllocating) {
  const std::string bytes = huge_declared_model();
  EXPECT_LT(bytes.size(), 100u);
  TempDir dir;
  testing::write_file(dir.file("huge.onnx"), bytes);
  // Capped at 512 MB more than the test process maps: allocating the
  // declared 5 GB would fail (or abort) rather than pass.
  const auto start = std::chrono::steady_clock::now();
  auto outcome = testing::run_in_child(
      [&] {
        auto model = load_model(dir.file("huge.onnx"));
        return model.ok() ? std::string("loaded") : model.status().to_string();
      },
      /*timeout_seconds=*/20, /*extra_address_space=*/size_t{512} << 20);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outcome.finished) << outcome.why;
  EXPECT_NE(outcome.output.find("initializer 'w': float[1250000000] needs 1250000000 values in float_data but it has 0"),
            std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find(dir.file("huge.onnx")), std::string::npos) << outcome.output;
  EXPECT_LT(seconds, 5.0);
}

TEST(ModelFileTest, SparseTensorMayNotExpandWithoutBound) {
  // No values, dims of 2^30 floats (4 GB): made dense, it would be all zeros.
  onnx::ModelProto m = testing::relu_model();
  auto* s = m.mutable_graph()->add_sparse_initializer();
  s->add_dims(int64_t{1} << 30);
  s->mutable_values()->set_name("sparse");
  s->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  s->mutable_values()->add_dims(0);
  s->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  s->mutable_indices()->add_dims(0);
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  auto model = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("sparse initializer 'sparse': 0 values would become a dense float[1073741824]"),
            std::string::npos)
      << model.status().to_string();

  // Past 16 MB, one value per 1024 elements still loads (32 MB here).
  s->mutable_dims()->Set(0, 8192 * 1024);
  s->mutable_values()->mutable_dims()->Set(0, 8192);
  s->mutable_indices()->mutable_dims()->Set(0, 8192);
  for (int64_t k = 0; k < 8192; ++k) {
    s->mutable_values()->add_float_data(1.0f);
    s->mutable_indices()->add_int64_data(k * 1024);
  }
  ASSERT_TRUE(m.SerializeToString(&bytes));
  model = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Tensor* dense = model->graph->constant(model->graph->find_value("sparse"));
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->data<float>()[1024], 1.0f);
  EXPECT_EQ(dense->data<float>()[1025], 0.0f);
}

}  // namespace
}  // namespace sy
