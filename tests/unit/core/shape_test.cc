#include <gtest/gtest.h>

#include "switchyard/shape.h"

namespace sy {
namespace {

TEST(Shape, InlineAndHeapRanksKeepTheirDims) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3u);
  EXPECT_EQ(s.num_elements(), 24);
  for (int i = 0; i < 7; ++i) s.push_back(1);
  EXPECT_EQ(s.rank(), 10u);  // now on the heap
  EXPECT_EQ(s[0], 2);
  EXPECT_EQ(s[2], 4);
  EXPECT_EQ(s.num_elements(), 24);
  s.resize(2);
  EXPECT_EQ(s, (Shape{2, 3}));
  EXPECT_EQ(Shape{}.num_elements(), 1);  // a scalar has one element
  EXPECT_EQ((Shape{2, 0, 3}).num_elements(), 0);
  EXPECT_EQ((Shape{2, 3}).to_string(), "[2,3]");
}

}  // namespace
}  // namespace sy
