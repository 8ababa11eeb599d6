// The bits of Unicode the string kernels need (providers/cpu/string_ops.cc):
// UTF-8 decoding, case change and whitespace, matching what Python's str
// does, since ONNX's reference implementation is Python.
//
// Case change covers Latin (Basic, Latin-1, Extended-A, Extended-B and
// Extended Additional), Greek, Cyrillic, Armenian and the fullwidth Latin
// letters, with their full mappings (ß upper-cases to "SS", İ lower-cases
// to "i̇") and the final-sigma rule. Other scripts pass through unchanged.
// The mapping is Unicode's default one, the same under every locale, as
// Python's str.lower() and str.upper() are.
#pragma once

#include <cstddef>
#include <string_view>

namespace sy::cpu {

enum class CaseChange { kNone, kLower, kUpper };

// One code point decoded from UTF-8.
struct CodePoint {
  char32_t value;
  size_t length;  // bytes it takes, 1..4
  bool valid;     // false: not well-formed UTF-8 here; value is the lone byte
};

// The code point starting at byte `i` of `s` (i < s.size()). A byte that
// does not start a well-formed sequence (a stray continuation byte, an
// overlong or truncated sequence, a surrogate, a value past U+10FFFF) reads
// as invalid with length 1, so text that is not UTF-8 is passed through
// byte by byte rather than rejected.
CodePoint decode_utf8(std::string_view s, size_t i);

// A case change writes at most this many bytes per input byte (ΐ, two
// bytes, upper-cases to three two-byte code points).
inline constexpr size_t kMaxCaseChangeGrowth = 3;

// Writes `in` with its case changed to `out`, which has room for
// kMaxCaseChangeGrowth * in.size() bytes; returns the bytes written. Bytes
// that are not well-formed UTF-8 are copied as they are.
size_t change_case(std::string_view in, CaseChange change, char* out);

// The length in bytes of the whitespace character at byte `i` of `s`, or 0
// when it is not whitespace; whitespace is what Python's str.isspace()
// accepts (ASCII's six, U+001C..U+001F, U+0085, U+00A0 and the Unicode
// space separators).
size_t whitespace_length(std::string_view s, size_t i);

}  // namespace sy::cpu
