#include "model/tensor_proto.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "model/external_data.h"
#include "model_test_util.h"
#include "onnx/onnx_pb.h"

namespace sy {
namespace {

using testing::bytes_of;
using testing::TempDir;

onnx::TensorProto make_proto(int dtype, const std::vector<int64_t>& dims, const std::string& name = "t") {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dtype);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.num_elements());
}

std::vector<uint8_t> bytes_of_tensor(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

Tensor decode_ok(const onnx::TensorProto& p) {
  auto r = tensor_from_proto(p, nullptr, "tensor '" + p.name() + "'");
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : Tensor();
}

Status decode_error(const onnx::TensorProto& p) {
  auto r = tensor_from_proto(p, nullptr, "tensor '" + p.name() + "'");
  EXPECT_FALSE(r.ok());
  return r.status();
}

TEST(TensorProtoTest, FloatFromFloatData) {
  auto p = make_proto(onnx::TensorProto::FLOAT, {2, 3});
  for (float v : {1.5f, -2.0f, 0.0f, 3.25f, 1e-3f, -7.0f}) p.add_float_data(v);
  Tensor t = decode_ok(p);
  EXPECT_EQ(t.dtype(), DataType::kFloat);
  EXPECT_EQ(t.shape(), Shape({2, 3}));
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{1.5f, -2.0f, 0.0f, 3.25f, 1e-3f, -7.0f}));
}

TEST(TensorProtoTest, FloatFromRawData) {
  auto p = make_proto(onnx::TensorProto::FLOAT, {3});
  p.set_raw_data(bytes_of(std::vector<float>{4.0f, -0.5f, 9.0f}));
  EXPECT_EQ(values_of<float>(decode_ok(p)), (std::vector<float>{4.0f, -0.5f, 9.0f}));
}

TEST(TensorProtoTest, RawDataWinsOverTypedField) {
  auto p = make_proto(onnx::TensorProto::INT64, {2});
  p.set_raw_data(bytes_of(std::vector<int64_t>{7, -8}));
  p.add_int64_data(1);  // a stale typed field is ignored when raw_data is set
  EXPECT_EQ(values_of<int64_t>(decode_ok(p)), (std::vector<int64_t>{7, -8}));
}

TEST(TensorProtoTest, WideTypedFields) {
  auto d = make_proto(onnx::TensorProto::DOUBLE, {2});
  d.add_double_data(0.125);
  d.add_double_data(-1e300);
  EXPECT_EQ(values_of<double>(decode_ok(d)), (std::vector<double>{0.125, -1e300}));

  auto i64 = make_proto(onnx::TensorProto::INT64, {3});
  for (int64_t v : {int64_t{-1}, int64_t{1} << 40, int64_t{0}}) i64.add_int64_data(v);
  EXPECT_EQ(values_of<int64_t>(decode_ok(i64)), (std::vector<int64_t>{-1, int64_t{1} << 40, 0}));

  auto i32 = make_proto(onnx::TensorProto::INT32, {2});
  i32.add_int32_data(-2147483647 - 1);
  i32.add_int32_data(5);
  EXPECT_EQ(values_of<int32_t>(decode_ok(i32)), (std::vector<int32_t>{-2147483647 - 1, 5}));

  auto u32 = make_proto(onnx::TensorProto::UINT32, {2});
  u32.add_uint64_data(4000000000u);
  u32.add_uint64_data(3);
  EXPECT_EQ(values_of<uint32_t>(decode_ok(u32)), (std::vector<uint32_t>{4000000000u, 3}));

  auto u64 = make_proto(onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(18446744073709551615ull);
  EXPECT_EQ(values_of<uint64_t>(decode_ok(u64)), (std::vector<uint64_t>{18446744073709551615ull}));
}

TEST(TensorProtoTest, NarrowIntegersFromInt32Data) {
  auto i8 = make_proto(onnx::TensorProto::INT8, {3});
  for (int v : {-128, -5, 127}) i8.add_int32_data(v);
  EXPECT_EQ(values_of<int8_t>(decode_ok(i8)), (std::vector<int8_t>{-128, -5, 127}));

  auto u8 = make_proto(onnx::TensorProto::UINT8, {2});
  for (int v : {255, 3}) u8.add_int32_data(v);
  EXPECT_EQ(values_of<uint8_t>(decode_ok(u8)), (std::vector<uint8_t>{255, 3}));

  auto i16 = make_proto(onnx::TensorProto::INT16, {2});
  for (int v : {-32768, 1234}) i16.add_int32_data(v);
  EXPECT_EQ(values_of<int16_t>(decode_ok(i16)), (std::vector<int16_t>{-32768, 1234}));

  auto u16 = make_proto(onnx::TensorProto::UINT16, {1});
  u16.add_int32_data(65535);
  EXPECT_EQ(values_of<uint16_t>(decode_ok(u16)), (std::vector<uint16_t>{65535}));
}

TEST(TensorProtoTest, BoolIsZeroOrOne) {
  auto typed = make_proto(onnx::TensorProto::BOOL, {3});
  for (int v : {0, 1, 2}) typed.add_int32_data(v);
  EXPECT_EQ(bytes_of_tensor(decode_ok(typed)), (std::vector<uint8_t>{0, 1, 1}));

  auto raw = make_proto(onnx::TensorProto::BOOL, {3});
  raw.set_raw_data(std::string("\x01\x00\x07", 3));
  EXPECT_EQ(bytes_of_tensor(decode_ok(raw)), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(TensorProtoTest, Float16AndBfloat16BitPatternsInInt32Data) {
  auto h = make_proto(onnx::TensorProto::FLOAT16, {3});
  for (int v : {0x3C00, 0xC000, 0x3800}) h.add_int32_data(v);  // 1.0, -2.0, 0.5
  Tensor th = decode_ok(h);
  ASSERT_EQ(th.dtype(), DataType::kFloat16);
  const auto* hb = th.data<uint16_t>();
  EXPECT_EQ(hb[0], 0x3C00);
  EXPECT_EQ(hb[1], 0xC000);
  EXPECT_FLOAT_EQ(float16_to_float(hb[0]), 1.0f);
  EXPECT_FLOAT_EQ(float16_to_float(hb[1]), -2.0f);
  EXPECT_FLOAT_EQ(float16_to_float(hb[2]), 0.5f);

  auto b = make_proto(onnx::TensorProto::BFLOAT16, {2});
  for (int v : {0x3F80, 0xC040}) b.add_int32_data(v);  // 1.0, -3.0
  Tensor tb = decode_ok(b);
  EXPECT_FLOAT_EQ(bfloat16_to_float(tb.data<uint16_t>()[0]), 1.0f);
  EXPECT_FLOAT_EQ(bfloat16_to_float(tb.data<uint16_t>()[1]), -3.0f);

  auto raw = make_proto(onnx::TensorProto::FLOAT16, {2});
  raw.set_raw_data(bytes_of(std::vector<uint16_t>{0x3C00, 0x4200}));  // 1.0, 3.0
  Tensor tr = decode_ok(raw);
  EXPECT_FLOAT_EQ(float16_to_float(tr.data<uint16_t>()[1]), 3.0f);
}

TEST(TensorProtoTest, Float8TypedAndRaw) {
  // The values of the backend test test_dequantizelinear_e4m3fn.
  auto typed = make_proto(17 /*FLOAT8E4M3FN*/, {5});
  for (int v : {0, 48, 56, 126, 237}) typed.add_int32_data(v);
  Tensor t = decode_ok(typed);
  EXPECT_EQ(t.dtype(), DataType::kFloat8E4M3FN);
  EXPECT_EQ(bytes_of_tensor(t), (std::vector<uint8_t>{0, 48, 56, 126, 237}));

  for (int dt : {18, 19, 20, 24}) {
    auto raw = make_proto(dt, {2});
    raw.set_raw_data(std::string("\x7f\x80", 2));
    Tensor r = decode_ok(raw);
    EXPECT_EQ(static_cast<int>(r.dtype()), dt);
    EXPECT_EQ(bytes_of_tensor(r), (std::vector<uint8_t>{0x7f, 0x80}));
  }
}

TEST(TensorProtoTest, Int4OneValuePerInt32IsPackedLowNibbleFirst) {
  auto p = make_proto(22 /*INT4*/, {5});
  for (int v : {1, -1, 7, -8, 3}) p.add_int32_data(v);
  Tensor t = decode_ok(p);
  EXPECT_EQ(t.dtype(), DataType::kInt4);
  EXPECT_EQ(t.byte_size(), 3u);
  EXPECT_EQ(bytes_of_tensor(t), (std::vector<uint8_t>{0xF1, 0x87, 0x03}));
}

TEST(TensorProtoTest, Int4PackedInt32DataAsWrittenByOnnx) {
  // test_dequantizelinear_int4 input x = [0, 1, 7, -4, -8], stored packed.
  auto p = make_proto(22, {5});
  for (int v : {16, 199, 8}) p.add_int32_data(v);
  EXPECT_EQ(bytes_of_tensor(decode_ok(p)), (std::vector<uint8_t>{0x10, 0xC7, 0x08}));
}

TEST(TensorProtoTest, SubByteTypesFromRawAndInt32) {
  auto u4 = make_proto(21 /*UINT4*/, {3});
  u4.set_raw_data(std::string("\x21\x0f", 2));
  EXPECT_EQ(bytes_of_tensor(decode_ok(u4)), (std::vector<uint8_t>{0x21, 0x0f}));

  auto f4 = make_proto(23 /*FLOAT4E2M1*/, {2});
  for (int v : {0x2, 0xA}) f4.add_int32_data(v);  // 1.0, -1.0 as e2m1 bit patterns
  EXPECT_EQ(bytes_of_tensor(decode_ok(f4)), (std::vector<uint8_t>{0xA2}));

  auto u2 = make_proto(25 /*UINT2*/, {5});
  for (int v : {0, 1, 2, 3, 1}) u2.add_int32_data(v);
  EXPECT_EQ(bytes_of_tensor(decode_ok(u2)), (std::vector<uint8_t>{0xE4, 0x01}));

  auto i2 = make_proto(26 /*INT2*/, {4});
  i2.add_int32_data(180);  // packed, as in test_dequantizelinear_int2
  EXPECT_EQ(bytes_of_tensor(decode_ok(i2)), (std::vector<uint8_t>{180}));

  auto bad = make_proto(22, {5});
  for (int v : {1, 2}) bad.add_int32_data(v);
  Status s = decode_error(bad);
  EXPECT_NE(s.message().find("tensor 't'"), std::string::npos) << s.message();

  auto bad_raw = make_proto(22, {5});
  bad_raw.set_raw_data(std::string(2, '\0'));
  EXPECT_NE(decode_error(bad_raw).message().find("raw_data has 2 bytes"), std::string::npos);
}

TEST(TensorProtoTest, Complex) {
  auto c64 = make_proto(onnx::TensorProto::COMPLEX64, {2});
  for (float v : {1.0f, 2.0f, -3.0f, 4.0f}) c64.add_float_data(v);
  Tensor t = decode_ok(c64);
  EXPECT_EQ(t.dtype(), DataType::kComplex64);
  const float* f = t.data<float>();
  EXPECT_EQ(std::vector<float>(f, f + 4), (std::vector<float>{1.0f, 2.0f, -3.0f, 4.0f}));

  auto c128 = make_proto(onnx::TensorProto::COMPLEX128, {1});
  for (double v : {0.5, -0.25}) c128.add_double_data(v);
  Tensor t2 = decode_ok(c128);
  EXPECT_EQ(t2.data<double>()[0], 0.5);
  EXPECT_EQ(t2.data<double>()[1], -0.25);

  auto short_c = make_proto(onnx::TensorProto::COMPLEX64, {2});
  for (float v : {1.0f, 2.0f, 3.0f}) short_c.add_float_data(v);
  EXPECT_NE(decode_error(short_c).message().find("needs 4 values in float_data but it has 3"), std::string::npos);
}

TEST(TensorProtoTest, Strings) {
  auto p = make_proto(onnx::TensorProto::STRING, {3});
  p.add_string_data("alpha");
  p.add_string_data("");
  p.add_string_data(std::string("a\0b", 3));
  Tensor t = decode_ok(p);
  ASSERT_EQ(t.dtype(), DataType::kString);
  EXPECT_EQ(values_of<std::string>(t), (std::vector<std::string>{"alpha", "", std::string("a\0b", 3)}));

  auto raw = make_proto(onnx::TensorProto::STRING, {1});
  raw.set_raw_data("abc");
  EXPECT_NE(decode_error(raw).message().find("string"), std::string::npos);
}

TEST(TensorProtoTest, ScalarAndEmpty) {
  auto scalar = make_proto(onnx::TensorProto::FLOAT, {});
  scalar.add_float_data(2.5f);
  Tensor s = decode_ok(scalar);
  EXPECT_EQ(s.shape().rank(), 0u);
  EXPECT_EQ(s.data<float>()[0], 2.5f);

  auto empty = make_proto(onnx::TensorProto::FLOAT, {0, 4});
  Tensor e = decode_ok(empty);
  EXPECT_EQ(e.num_elements(), 0);
  EXPECT_EQ(e.shape(), Shape({0, 4}));
}

TEST(TensorProtoTest, ValueCountMismatchNamesTheTensor) {
  auto p = make_proto(onnx::TensorProto::FLOAT, {2, 3}, "weights");
  for (int i = 0; i < 5; ++i) p.add_float_data(1.0f);
  Status s = decode_error(p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("tensor 'weights'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("float[2,3] needs 6 values in float_data but it has 5"), std::string::npos)
      << s.message();

  auto missing = make_proto(onnx::TensorProto::INT64, {2}, "ids");
  EXPECT_NE(decode_error(missing).message().find("needs 2 values in int64_data but it has 0"), std::string::npos);

  auto raw = make_proto(onnx::TensorProto::FLOAT, {4}, "r");
  raw.set_raw_data(std::string(12, '\0'));
  EXPECT_NE(decode_error(raw).message().find("raw_data has 12 bytes but float[4] needs 16"), std::string::npos);
}

TEST(TensorProtoTest, BadDimsAndTypes) {
  auto neg = make_proto(onnx::TensorProto::FLOAT, {2, -1}, "neg");
  Status s = decode_error(neg);
  EXPECT_NE(s.message().find("negative dimension -1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'neg'"), std::string::npos);

  auto huge = make_proto(onnx::TensorProto::FLOAT, {int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30}, "huge");
  Status hs = decode_error(huge);
  EXPECT_NE(hs.message().find("'huge'"), std::string::npos) << hs.message();

  auto untyped = make_proto(0, {1}, "u");
  EXPECT_NE(decode_error(untyped).message().find("no data_type"), std::string::npos);

  auto future = make_proto(99, {1}, "f");
  EXPECT_EQ(decode_error(future).code(), StatusCode::kNotImplemented);
}

TEST(TensorProtoTest, ExternalDataWithoutResolverIsRefused) {
  auto p = make_proto(onnx::TensorProto::FLOAT, {2}, "w");
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = p.add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  Status s = decode_error(p);
  EXPECT_NE(s.message().find("weights.bin"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s.message();
}

TEST(TensorProtoTest, TakeOverLargeRawData) {
  std::vector<float> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  auto p = make_proto(onnx::TensorProto::FLOAT, {64, 64});
  p.set_raw_data(bytes_of(values));
  const void* buffer = p.raw_data().data();
  auto r = take_tensor_from_proto(p, nullptr, "big");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->raw_data(), buffer);  // no copy
  EXPECT_TRUE(p.raw_data().empty());
  EXPECT_EQ(values_of<float>(*r), values);
}

TEST(TensorProtoTest, SparseToDense) {
  onnx::SparseTensorProto sp;
  sp.add_dims(2);
  sp.add_dims(3);
  *sp.mutable_values() = testing::float_tensor("s", {2}, {5.0f, 7.0f});
  auto* idx = sp.mutable_indices();
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(2);
  idx->add_int64_data(1);
  idx->add_int64_data(5);
  auto r = tensor_from_sparse_proto(sp, nullptr, "sparse 's'");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values_of<float>(*r), (std::vector<float>{0, 5, 0, 0, 0, 7}));

  // The same with [NNZ, rank] coordinates: (0,1) and (1,2).
  idx->Clear();
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(2);
  idx->add_dims(2);
  for (int64_t v : {0, 1, 1, 2}) idx->add_int64_data(v);
  auto r2 = tensor_from_sparse_proto(sp, nullptr, "sparse 's'");
  ASSERT_TRUE(r2.ok()) << r2.status().to_string();
  EXPECT_EQ(values_of<float>(*r2), (std::vector<float>{0, 5, 0, 0, 0, 7}));

  idx->set_int64_data(3, 3);  // column 3 of 3
  auto bad = tensor_from_sparse_proto(sp, nullptr, "sparse 's'");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos);
}

TEST(TensorProtoTest, ToProtoRoundTrip) {
  Tensor t = Tensor::allocate(DataType::kInt16, Shape{2, 2}).value();
  int16_t* d = t.data<int16_t>();
  d[0] = -3;
  d[1] = 4;
  d[2] = 32767;
  d[3] = 0;
  onnx::TensorProto p;
  ASSERT_TRUE(tensor_to_proto(t, "x", &p).ok());
  EXPECT_EQ(p.name(), "x");
  EXPECT_EQ(p.data_type(), onnx::TensorProto::INT16);
  EXPECT_EQ(p.raw_data().size(), 8u);
  Tensor back = decode_ok(p);
  EXPECT_EQ(back.shape(), Shape({2, 2}));
  EXPECT_EQ(values_of<int16_t>(back), (std::vector<int16_t>{-3, 4, 32767, 0}));
}

TEST(TensorProtoTest, SaveAndLoadTensorFile) {
  TempDir dir;
  Tensor s = Tensor::allocate(DataType::kString, Shape{2}).value();
  s.data<std::string>()[0] = "hello";
  s.data<std::string>()[1] = "world";
  ASSERT_TRUE(save_tensor_file(s, dir.file("s.pb"), "greeting").ok());
  std::string name;
  auto back = load_tensor_file(dir.file("s.pb"), &name);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(name, "greeting");
  EXPECT_EQ(values_of<std::string>(*back), (std::vector<std::string>{"hello", "world"}));

  Tensor b = Tensor::allocate(DataType::kUint4, Shape{3}).value();
  b.data<uint8_t>()[0] = 0x21;
  b.data<uint8_t>()[1] = 0x03;
  ASSERT_TRUE(save_tensor_file(b, dir.file("b.pb")).ok());
  auto b2 = load_tensor_file(dir.file("b.pb"));
  ASSERT_TRUE(b2.ok()) << b2.status().to_string();
  EXPECT_EQ(b2->dtype(), DataType::kUint4);
  EXPECT_EQ(bytes_of_tensor(*b2), (std::vector<uint8_t>{0x21, 0x03}));
}

TEST(TensorProtoTest, LoadTensorFileErrors) {
  TempDir dir;
  auto missing = load_tensor_file(dir.file("nope.pb"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNoSuchFile);
  EXPECT_NE(missing.status().message().find("No such file: " + dir.file("nope.pb")), std::string::npos);

  testing::write_file(dir.file("junk.pb"), "\xff\xff\xff\xff");
  auto junk = load_tensor_file(dir.file("junk.pb"));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), StatusCode::kInvalidProtobuf);
}

TEST(TensorProtoTest, LoadOnnxBackendTestData) {
  const std::string path = std::string(SY_ONNX_NODE_TESTS) + "/test_abs/test_data_set_0/input_0.pb";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no ONNX backend test data at " << path;
  std::string name;
  auto r = load_tensor_file(path, &name);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(name, "x");
  EXPECT_EQ(r->dtype(), DataType::kFloat);
  EXPECT_EQ(r->shape(), Shape({3, 4, 5}));
  // numpy_helper.to_array() of the same file.
  const float* d = r->data<float>();
  EXPECT_FLOAT_EQ(d[0], 1.764052391052246f);
  EXPECT_FLOAT_EQ(d[1], 0.40015721321105957f);
  EXPECT_FLOAT_EQ(d[2], 0.978738009929657f);
  EXPECT_FLOAT_EQ(d[3], 2.2408931255340576f);
  EXPECT_FLOAT_EQ(d[59], -0.36274117f);

  const std::string int4 = std::string(SY_ONNX_NODE_TESTS) + "/test_dequantizelinear_int4/test_data_set_0/input_0.pb";
  auto q = load_tensor_file(int4);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  EXPECT_EQ(q->dtype(), DataType::kInt4);
  EXPECT_EQ(bytes_of_tensor(*q), (std::vector<uint8_t>{0x10, 0xC7, 0x08}));
}

}  // namespace
}  // namespace sy
