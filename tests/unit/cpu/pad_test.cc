// Pad and CenterCropPad against the spec's examples, numpy.pad results
// written out by hand, and a reference loop that crops and then pads one
// element at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

const std::vector<float> kSpecData = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};  // [3,2]

Result<std::vector<Tensor>> pad(int opset, const Tensor& data, std::vector<int64_t> pads, const std::string& mode,
                                bool constant_pads = false) {
  NodeTest t("Pad", opset);
  t.input(data);
  Tensor p = make_tensor<int64_t>({static_cast<int64_t>(pads.size())}, pads);
  if (constant_pads) {
    t.constant_input(p);
  } else {
    t.input(p);
  }
  t.attr("mode", mode);
  return t.run();
}

TEST(PadKernel, SpecExamplesAllModes) {
  const Tensor data = make_tensor<float>({3, 2}, kSpecData);
  auto c = pad(19, data, {0, 2, 0, 0}, "constant");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<float>({3, 4}, {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}));
  auto r = pad(19, data, {0, 2, 0, 0}, "reflect");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_tensor_eq(
      r->at(0), make_tensor<float>({3, 4}, {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  auto e = pad(19, data, {0, 2, 0, 0}, "edge");
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  expect_tensor_eq(
      e->at(0), make_tensor<float>({3, 4}, {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}));
  auto w = pad(19, data, {2, 1, 1, 1}, "wrap");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  expect_tensor_eq(
      w->at(0), make_tensor<float>({6, 4}, {3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                                            3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f}));
}

TEST(PadKernel, PadsLongerThanTheAxisRepeatLikeNumpy) {
  const Tensor data = make_tensor<int32_t>({3}, {1, 2, 3});
  // np.pad([1,2,3], (5,4), mode)
  auto r = pad(19, data, {5, 4}, "reflect");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_tensor_eq(r->at(0), make_tensor<int32_t>({12}, {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}));
  auto w = pad(19, data, {5, 4}, "wrap");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  expect_tensor_eq(w->at(0), make_tensor<int32_t>({12}, {2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1}));
  auto e = pad(19, data, {2, 2}, "edge");
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  expect_tensor_eq(e->at(0), make_tensor<int32_t>({7}, {1, 1, 1, 2, 3, 3, 3}));
  auto one = pad(19, make_tensor<int32_t>({1}, {7}), {2, 2}, "reflect");
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  expect_tensor_eq(one->at(0), make_tensor<int32_t>({5}, {7, 7, 7, 7, 7}));
}

TEST(PadKernel, NegativePadsCropBeforePadding) {
  const Tensor data = make_tensor<int32_t>({4}, {1, 2, 3, 4});
  // Crop [1:] then pad 2 at the end: np.pad([2,3,4], (0,2), mode).
  auto w = pad(19, data, {-1, 2}, "wrap");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  expect_tensor_eq(w->at(0), make_tensor<int32_t>({5}, {2, 3, 4, 2, 3}));
  auto r = pad(19, data, {-1, 2}, "reflect");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_tensor_eq(r->at(0), make_tensor<int32_t>({5}, {2, 3, 4, 3, 2}));
  auto c = pad(13, make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), {-1, 1, 0, -1}, "constant");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<int32_t>({1, 3}, {0, 4, 5}));
}

// Constant and edge padding the slow way: crops, then grows each axis one
// element at a time at each end.
std::vector<int> reference_pad(const std::vector<int>& data, std::vector<int64_t> dims,
                               const std::vector<int64_t>& pads, const std::string& mode, int fill) {
  const size_t r = dims.size();
  std::vector<int> cur = data;
  auto strides = [](const std::vector<int64_t>& d) {
    std::vector<int64_t> s(d.size(), 1);
    for (size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
    return s;
  };
  // Rebuilds `cur` along axis k with the axis positions given by `src`
  // (-1: the fill value).
  auto remap = [&](size_t k, const std::vector<int64_t>& src) {
    std::vector<int64_t> nd = dims;
    nd[k] = static_cast<int64_t>(src.size());
    const auto os = strides(dims);
    const auto ns = strides(nd);
    int64_t total = 1;
    for (int64_t d : nd) total *= d;
    std::vector<int> next(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      int64_t rem = i, off = 0;
      bool fill_here = false;
      for (size_t a = 0; a < r; ++a) {
        int64_t idx = rem / ns[a];
        rem %= ns[a];
        if (a == k) {
          idx = src[static_cast<size_t>(idx)];
          if (idx < 0) fill_here = true;
        }
        off += idx * os[a];
      }
      next[static_cast<size_t>(i)] = fill_here ? fill : cur[static_cast<size_t>(off)];
    }
    cur = std::move(next);
    dims = nd;
  };
  for (size_t k = 0; k < r; ++k) {
    const int64_t b = pads[k], e = pads[k + r];
    std::vector<int64_t> keep;
    for (int64_t i = std::max<int64_t>(0, -b); i < dims[k] - std::max<int64_t>(0, -e); ++i) keep.push_back(i);
    remap(k, keep);
    for (int64_t step = 0; step < std::max<int64_t>(b, 0); ++step) {
      std::vector<int64_t> src{mode == "edge" ? 0 : -1};
      for (int64_t i = 0; i < dims[k]; ++i) src.push_back(i);
      remap(k, src);
    }
    for (int64_t step = 0; step < std::max<int64_t>(e, 0); ++step) {
      std::vector<int64_t> src;
      for (int64_t i = 0; i < dims[k]; ++i) src.push_back(i);
      src.push_back(mode == "edge" ? dims[k] - 1 : -1);
      remap(k, src);
    }
  }
  return cur;
}

TEST(PadKernel, ConstantAndEdgeMatchReferenceOn3D) {
  const std::vector<int64_t> dims = {3, 4, 5};
  std::vector<int> data(60);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int>(i * 7 % 23) - 11;
  const std::vector<int64_t> pads = {1, -1, 2, 0, 2, -2};
  for (const std::string mode : {"constant", "edge"}) {
    NodeTest t("Pad", 18);
    t.input(make_tensor<int32_t>({3, 4, 5}, data))
        .input(make_tensor<int64_t>({6}, pads))
        .input(make_tensor<int32_t>({}, {9}))
        .attr("mode", mode);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << mode << ": " << out.status().to_string();
    ASSERT_EQ(out->at(0).shape(), (Shape{4, 5, 5})) << mode;
    EXPECT_EQ(to_vector<int32_t>(out->at(0)), reference_pad(data, dims, pads, mode, 9)) << mode;
  }
}

TEST(PadKernel, BigTensorWithThreadsMatchesReference) {
  const std::vector<int64_t> dims = {2, 64, 300};
  std::vector<int> data(2 * 64 * 300);
  std::iota(data.begin(), data.end(), 0);
  const std::vector<int64_t> pads = {0, 3, 5, 1, 0, 7};
  auto out = NodeTest("Pad", 13)
                 .input(make_tensor<int32_t>({2, 64, 300}, data))
                 .constant_input(make_tensor<int64_t>({6}, pads))
                 .attr("mode", "edge")
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).shape(), (Shape{3, 67, 312}));
  EXPECT_EQ(to_vector<int32_t>(out->at(0)), reference_pad(data, dims, pads, "edge", 0));
}

TEST(PadKernel, AttributeFormBeforeOpset11) {
  // Pad-2: pads and value are attributes.
  auto out = NodeTest("Pad", 2)
                 .input(make_tensor<float>({1, 2}, {1, 2}))
                 .attr("pads", std::vector<int64_t>{1, 0, 0, 1})
                 .attr("value", 1.5f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {1.5f, 1.5f, 1.5f, 1, 2, 1.5f}));
  auto d = NodeTest("Pad", 2)
               .input(make_tensor<double>({2}, {1, 2}))
               .attr("pads", std::vector<int64_t>{1, 1})
               .attr("mode", "reflect")
               .run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_tensor_eq(d->at(0), make_tensor<double>({4}, {2, 1, 2, 1}));
}

TEST(PadKernel, AxesInputWithNegativeAxes) {
  NodeTest t("Pad", 18);
  t.input(make_tensor<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
      .constant_input(make_tensor<int64_t>({4}, {1, 0, 0, 1}))
      .constant_input(make_tensor<int64_t>({}, {-1}))
      .constant_input(make_tensor<int32_t>({2}, {-1, 0}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Axis 2: one -1 in front; axis 0: one plane of -1 after.
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({3, 2, 3}, {-1, 1, 2, -1, 3, 4, -1, 5, 6, -1, 7, 8,  //
                                                                -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[3,2,3]");
}

TEST(PadKernel, StringsAndBoolWithConstantValue) {
  auto s = NodeTest("Pad", 13)
               .input(make_tensor<std::string>({2}, {"a", "a string long enough to live on the heap"}))
               .input(make_tensor<int64_t>({2}, {1, 1}))
               .input(make_tensor<std::string>({}, {"pad"}))
               .run();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_tensor_eq(s->at(0),
                   make_tensor<std::string>({4}, {"pad", "a", "a string long enough to live on the heap", "pad"}));
  auto b =
      NodeTest("Pad", 13).input(testing::make_bool_tensor({2}, {1, 0})).input(make_tensor<int64_t>({2}, {0, 2})).run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), testing::make_bool_tensor({4}, {1, 0, 0, 0}));
}

TEST(PadKernel, ScalarAndEmptyInputs) {
  auto scalar = NodeTest("Pad", 13).input(make_tensor<float>({}, {3})).input(make_tensor<int64_t>({0}, {})).run();
  ASSERT_TRUE(scalar.ok()) << scalar.status().to_string();
  expect_tensor_eq(scalar->at(0), make_tensor<float>({}, {3}));
  // An empty axis can be padded with a constant but not reflected.
  auto empty =
      NodeTest("Pad", 13).input(make_tensor<float>({0, 2}, {})).input(make_tensor<int64_t>({4}, {1, 0, 0, 0})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  expect_tensor_eq(empty->at(0), make_tensor<float>({1, 2}, {0, 0}));
  auto bad = NodeTest("Pad", 13)
                 .input(make_tensor<float>({0, 2}, {}))
                 .input(make_tensor<int64_t>({4}, {1, 0, 0, 0}))
                 .attr("mode", "reflect")
                 .run();
  EXPECT_FALSE(bad.ok());
}

// Packed types: 4- and 2-bit elements, the first in the low bits of a byte.
Tensor packed_tensor(DataType dtype, const Shape& shape, const std::vector<uint8_t>& bytes) {
  Tensor t = Tensor::allocate(dtype, shape).value();
  EXPECT_EQ(t.byte_size(), bytes.size());
  std::copy(bytes.begin(), bytes.end(), static_cast<uint8_t*>(t.raw_data()));
  return t;
}

std::vector<uint8_t> raw_bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

TEST(PadKernel, PackedInt4AndUint2) {
  // int4 [1, -2, 7] padded 1 before and 2 after with -1: [-1, 1, -2, 7, -1, -1].
  auto i4 = NodeTest("Pad", 21)
                .input(packed_tensor(DataType::kInt4, {3}, {0xE1, 0x07}))
                .input(make_tensor<int64_t>({2}, {1, 2}))
                .input(packed_tensor(DataType::kInt4, {}, {0x0F}))
                .run();
  ASSERT_TRUE(i4.ok()) << i4.status().to_string();
  ASSERT_EQ(i4->at(0).dtype(), DataType::kInt4);
  ASSERT_EQ(i4->at(0).shape(), (Shape{6}));
  EXPECT_EQ(raw_bytes(i4->at(0)), (std::vector<uint8_t>{0x1F, 0x7E, 0xFF}));
  // uint2 [1, 2, 3] wrapped by 2 before and 1 after: [2, 3, 1, 2, 3, 1].
  auto u2 = NodeTest("Pad", 25)
                .input(packed_tensor(DataType::kUint2, {3}, {0x39}))
                .input(make_tensor<int64_t>({2}, {2, 1}))
                .attr("mode", "wrap")
                .run();
  ASSERT_TRUE(u2.ok()) << u2.status().to_string();
  EXPECT_EQ(raw_bytes(u2->at(0)), (std::vector<uint8_t>{0x9E, 0x07}));
}

TEST(PadKernel, Errors) {
  const Tensor data = make_tensor<float>({3, 2}, kSpecData);
  auto wrong_len = pad(13, data, {0, 1, 0}, "constant");
  ASSERT_FALSE(wrong_len.ok());
  EXPECT_NE(wrong_len.status().message().find("pads"), std::string::npos) << wrong_len.status().message();
  auto too_negative = pad(13, data, {-2, 0, -2, 0}, "constant");
  ASSERT_FALSE(too_negative.ok());
  EXPECT_NE(too_negative.status().message().find("negative"), std::string::npos) << too_negative.status().message();
  auto bad_mode = pad(13, data, {0, 0, 0, 0}, "mirror");
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.status().message().find("mirror"), std::string::npos) << bad_mode.status().message();
  // wrap arrived in opset 19.
  EXPECT_FALSE(pad(18, data, {0, 0, 0, 0}, "wrap").ok());
}

TEST(PadKernel, InferenceWithConstantAndRuntimePads) {
  NodeTest known("Pad", 13);
  known.input(make_tensor<float>({3, 2}, kSpecData))
      .constant_input(make_tensor<int64_t>({4}, {1, 2, 0, -1}))
      .attr("mode", "edge");
  ASSERT_TRUE(known.run().ok());
  EXPECT_EQ(known.graph().values[static_cast<size_t>(known.graph().outputs[0])].type.shape_string(), "[4,3]");
}

// ---- CenterCropPad ------------------------------------------------------------

TEST(CenterCropPadKernel, CropAndPadCenters) {
  // [4,3] -> [3,5]: rows cropped from 0 (floor(1/2)), columns padded 1 left, 1 right.
  std::vector<int32_t> data(12);
  std::iota(data.begin(), data.end(), 1);
  NodeTest t("CenterCropPad", 18);
  t.input(make_tensor<int32_t>({4, 3}, data)).constant_input(make_tensor<int64_t>({2}, {3, 5}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({3, 5}, {0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 7, 8, 9, 0}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[3,5]");
  // [5] -> [2]: start at floor(3/2) = 1; [2] -> [5]: 1 before, 2 after.
  auto crop = NodeTest("CenterCropPad", 18)
                  .input(make_tensor<float>({5}, {1, 2, 3, 4, 5}))
                  .input(make_tensor<int32_t>({1}, {2}))
                  .run();
  ASSERT_TRUE(crop.ok()) << crop.status().to_string();
  expect_tensor_eq(crop->at(0), make_tensor<float>({2}, {2, 3}));
  auto grow =
      NodeTest("CenterCropPad", 18).input(make_tensor<float>({2}, {1, 2})).input(make_tensor<int64_t>({1}, {5})).run();
  ASSERT_TRUE(grow.ok()) << grow.status().to_string();
  expect_tensor_eq(grow->at(0), make_tensor<float>({5}, {0, 1, 2, 0, 0}));
}

TEST(CenterCropPadKernel, NegativeAxesLeaveOtherAxesAlone) {
  std::vector<int32_t> data(2 * 4 * 2);
  std::iota(data.begin(), data.end(), 0);
  auto out = NodeTest("CenterCropPad", 18)
                 .input(make_tensor<int32_t>({2, 4, 2}, data))
                 .input(make_tensor<int64_t>({1}, {2}))
                 .attr("axes", std::vector<int64_t>{-2})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Rows 1 and 2 of each [4,2] plane.
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 2, 2}, {2, 3, 4, 5, 10, 11, 12, 13}));
  auto bad = NodeTest("CenterCropPad", 18)
                 .input(make_tensor<int32_t>({2, 4, 2}, data))
                 .input(make_tensor<int64_t>({2}, {2, 2}))
                 .attr("axes", std::vector<int64_t>{-2})
                 .run();
  EXPECT_FALSE(bad.ok());
}

// Pads anywhere in int64. [3, -6] on 5 elements pads 3 and crops 6 from the
// end, leaving 2: the row writer used to write 3 (past the row).
TEST(PadKernel, ExtremePadsAreCheckedOrExact) {
  const Tensor five = make_tensor<float>({5}, {1, 2, 3, 4, 5});
  auto crop_past = pad(13, five, {3, -6}, "constant");
  ASSERT_TRUE(crop_past.ok()) << crop_past.status().to_string();
  expect_tensor_eq(crop_past->at(0), make_tensor<float>({2}, {0, 0}));
  // A pad and an equal crop cancel: INT64_MAX zeros then the data, cropped
  // by INT64_MAX from the end, leaves the first 3 zeros.
  const Tensor three = make_tensor<float>({3}, {1, 2, 3});
  auto cancel = pad(13, three, {INT64_MAX, -INT64_MAX}, "constant");
  ASSERT_TRUE(cancel.ok()) << cancel.status().to_string();
  expect_tensor_eq(cancel->at(0), make_tensor<float>({3}, {0, 0, 0}));
  auto crop_all = pad(13, three, {INT64_MIN, INT64_MAX}, "constant");
  ASSERT_TRUE(crop_all.ok()) << crop_all.status().to_string();
  expect_tensor_eq(crop_all->at(0), make_tensor<float>({2}, {0, 0}));

  auto overflow = pad(13, three, {INT64_MAX, 1}, "constant");
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().code(), StatusCode::kInvalidArgument) << overflow.status().to_string();
  EXPECT_NE(overflow.status().message().find("overflow int64"), std::string::npos) << overflow.status().message();
  auto overflow_sum = pad(13, three, {INT64_MAX - 1, 0}, "constant");
  ASSERT_FALSE(overflow_sum.ok());
  EXPECT_NE(overflow_sum.status().message().find("overflow int64"), std::string::npos)
      << overflow_sum.status().message();
  auto negative = pad(13, three, {INT64_MIN, 0}, "reflect");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("negative"), std::string::npos) << negative.status().message();
  // Constant pads: inference refuses the model before it runs.
  auto inferred = pad(13, three, {INT64_MAX, 1}, "constant", /*constant_pads=*/true);
  ASSERT_FALSE(inferred.ok());
  EXPECT_NE(inferred.status().message().find("overflow int64"), std::string::npos) << inferred.status().message();
}

}  // namespace
}  // namespace sy
