// Tensors in files: numpy .npy, and by extension either .npy or ONNX TensorProto.
// Course module 1.
//
// The .npy format (numpy's NEP 1):
//   "\x93NUMPY", major version, minor version,
//   header length: 2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0,
//   header: a Python dict literal, padded with spaces and ended by '\n':
//     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//   then the elements, row-major when fortran_order is False.
// minic reads little-endian (or byte-sized) numeric and bool element types in C order,
// and writes version 1.0 files with the header padded to a multiple of 64 bytes, as numpy
// does. Every size is checked against the file, so a truncated file is an error.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "minic/runtime/tensor_io.h"

#include "minic/frontend/onnx.h"
#include "minic/support/file.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace minic {

static_assert(std::endian::native == std::endian::little, "minic assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct NpyType {
  std::string_view code;  // the descr without its byte-order character: "f4", "b1"
  DType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"f4", DType::f32}, {"f8", DType::f64}, {"f2", DType::f16}, {"i1", DType::i8},
    {"i2", DType::i16}, {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},
    {"u2", DType::u16}, {"u4", DType::u32}, {"u8", DType::u64}, {"b1", DType::boolean},
};

// The three keys of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// A reader for the small subset of Python literal syntax that .npy headers use: a dict
// with string keys whose values are strings, True/False, or tuples of integers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        header.descr = parse_string();
        has_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
        has_order = true;
      } else if (key == "shape") {
        header.shape = parse_tuple();
        has_shape = true;
      } else {
        bad(fmt::format("unknown key '{}'", key));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!has_descr || !has_order || !has_shape) {
      bad("the header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return header;
  }

 private:
  [[noreturn]] void bad(std::string_view why) const {
    fail("{}: bad .npy header ({}): {}", path_, why, text_);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  void expect(char c) {
    if (!peek(c)) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }

  std::string parse_string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      bad("expected a string");
    }
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  bool parse_bool() {
    skip_space();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += word.size();
        return value;
      }
    }
    bad("expected True or False");
  }

  Shape parse_tuple() {
    Shape shape;
    expect('(');
    while (!peek(')')) {
      skip_space();
      int64_t dim = 0;
      const char* begin = text_.data() + pos_;
      auto [end, error] = std::from_chars(begin, text_.data() + text_.size(), dim);
      if (error != std::errc() || end == begin) bad("expected a dimension");
      pos_ += static_cast<size_t>(end - begin);
      shape.push_back(dim);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

DType npy_dtype(const std::string& descr, const std::string& path) {
  if (descr.size() >= 2) {
    char order = descr[0];
    std::string_view code = std::string_view(descr).substr(1);
    for (const NpyType& type : kNpyTypes) {
      if (code != type.code) continue;
      bool one_byte = dtype_size(type.dtype) == 1;
      if (order == '<' || order == '=' || (one_byte && order == '|')) return type.dtype;
    }
    if (order == '>') {
      fail("{}: element type '{}' is big-endian; minic reads little-endian .npy files", path,
           descr);
    }
  }
  fail("{}: element type '{}' is not one minic reads (it reads f2/f4/f8, i1-i8, u1-u8, b1)",
       path, descr);
}

std::string npy_descr(DType dtype) {
  for (const NpyType& type : kNpyTypes) {
    if (type.dtype != dtype) continue;
    char order = dtype_size(dtype) == 1 ? '|' : '<';
    return fmt::format("{}{}", order, type.code);
  }
  fail("numpy has no {} element type; cast the tensor to f32 before writing it as .npy",
       dtype_name(dtype));
}

uint32_t read_le(std::string_view bytes, size_t offset, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}


}  // namespace

Tensor read_npy(const std::string& path) {
  std::string file = read_file(path);
  std::string_view bytes = file;
  if (!bytes.starts_with(kMagic) || bytes.size() < kMagic.size() + 2) {
    fail("{}: not a .npy file (it does not start with \\x93NUMPY)", path);
  }
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3) fail("{}: .npy format version {}.{} is unknown", path, major, minor);
  size_t length_size = major == 1 ? 2 : 4;
  size_t header_start = kMagic.size() + 2 + length_size;
  if (bytes.size() < header_start) fail("{}: truncated .npy file (no header length)", path);
  size_t header_length = read_le(bytes, kMagic.size() + 2, length_size);
  if (bytes.size() - header_start < header_length) {
    fail("{}: truncated .npy file (the header is cut short)", path);
  }
  NpyHeader header = HeaderParser(bytes.substr(header_start, header_length), path).parse();
  if (header.fortran_order) {
    fail("{}: the array is in Fortran (column-major) order; minic reads C order only "
         "(save it with np.ascontiguousarray)",
         path);
  }
  DType dtype = npy_dtype(header.descr, path);
  check_shape(header.shape, dtype, path);
  Tensor tensor(dtype, header.shape);

  std::string_view data = bytes.substr(header_start + header_length);
  int64_t needed = tensor.type().num_bytes();
  if (static_cast<int64_t>(data.size()) < needed) {
    fail("{}: truncated .npy file: {} bytes of data for {}, which needs {}", path, data.size(),
         type_string(tensor.type()), needed);
  }
  if (static_cast<int64_t>(data.size()) > needed) {
    fail("{}: {} bytes of data for {}, which needs {}: the header does not describe the data",
         path, data.size(), type_string(tensor.type()), needed);
  }
  std::span<std::byte> out = tensor.bytes();
  if (!out.empty()) std::memcpy(out.data(), data.data(), out.size());
  if (dtype == DType::boolean) {
    for (std::byte& b : out) b = b == std::byte{0} ? std::byte{0} : std::byte{1};
  }
  return tensor;
}

void write_npy(const std::string& path, const Tensor& tensor) {
  // A Python tuple: "(2, 3)", "(4,)", "()".
  std::string shape = tensor.rank() == 1 ? fmt::format("({},)", tensor.shape()[0])
                                         : fmt::format("({})", fmt::join(tensor.shape(), ", "));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   npy_descr(tensor.dtype()), shape);
  // Pad with spaces so that the data starts at a multiple of 64 bytes; end with '\n'.
  size_t prefix = kMagic.size() + 2 + 2;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xffff) fail("{}: the .npy header is too long for format 1.0", path);

  std::string file(kMagic);
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  std::span<const std::byte> data = tensor.bytes();
  file.append(reinterpret_cast<const char*>(data.data()), data.size());

  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) fail("{}: cannot open the file for writing", path);
  stream.write(file.data(), static_cast<std::streamsize>(file.size()));
  stream.close();
  if (!stream) fail("{}: error while writing the file", path);
}

Tensor read_tensor_file(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".npy") return read_npy(path);
  return read_tensor_proto(path);
}

}  // namespace minic
