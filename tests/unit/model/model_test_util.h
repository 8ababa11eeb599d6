// Helpers for the model-loading tests: a scratch folder removed at the end
// of the test, and small builders for ONNX protos.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace sy::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "sy_model_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (info != nullptr) name += std::string("_") + info->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

inline void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int elem_type,
                            const std::vector<std::string>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) != 0))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

// A model computing y = Relu(x), x: float[N,3].
inline onnx::ModelProto relu_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("relu");
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"N", "3"});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"N", "3"});
  add_node(g, "Relu", {"x"}, {"y"}, "relu0");
  return m;
}

inline void write_model(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  write_file(path, bytes);
}

}  // namespace sy::testing
