// Reading types, tensor elements, constant data and attribute values of the graph text
// form. Course module 2.
//
// Elements are read straight into the bytes of their dtype. Floats go through
// std::from_chars, which rounds correctly, so the shortest form the printer writes reads
// back to the same bits; f16 and bf16 elements are read as float and narrowed (exact for
// every value those types hold). A NaN other than the type's usual one is written with
// its bits, `nan(0x7fc00001)`, and read back from them.
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#include "literals.h"

#include "text_syntax.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace minic::graph_text {

namespace {

int64_t read_int64(TokenCursor& in, std::string_view what) {
  const Token& token = in.peek();
  int64_t value = 0;
  const char* end = token.text.data() + token.text.size();
  auto [ptr, ec] = std::from_chars(token.text.data(), end, value);
  if (token.kind != TokenKind::kInteger || ptr != end) in.expected(what);
  if (ec != std::errc()) in.error_at(token, fmt::format("{} does not fit in 64 bits", token.text));
  in.take();
  return value;
}

template <typename T>
T read_integer_element(TokenCursor& in) {
  const Token& token = in.peek();
  std::string what = fmt::format("an integer ({} element)", dtype_name(dtype_of<T>()));
  const char* begin = token.text.data();
  const char* end = begin + token.text.size();
  if (token.kind != TokenKind::kInteger) in.expected(what);
  bool in_range = false;
  T result{};
  if constexpr (std::is_signed_v<T>) {
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ptr != end) in.expected(what);
    in_range = ec == std::errc() && value >= std::numeric_limits<T>::lowest() &&
               value <= std::numeric_limits<T>::max();
    result = static_cast<T>(value);
  } else {
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ptr != end && token.text[0] != '-') in.expected(what);
    in_range = ptr == end && ec == std::errc() && value <= std::numeric_limits<T>::max();
    result = static_cast<T>(value);
  }
  if (!in_range) {
    in.error_at(token, fmt::format("{} does not fit in {}", token.text, dtype_name(dtype_of<T>())));
  }
  in.take();
  return result;
}

// The bits after `nan(`: a hex number that must be a NaN of the element type.
template <typename Bits>
Bits read_nan_bits(TokenCursor& in, DType dtype, Bits exponent_mask, Bits mantissa_mask) {
  in.expect_punct("(");
  const Token& token = in.peek();
  bool hex = token.kind == TokenKind::kInteger && token.text.size() > 2 &&
             (token.text.starts_with("0x") || token.text.starts_with("0X"));
  uint64_t bits = 0;
  if (hex) {
    const char* end = token.text.data() + token.text.size();
    auto [ptr, ec] = std::from_chars(token.text.data() + 2, end, bits, 16);
    hex = ptr == end && ec == std::errc();
  }
  if (!hex) in.expected("the bits of a NaN in hex (0x7fc00001)");
  if (bits > std::numeric_limits<Bits>::max() || (bits & exponent_mask) != exponent_mask ||
      (bits & mantissa_mask) == 0) {
    in.error_at(token,
                fmt::format("{} is not the bits of a {} NaN", token.text, dtype_name(dtype)));
  }
  in.take();
  in.expect_punct(")");
  return static_cast<Bits>(bits);
}

// A float element as `Real` (float or double): a number, inf, -inf or plain nan.
template <typename Real>
Real read_real(TokenCursor& in, DType dtype) {
  const Token& token = in.peek();
  Real value = 0;
  if (token.is_keyword("inf") || token.is(TokenKind::kFloat, "-inf")) {
    value = token.text[0] == '-' ? -std::numeric_limits<Real>::infinity()
                                 : std::numeric_limits<Real>::infinity();
  } else if (token.kind == TokenKind::kInteger || token.kind == TokenKind::kFloat) {
    const char* end = token.text.data() + token.text.size();
    auto [ptr, ec] = std::from_chars(token.text.data(), end, value);
    if (ptr != end) in.expected(fmt::format("a number ({} element)", dtype_name(dtype)));
    if (ec != std::errc()) {
      in.error_at(token, fmt::format("{} does not fit in {}", token.text, dtype_name(dtype)));
    }
  } else {
    in.expected(fmt::format("a number, inf or nan ({} element)", dtype_name(dtype)));
  }
  in.take();
  return value;
}

// A float element of type T: a number, inf, -inf, nan or nan(0x...).
template <typename T>
T read_float_element(TokenCursor& in) {
  constexpr DType dtype = dtype_of<T>();
  bool nan = in.peek().is_keyword("nan");
  if (nan) in.take();
  bool nan_bits = nan && in.peek().is_punct("(");
  if constexpr (std::is_same_v<T, float>) {
    if (nan_bits) {
      return std::bit_cast<float>(read_nan_bits<uint32_t>(in, dtype, 0x7f800000u, 0x7fffffu));
    }
    if (nan) return std::bit_cast<float>(kCanonicalNanF32);
    return read_real<float>(in, dtype);
  } else if constexpr (std::is_same_v<T, double>) {
    constexpr uint64_t kExponent = 0x7ff0000000000000u;
    constexpr uint64_t kMantissa = 0x000fffffffffffffu;
    if (nan_bits) {
      return std::bit_cast<double>(read_nan_bits<uint64_t>(in, dtype, kExponent, kMantissa));
    }
    if (nan) return std::bit_cast<double>(kCanonicalNanF64);
    return read_real<double>(in, dtype);
  } else {
    static_assert(std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>);
    constexpr bool half = std::is_same_v<T, Half>;
    T result;
    if (nan_bits) {
      result.bits = half ? read_nan_bits<uint16_t>(in, dtype, 0x7c00u, 0x03ffu)
                         : read_nan_bits<uint16_t>(in, dtype, 0x7f80u, 0x007fu);
    } else if (nan) {
      result.bits = half ? kCanonicalNanF16 : kCanonicalNanBF16;
    } else {
      Token token = in.peek();
      float value = read_real<float>(in, dtype);
      result = T(value);
      if (!std::isinf(value) && std::isinf(static_cast<float>(result))) {
        in.error_at(token, fmt::format("{} does not fit in {}", token.text, dtype_name(dtype)));
      }
    }
    return result;
  }
}

// One element of `dtype` into the dtype_size(dtype) bytes at `out`.
void read_element(TokenCursor& in, DType dtype, std::byte* out) {
  if (dtype == DType::boolean) {
    if (in.accept_keyword("true")) {
      *out = std::byte{1};
    } else if (in.accept_keyword("false")) {
      *out = std::byte{0};
    } else {
      in.expected("true or false (bool element)");
    }
    return;
  }
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T value = read_integer_element<T>(in);
      std::memcpy(out, &value, sizeof(T));
    } else if constexpr (!std::is_integral_v<T>) {
      T value = read_float_element<T>(in);
      std::memcpy(out, &value, sizeof(T));
    }
  });
}

std::string read_name(TokenCursor& in, std::string_view what) {
  if (in.peek().kind == TokenKind::kIdentifier || in.peek().kind == TokenKind::kString) {
    return in.take().text;
  }
  in.expected(what);
}

// True if the number list starting at the cursor (up to its `]`) holds a float.
bool list_has_float(const TokenCursor& in) {
  for (size_t ahead = 0;; ++ahead) {
    const Token& token = in.peek(ahead);
    if (token.kind == TokenKind::kEnd || token.is_punct("]")) return false;
    if (token.kind == TokenKind::kFloat || token.is_keyword("inf") || token.is_keyword("nan")) {
      return true;
    }
  }
}

// The items of a list after its `[`, through its `]`, each read by `read_item`.
template <typename Item, typename ReadItem>
std::vector<Item> read_list_items(TokenCursor& in, ReadItem read_item) {
  std::vector<Item> items;
  if (in.accept_punct("]")) return items;
  do {
    items.push_back(read_item());
  } while (in.accept_punct(","));
  in.expect_punct("]");
  return items;
}

AttributeValue read_list(TokenCursor& in, std::string_view kind) {
  auto read_int = [&] { return read_int64(in, "an integer"); };
  auto read_float = [&] { return read_float_element<float>(in); };
  auto read_string = [&] { return in.expect(TokenKind::kString, "a string").text; };
  if (kind.empty()) {
    if (in.peek().is_punct("]")) {
      in.error_at(in.peek(), "an empty list needs its kind: ints[], floats[] or strings[]");
    }
    if (in.peek().kind == TokenKind::kString) kind = "strings";
    else kind = list_has_float(in) ? "floats" : "ints";
  }
  if (kind == "ints") return read_list_items<int64_t>(in, read_int);
  if (kind == "floats") return read_list_items<float>(in, read_float);
  return read_list_items<std::string>(in, read_string);
}

}  // namespace

TensorType read_type(TokenCursor& in) {
  Token start = in.peek();
  if (start.kind != TokenKind::kIdentifier) in.expected("a type such as f32[1,3]");
  std::optional<DType> dtype = dtype_from_name(start.text);
  if (!dtype) {
    in.error_at(start, fmt::format("unknown dtype '{}' (expected one of f32, f64, f16, bf16, "
                                   "i8, i16, i32, i64, u8, u16, u32, u64, bool)",
                                   start.text));
  }
  in.take();
  in.expect_punct("[");
  TensorType type{*dtype, {}};
  if (!in.peek().is_punct("]")) {
    do {
      Token dim_token = in.peek();
      int64_t dim = read_int64(in, "a dimension");
      if (dim < 0) in.error_at(dim_token, fmt::format("dimension {} is negative", dim));
      type.shape.push_back(dim);
    } while (in.accept_punct(","));
  }
  in.expect_punct("]");
  try {
    check_shape(type.shape, type.dtype, "type " + type_string(type));
  } catch (const Error& error) {
    in.error_at(start, error.what());
  }
  return type;
}

TensorLiteral read_tensor_data(TokenCursor& in, const TensorType& type) {
  TensorLiteral literal{type, Tensor(), std::nullopt, in.peek()};
  size_t size = static_cast<size_t>(dtype_size(type.dtype));
  if (in.accept_keyword("splat")) {
    in.expect_punct("<");
    std::vector<std::byte> element(size);
    read_element(in, type.dtype, element.data());
    in.expect_punct(">");
    literal.data = Tensor(type);
    auto bytes = literal.data.bytes();
    for (size_t offset = 0; offset < bytes.size(); offset += size) {
      std::memcpy(bytes.data() + offset, element.data(), size);
    }
  } else if (in.accept_keyword("dense")) {
    in.expect_punct("<");
    in.expect_punct("[");
    std::vector<std::byte> elements;
    if (!in.peek().is_punct("]")) {
      do {
        elements.resize(elements.size() + size);
        read_element(in, type.dtype, elements.data() + elements.size() - size);
      } while (in.accept_punct(","));
    }
    in.expect_punct("]");
    in.expect_punct(">");
    int64_t count = static_cast<int64_t>(elements.size() / size);
    if (count != type.num_elements()) {
      in.error_at(literal.where, fmt::format("dense<...> has {} elements, but {} has {}", count,
                                             type_string(type), type.num_elements()));
    }
    literal.data = Tensor(type);
    std::copy(elements.begin(), elements.end(), literal.data.bytes().begin());
  } else if (in.accept_keyword("resource")) {
    in.expect_punct("<");
    literal.resource = read_name(in, "a resource name");
    in.expect_punct(">");
  } else {
    in.expected("constant data: splat<...>, dense<[...]> or resource<...>");
  }
  return literal;
}

AttributeValue read_attribute_value(TokenCursor& in, std::optional<TensorLiteral>& resource) {
  const Token& token = in.peek();
  if (token.kind == TokenKind::kInteger) return read_int64(in, "an integer");
  if (token.kind == TokenKind::kFloat || token.is_keyword("inf") || token.is_keyword("nan")) {
    return read_float_element<float>(in);
  }
  if (token.kind == TokenKind::kString) return in.take().text;
  if (in.accept_punct("[")) return read_list(in, "");
  for (std::string_view kind : {"ints", "floats", "strings"}) {
    if (token.is_keyword(kind) && in.peek(1).is_punct("[")) {
      in.take();
      in.take();
      return read_list(in, kind);
    }
  }
  if (in.accept_keyword("tensor")) {
    in.expect_punct("<");
    TensorType type = read_type(in);
    TensorLiteral literal = read_tensor_data(in, type);
    in.expect_punct(">");
    if (literal.resource) {
      resource = literal;
      return Tensor();
    }
    return std::move(literal.data);
  }
  in.expected("an attribute value (3, 0.5, \"text\", [1,2], ints[], tensor<...>)");
}

Tensor tensor_from_hex(const TokenCursor& in, const TensorLiteral& literal, const Token& hex) {
  Tensor tensor(literal.type);
  auto bytes = tensor.bytes();
  if (hex.text.size() != bytes.size() * 2) {
    in.error_at(literal.where,
                fmt::format("resource {} holds {} hex digits, but {} needs {} bytes ({} digits)",
                            identifier_or_quoted(*literal.resource), hex.text.size(),
                            type_string(literal.type), bytes.size(), bytes.size() * 2));
  }
  auto digit = [&](size_t index) -> unsigned {
    char c = hex.text[index];
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    in.error_at(hex, fmt::format("resource data has '{}' at offset {}, which is not a hex digit",
                                 c, index));
  };
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(digit(2 * i) * 16 + digit(2 * i + 1));
  }
  return tensor;
}

}  // namespace minic::graph_text
