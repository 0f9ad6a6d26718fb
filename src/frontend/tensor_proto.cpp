// ONNX TensorProto ↔ minic Tensor, and TensorProto .pb files. Course module 2.
//
// A TensorProto keeps its elements in one of three places:
//   raw_data       the elements' bytes, little-endian, row-major;
//   typed fields   float_data, double_data, int64_data, uint64_data, or int32_data, which
//                  also carries the narrower integers, bool and the bits of float16/bfloat16
//                  and of the storage-only types, one byte of them an entry;
//   external data  a file beside the model (data_location EXTERNAL; keys location, offset,
//                  length), which minic reads only from inside the model's directory, so a
//                  model cannot make minic read /etc/passwd or follow a symlink out.
// The 4-bit types (int4, uint4, float4e2m1) are packed two to a byte and the 2-bit ones four
// to a byte, first element in the lowest bits, both in raw_data and in int32_data's bytes;
// minic unpacks them on reading to one element a byte and packs them on writing.
// Invariant: the element count always matches the dims; a mismatch is an error, never a
// short copy.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

#include "minic/ops/onnx_data_type.h"
#include "minic/tensor/low_precision.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace minic {

// raw_data and the npy format are little-endian; minic copies bytes as they are.
static_assert(std::endian::native == std::endian::little, "minic assumes a little-endian host");

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 27> kOnnxTypeNames = {
    "UNDEFINED",     "FLOAT",       "UINT8",        "INT8",      "UINT16",     "INT16",
    "INT32",         "INT64",       "STRING",       "BOOL",      "FLOAT16",    "DOUBLE",
    "UINT32",        "UINT64",      "COMPLEX64",    "COMPLEX128", "BFLOAT16",  "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",   "INT4",       "FLOAT4E2M1",
    "FLOAT8E8M0",    "UINT2",       "INT2"};

// DataType values that ONNX added after the onnx.proto of Debian's libonnx-dev, which
// therefore has no names for them. TensorProto.data_type is a plain int32, so they parse.
enum NewerDataType : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

// Copies a typed field into the tensor's elements, converting each with `convert`.
template <typename T, typename Field, typename Convert>
void fill_from_field(std::span<T> out, const Field& field, std::string_view field_name,
                     std::string_view what, Convert convert) {
  if (static_cast<size_t>(field.size()) != out.size()) {
    fail("{} has {} values in {} but its shape needs {}", what, field.size(), field_name,
         out.size());
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = convert(field[static_cast<int>(i)]);
}

// Reads the typed field that ONNX uses for the tensor's element type.
void fill_from_typed_fields(Tensor& tensor, const onnx::TensorProto& proto,
                            std::string_view what) {
  visit_dtype(tensor.dtype(), [&]<typename T>() {
    std::span<T> out = tensor.values<T>();
    if constexpr (std::is_same_v<T, float>) {
      fill_from_field(out, proto.float_data(), "float_data", what, [](float v) { return v; });
    } else if constexpr (std::is_same_v<T, double>) {
      fill_from_field(out, proto.double_data(), "double_data", what, [](double v) { return v; });
    } else if constexpr (std::is_same_v<T, int64_t>) {
      fill_from_field(out, proto.int64_data(), "int64_data", what, [](int64_t v) { return v; });
    } else if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>) {
      fill_from_field(out, proto.uint64_data(), "uint64_data", what,
                      [](uint64_t v) { return static_cast<T>(v); });
    } else if constexpr (std::is_same_v<T, bool>) {
      fill_from_field(out, proto.int32_data(), "int32_data", what,
                      [](int32_t v) { return v != 0; });
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      // The 16 bits of each element, stored in an int32.
      fill_from_field(out, proto.int32_data(), "int32_data", what, [](int32_t v) {
        T element;
        element.bits = static_cast<uint16_t>(v);
        return element;
      });
    } else {
      // int8, int16, int32, uint8, uint16.
      fill_from_field(out, proto.int32_data(), "int32_data", what,
                      [](int32_t v) { return static_cast<T>(v); });
    }
  });
}

// The bytes a tensor's elements take in a TensorProto: fewer than in memory when packed.
int64_t stored_num_bytes(const TensorType& type) {
  int64_t per_byte = packed_per_byte(type.dtype);
  if (per_byte == 1) return type.num_bytes();
  return (type.num_elements() + per_byte - 1) / per_byte;
}

bool has_typed_data(const onnx::TensorProto& proto) {
  return proto.float_data_size() > 0 || proto.double_data_size() > 0 ||
         proto.int32_data_size() > 0 || proto.int64_data_size() > 0 ||
         proto.uint64_data_size() > 0 || proto.string_data_size() > 0;
}

// Copies little-endian bytes into the tensor, checking the count. Bool bytes are made 0/1
// so that every element is a valid bool; packed 4- and 2-bit elements are unpacked.
void fill_from_bytes(Tensor& tensor, std::string_view bytes, std::string_view source,
                     std::string_view what) {
  int64_t needed = stored_num_bytes(tensor.type());
  if (static_cast<int64_t>(bytes.size()) != needed) {
    fail("{} has {} bytes of {} but its type {} needs {}", what, bytes.size(), source,
         type_string(tensor.type()), needed);
  }
  std::span<std::byte> out = tensor.bytes();
  const int per_byte = packed_per_byte(tensor.dtype());
  if (per_byte > 1) {
    const int bits = 8 / per_byte;
    const unsigned mask = (1u << bits) - 1;
    for (size_t i = 0; i < out.size(); ++i) {
      unsigned byte = static_cast<unsigned char>(bytes[i / per_byte]);
      unsigned shift = static_cast<unsigned>(bits) * (i % per_byte);
      out[i] = static_cast<std::byte>((byte >> shift) & mask);
    }
    return;
  }
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size());
  if (tensor.dtype() == DType::boolean) {
    for (std::byte& b : out) b = b == std::byte{0} ? std::byte{0} : std::byte{1};
  }
}

// The bytes of a tensor's elements as a TensorProto stores them, packing 4- and 2-bit ones.
std::string stored_bytes(const Tensor& tensor) {
  std::span<const std::byte> elements = tensor.bytes();
  const int per_byte = packed_per_byte(tensor.dtype());
  if (per_byte == 1) return std::string(reinterpret_cast<const char*>(elements.data()),
                                        elements.size());
  const int bits = 8 / per_byte;
  const unsigned mask = (1u << bits) - 1;
  std::string bytes(static_cast<size_t>(stored_num_bytes(tensor.type())), '\0');
  for (size_t i = 0; i < elements.size(); ++i) {
    unsigned element = static_cast<unsigned>(elements[i]) & mask;
    unsigned shift = static_cast<unsigned>(bits) * (i % per_byte);
    bytes[i / per_byte] = static_cast<char>(static_cast<unsigned char>(bytes[i / per_byte]) |
                                            (element << shift));
  }
  return bytes;
}

// Storage-only types in int32_data: each entry holds one stored byte, which fill_from_bytes
// then reads as if it came from raw_data.
void fill_storage_only_from_int32(Tensor& tensor, const onnx::TensorProto& proto,
                                  std::string_view what) {
  int64_t needed = stored_num_bytes(tensor.type());
  if (proto.int32_data_size() != needed) {
    fail("{} has {} values in int32_data but its type {} needs {}", what,
         proto.int32_data_size(), type_string(tensor.type()), needed);
  }
  std::string bytes;
  for (int32_t entry : proto.int32_data()) bytes.push_back(static_cast<char>(entry & 0xff));
  fill_from_bytes(tensor, bytes, "int32_data", what);
}

int64_t parse_external_number(const std::string& text, std::string_view key,
                              std::string_view what) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    fail("{}: external data {} '{}' is not a non-negative integer", what, key, text);
  }
  return value;
}

// True if `path` is `directory` or lies below it (both canonical).
bool is_inside(const fs::path& path, const fs::path& directory) {
  auto [dir_end, path_end] = std::mismatch(directory.begin(), directory.end(), path.begin(),
                                           path.end());
  return dir_end == directory.end();
}

// The file a tensor's external data lives in, checked to be inside the model's directory.
fs::path resolve_external_file(const std::string& location, const ExternalDataPolicy& policy,
                               std::string_view what) {
  if (location.empty()) fail("{}: external data has no location", what);
  fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_directory() || relative.has_root_name()) {
    fail("{}: external data location '{}' is an absolute path; minic reads external data only "
         "from the model's directory",
         what, location);
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      fail("{}: external data location '{}' contains '..'; minic reads external data only "
           "from the model's directory",
           what, location);
    }
  }
  fs::path directory = policy.directory.empty() ? fs::path(".") : policy.directory;
  fs::path file = directory / relative;
  std::error_code error;
  if (!fs::exists(file, error)) {
    fail("{}: external data file '{}' does not exist", what, file.string());
  }
  fs::path canonical_dir = fs::canonical(directory, error);
  if (error) fail("{}: cannot resolve the model's directory '{}'", what, directory.string());
  fs::path canonical_file = fs::canonical(file, error);
  if (error) fail("{}: cannot resolve external data file '{}'", what, file.string());
  if (!is_inside(canonical_file, canonical_dir)) {
    fail("{}: external data file '{}' resolves to '{}', which leaves the model's directory",
         what, location, canonical_file.string());
  }
  if (!fs::is_regular_file(canonical_file, error)) {
    fail("{}: external data file '{}' is not a regular file", what, file.string());
  }
  return canonical_file;
}

void fill_from_external(Tensor& tensor, const onnx::TensorProto& proto,
                        const ExternalDataPolicy& policy, std::string_view what) {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      offset = parse_external_number(entry.value(), "offset", what);
    } else if (entry.key() == "length") {
      length = parse_external_number(entry.value(), "length", what);
    }
  }
  fs::path file = resolve_external_file(location, policy, what);
  int64_t needed = stored_num_bytes(tensor.type());
  if (length && *length != needed) {
    fail("{}: external data length {} does not match its type {} ({} bytes)", what, *length,
         type_string(tensor.type()), needed);
  }
  std::ifstream stream(file, std::ios::binary);
  if (!stream) fail("{}: cannot open external data file '{}'", what, file.string());
  std::string bytes(static_cast<size_t>(needed), '\0');
  stream.seekg(offset);
  if (stream) stream.read(bytes.data(), needed);
  if (!stream || stream.gcount() != needed) {
    fail("{}: external data file '{}' is too short: {} bytes wanted at offset {}", what,
         file.string(), needed, offset);
  }
  fill_from_bytes(tensor, bytes, "external data", what);
}

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t onnx_type) { return dtype_of_onnx_code(onnx_type); }

int32_t dtype_to_onnx(DType type) {
  switch (type) {
    case DType::f32:
      return onnx::TensorProto::FLOAT;
    case DType::f64: return onnx::TensorProto::DOUBLE;
    case DType::f16: return onnx::TensorProto::FLOAT16;
    case DType::bf16: return onnx::TensorProto::BFLOAT16;
    case DType::i8: return onnx::TensorProto::INT8;
    case DType::i16: return onnx::TensorProto::INT16;
    case DType::i32: return onnx::TensorProto::INT32;
    case DType::i64: return onnx::TensorProto::INT64;
    case DType::u8: return onnx::TensorProto::UINT8;
    case DType::u16: return onnx::TensorProto::UINT16;
    case DType::u32: return onnx::TensorProto::UINT32;
    case DType::u64: return onnx::TensorProto::UINT64;
    case DType::boolean: return onnx::TensorProto::BOOL;
    case DType::f8e4m3fn: return kFloat8E4M3FN;
    case DType::f8e4m3fnuz: return kFloat8E4M3FNUZ;
    case DType::f8e5m2: return kFloat8E5M2;
    case DType::f8e5m2fnuz: return kFloat8E5M2FNUZ;
    case DType::f8e8m0: return kFloat8E8M0;
    case DType::f4e2m1: return kFloat4E2M1;
    case DType::i4: return kInt4;
    case DType::u4: return kUint4;
    case DType::i2: return kInt2;
    case DType::u2: return kUint2;
  }
  return onnx::TensorProto::UNDEFINED;  // unreachable: every enumerator is handled
}

std::string onnx_type_name(int32_t onnx_type) {
  if (onnx_type >= 0 && onnx_type < static_cast<int32_t>(kOnnxTypeNames.size())) {
    return std::string(kOnnxTypeNames[onnx_type]);
  }
  return fmt::format("type {}", onnx_type);
}

DType require_dtype(int32_t onnx_type, std::string_view what) {
  if (onnx_type == onnx::TensorProto::UNDEFINED) fail("{} has no element type", what);
  std::optional<DType> type = dtype_from_onnx(onnx_type);
  if (!type) {
    fail("{} has element type {}, which minic does not support", what,
         onnx_type_name(onnx_type));
  }
  return *type;
}

Tensor tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataPolicy& external,
                         std::string_view what) {
  DType dtype = require_dtype(proto.data_type(), what);
  if (proto.has_segment()) fail("{} is a segment of a tensor, which minic does not support", what);
  Shape shape(proto.dims().begin(), proto.dims().end());
  check_shape(shape, dtype, std::string(what));
  Tensor tensor(dtype, std::move(shape));

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    fill_from_external(tensor, proto, external, what);
  } else if (proto.has_raw_data()) {
    if (has_typed_data(proto)) fail("{} has both raw_data and typed data fields", what);
    fill_from_bytes(tensor, proto.raw_data(), "raw_data", what);
  } else if (is_storage_only(dtype)) {
    fill_storage_only_from_int32(tensor, proto, what);
  } else {
    fill_from_typed_fields(tensor, proto, what);
  }
  return tensor;
}

onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t dim : tensor.shape()) proto.add_dims(dim);
  proto.set_raw_data(stored_bytes(tensor));
  return proto;
}

Tensor read_tensor_proto(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.empty()) fail("{}: the file is empty", path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    fail("{}: not a TensorProto: the file is truncated or is not a protobuf message", path);
  }
  // Other messages (a model, an ONNX sequence or optional value) often parse too, with
  // fields of the wrong kind left over as unknown fields and no element type.
  if (!proto.unknown_fields().empty() || !proto.has_data_type()) {
    fail("{}: not a TensorProto (it may be a model, or a sequence or optional value, which "
         "minic does not support)", path);
  }
  std::string what =
      proto.name().empty() ? fmt::format("{}: tensor", path)
                           : fmt::format("{}: tensor '{}'", path, proto.name());
  ExternalDataPolicy external{fs::path(path).parent_path()};
  return tensor_from_proto(proto, external, what);
}

void write_tensor_proto(const std::string& path, const Tensor& tensor, const std::string& name) {
  std::string bytes = tensor_to_proto(tensor, name).SerializeAsString();
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) fail("{}: cannot open the file for writing", path);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  stream.close();
  if (!stream) fail("{}: error while writing the file", path);
}

}  // namespace minic
