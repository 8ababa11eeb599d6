// UTF-8 decoding, case change and whitespace for the string kernels. The
// case tables hold the simple (one code point to one) mappings of the
// blocks named in unicode_text.h, taken from the Unicode Character
// Database (Unicode 14, as Python 3.11 has it); the few mappings to
// several code points are listed apart.
#include "providers/cpu/unicode_text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace sy::cpu {
namespace {

// Code points first..last that map to code point + delta: all of them
// (stride 1) or every other one from `first` (stride 2: the upper and
// lower letters alternate, as in most of Latin Extended and Cyrillic).
struct CaseRange {
  char32_t first;
  char32_t last;
  int32_t delta;
  int32_t stride;
};

constexpr CaseRange kToUpper[] = {
    {0x0061, 0x007A, -32, 1}, {0x00B5, 0x00B5, 743, 1}, {0x00E0, 0x00F6, -32, 1}, {0x00F8, 0x00FE, -32, 1},
    {0x00FF, 0x00FF, 121, 1}, {0x0101, 0x012F, -1, 2}, {0x0131, 0x0131, -232, 1}, {0x0133, 0x0137, -1, 2},
    {0x013A, 0x0148, -1, 2}, {0x014B, 0x0177, -1, 2}, {0x017A, 0x017E, -1, 2}, {0x017F, 0x017F, -300, 1},
    {0x0180, 0x0180, 195, 1}, {0x0183, 0x0185, -1, 2}, {0x0188, 0x0188, -1, 1}, {0x018C, 0x018C, -1, 1},
    {0x0192, 0x0192, -1, 1}, {0x0195, 0x0195, 97, 1}, {0x0199, 0x0199, -1, 1}, {0x019A, 0x019A, 163, 1},
    {0x019E, 0x019E, 130, 1}, {0x01A1, 0x01A5, -1, 2}, {0x01A8, 0x01A8, -1, 1}, {0x01AD, 0x01AD, -1, 1},
    {0x01B0, 0x01B0, -1, 1}, {0x01B4, 0x01B6, -1, 2}, {0x01B9, 0x01B9, -1, 1}, {0x01BD, 0x01BD, -1, 1},
    {0x01BF, 0x01BF, 56, 1}, {0x01C5, 0x01C5, -1, 1}, {0x01C6, 0x01C6, -2, 1}, {0x01C8, 0x01C8, -1, 1},
    {0x01C9, 0x01C9, -2, 1}, {0x01CB, 0x01CB, -1, 1}, {0x01CC, 0x01CC, -2, 1}, {0x01CE, 0x01DC, -1, 2},
    {0x01DD, 0x01DD, -79, 1}, {0x01DF, 0x01EF, -1, 2}, {0x01F2, 0x01F2, -1, 1}, {0x01F3, 0x01F3, -2, 1},
    {0x01F5, 0x01F5, -1, 1}, {0x01F9, 0x021F, -1, 2}, {0x0223, 0x0233, -1, 2}, {0x023C, 0x023C, -1, 1},
    {0x023F, 0x0240, 10815, 1}, {0x0242, 0x0242, -1, 1}, {0x0247, 0x024F, -1, 2}, {0x0371, 0x0373, -1, 2},
    {0x0377, 0x0377, -1, 1}, {0x037B, 0x037D, 130, 1}, {0x03AC, 0x03AC, -38, 1}, {0x03AD, 0x03AF, -37, 1},
    {0x03B1, 0x03C1, -32, 1}, {0x03C2, 0x03C2, -31, 1}, {0x03C3, 0x03CB, -32, 1}, {0x03CC, 0x03CC, -64, 1},
    {0x03CD, 0x03CE, -63, 1}, {0x03D0, 0x03D0, -62, 1}, {0x03D1, 0x03D1, -57, 1}, {0x03D5, 0x03D5, -47, 1},
    {0x03D6, 0x03D6, -54, 1}, {0x03D7, 0x03D7, -8, 1}, {0x03D9, 0x03EF, -1, 2}, {0x03F0, 0x03F0, -86, 1},
    {0x03F1, 0x03F1, -80, 1}, {0x03F2, 0x03F2, 7, 1}, {0x03F3, 0x03F3, -116, 1}, {0x03F5, 0x03F5, -96, 1},
    {0x03F8, 0x03F8, -1, 1}, {0x03FB, 0x03FB, -1, 1}, {0x0430, 0x044F, -32, 1}, {0x0450, 0x045F, -80, 1},
    {0x0461, 0x0481, -1, 2}, {0x048B, 0x04BF, -1, 2}, {0x04C2, 0x04CE, -1, 2}, {0x04CF, 0x04CF, -15, 1},
    {0x04D1, 0x052F, -1, 2}, {0x0561, 0x0586, -48, 1}, {0x1E01, 0x1E95, -1, 2}, {0x1E9B, 0x1E9B, -59, 1},
    {0x1EA1, 0x1EFF, -1, 2}, {0xFF41, 0xFF5A, -32, 1},
};

constexpr CaseRange kToLower[] = {
    {0x0041, 0x005A, 32, 1}, {0x00C0, 0x00D6, 32, 1}, {0x00D8, 0x00DE, 32, 1}, {0x0100, 0x012E, 1, 2},
    {0x0132, 0x0136, 1, 2}, {0x0139, 0x0147, 1, 2}, {0x014A, 0x0176, 1, 2}, {0x0178, 0x0178, -121, 1},
    {0x0179, 0x017D, 1, 2}, {0x0181, 0x0181, 210, 1}, {0x0182, 0x0184, 1, 2}, {0x0186, 0x0186, 206, 1},
    {0x0187, 0x0187, 1, 1}, {0x0189, 0x018A, 205, 1}, {0x018B, 0x018B, 1, 1}, {0x018E, 0x018E, 79, 1},
    {0x018F, 0x018F, 202, 1}, {0x0190, 0x0190, 203, 1}, {0x0191, 0x0191, 1, 1}, {0x0193, 0x0193, 205, 1},
    {0x0194, 0x0194, 207, 1}, {0x0196, 0x0196, 211, 1}, {0x0197, 0x0197, 209, 1}, {0x0198, 0x0198, 1, 1},
    {0x019C, 0x019C, 211, 1}, {0x019D, 0x019D, 213, 1}, {0x019F, 0x019F, 214, 1}, {0x01A0, 0x01A4, 1, 2},
    {0x01A6, 0x01A6, 218, 1}, {0x01A7, 0x01A7, 1, 1}, {0x01A9, 0x01A9, 218, 1}, {0x01AC, 0x01AC, 1, 1},
    {0x01AE, 0x01AE, 218, 1}, {0x01AF, 0x01AF, 1, 1}, {0x01B1, 0x01B2, 217, 1}, {0x01B3, 0x01B5, 1, 2},
    {0x01B7, 0x01B7, 219, 1}, {0x01B8, 0x01B8, 1, 1}, {0x01BC, 0x01BC, 1, 1}, {0x01C4, 0x01C4, 2, 1},
    {0x01C5, 0x01C5, 1, 1}, {0x01C7, 0x01C7, 2, 1}, {0x01C8, 0x01C8, 1, 1}, {0x01CA, 0x01CA, 2, 1},
    {0x01CB, 0x01DB, 1, 2}, {0x01DE, 0x01EE, 1, 2}, {0x01F1, 0x01F1, 2, 1}, {0x01F2, 0x01F4, 1, 2},
    {0x01F6, 0x01F6, -97, 1}, {0x01F7, 0x01F7, -56, 1}, {0x01F8, 0x021E, 1, 2}, {0x0220, 0x0220, -130, 1},
    {0x0222, 0x0232, 1, 2}, {0x023A, 0x023A, 10795, 1}, {0x023B, 0x023B, 1, 1}, {0x023D, 0x023D, -163, 1},
    {0x023E, 0x023E, 10792, 1}, {0x0241, 0x0241, 1, 1}, {0x0243, 0x0243, -195, 1}, {0x0244, 0x0244, 69, 1},
    {0x0245, 0x0245, 71, 1}, {0x0246, 0x024E, 1, 2}, {0x0370, 0x0372, 1, 2}, {0x0376, 0x0376, 1, 1},
    {0x037F, 0x037F, 116, 1}, {0x0386, 0x0386, 38, 1}, {0x0388, 0x038A, 37, 1}, {0x038C, 0x038C, 64, 1},
    {0x038E, 0x038F, 63, 1}, {0x0391, 0x03A1, 32, 1}, {0x03A3, 0x03AB, 32, 1}, {0x03CF, 0x03CF, 8, 1},
    {0x03D8, 0x03EE, 1, 2}, {0x03F4, 0x03F4, -60, 1}, {0x03F7, 0x03F7, 1, 1}, {0x03F9, 0x03F9, -7, 1},
    {0x03FA, 0x03FA, 1, 1}, {0x03FD, 0x03FF, -130, 1}, {0x0400, 0x040F, 80, 1}, {0x0410, 0x042F, 32, 1},
    {0x0460, 0x0480, 1, 2}, {0x048A, 0x04BE, 1, 2}, {0x04C0, 0x04C0, 15, 1}, {0x04C1, 0x04CD, 1, 2},
    {0x04D0, 0x052E, 1, 2}, {0x0531, 0x0556, 48, 1}, {0x1E00, 0x1E94, 1, 2}, {0x1E9E, 0x1E9E, -7615, 1},
    {0x1EA0, 0x1EFE, 1, 2}, {0xFF21, 0xFF3A, 32, 1},
};

// Mappings to more than one code point (Unicode's SpecialCasing.txt, the
// unconditional ones of these blocks).
struct FullMapping {
  char32_t from;
  char32_t to[3];  // 0-terminated when shorter
};

constexpr FullMapping kFullToUpper[] = {
    {0x00DF, {0x0053, 0x0053, 0}},       // ß -> SS
    {0x0149, {0x02BC, 0x004E, 0}},       // ŉ -> ʼN
    {0x01F0, {0x004A, 0x030C, 0}},       // ǰ -> J + caron
    {0x0390, {0x0399, 0x0308, 0x0301}},  // ΐ
    {0x03B0, {0x03A5, 0x0308, 0x0301}},  // ΰ
    {0x0587, {0x0535, 0x0552, 0}},       // և -> ԵՒ
    {0x1E96, {0x0048, 0x0331, 0}},       // ẖ
    {0x1E97, {0x0054, 0x0308, 0}},       // ẗ
    {0x1E98, {0x0057, 0x030A, 0}},       // ẘ
    {0x1E99, {0x0059, 0x030A, 0}},       // ẙ
    {0x1E9A, {0x0041, 0x02BE, 0}},       // ẚ
};

constexpr FullMapping kFullToLower[] = {
    {0x0130, {0x0069, 0x0307, 0}},  // İ -> i + dot above
};

constexpr char32_t kCapitalSigma = 0x03A3;
constexpr char32_t kFinalSigma = 0x03C2;

// Unicode's Case_Ignorable characters of these blocks (apostrophes, marks,
// modifier letters), which the final-sigma rule looks through.
constexpr char32_t kCaseIgnorable[][2] = {
    {0x0027, 0x0027}, {0x002E, 0x002E}, {0x003A, 0x003A}, {0x005E, 0x005E}, {0x0060, 0x0060}, {0x00A8, 0x00A8},
    {0x00AD, 0x00AD}, {0x00AF, 0x00AF}, {0x00B4, 0x00B4}, {0x00B7, 0x00B8}, {0x02B0, 0x036F}, {0x0374, 0x0375},
    {0x037A, 0x037A}, {0x0384, 0x0385}, {0x0387, 0x0387}, {0x0483, 0x0489}, {0x0559, 0x0559}, {0x2018, 0x2019},
    {0x2024, 0x2024}, {0x2027, 0x2027}, {0xFF07, 0xFF07}, {0xFF0E, 0xFF0E}, {0xFF1A, 0xFF1A}, {0xFF3E, 0xFF3E},
    {0xFF40, 0xFF40}, {0xFF70, 0xFF70}, {0xFF9E, 0xFF9F}, {0xFFE3, 0xFFE3},
};

template <size_t N>
char32_t simple_map(const CaseRange (&table)[N], char32_t c) {
  // The last range starting at or before c.
  const CaseRange* r = std::upper_bound(std::begin(table), std::end(table), c,
                                        [](char32_t v, const CaseRange& range) { return v < range.first; });
  if (r == std::begin(table)) return c;
  --r;
  if (c > r->last || (c - r->first) % static_cast<char32_t>(r->stride) != 0) return c;
  return static_cast<char32_t>(static_cast<int32_t>(c) + r->delta);
}

template <size_t N>
const FullMapping* full_map(const FullMapping (&table)[N], char32_t c) {
  for (const FullMapping& m : table)
    if (m.from == c) return &m;
  return nullptr;
}

// Cased in Unicode's sense, as far as these tables know: a letter with an
// upper or lower form.
bool is_cased(char32_t c) {
  return simple_map(kToUpper, c) != c || simple_map(kToLower, c) != c || full_map(kFullToUpper, c) != nullptr ||
         full_map(kFullToLower, c) != nullptr;
}

bool is_case_ignorable(char32_t c) {
  for (const auto& r : kCaseIgnorable) {
    if (c < r[0]) return false;  // the ranges are sorted
    if (c <= r[1]) return true;
  }
  return false;
}

size_t encode_utf8(char32_t c, char* out) {
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

// Python's rule for Σ: it lower-cases to ς when a cased letter precedes it
// and none follows it, looking through case-ignorable characters both ways.
// `prev_cased` says whether the last character that was not
// case-ignorable, before `at`, is cased.
bool is_final_sigma(std::string_view s, size_t at, size_t length, bool prev_cased) {
  if (!prev_cased) return false;
  for (size_t j = at + length; j < s.size();) {
    const CodePoint cp = decode_utf8(s, j);
    if (!cp.valid) return true;
    if (!is_case_ignorable(cp.value)) return !is_cased(cp.value);
    j += cp.length;
  }
  return true;
}

}  // namespace

CodePoint decode_utf8(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  const CodePoint invalid{b0, 1, false};
  if (b0 < 0x80) return {b0, 1, true};
  size_t length = 0;
  char32_t value = 0;
  char32_t smallest = 0;  // below it the sequence is overlong
  if ((b0 & 0xE0) == 0xC0) {
    length = 2;
    value = b0 & 0x1F;
    smallest = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3;
    value = b0 & 0x0F;
    smallest = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4;
    value = b0 & 0x07;
    smallest = 0x10000;
  } else {
    return invalid;
  }
  if (s.size() - i < length) return invalid;
  for (size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return invalid;
    value = (value << 6) | (b & 0x3F);
  }
  if (value < smallest || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return invalid;
  return {value, length, true};
}

size_t change_case(std::string_view in, CaseChange change, char* out) {
  if (change == CaseChange::kNone) {
    if (!in.empty()) std::memcpy(out, in.data(), in.size());
    return in.size();
  }
  const bool upper = change == CaseChange::kUpper;
  size_t n = 0;
  bool prev_cased = false;
  for (size_t i = 0; i < in.size();) {
    const char ch = in[i];
    if (static_cast<unsigned char>(ch) < 0x80) {
      // ASCII, most text: no table lookups.
      const bool is_upper = ch >= 'A' && ch <= 'Z';
      const bool is_lower = ch >= 'a' && ch <= 'z';
      out[n++] = upper && is_lower ? static_cast<char>(ch - 'a' + 'A')
                 : !upper && is_upper ? static_cast<char>(ch - 'A' + 'a')
                                      : ch;
      if (!is_case_ignorable(static_cast<unsigned char>(ch))) prev_cased = is_upper || is_lower;
      i += 1;
      continue;
    }
    const CodePoint cp = decode_utf8(in, i);
    if (!cp.valid) {
      out[n++] = in[i];
      prev_cased = false;
      i += 1;
      continue;
    }
    const char32_t c = cp.value;
    if (!upper && c == kCapitalSigma) {
      n += encode_utf8(is_final_sigma(in, i, cp.length, prev_cased) ? kFinalSigma : simple_map(kToLower, c), out + n);
    } else if (const FullMapping* m = upper ? full_map(kFullToUpper, c) : full_map(kFullToLower, c)) {
      for (char32_t t : m->to)
        if (t != 0) n += encode_utf8(t, out + n);
    } else {
      n += encode_utf8(upper ? simple_map(kToUpper, c) : simple_map(kToLower, c), out + n);
    }
    if (!is_case_ignorable(c)) prev_cased = is_cased(c);
    i += cp.length;
  }
  return n;
}

size_t whitespace_length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20) ? 1 : 0;
  const CodePoint cp = decode_utf8(s, i);
  if (!cp.valid) return 0;
  const char32_t c = cp.value;
  const bool space = c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
                     c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
  return space ? cp.length : 0;
}

}  // namespace sy::cpu
