"""Rows of the bad-input table about the files and options a command is given beside the
model (bad_inputs.py).

Categories: input files (`run --input`: wrong shape or dtype, not .npy, truncated),
tuning databases (`--records`, `minic db`: garbage, truncated, wrong version, wrong record)
and command-line options out of range or naming what is not there (back ends, custom op
libraries).
"""

import numpy as np
from onnx import numpy_helper

from bad_input_kit import (BAD_INPUT, Case, good_npy, npy_bytes, record, relu_model)

RUN = ["run", "--backend", "interp", "{d}/model.onnx"]


def with_file(category, name, file_name, data, args, expect, status=BAD_INPUT):
    """A row: the Relu model (X f32[2,3]) as {d}/model.onnx, and `data` as {d}/file_name."""
    def write(folder):
        (folder / "model.onnx").write_bytes(relu_model().SerializeToString())
        if data is not None:
            (folder / file_name).write_bytes(data)
    return Case(category, name, write, args, status, expect)


def input_case(name, file_name, data, expect, status=BAD_INPUT):
    return with_file("input files", name, file_name, data,
                     RUN + ["--input", f"X={{d}}/{file_name}"], expect, status)


def input_cases():
    f32 = good_npy()
    data = np.zeros(6, np.float32).tobytes()
    model_bytes = relu_model().SerializeToString()
    tensor_pb = numpy_helper.from_array(np.zeros((2, 3), np.float64), "x").SerializeToString()
    return [
        input_case("the right file runs", "x.npy", f32, r"Y: f32\[2,3\]", status=0),
        input_case("wrong shape", "x.npy", good_npy((3, 3)),
                   r"model\.onnx: the value given for input 'X' gives dimension 0 as 3, but the "
                   r"model's input 'X' has 2 there \(shape \[2,3\]\)"),
        input_case("wrong rank", "x.npy", good_npy((6,)),
                   r"model\.onnx: the value given for input 'X' has rank 1, but the model's "
                   r"input 'X' has rank 2"),
        input_case("wrong dtype", "x.npy", good_npy(dtype=np.float64),
                   r"input 'X' is f32 in the model, but the value given for it is f64"),
        input_case("bool for a float input", "x.npy", good_npy(dtype=np.bool_),
                   r"input 'X' is f32 in the model, but the value given for it is bool"),
        input_case("not .npy (text)", "x.npy", b"1 2 3\n4 5 6\n",
                   r"x\.npy: not a \.npy file \(it does not start with \\x93NUMPY\)"),
        input_case("truncated data", "x.npy", npy_bytes("<f4", (2, 3), data[:10]),
                   r"x\.npy: truncated \.npy file: 10 bytes of data for f32\[2,3\], which needs "
                   r"24"),
        input_case("truncated header", "x.npy", npy_bytes("<f4", (2, 3), data)[:40],
                   r"x\.npy: truncated \.npy file \(the header is cut short\)"),
        input_case("only the magic", "x.npy", b"\x93NUMPY\x01",
                   r"x\.npy: (not a \.npy file|truncated \.npy file)"),
        input_case("extra data", "x.npy", npy_bytes("<f4", (2, 3), data + data),
                   r"x\.npy: 48 bytes of data for f32\[2,3\], which needs 24: the header does "
                   r"not describe the data"),
        input_case("big-endian", "x.npy", npy_bytes(">f4", (2, 3), data),
                   r"x\.npy: element type '>f4' is big-endian"),
        input_case("Fortran order", "x.npy", npy_bytes("<f4", (2, 3), data, fortran=True),
                   r"x\.npy: the array is in Fortran \(column-major\) order"),
        input_case("complex elements", "x.npy", npy_bytes("<c8", (2, 3), data + data),
                   r"x\.npy: element type '<c8' is not one minic reads"),
        input_case("Python objects", "x.npy", npy_bytes("|O", (2, 3), data),
                   r"x\.npy: element type '\|O' is not one minic reads"),
        input_case("unknown format version", "x.npy",
                   npy_bytes("<f4", (2, 3), data, version=(9, 0)),
                   r"x\.npy: \.npy format version 9\.0 is unknown"),
        input_case("garbled header", "x.npy",
                   b"\x93NUMPY\x01\x00\x10\x00{'descr': <f4, }\n" + data,
                   r"x\.npy: bad \.npy header \(expected a string\)"),
        input_case("negative dimension in the header", "x.npy",
                   npy_bytes("<f4", (2, -3), data), r"x\.npy: .*negative dimension -3"),
        input_case("huge shape in the header", "x.npy", npy_bytes("<f4", (10**7, 10**7), data),
                   r"x\.npy: shape \[10000000,10000000\] of f32 is absurdly large"),
        input_case("missing file", "absent.npy", None, r"absent\.npy"),
        input_case("a model given as a .pb tensor", "x.pb", model_bytes,
                   r"x\.pb: not a TensorProto"),
        input_case("garbage .pb", "x.pb", bytes(range(256)),
                   r"x\.pb: not a TensorProto"),
        input_case(".pb of the wrong dtype", "x.pb", tensor_pb,
                   r"input 'X' is f32 in the model, but the value given for it is f64"),
        with_file("input files", "--compare file of the wrong shape", "y.npy", good_npy((3, 2)),
                  RUN + ["--compare", "{d}/y.npy"],
                  r"compare Y with .*y\.npy: MISMATCH \(shape \[2,3\] where \[3,2\] was expected\)",
                  status=1),
    ]


def db_case(name, lines, expect, args=None, status=BAD_INPUT):
    text = lines
    if isinstance(lines, list):
        text = "".join(line + "\n" for line in lines).encode()
    args = args or ["db", "show", "{d}/db.jsonl"]
    return with_file("tuning db", name, "db.jsonl", text, args, expect, status)


def db_cases():
    good = record()
    where = r"db\.jsonl:2: "
    return [
        db_case("a good record", [good], r"1 records, 1 workloads", status=0),
        db_case("garbage", [good, "%%% not json"], where + r"not a JSON record"),
        db_case("binary garbage", bytes(range(1, 256)), r"db\.jsonl:1: not a JSON record"),
        db_case("truncated line", [good, good[:60]], where + r"not a JSON record"),
        db_case("wrong version", [good, record(version=7)],
                where + r"record version 7 \(this minic reads version 1"),
        db_case("missing field", [good, record(trace=None)],
                where + r"record has no field 'trace'"),
        db_case("string for a number", [good, record(median_us="fast")],
                where + r"field 'median_us' should be a number, not string"),
        db_case("float for an integer", [good, record(trial=1.5)],
                where + r"field 'trial' should be an integer, not number"),
        db_case("times not numbers", [good, record(times_us=["a"])],
                where + r"field 'times_us' holds a string"),
        db_case("decisions not integers", [good, record(decisions={"C.tile": [1.5]})],
                where + r"field 'decisions': knob 'C.tile' should be a list of integers"),
        db_case("a list, not a record", [good, "[1, 2, 3]"],
                where + r"a record should be a JSON object, not array"),
        db_case("broken database for --records", [good, "{"], where + r"not a JSON record",
                args=["run", "{d}/model.onnx", "--records", "{d}/db.jsonl"]),
        db_case("missing database for --records", None, r"absent\.jsonl",
                args=["run", "{d}/model.onnx", "--records", "{d}/absent.jsonl"]),
        db_case("broken database for merge", [good, "{"], where + r"not a JSON record",
                args=["db", "merge", "{d}/db.jsonl", "-o", "{d}/out.jsonl"]),
        db_case("broken database for tune --resume", [good, "{"], where + r"not a JSON record",
                args=["tune", "{d}/model.onnx", "-o", "{d}/db.jsonl", "--resume", "--trials",
                      "1"]),
    ]


def option_case(name, args, expect, command="run"):
    return with_file("options", name, "unused", None, [command, "{d}/model.onnx"] + args, expect)


def option_cases():
    return [
        option_case("--threads below zero", ["--threads", "-3"],
                    r"--threads: Value -3 not in range 0 to 1024"),
        option_case("--threads too many", ["--threads", "100000"],
                    r"--threads: Value 100000 not in range 0 to 1024", command="bench"),
        option_case("--threads not a number", ["--threads", "many"], r"--threads"),
        option_case("--seed below zero", ["--seed", "-1"], r"--seed: -1 must be 0 or more"),
        option_case("--rtol below zero", ["--rtol", "-0.5"], r"--rtol: -0.5 must be 0 or more"),
        option_case("--atol below zero", ["--atol", "-1e-3"], r"--atol: -1e-3 must be 0 or more"),
        option_case("--rtol nan", ["--rtol", "nan"], r"--rtol: nan is not a finite number"),
        option_case("--atol inf", ["--atol", "inf"], r"--atol: inf is not a finite number"),
        option_case("--repeat 0", ["--repeat", "0"], r"--repeat 0: must be 1 or more",
                    command="bench"),
        option_case("--warmup below zero", ["--warmup", "-1"], r"--warmup -1: must be 0 or more",
                    command="bench"),
        option_case("--trials 0", ["-o", "{d}/db.jsonl", "--trials", "0"],
                    r"--trials must be at least 1", command="tune"),
        option_case("--per-round 0", ["-o", "{d}/db.jsonl", "--per-round", "0"],
                    r"--per-round must be at least 1", command="tune"),
        option_case("--budget below zero", ["-o", "{d}/db.jsonl", "--budget", "-5m"],
                    r"--budget '-5m' is not a duration", command="tune"),
        option_case("--input-shape negative", ["--input-shape", "X=-1x3"],
                    r"--input-shape 'X=-1x3': '-1' is not a dimension"),
        option_case("--input-shape without a name", ["--input-shape", "2x3"],
                    r"--input-shape '2x3': write NAME=1x3x224x224"),
        option_case("--input-shape of an unknown input", ["--input-shape", "Q=2x3"],
                    r"--input-shape 'Q=2x3': the model has no input named 'Q' \(inputs: X\)"),
        option_case("--backends unknown", ["--backends", "tpu"],
                    r"unknown back end 'tpu' \(available: .*toy-npu"),
        option_case("--backends with the interpreter",
                    ["--backend", "interp", "--backends", "toy-npu"],
                    r"--backends toy-npu: .*the interpreter compiles nothing"),
        option_case("--custom-ops of a missing file", ["--custom-ops", "{d}/missing.so"],
                    r"missing\.so: no such custom op library"),
        with_file("options", "--custom-ops of a file that is no library", "ops.so",
                  b"not a shared library", ["run", "{d}/model.onnx", "--custom-ops", "{d}/ops.so"],
                  r"ops\.so: cannot load the custom op library: .*"),
    ]


def cases():
    return input_cases() + db_cases() + option_cases()
