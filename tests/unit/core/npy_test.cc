#include "switchyard/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "testing/child_process.h"

namespace sy {
namespace {

// Files in tests/data/npy were written by numpy 1.24 (np.save, and
// np.lib.format.write_array for versions 2.0 and 3.0).
std::string data_file(const std::string& name) { return std::string(SY_TEST_DATA_DIR) + "/npy/" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sy_npy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  // A version 1.0 file with the given header dict and raw data bytes.
  std::string write_v1(const std::string& name, const std::string& dict, const std::string& data) const {
    std::string header = dict + "\n";
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    return write(name, bytes + header + data);
  }

  std::filesystem::path dir_;
};

TEST(Npy, ReadsFloat32WrittenByNumpy) {
  auto t = load_npy(data_file("float32_2x3.npy"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DataType::kFloat);
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  const float expected[] = {1.5f, -2.25f, 3.0f, 0.0f, 1e-7f, -65504.0f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], expected[i]) << "element " << i;
}

TEST(Npy, ReadsInt64ExtremesExactly) {
  auto t = load_npy(data_file("int64_vector.npy"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DataType::kInt64);
  EXPECT_EQ(t->shape(), (Shape{5}));
  const int64_t* d = t->data<int64_t>();
  EXPECT_EQ(d[0], 0);
  EXPECT_EQ(d[1], -1);
  EXPECT_EQ(d[2], int64_t{9007199254740993});  // not representable as a double
  EXPECT_EQ(d[3], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(d[4], std::numeric_limits<int64_t>::max());
}

TEST(Npy, ReadsBoolFloat16ScalarAndEmpty) {
  auto b = load_npy(data_file("bool_2x2.npy"));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->dtype(), DataType::kBool);
  EXPECT_EQ(b->shape(), (Shape{2, 2}));
  EXPECT_TRUE(b->data<bool>()[0]);
  EXPECT_FALSE(b->data<bool>()[1]);
  EXPECT_FALSE(b->data<bool>()[2]);
  EXPECT_TRUE(b->data<bool>()[3]);

  auto h = load_npy(data_file("float16_3.npy"));
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->dtype(), DataType::kFloat16);
  EXPECT_EQ(h->shape(), (Shape{3}));
  // IEEE half bit patterns of 1.0, -0.5 and 65504 (the largest finite half).
  EXPECT_EQ(h->data<Float16>()[0].bits, 0x3C00);
  EXPECT_EQ(h->data<Float16>()[1].bits, 0xB800);
  EXPECT_EQ(h->data<Float16>()[2].bits, 0x7BFF);

  auto s = load_npy(data_file("uint8_scalar.npy"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->dtype(), DataType::kUint8);
  EXPECT_EQ(s->shape().rank(), 0u);
  EXPECT_EQ(s->data<uint8_t>()[0], 200);

  auto e = load_npy(data_file("float64_empty_0x3.npy"));
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->dtype(), DataType::kDouble);
  EXPECT_EQ(e->shape(), (Shape{0, 3}));
  EXPECT_EQ(e->num_elements(), 0);
}

TEST(Npy, ReadsFormatVersions2And3) {
  auto v2 = load_npy(data_file("int16_v2.npy"));
  ASSERT_TRUE(v2.ok()) << v2.status().to_string();
  EXPECT_EQ(v2->dtype(), DataType::kInt16);
  EXPECT_EQ(v2->shape(), (Shape{2, 2}));
  const int16_t expected16[] = {1, -2, 300, -32768};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v2->data<int16_t>()[i], expected16[i]);

  auto v3 = load_npy(data_file("uint32_v3.npy"));
  ASSERT_TRUE(v3.ok()) << v3.status().to_string();
  EXPECT_EQ(v3->dtype(), DataType::kUint32);
  EXPECT_EQ(v3->shape(), (Shape{2}));
  EXPECT_EQ(v3->data<uint32_t>()[0], 7u);
  EXPECT_EQ(v3->data<uint32_t>()[1], 4294967295u);
}

TEST(Npy, EncodesTheSameBytesAsNumpy) {
  // Byte-for-byte equality with numpy's own files means numpy reads ours.
  for (const char* name : {"float32_2x3.npy", "int64_vector.npy", "bool_2x2.npy", "float16_3.npy",
                           "uint8_scalar.npy", "float64_empty_0x3.npy"}) {
    auto t = load_npy(data_file(name));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    auto bytes = encode_npy(*t);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    EXPECT_EQ(*bytes, read_bytes(data_file(name))) << name;
  }
}

TEST_F(NpyFiles, RoundTripsEveryDtype) {
  const DataType types[] = {DataType::kFloat16, DataType::kFloat,  DataType::kDouble, DataType::kInt8,
                            DataType::kInt16,   DataType::kInt32,  DataType::kInt64,  DataType::kUint8,
                            DataType::kUint16,  DataType::kUint32, DataType::kUint64, DataType::kBool};
  for (DataType dtype : types) {
    auto t = Tensor::allocate(dtype, Shape{3, 1, 4});
    ASSERT_TRUE(t.ok());
    auto* bytes = static_cast<uint8_t*>(t->raw_data());
    for (size_t i = 0; i < t->byte_size(); ++i)
      bytes[i] = dtype == DataType::kBool ? static_cast<uint8_t>(i % 3 == 0) : static_cast<uint8_t>(i * 37 + 11);
    const std::string p = path(std::string(data_type_name(dtype)) + ".npy");
    ASSERT_TRUE(save_npy(*t, p).ok());
    auto back = load_npy(p);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->shape(), (Shape{3, 1, 4}));
    ASSERT_EQ(back->byte_size(), t->byte_size());
    EXPECT_EQ(std::memcmp(back->raw_data(), t->raw_data(), t->byte_size()), 0) << data_type_name(dtype);
    // The data starts on a 64-byte boundary, as numpy writes it.
    EXPECT_EQ((read_bytes(p).size() - t->byte_size()) % 64, 0u);
  }
}

TEST_F(NpyFiles, UsesVersion2WhenTheHeaderOutgrowsVersion1) {
  // 25000 dims of 1 ("1, " each) make a header longer than 65535 bytes.
  Shape shape;
  for (int i = 0; i < 25000; ++i) shape.push_back(1);
  auto t = Tensor::allocate(DataType::kInt32, shape);
  ASSERT_TRUE(t.ok());
  t->data<int32_t>()[0] = -123456;
  const std::string p = path("big_header.npy");
  ASSERT_TRUE(save_npy(*t, p).ok());
  const std::string bytes = read_bytes(p);
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes[6], 2);
  auto back = load_npy(p);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->shape(), shape);
  EXPECT_EQ(back->data<int32_t>()[0], -123456);
}

TEST_F(NpyFiles, NormalisesNonzeroBoolBytes) {
  const std::string p = write_v1("bools.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                 std::string("\x00\x02\xff", 3));
  auto t = load_npy(p);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const auto* raw = static_cast<const uint8_t*>(t->raw_data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST_F(NpyFiles, AcceptsHeaderVariantsNumpyCanWrite) {
  // Other key order, double quotes, no trailing comma, Python 2 long suffix.
  const std::string p = write_v1("variant.npy", "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i4\"}",
                                 std::string(8, '\x01'));
  auto t = load_npy(p);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DataType::kInt32);
  EXPECT_EQ(t->shape(), (Shape{2}));
  EXPECT_EQ(t->data<int32_t>()[1], 0x01010101);
}

// Each malformed file must fail with an error that names the file and
// contains `needle`.
void expect_load_error(const std::string& p, const std::string& needle) {
  auto t = load_npy(p);
  ASSERT_FALSE(t.ok()) << p << " loaded but should not have";
  EXPECT_NE(t.status().message().find(p), std::string::npos) << t.status().to_string();
  EXPECT_NE(t.status().message().find(needle), std::string::npos)
      << "expected '" << needle << "' in: " << t.status().to_string();
}

TEST_F(NpyFiles, RefusesFortranOrderAndBigEndian) {
  const std::string data(24, '\0');
  expect_load_error(write_v1("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data),
                    "Fortran order");
  expect_load_error(write_v1("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data),
                    "big-endian");
  expect_load_error(write_v1("complex.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data),
                    "unsupported dtype '<c8'");
  expect_load_error(write_v1("object.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", data),
                    "unsupported dtype");
  expect_load_error(
      write_v1("struct.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", data),
      "structured");
}

TEST_F(NpyFiles, RefusesTruncatedFiles) {
  const std::string good = read_bytes(data_file("float32_2x3.npy"));
  ASSERT_EQ(good.size(), 152u);
  expect_load_error(write("empty.npy", ""), "not an npy file");
  expect_load_error(write("magic_only.npy", good.substr(0, 8)), "truncated");
  expect_load_error(write("half_header.npy", good.substr(0, 60)), "truncated");
  expect_load_error(write("short_data.npy", good.substr(0, good.size() - 1)), "truncated");
  expect_load_error(write("no_data.npy", good.substr(0, 128)), "needs 24 bytes");
  expect_load_error(write("trailing.npy", good + "xyz"), "3 unexpected bytes");
}

TEST_F(NpyFiles, RefusesBadHeaders) {
  const std::string data(4, '\0');
  expect_load_error(write("not_npy.npy", "PK\x03\x04 this is a zip file"), "not an npy file");
  expect_load_error(write("version9.npy", std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' ')),
                    "unsupported format version 9.0");
  expect_load_error(write_v1("no_brace.npy", "'descr': '<f4'", data), "does not start with '{'");
  expect_load_error(write_v1("no_shape.npy", "{'descr': '<f4', 'fortran_order': False}", data), "lacks");
  expect_load_error(write_v1("neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", data),
                    "negative dimension");
  expect_load_error(write_v1("unterminated.npy", "{'descr': '<f4", data), "unterminated string");
  expect_load_error(
      write_v1("extra_key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", data),
      "unexpected key 'x'");
  expect_load_error(write_v1("bad_order.npy", "{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,)}", data),
                    "must be True or False");
  expect_load_error(write_v1("junk_after.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", data),
                    "after the closing");
  expect_load_error(
      write_v1("huge_dim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", data),
      "too large");
  // A shape whose byte size overflows must not be allocated or read.
  expect_load_error(write_v1("overflow.npy",
                             "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", data),
                    "overflows");
  expect_load_error(path("does_not_exist.npy"), "No such file");
}

// Loads and saves run in a child process: a reader or writer that blocks on
// a FIFO or reads /dev/zero without end fails the test instead of hanging it.
template <typename Attempt>
std::string output_of_child(const std::string& what, Attempt attempt) {
  auto outcome = testing::run_in_child(attempt, /*timeout_seconds=*/20, /*extra_address_space=*/size_t{256} << 20);
  EXPECT_TRUE(outcome.finished) << what << " " << outcome.why;
  return outcome.output;
}

std::string load_error_in_child(const std::string& p) {
  return output_of_child("load_npy(" + p + ")", [&] {
    auto t = load_npy(p);
    return t.ok() ? std::string("loaded") : t.status().to_string();
  });
}

TEST_F(NpyFiles, RefusesWhatIsNotARegularFile) {
  const std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string error = load_error_in_child(fifo);
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  EXPECT_NE(error.find(fifo), std::string::npos) << error;

  error = load_error_in_child("/dev/zero");
  EXPECT_NE(error.find("/dev/zero is a character device, not a regular file"), std::string::npos) << error;

  expect_load_error(dir_.string(), "is a directory");
}

// Opening a FIFO for writing waits for a reader.
std::string save_error_in_child(const std::string& p) {
  return output_of_child("save_npy(" + p + ")", [&] {
    auto t = Tensor::allocate(DataType::kFloat, Shape{2});
    if (!t.ok()) return t.status().to_string();
    Status st = save_npy(*t, p);
    return st.ok() ? std::string("saved") : st.to_string();
  });
}

TEST_F(NpyFiles, SaveRefusesWhatIsNotARegularFile) {
  const std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string error = save_error_in_child(fifo);
  EXPECT_NE(error.find(fifo + " is a FIFO (named pipe), not a regular file; only regular files are written"),
            std::string::npos)
      << error;
  error = save_error_in_child("/dev/zero");
  EXPECT_NE(error.find("/dev/zero is a character device, not a regular file"), std::string::npos) << error;
  error = save_error_in_child(dir_.string());
  EXPECT_NE(error.find("is a directory, not a regular file"), std::string::npos) << error;
  error = save_error_in_child(path("x.npy") + std::string("\0.trailing", 10));
  EXPECT_NE(error.find("NUL"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(path("x.npy")));

  // A regular file is replaced whole: a longer old file leaves no tail.
  const std::string regular = write("old.npy", std::string(4096, 'x'));
  auto t = Tensor::allocate(DataType::kFloat, Shape{2});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(save_npy(*t, regular).ok());
  auto back = load_npy(regular);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->shape(), Shape{2});
  EXPECT_EQ(read_bytes(regular), *encode_npy(*t));
}

TEST_F(NpyFiles, RefusesAPathWithANulByte) {
  const std::string good = write("good.npy", read_bytes(data_file("float32_2x3.npy")));
  ASSERT_TRUE(load_npy(good).ok());
  // The C library would stop at the NUL and open good.npy.
  const std::string with_nul = good + std::string("\0.trailing", 10);
  auto t = load_npy(with_nul);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("NUL"), std::string::npos) << t.status().to_string();
  EXPECT_NE(t.status().message().find(good + "\\0.trailing"), std::string::npos) << t.status().to_string();
}

TEST_F(NpyFiles, DeclaredShapeIsCheckedBeforeAllocating) {
  // 16 GB declared, 8 bytes given: refused from the header, with the child
  // capped to 256 MB more than it has, so an allocation would fail.
  const std::string p = write_v1("huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000,), }",
                                 std::string(8, '\0'));
  const std::string error = load_error_in_child(p);
  EXPECT_NE(error.find("needs 16000000000 bytes of data but the file has 8"), std::string::npos) << error;
}

TEST(Npy, SaveRefusesWhatNpyCannotHold) {
  auto s = Tensor::allocate(DataType::kString, Shape{2});
  ASSERT_TRUE(s.ok());
  Status st = save_npy(*s, "/nonexistent_dir/x.npy");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotImplemented);
  EXPECT_NE(st.message().find("/nonexistent_dir/x.npy"), std::string::npos) << st.to_string();

  auto f = Tensor::allocate(DataType::kFloat, Shape{2});
  ASSERT_TRUE(f.ok());
  st = save_npy(*f, "/nonexistent_dir/x.npy");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot create"), std::string::npos) << st.to_string();
  EXPECT_FALSE(encode_npy(Tensor()).ok());
}

}  // namespace
}  // namespace sy
