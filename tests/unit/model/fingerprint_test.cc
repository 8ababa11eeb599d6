#include "model/fingerprint.h"

#include <gtest/gtest.h>

namespace sy {
namespace {

TEST(FingerprintTest, PartsAreSeparatedAndTheValueIsFixed) {
  EXPECT_NE(Fingerprint().add("ab").add("c").hex(), Fingerprint().add("a").add("bc").hex());
  EXPECT_EQ(Fingerprint().add("ab").hex(), Fingerprint().add("ab").hex());
  // No part: FNV-1a's offset basis, the same in every process.
  EXPECT_EQ(Fingerprint().hex(), "cbf29ce484222325");
  EXPECT_EQ(Fingerprint().hex().size(), 16u);
}

}  // namespace
}  // namespace sy
