#include "switchyard/npy.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "core/mapped_file.h"

namespace sy {

// '=' (native order) in a descr is read as little-endian, and in-memory
// tensors are written out as '<' without swapping.
static_assert(std::endian::native == std::endian::little, "npy support assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the preamble plus header to a multiple of 64 so that the data
// that follows is aligned for any dtype; we write the same.
constexpr size_t kHeaderAlignment = 64;

struct NpyType {
  std::string_view code;  // the descr without its byte-order character
  DataType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"f2", DataType::kFloat16}, {"f4", DataType::kFloat},  {"f8", DataType::kDouble}, {"i1", DataType::kInt8},
    {"i2", DataType::kInt16},   {"i4", DataType::kInt32},  {"i8", DataType::kInt64},  {"u1", DataType::kUint8},
    {"u2", DataType::kUint16},  {"u4", DataType::kUint32}, {"u8", DataType::kUint64}, {"b1", DataType::kBool},
};

std::string supported_descr_list() {
  std::string s;
  for (const NpyType& t : kNpyTypes) {
    if (!s.empty()) s += ", ";
    s += t.code;
  }
  return s;
}

Status format_error(const std::string& source, const std::string& what) {
  return invalid_argument("npy file '" + source + "': " + what);
}

struct NpyHeader {
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This parser accepts exactly the subset numpy writes (any key order, any
// whitespace, optional trailing commas) and nothing that needs eval.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Result<NpyHeader> parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    if (!consume('{')) return error("header does not start with '{'");
    for (;;) {
      skip_space();
      if (consume('}')) break;
      SY_ASSIGN_OR_RETURN(std::string key, parse_string());
      skip_space();
      if (!consume(':')) return error("expected ':' after key '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (have_descr) return error("duplicate key 'descr'");
        have_descr = true;
        if (peek() == '[') return error("structured dtypes (a list in 'descr') are not supported");
        SY_ASSIGN_OR_RETURN(std::string descr, parse_string());
        SY_ASSIGN_OR_RETURN(header.dtype, dtype_from_descr(descr));
      } else if (key == "fortran_order") {
        if (have_order) return error("duplicate key 'fortran_order'");
        have_order = true;
        if (consume_word("True"))
          return error("the array is in Fortran order, which is not supported; save it with "
                       "np.save(path, np.ascontiguousarray(a))");
        if (!consume_word("False")) return error("'fortran_order' must be True or False");
      } else if (key == "shape") {
        if (have_shape) return error("duplicate key 'shape'");
        have_shape = true;
        SY_ASSIGN_OR_RETURN(header.shape, parse_shape());
      } else {
        return error("unexpected key '" + key + "' (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (consume(',')) continue;
      if (consume('}')) break;
      return error("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the closing '}'");
    if (!have_descr || !have_order || !have_shape)
      return error("header lacks one of the keys 'descr', 'fortran_order', 'shape'");
    return header;
  }

 private:
  Status error(const std::string& what) const {
    // A hostile file can make the header anything; quote only its start.
    constexpr size_t kQuoteLimit = 120;
    std::string quoted(text_.substr(0, kQuoteLimit));
    if (text_.size() > kQuoteLimit) quoted += "...";
    return format_error(source_, "bad header: " + what + " (header: " + quoted + ")");
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool consume_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }

  Result<std::string> parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return error("expected a quoted string");
    ++pos_;
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return error("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  Result<Shape> parse_shape() {
    if (!consume('(')) return error("'shape' must be a tuple");
    Shape shape;
    for (;;) {
      skip_space();
      if (consume(')')) break;
      if (peek() == '-') return error("negative dimension in 'shape'");
      if (peek() < '0' || peek() > '9') return error("expected a dimension in 'shape'");
      int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10) return error("dimension too large in 'shape'");
        dim = dim * 10 + digit;
        ++pos_;
      }
      consume('L');  // files written by Python 2 spell longs with a suffix
      shape.push_back(dim);
      skip_space();
      if (consume(',')) continue;
      if (consume(')')) break;
      return error("expected ',' or ')' in 'shape'");
    }
    return shape;
  }

  Result<DataType> dtype_from_descr(const std::string& descr) const {
    if (descr.size() < 2) return error("bad 'descr' '" + descr + "'");
    const char order = descr[0];
    const std::string_view code = std::string_view(descr).substr(1);
    const NpyType* found = nullptr;
    for (const NpyType& t : kNpyTypes)
      if (t.code == code) found = &t;
    if (order != '<' && order != '>' && order != '|' && order != '=')
      return error("'descr' '" + descr + "' has no byte-order character");
    if (found == nullptr)
      return error("unsupported dtype '" + descr + "' (supported: " + supported_descr_list() + ")");
    const bool single_byte = element_size(found->dtype) == 1;
    if (order == '>' && !single_byte)
      return error("big-endian data ('" + descr + "') is not supported; convert with a.astype('<" +
                   std::string(code) + "')");
    if (order == '|' && !single_byte) return error("'descr' '" + descr + "' lacks a byte order");
    return found->dtype;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

std::string descr_for(DataType dtype) {
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == dtype) return (element_size(dtype) == 1 ? "|" : "<") + std::string(t.code);
  return "";
}

}  // namespace

Result<Tensor> parse_npy(std::span<const uint8_t> bytes, const std::string& source_name) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return format_error(source_name, "not an npy file (it does not start with \\x93NUMPY)");
  const int major = bytes[kMagicSize];
  const int minor = bytes[kMagicSize + 1];
  if (minor != 0 || major < 1 || major > 3)
    return format_error(source_name, "unsupported format version " + std::to_string(major) + "." +
                                         std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  // Version 1.0 has a 16-bit header length; 2.0 and 3.0 a 32-bit one.
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagicSize + 2 + length_bytes;
  if (bytes.size() < preamble) return format_error(source_name, "truncated inside the preamble");
  const size_t header_len = read_le(bytes.data() + kMagicSize + 2, length_bytes);
  if (header_len > bytes.size() - preamble)
    return format_error(source_name, "truncated: the header claims " + std::to_string(header_len) +
                                         " bytes but the file has " + std::to_string(bytes.size() - preamble) +
                                         " after the preamble");
  const std::string_view header_text(reinterpret_cast<const char*>(bytes.data() + preamble), header_len);
  SY_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(header_text, source_name).parse());

  SY_RETURN_IF_ERROR(check_shape_is_sane(header.shape, header.dtype, "npy file '" + source_name + "'"));
  const size_t data_offset = preamble + header_len;
  const size_t available = bytes.size() - data_offset;
  const size_t needed = storage_bytes(header.dtype, header.shape.num_elements());
  const std::string type_text = std::string(data_type_name(header.dtype)) + header.shape.to_string();
  if (available < needed)
    return format_error(source_name, "truncated: " + type_text + " needs " + std::to_string(needed) +
                                         " bytes of data but the file has " + std::to_string(available));
  if (available > needed)
    return format_error(source_name, std::to_string(available - needed) + " unexpected bytes after the data of " +
                                         type_text);

  SY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(header.dtype, header.shape));
  if (needed > 0) std::memcpy(tensor.raw_data(), bytes.data() + data_offset, needed);
  if (header.dtype == DataType::kBool) {
    // A bool holding a byte other than 0 or 1 is undefined behaviour in C++;
    // numpy reads any nonzero byte as True, so do the same.
    auto* p = static_cast<uint8_t*>(tensor.raw_data());
    for (size_t i = 0; i < needed; ++i) p[i] = p[i] != 0 ? 1 : 0;
  }
  return tensor;
}

Result<Tensor> load_npy(const std::string& path) {
  // parse_npy checks the header's shape against the bytes that follow, so
  // nothing is allocated beyond what the file holds.
  auto file = MappedFile::open(path);
  if (!file.ok()) return file.status().with_context("npy file '" + printable_path(path) + "'");
  return parse_npy(std::span<const uint8_t>(file.value()->data(), file.value()->size()), path);
}

Result<std::string> encode_npy(const Tensor& tensor) {
  if (!tensor.defined()) return invalid_argument("cannot write an undefined tensor as npy");
  const std::string descr = descr_for(tensor.dtype());
  if (descr.empty())
    return not_implemented("npy cannot hold " + tensor.describe() + " (supported: " + supported_descr_list() + ")");
  if (!tensor.device().is_cpu()) return invalid_argument("npy needs a host tensor; got " + tensor.describe() +
                                                         " on " + tensor.device().to_string());
  const size_t data_bytes = tensor.byte_size();
  if (data_bytes > 0 && tensor.raw_data() == nullptr)
    return invalid_argument("tensor " + tensor.describe() + " has no data");

  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  const Shape& shape = tensor.shape();
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.rank() == 1) dict += ",";
  dict += "), }";

  int major = 1;
  size_t preamble = kMagicSize + 2 + 2;
  // +1 for the newline that ends the header.
  size_t total = (preamble + dict.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  if (total - preamble > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    preamble = kMagicSize + 2 + 4;
    total = (preamble + dict.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  }
  const size_t header_len = total - preamble;
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - kMagicSize - 2; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char*>(tensor.raw_data()), data_bytes);
  return out;
}

Status save_npy(const Tensor& tensor, const std::string& path) {
  auto encoded = encode_npy(tensor);
  if (!encoded.ok()) return encoded.status().with_context("while writing '" + path + "'");
  // write_file refuses a FIFO or a device, where fopen() would block or
  // write into it.
  return write_file(path, *encoded).with_context("npy file '" + path + "'");
}

}  // namespace sy
