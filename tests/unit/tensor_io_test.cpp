// Unit tests for tensors in files: numpy .npy and ONNX TensorProto .pb. Course module 8.
#include "minic/runtime/tensor_io.h"

#include "minic/frontend/onnx.h"

#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace minic;
using namespace minic::testing;
using Catch::Contains;

namespace {

// Bytes of numpy's `np.save(f, np.array([[1, 2, 3], [4, 5, 6]], dtype='<i4'))` (numpy 1.x
// and 2.x write the same): magic, version 1.0, header length 118, the header padded to 128
// bytes in all, then six little-endian int32.
std::string numpy_int32_2x3() {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(117 - header.size(), ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00\x76\x00", 10);
  file += header;
  for (char value = 1; value <= 6; ++value) file += std::string{value, 0, 0, 0};
  return file;
}

// A tensor of every element type with a few distinct values.
std::vector<Tensor> sample_tensors() {
  std::vector<Tensor> tensors;
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i8, DType::i16,
                      DType::i32, DType::i64, DType::u8, DType::u16, DType::u32, DType::u64,
                      DType::boolean}) {
    Tensor values = Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5}).cast(dtype);
    tensors.push_back(std::move(values));
  }
  tensors.push_back(Tensor::scalar<float>(-2.5f));
  tensors.push_back(Tensor(DType::f32, {0, 4}));
  tensors.push_back(Tensor::from_vector<int64_t>({3}, {-1, int64_t{1} << 50, 7}));
  return tensors;
}

std::string read_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

}  // namespace

TEST_CASE("npy files round trip for every numpy element type", "[tensor_io]") {
  TempDir dir;
  for (const Tensor& tensor : sample_tensors()) {
    if (tensor.dtype() == DType::bf16) continue;  // numpy has no bfloat16
    INFO(type_string(tensor.type()));
    std::string path = dir.file("t.npy");
    write_npy(path, tensor);
    Tensor back = read_npy(path);
    REQUIRE(back.identical(tensor));
    REQUIRE(read_tensor_file(path).identical(tensor));
    // numpy's alignment: the data starts at a multiple of 64 bytes.
    REQUIRE((read_bytes(path).size() - tensor.type().num_bytes()) % 64 == 0);
  }
  REQUIRE_THROWS_WITH(write_npy(dir.file("bf.npy"), Tensor(DType::bf16, {2})),
                      Contains("numpy has no bf16"));
}

TEST_CASE("npy bytes as numpy writes them", "[tensor_io]") {
  TempDir dir;
  std::string path = dir.write("numpy.npy", numpy_int32_2x3());
  Tensor tensor = read_npy(path);
  REQUIRE(tensor.type() == TensorType{DType::i32, {2, 3}});
  REQUIRE(tensor.to_int64_vector() == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  // minic writes exactly what numpy writes.
  write_npy(dir.file("minic.npy"), tensor);
  REQUIRE(read_bytes(dir.file("minic.npy")) == numpy_int32_2x3());

  // Version 2.0: a 4-byte header length; a 1-tuple shape and a byte-sized type.
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n";
  std::string v2("\x93NUMPY\x02\x00", 8);
  v2 += std::string{static_cast<char>(header.size()), 0, 0, 0} + header;
  v2 += std::string("\x01\x00\x02", 3);
  Tensor flags = read_npy(dir.write("v2.npy", v2));
  REQUIRE(flags.type() == TensorType{DType::boolean, {3}});
  REQUIRE(flags.to_int64_vector() == std::vector<int64_t>{1, 0, 1});
}

TEST_CASE("bad npy files are refused", "[tensor_io]") {
  TempDir dir;
  std::string good = numpy_int32_2x3();
  REQUIRE_THROWS_WITH(read_npy(dir.write("short.npy", good.substr(0, good.size() - 3))),
                      Contains("truncated"));
  REQUIRE_THROWS_WITH(read_npy(dir.write("header.npy", good.substr(0, 40))),
                      Contains("truncated"));
  REQUIRE_THROWS_WITH(read_npy(dir.write("magic.npy", "PK\x03\x04 not numpy")),
                      Contains("not a .npy file"));

  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  REQUIRE_THROWS_WITH(read_npy(dir.write("fortran.npy", fortran)), Contains("Fortran"));
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<i4"), 3, ">i4");
  REQUIRE_THROWS_WITH(read_npy(dir.write("big.npy", big_endian)), Contains("big-endian"));
  std::string object = good;
  object.replace(object.find("<i4"), 3, "|O8");
  REQUIRE_THROWS_WITH(read_npy(dir.write("object.npy", object)), Contains("'|O8'"));
  std::string garbled = good;
  garbled.replace(garbled.find("(2, 3)"), 6, "(2, x)");
  REQUIRE_THROWS_WITH(read_npy(dir.write("garbled.npy", garbled)), Contains("bad .npy header"));
  REQUIRE_THROWS_WITH(read_npy(dir.file("missing.npy")), Contains("no such file"));
}

TEST_CASE("TensorProto files round trip for every element type", "[tensor_io]") {
  TempDir dir;
  for (const Tensor& tensor : sample_tensors()) {
    INFO(type_string(tensor.type()));
    std::string path = dir.file("t.pb");
    write_tensor_proto(path, tensor, "t");
    REQUIRE(read_tensor_proto(path).identical(tensor));
    REQUIRE(read_tensor_file(path).identical(tensor));
  }
  REQUIRE_THROWS_WITH(read_tensor_proto(dir.write("empty.pb", "")), Contains("empty"));
  REQUIRE_THROWS_WITH(read_tensor_proto(dir.write("bad.pb", "\xff\xff\xff\xff")),
                      Contains("not a TensorProto"));
}

TEST_CASE("an ONNX backend test's input and expected output read as TensorProtos",
          "[tensor_io]") {
  // test_abs: output_0 = |input_0|, both f32[3,4,5].
  const std::string dir = MINIC_ONNX_NODE_DIR "/test_abs/test_data_set_0/";
  Tensor input = read_tensor_file(dir + "input_0.pb");
  Tensor output = read_tensor_file(dir + "output_0.pb");
  REQUIRE(input.type() == TensorType{DType::f32, {3, 4, 5}});
  REQUIRE(output.type() == input.type());
  bool has_negative = false;
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    has_negative = has_negative || input.as_double(i) < 0;
    REQUIRE(output.as_double(i) == std::abs(input.as_double(i)));
  }
  REQUIRE(has_negative);
}
