// The overflow-checked size arithmetic: checked add / sub / mul, element
// counts, and the Slice / Range counts, against values computed by hand,
// numpy and Python's exact range().
#include "core/checked_math.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace sy {
namespace {

TEST(CheckedMath, AddSubMulReportOverflow) {
  int64_t r = 0;
  EXPECT_TRUE(checked_add(INT64_MAX - 1, 1, r));
  EXPECT_EQ(r, INT64_MAX);
  EXPECT_FALSE(checked_add(INT64_MAX, 1, r));
  EXPECT_FALSE(checked_add(INT64_MIN, -1, r));
  EXPECT_TRUE(checked_sub(-1, INT64_MAX, r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_FALSE(checked_sub(0, INT64_MIN, r));
  EXPECT_TRUE(checked_mul(3037000499, 3037000499, r));
  EXPECT_EQ(r, 9223372030926249001);
  EXPECT_FALSE(checked_mul(3037000500, 3037000500, r));
  EXPECT_FALSE(checked_mul(INT64_MIN, -1, r));
  EXPECT_TRUE(checked_mul(INT64_MIN, 1, r));
  EXPECT_EQ(r, INT64_MIN);
}

TEST(CheckedMath, ElementCountIgnoresOrderAndZeros) {
  int64_t n = -1;
  ASSERT_TRUE(checked_element_count(std::vector<int64_t>{2, 3, 4}, n).ok());
  EXPECT_EQ(n, 24);
  ASSERT_TRUE(checked_element_count(std::vector<int64_t>{}, n).ok());
  EXPECT_EQ(n, 1);
  // A zero anywhere gives 0 as long as the other dims' product fits.
  ASSERT_TRUE(checked_element_count(std::vector<int64_t>{INT64_MAX, 0}, n).ok());
  EXPECT_EQ(n, 0);
  ASSERT_TRUE(checked_element_count(std::vector<int64_t>{0, INT64_MAX}, n).ok());
  EXPECT_EQ(n, 0);
  // 2^32 * 2^32 does not fit whatever the zero.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32, 0},
                                           std::vector<int64_t>{0, int64_t{1} << 32, int64_t{1} << 32}}) {
    const Status st = checked_element_count(dims, n);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("overflows"), std::string::npos) << st.message();
  }
  const Status negative = checked_element_count(std::vector<int64_t>{2, -1}, n);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.message().find("[2,-1] has a negative dimension -1"), std::string::npos) << negative.message();

  int64_t bytes = 0;
  ASSERT_TRUE(checked_byte_size(std::vector<int64_t>{3, 5}, 8, bytes).ok());
  EXPECT_EQ(bytes, 120);
  EXPECT_FALSE(checked_byte_size(std::vector<int64_t>{int64_t{1} << 61}, 8, bytes).ok());
}

// np.arange(7)[start:end:step] has len() == count and starts at first.
TEST(CheckedMath, SliceAxisMatchesNumpyAtTheLimits) {
  struct Case {
    int64_t start, end, step, count, first;
  };
  const Case cases[] = {
      {0, INT64_MAX, INT64_MAX, 1, 0},  {INT64_MAX, INT64_MIN, INT64_MIN, 1, 6},
      {INT64_MIN, INT64_MAX, INT64_MAX, 1, 0}, {5, INT64_MIN, INT64_MIN, 1, 5},
      {INT64_MIN, INT64_MAX, 1, 7, 0},  {INT64_MAX, INT64_MIN, -1, 7, 6},
      {1, 6, 2, 3, 1},                  {6, 0, -2, 3, 6},
      {-3, -1, 1, 2, 4},                {INT64_MIN + 1, INT64_MAX, -INT64_MAX, 0, 0},
  };
  for (const Case& c : cases) {
    int64_t first = -1;
    EXPECT_EQ(slice_axis(7, c.start, c.end, c.step, first), c.count) << c.start << ":" << c.end << ":" << c.step;
    if (c.count > 0) {
      EXPECT_EQ(first, c.first) << c.start << ":" << c.end << ":" << c.step;
    }
  }
  int64_t first = -1;
  EXPECT_EQ(slice_axis(0, INT64_MIN, INT64_MAX, INT64_MIN, first), 0);
  // The longest axis there can be, stepped by the largest steps.
  EXPECT_EQ(slice_axis(INT64_MAX, 0, INT64_MAX, 1, first), INT64_MAX);
  EXPECT_EQ(slice_axis(INT64_MAX, 0, INT64_MAX, 2, first), int64_t{1} << 62);
  EXPECT_EQ(slice_axis(INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN, first), 1);  // MAX-1, then past the end
}

TEST(CheckedMath, RangeCountIsExact) {
  EXPECT_EQ(range_count(10, 6, -3), 2u);
  EXPECT_EQ(range_count(0, 5, -1), 0u);
  EXPECT_EQ(range_count(3, 3, 1), 0u);
  EXPECT_EQ(range_count(INT64_MIN, INT64_MAX, INT64_MAX), 3u);  // len(range(...)) in Python
  EXPECT_EQ(range_count(INT64_MAX, INT64_MIN, INT64_MIN), 2u);
  EXPECT_EQ(range_count(INT64_MIN, INT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(range_count(INT64_MAX, INT64_MIN, -1), UINT64_MAX);
  EXPECT_EQ(range_count(INT64_MAX - 5, INT64_MAX, 2), 3u);
}

}  // namespace
}  // namespace sy
