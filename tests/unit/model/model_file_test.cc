// Hostile model files (issue 32): what is not a regular file and a path
// with a NUL byte. Each gets a clear error, quickly.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

}  // namespace
}  // namespace sy
