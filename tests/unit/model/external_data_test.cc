#include "model/external_data.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/loader.h"
#include "model/tensor_proto.h"
#include "model_test_util.h"
#include "onnx/onnx_pb.h"

namespace sy {
namespace {

namespace fs = std::filesystem;
using testing::bytes_of;
using testing::TempDir;
using testing::write_file;

// A float tensor whose data lives in `location` at `offset`.
onnx::TensorProto external_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                  const std::string& location, int64_t offset = -1, int64_t length = -1) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return t;
}

// Model: y = Add(x, w) with w an external initializer.
onnx::ModelProto add_model(const onnx::TensorProto& w) {
  onnx::ModelProto m = testing::relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  g->clear_input();
  testing::set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"N", "3"});
  *g->add_initializer() = w;
  testing::add_node(g, "Add", {"x", w.name()}, {"y"});
  return m;
}

std::vector<float> floats(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(ExternalDataTest, ParseInfo) {
  auto t = external_tensor("w", {2}, "data.bin", 4096, 8);
  auto* extra = t.add_external_data();
  extra->set_key("basepath");  // added by onnx's Python helpers; ignored
  extra->set_value("/elsewhere");
  auto info = parse_external_data_info(t, "initializer 'w'");
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->location, "data.bin");
  EXPECT_EQ(info->offset, 4096);
  EXPECT_EQ(info->length, 8);

  auto negative = external_tensor("w", {2}, "data.bin");
  auto* off = negative.add_external_data();
  off->set_key("offset");
  off->set_value("-4");
  auto neg = parse_external_data_info(negative, "initializer 'w'");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("'offset' must be a non-negative integer, got '-4'"), std::string::npos);
  EXPECT_NE(neg.status().message().find("initializer 'w'"), std::string::npos);

  auto text = external_tensor("w", {2}, "data.bin");
  auto* len = text.add_external_data();
  len->set_key("length");
  len->set_value("12abc");
  EXPECT_FALSE(parse_external_data_info(text, "w").ok());

  onnx::TensorProto no_location;
  no_location.set_data_location(onnx::TensorProto::EXTERNAL);
  auto nl = parse_external_data_info(no_location, "initializer 'z'");
  ASSERT_FALSE(nl.ok());
  EXPECT_NE(nl.status().message().find("no 'location'"), std::string::npos);
}

TEST(ExternalDataTest, LocationMustStayInsideTheModelFolder) {
  TempDir outside;
  TempDir dir;
  write_file(outside.file("secret.bin"), std::string(64, 'x'));
  write_file(dir.file("ok.bin"), std::string(64, 'y'));
  fs::create_directories(dir.path() / "sub");
  write_file(dir.file("sub/inner.bin"), std::string(8, 'z'));
  const std::string d = dir.path().string();

  auto ok = resolve_external_data_location(d, "ok.bin");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*ok, fs::canonical(dir.path() / "ok.bin").string());
  EXPECT_TRUE(resolve_external_data_location(d, "./sub/inner.bin").ok());

  auto absolute = resolve_external_data_location(d, outside.file("secret.bin"));
  ASSERT_FALSE(absolute.ok());
  EXPECT_NE(absolute.status().message().find("absolute path"), std::string::npos);

  const std::string up = "../" + outside.path().filename().string() + "/secret.bin";
  auto escape = resolve_external_data_location(d, up);
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.status().message().find("'..'"), std::string::npos);
  // A ".." that would stay inside is refused too: the spec disallows it.
  EXPECT_FALSE(resolve_external_data_location(d, "sub/../ok.bin").ok());

  fs::create_symlink(outside.path() / "secret.bin", dir.path() / "link.bin");
  auto link = resolve_external_data_location(d, "link.bin");
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("outside the model's folder"), std::string::npos)
      << link.status().message();

  // A symlinked folder on the way out is caught as well.
  fs::create_directory_symlink(outside.path(), dir.path() / "linkdir");
  EXPECT_FALSE(resolve_external_data_location(d, "linkdir/secret.bin").ok());

  // A link that stays inside the folder is fine.
  fs::create_symlink(dir.path() / "ok.bin", dir.path() / "alias.bin");
  EXPECT_TRUE(resolve_external_data_location(d, "alias.bin").ok());

  auto missing = resolve_external_data_location(d, "missing.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNoSuchFile);

  auto folder = resolve_external_data_location(d, "sub");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("not a regular file"), std::string::npos);

  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  auto fifo = resolve_external_data_location(d, "fifo");
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);
}

TEST(ExternalDataTest, TensorsViewIntoOneSharedMapping) {
  TempDir dir;
  std::string data = bytes_of(floats(16, 1.0f));
  data += bytes_of(floats(8, 100.0f));
  write_file(dir.file("w.bin"), data);
  ExternalDataResolver resolver(dir.path().string(), dir.file("model.onnx"));

  auto a = tensor_from_proto(external_tensor("a", {4, 4}, "w.bin", 0, 64), &resolver, "initializer 'a'");
  auto b = tensor_from_proto(external_tensor("b", {8}, "w.bin", 64), &resolver, "initializer 'b'");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(a->shape(), Shape({4, 4}));
  EXPECT_EQ(a->data<float>()[0], 1.0f);
  EXPECT_EQ(a->data<float>()[15], 16.0f);
  EXPECT_EQ(b->data<float>()[0], 100.0f);
  EXPECT_EQ(b->data<float>()[7], 107.0f);
  // Both are views into the same mapping: their addresses differ by the
  // file offsets, and the file was opened once.
  EXPECT_EQ(static_cast<const char*>(b->raw_data()) - static_cast<const char*>(a->raw_data()), 64);
  EXPECT_TRUE(a->owns_memory());
  EXPECT_EQ(resolver.num_open_files(), 1u);
}

TEST(ExternalDataTest, MisalignedOffsetIsCopied) {
  TempDir dir;
  std::string data(2, '\0');
  data += bytes_of(floats(3, 5.0f));
  write_file(dir.file("w.bin"), data);
  ExternalDataResolver resolver(dir.path().string(), "model.onnx");
  auto t = tensor_from_proto(external_tensor("w", {3}, "w.bin", 2), &resolver, "initializer 'w'");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % alignof(float), 0u);
  EXPECT_EQ(t->data<float>()[0], 5.0f);
  EXPECT_EQ(t->data<float>()[2], 7.0f);
}

// Kernels read bools as C++ bool: every byte must be 0 or 1, as it is for
// bool initializers stored inside the model. Mapped data is copied to
// normalise it, even at an aligned offset.
TEST(ExternalDataTest, BoolTensorsAreNormalized) {
  TempDir dir;
  write_file(dir.file("mask.bin"), std::string("\x00\x01\x02\xff\x00\x07\x01\x00", 8));
  ExternalDataResolver resolver(dir.path().string(), "model.onnx");
  onnx::TensorProto proto = external_tensor("mask", {8}, "mask.bin", 0, 8);
  proto.set_data_type(onnx::TensorProto::BOOL);
  auto t = tensor_from_proto(proto, &resolver, "initializer 'mask'");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const auto* b = t->data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(b, b + 8), (std::vector<uint8_t>{0, 1, 1, 1, 0, 1, 1, 0}));
}

// Under ExternalDataMode::kCopy no tensor views into the file, so the
// mapping ends with the resolver.
TEST(ExternalDataTest, CopyModeOwnsItsBytes) {
  TempDir dir;
  write_file(dir.file("w.bin"), bytes_of(floats(4, 1.0f)));
  Tensor t;
  {
    ExternalDataResolver resolver(dir.path().string(), "model.onnx", "", ExternalDataMode::kCopy);
    auto loaded = tensor_from_proto(external_tensor("w", {4}, "w.bin", 0, 16), &resolver, "initializer 'w'");
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    t = *loaded;
  }
  write_file(dir.file("w.bin"), bytes_of(floats(4, -50.0f)));
  fs::resize_file(dir.file("w.bin"), 0);
  EXPECT_EQ(t.data<float>()[0], 1.0f);
  EXPECT_EQ(t.data<float>()[3], 4.0f);
}

TEST(ExternalDataTest, OutOfBoundsAndWrongLengthAreRefused) {
  TempDir dir;
  write_file(dir.file("w.bin"), bytes_of(floats(4, 0.0f)));  // 16 bytes
  ExternalDataResolver resolver(dir.path().string(), "my_model.onnx");

  auto past = tensor_from_proto(external_tensor("w", {4}, "w.bin", 8), &resolver, "initializer 'w'");
  ASSERT_FALSE(past.ok());
  const std::string& m = past.status().message();
  EXPECT_NE(m.find("initializer 'w'"), std::string::npos) << m;
  EXPECT_NE(m.find("my_model.onnx"), std::string::npos) << m;
  EXPECT_NE(m.find("'w.bin'"), std::string::npos) << m;
  EXPECT_NE(m.find("offset 8 + length 16 runs past the end of the file (16 bytes)"), std::string::npos) << m;

  EXPECT_FALSE(tensor_from_proto(external_tensor("w", {1}, "w.bin", 1000), &resolver, "w").ok());

  auto length = tensor_from_proto(external_tensor("w", {2}, "w.bin", 0, 12), &resolver, "initializer 'w'");
  ASSERT_FALSE(length.ok());
  EXPECT_NE(length.status().message().find("length 12 does not match"), std::string::npos);

  onnx::TensorProto s = external_tensor("s", {1}, "w.bin");
  s.set_data_type(onnx::TensorProto::STRING);
  EXPECT_FALSE(tensor_from_proto(s, &resolver, "s").ok());
}

TEST(ExternalDataTest, LoadModelWithExternalWeights) {
  TempDir dir;
  // Page-aligned offset, as onnx writes them for mmap.
  std::string data(4096, '\0');
  data += bytes_of(std::vector<float>{0.5f, -1.0f, 2.0f});
  write_file(dir.file("weights.bin"), data);
  testing::write_model(add_model(external_tensor("w", {3}, "weights.bin", 4096, 12)), dir.file("model.onnx"));

  auto m = load_model(dir.file("model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Graph& g = *m->graph;
  const ValueId w = g.find_value("w");
  ASSERT_NE(w, kNoValue);
  const Tensor* t = g.constant(w);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->data<float>()[0], 0.5f);
  EXPECT_EQ(t->data<float>()[1], -1.0f);
  EXPECT_EQ(t->data<float>()[2], 2.0f);
  // Page-aligned offset in a page-aligned mapping.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 4096, 0u);

  // The same bytes without a folder are refused; with one they load.
  std::string bytes;
  ASSERT_TRUE(add_model(external_tensor("w", {3}, "weights.bin", 4096, 12)).SerializeToString(&bytes));
  auto no_dir = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.status().message().find("external_data_dir"), std::string::npos) << no_dir.status().message();
  auto with_dir = load_model_from_bytes(bytes.data(), bytes.size(), dir.path().string());
  ASSERT_TRUE(with_dir.ok()) << with_dir.status().to_string();
  EXPECT_EQ(with_dir->graph->constant(with_dir->graph->find_value("w"))->data<float>()[2], 2.0f);
}

TEST(ExternalDataTest, HuggingFaceCacheLayout) {
  // snapshots/<rev>/ holds links into blobs/: the data file resolves
  // outside the snapshot folder, but beside the real model file.
  TempDir dir;
  fs::create_directories(dir.path() / "blobs");
  fs::create_directories(dir.path() / "snapshots" / "rev");
  write_file(dir.file("blobs/data_blob"), bytes_of(std::vector<float>{1.0f, 2.0f, 3.0f}));
  testing::write_model(add_model(external_tensor("w", {3}, "model.onnx_data")), dir.file("blobs/model_blob"));
  fs::create_symlink("../../blobs/model_blob", dir.path() / "snapshots" / "rev" / "model.onnx");
  fs::create_symlink("../../blobs/data_blob", dir.path() / "snapshots" / "rev" / "model.onnx_data");

  auto m = load_model(dir.file("snapshots/rev/model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph->constant(m->graph->find_value("w"))->data<float>()[1], 2.0f);

  // Links still may not leave both folders.
  TempDir outside;
  write_file(outside.file("secret"), bytes_of(std::vector<float>{0.0f, 0.0f, 0.0f}));
  fs::remove(dir.path() / "snapshots" / "rev" / "model.onnx_data");
  fs::create_symlink(outside.path() / "secret", dir.path() / "snapshots" / "rev" / "model.onnx_data");
  auto bad = load_model(dir.file("snapshots/rev/model.onnx"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the folder of the file the model links to"), std::string::npos)
      << bad.status().message();
}

TEST(ExternalDataTest, LoadModelRefusesEscapes) {
  TempDir outside;
  TempDir dir;
  write_file(outside.file("secret.bin"), bytes_of(floats(3, 0.0f)));
  write_file(dir.file("short.bin"), bytes_of(floats(2, 0.0f)));
  fs::create_symlink(outside.path() / "secret.bin", dir.path() / "link.bin");
  const std::string model = dir.file("model.onnx");

  struct Case {
    std::string location;
    int64_t offset;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {outside.file("secret.bin"), -1, "absolute path"},
      {"../" + outside.path().filename().string() + "/secret.bin", -1, "'..'"},
      {"link.bin", -1, "outside the model's folder"},
      {"short.bin", 4, "runs past the end of the file"},
  };
  for (const Case& c : cases) {
    testing::write_model(add_model(external_tensor("w", {3}, c.location, c.offset)), model);
    auto m = load_model(model);
    ASSERT_FALSE(m.ok()) << c.location;
    const std::string& msg = m.status().message();
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidGraph) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find("initializer 'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(model), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.location), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace sy
