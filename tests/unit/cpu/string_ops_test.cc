// StringNormalizer, StringSplit, StringConcat and RegexFullMatch. Expected
// values are Python's (str.upper/lower/split, the re2 module), which ONNX's
// reference implementation uses, written out by hand; the bigger cases
// compare against plain loops in this file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

using Strings = std::vector<std::string>;

Tensor strings(const Shape& shape, const Strings& values) { return make_tensor<std::string>(shape, values); }

// ---- StringNormalizer ------------------------------------------------------------

Result<std::vector<Tensor>> normalize(const Tensor& x, const std::string& action, int sensitive,
                                      const Strings& stopwords) {
  NodeTest t("StringNormalizer", 10);
  t.input(x).attr("case_change_action", action).attr("is_case_sensitive", sensitive);
  if (!stopwords.empty()) t.attr("stopwords", stopwords);
  return t.run();
}

// One string in, one out, no stop words.
std::string change_case(const std::string& s, const std::string& action) {
  auto out = normalize(strings({1}, {s}), action, 1, {});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return "<error>";
  return to_vector<std::string>(out->at(0)).at(0);
}

TEST(StringNormalizerKernel, UpperCasesLatinGreekAndCyrillic) {
  EXPECT_EQ(change_case("hello, World 42", "UPPER"), "HELLO, WORLD 42");
  EXPECT_EQ(change_case("àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþ", "UPPER"), "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ");
  EXPECT_EQ(change_case("āăąćĉċčďđēĕėęěĝğġģĥħĩīĭįĳĵķĺļľŀłńņňŋōŏőœŕŗřśŝşšţťŧũūŭůűųŵŷźżž", "UPPER"),
            "ĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮĲĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŹŻŽ");
  EXPECT_EQ(change_case("абвгдеёжзийклмнопрстуфхцчшщъыьэюяѐђѓєѕіїјљњћќѝўџ", "UPPER"),
            "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯЀЂЃЄЅІЇЈЉЊЋЌЍЎЏ");
  EXPECT_EQ(change_case("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋ", "UPPER"), "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΆΈΉΊΌΎΏΪΫ");
  EXPECT_EQ(change_case("ÿ ǆ ǅ ȿ", "UPPER"), "Ÿ Ǆ Ǆ Ȿ");
  // Mappings to several code points.
  EXPECT_EQ(change_case("straße", "UPPER"), "STRASSE");
  EXPECT_EQ(change_case("ŉ", "UPPER"), "ʼN");
  EXPECT_EQ(change_case("ΐ", "UPPER"), "\u0399\u0308\u0301");  // Ι, then diaeresis and acute as marks
  // Scripts outside the tables pass through.
  EXPECT_EQ(change_case("中文 ﬁ", "UPPER"), "中文 ﬁ");
}

TEST(StringNormalizerKernel, LowerCasesWithFinalSigma) {
  EXPECT_EQ(change_case("ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ", "LOWER"), "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþ");
  EXPECT_EQ(change_case("ПРИВЕТ ŁÓDŹ ǅ ẞ", "LOWER"), "привет łódź ǆ ß");
  EXPECT_EQ(change_case("İstanbul", "LOWER"), "i̇stanbul");
  // Σ ends a word (ς) when a cased letter precedes it and none follows,
  // looking through case-ignorable characters such as '.' and '\''.
  EXPECT_EQ(change_case("ΟΔΟΣ", "LOWER"), "οδος");
  EXPECT_EQ(change_case("ΑΣ Σ ΑΣΑ", "LOWER"), "ας σ ασα");
  EXPECT_EQ(change_case("ΑΣ.Α", "LOWER"), "ασ.α");
  EXPECT_EQ(change_case("ΑΣ'", "LOWER"), "ας'");
}

TEST(StringNormalizerKernel, PassesBytesThatAreNotUtf8Through) {
  EXPECT_EQ(change_case("\xff\xfe" "Ab\xc3", "LOWER"), "\xff\xfe" "ab\xc3");
  EXPECT_EQ(change_case("\xc3\x28" "é", "UPPER"), "\xc3\x28" "É");  // a broken pair, then é
}

TEST(StringNormalizerKernel, DropsStopWordsCaseInsensitively) {
  auto out = normalize(strings({5}, {"Monday", "tuesday", "MONDAY", "mondays", "monDay"}), "UPPER", 0, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"TUESDAY", "MONDAYS"}));
  out = normalize(strings({3}, {"Monday", "tuesday", "Wednesday"}), "LOWER", 0, {"MONDAY"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"tuesday", "wednesday"}));
  // NONE keeps the case but still matches without it.
  out = normalize(strings({3}, {"Monday", "tuesday", "Wednesday"}), "NONE", 0, {"MONDAY"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"tuesday", "Wednesday"}));
  // Beyond ASCII: ß upper-cases to SS on both sides.
  out = normalize(strings({2}, {"STRASSE", "weg"}), "UPPER", 0, {"straße"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({1}, {"WEG"}));
}

TEST(StringNormalizerKernel, DropsStopWordsCaseSensitivelyBeforeChangingCase) {
  auto out = normalize(strings({3}, {"Monday", "monday", "x"}), "LOWER", 1, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"monday", "x"}));
}

TEST(StringNormalizerKernel, RemovesStopWordsInsideStrings) {
  // As the reference does: strings are cut at spaces, stop words dropped,
  // the rest joined with spaces ("a  b": the empty word between the two
  // spaces stays).
  auto out = normalize(strings({3}, {"monday tuesday", "a  monday b", "monday monday"}), "NONE", 1, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"tuesday", "a  b"}));
}

TEST(StringNormalizerKernel, EmptyResultsAreDropped) {
  auto out = normalize(strings({3}, {"", "x", ""}), "NONE", 0, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({1}, {"x"}));
  // All gone: one empty string, [1] or [1, 1].
  out = normalize(strings({2}, {"monday", "Monday"}), "LOWER", 0, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({1}, {""}));
  out = normalize(strings({1, 2}, {"monday", "Monday"}), "LOWER", 0, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({1, 1}, {""}));
  out = normalize(strings({0}, {}), "LOWER", 0, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({1}, {""}));
}

TEST(StringNormalizerKernel, SeveralRowsKeepTheirShape) {
  auto out = normalize(strings({2, 2}, {"monday", "x", "y", "Monday"}), "UPPER", 0, {"monday"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2, 2}, {"", "X", "Y", ""}));
}

TEST(StringNormalizerKernel, RejectsBadAttributesAndShapes) {
  EXPECT_FALSE(normalize(strings({1}, {"a"}), "TITLE", 0, {}).ok());
  EXPECT_FALSE(normalize(strings({1}, {"a"}), "NONE", 2, {}).ok());
  auto out = normalize(strings({1, 1, 1}, {"a"}), "NONE", 0, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().to_string().find("[C] or [1, C]"), std::string::npos) << out.status().to_string();
  EXPECT_FALSE(normalize(strings({}, {"a"}), "NONE", 0, {}).ok());
}

// ---- StringSplit ----------------------------------------------------------------

struct Split {
  Tensor pieces;
  Tensor counts;
};

Split split(const Tensor& x, const std::string* delimiter, int64_t maxsplit, int threads = 1) {
  NodeTest t("StringSplit", 20);
  t.input(x).outputs(2).threads(threads);
  if (delimiter != nullptr) t.attr("delimiter", *delimiter);
  if (maxsplit != INT64_MIN) t.attr("maxsplit", maxsplit);
  auto out = t.run();
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  return {out->at(0), out->at(1)};
}

constexpr int64_t kNoMaxsplit = INT64_MIN;

TEST(StringSplitKernel, SplitsAtEveryDelimiterKeepingEmptyPieces) {
  const std::string comma = ",";
  Split s = split(strings({3}, {"a,b,,c", "", ","}), &comma, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({3, 4}, {"a", "b", "", "c", "", "", "", "", "", "", "", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({3}, {4, 1, 2}));
  const std::string ab = "ab";
  s = split(strings({1}, {"xabyabab"}), &ab, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({1, 4}, {"x", "y", "", ""}));
  const std::string dot = ".";
  s = split(strings({2}, {"a.b.c", "abc"}), &dot, 1);
  expect_tensor_eq(s.pieces, strings({2, 2}, {"a", "b.c", "abc", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({2}, {2, 1}));
}

TEST(StringSplitKernel, SplitsAtWhitespaceRuns) {
  const std::string none;
  // Tab, no-break space, ideographic space, U+001C and a line separator
  // are all whitespace to Python.
  Split s = split(strings({2}, {"a\xc2\xa0" "b\xe3\x80\x80" "c\td", "\x1c x\xe2\x80\xa8"}), &none, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({2, 4}, {"a", "b", "c", "d", "x", "", "", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({2}, {4, 1}));
  // Unset delimiter, empty and blank strings: no pieces.
  s = split(strings({3}, {"  hello   world ", "", "   "}), nullptr, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({3, 2}, {"hello", "world", "", "", "", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({3}, {2, 0, 0}));
}

TEST(StringSplitKernel, MaxsplitKeepsTheRest) {
  // Python: " a  b ".split(None, 1) == ['a', 'b '], " a b ".split(None, 0)
  // == ['a b '], "a ".split(None, 1) == ['a'].
  Split s = split(strings({3}, {" a  b ", "a ", "   "}), nullptr, 1);
  expect_tensor_eq(s.pieces, strings({3, 2}, {"a", "b ", "a", "", "", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({3}, {2, 1, 0}));
  s = split(strings({1}, {" a b "}), nullptr, 0);
  expect_tensor_eq(s.pieces, strings({1, 1}, {"a b "}));
  // Negative is no limit, as in Python.
  s = split(strings({1}, {"a b c"}), nullptr, -1);
  expect_tensor_eq(s.pieces, strings({1, 3}, {"a", "b", "c"}));
}

TEST(StringSplitKernel, AddsAnAxisToAnyShape) {
  const std::string dash = "-";
  Split s = split(strings({2, 2}, {"a-b", "c", "d-e-f", ""}), &dash, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({2, 2, 3}, {"a", "b", "", "c", "", "", "d", "e", "f", "", "", ""}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({2, 2}, {2, 1, 3, 1}));
  s = split(strings({}, {"x y"}), nullptr, kNoMaxsplit);
  expect_tensor_eq(s.pieces, strings({2}, {"x", "y"}));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({}, {2}));
  s = split(strings({2, 0}, {}), nullptr, kNoMaxsplit);
  EXPECT_EQ(s.pieces.shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(s.counts.shape(), (Shape{2, 0}));
}

TEST(StringSplitKernel, ManyStringsOnTwoThreadsMatchAPlainSplit) {
  Strings in;
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    for (int k = 0; k < i % 7; ++k) s += std::to_string(i * 31 + k) + (k % 3 == 0 ? ";;" : ";");
    in.push_back(s);
  }
  // A plain reference: every ";" splits.
  std::vector<Strings> rows;
  size_t widest = 0;
  for (const std::string& s : in) {
    Strings row(1);
    for (char c : s) {
      if (c == ';') {
        row.emplace_back();
      } else {
        row.back() += c;
      }
    }
    widest = std::max(widest, row.size());
    rows.push_back(row);
  }
  Strings expected;
  std::vector<int64_t> counts;
  for (Strings& row : rows) {
    counts.push_back(static_cast<int64_t>(row.size()));
    row.resize(widest);
    expected.insert(expected.end(), row.begin(), row.end());
  }
  const std::string semicolon = ";";
  Split s = split(strings({3000}, in), &semicolon, kNoMaxsplit, 2);
  expect_tensor_eq(s.pieces, strings({3000, static_cast<int64_t>(widest)}, expected));
  expect_tensor_eq(s.counts, make_tensor<int64_t>({3000}, counts));
}

// ---- StringConcat ---------------------------------------------------------------

TEST(StringConcatKernel, BroadcastsLikeNumpy) {
  auto out = NodeTest("StringConcat", 20)
                 .input(strings({2, 1}, {"a", "b"}))
                 .input(strings({3}, {"x", "", "zé"}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2, 3}, {"ax", "a", "azé", "bx", "b", "bzé"}));
  out = NodeTest("StringConcat", 20).input(strings({}, {"<"})).input(strings({2}, {"p", "q"})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({2}, {"<p", "<q"}));
  out = NodeTest("StringConcat", 20).input(strings({0}, {})).input(strings({1}, {"s"})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{0}));
}

TEST(StringConcatKernel, ManyOnTwoThreadsAndMismatchedShapes) {
  Strings left;
  Strings right;
  Strings expected;
  for (int i = 0; i < 64; ++i) left.push_back("row" + std::to_string(i) + "-");
  for (int j = 0; j < 100; ++j) right.push_back(std::string(static_cast<size_t>(j % 40), 'x'));
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 100; ++j) expected.push_back(left[static_cast<size_t>(i)] + right[static_cast<size_t>(j)]);
  auto out = NodeTest("StringConcat", 20)
                 .input(strings({64, 1}, left))
                 .input(strings({1, 100}, right))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), strings({64, 100}, expected));
  auto mismatched =
      NodeTest("StringConcat", 20).input(strings({2}, {"a", "b"})).input(strings({3}, {"a", "b", "c"})).run();
  EXPECT_FALSE(mismatched.ok());
}

// ---- RegexFullMatch -------------------------------------------------------------

Result<std::vector<Tensor>> full_match(const Tensor& x, const std::string& pattern, int threads = 1) {
  return NodeTest("RegexFullMatch", 20).input(x).attr("pattern", pattern).threads(threads).run();
}

TEST(RegexFullMatchKernel, MatchesTheWholeString) {
  auto out = full_match(strings({2, 2}, {"abc", "b", "", "bb"}), "b*");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_bool_tensor({2, 2}, {0, 1, 1, 1}));
  // UTF-8: '.' is one code point, two bytes here.
  out = full_match(strings({3}, {"é", "e", "éé"}), ".");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_bool_tensor({3}, {1, 1, 0}));
  out = full_match(strings({0}, {}), "x");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{0}));
}

TEST(RegexFullMatchKernel, ManyStringsOnTwoThreads) {
  Strings in;
  std::vector<int> expected;
  for (int i = 0; i < 2000; ++i) {
    in.push_back("id" + std::to_string(i));
    expected.push_back(i % 10 == 7 ? 1 : 0);
  }
  auto out = full_match(strings({2000}, in), R"(id\d*7)", 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_bool_tensor({2000}, expected));
}

TEST(RegexFullMatchKernel, AnInvalidPatternFailsNamingTheNode) {
  auto out = full_match(strings({1}, {"a"}), "(ab");
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().to_string();
  EXPECT_NE(message.find("RegexFullMatch"), std::string::npos) << message;
  EXPECT_NE(message.find("(ab"), std::string::npos) << message;
  EXPECT_NE(message.find("missing )"), std::string::npos) << message;
  EXPECT_FALSE(NodeTest("RegexFullMatch", 20).input(strings({1}, {"a"})).run().ok());
}

}  // namespace
}  // namespace sy
