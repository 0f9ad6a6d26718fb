#!/usr/bin/env python3
"""The models and baselines scripts/gpu_check.sh measures on the GPU machine.

    gpu_check_models.py add OUT.onnx N          Y = relu(A + B) over N floats
    gpu_check_models.py matmul OUT.onnx M K N   Y = A @ B, B a constant
    gpu_check_models.py torch-copy BYTES        device-to-device copy: GB/s (read + write)
    gpu_check_models.py torch-matmul N          fp32 N^3 matmul (cuBLAS, no TF32): ms

Each measurement prints one number on stdout. numpy and onnx build the models; PyTorch
(on the GPU machine) gives the baselines.
"""
import sys


def save(graph, path):
    import onnx
    from onnx import helper
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="minic gpu_check")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def build_add(path, n):
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Add", ["A", "B"], ["S"]), helper.make_node("Relu", ["S"], ["Y"])]
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [n]) for name in "AB"]
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n])
    save(helper.make_graph(nodes, "add_relu", inputs, [output]), path)


def build_matmul(path, m, k, n):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    weights = np.random.default_rng(7).uniform(-1, 1, (k, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])], "matmul",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(weights, "B")])
    save(graph, path)


def cuda_time_ms(fn, repeat):
    import torch
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeat


def torch_copy(nbytes):
    import torch
    x = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    ms = cuda_time_ms(lambda: y.copy_(x), 20)
    print(f"{2 * nbytes / (ms * 1e-3) / 1e9:.1f}")


def torch_matmul(n):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.rand(n, n, device="cuda")
    b = torch.rand(n, n, device="cuda")
    print(f"{cuda_time_ms(lambda: a @ b, 10):.3f}")


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "add" and len(argv) == 4:
        build_add(argv[2], int(argv[3]))
    elif command == "matmul" and len(argv) == 6:
        build_matmul(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif command == "torch-copy" and len(argv) == 3:
        torch_copy(int(argv[2]))
    elif command == "torch-matmul" and len(argv) == 3:
        torch_matmul(int(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
