#!/usr/bin/env python3
"""Builds examples/mnist_cnn.onnx, the small bundled example model (an MNIST-shaped CNN with
seeded random weights: Conv-Relu-MaxPool x2, Flatten, Gemm, Softmax), and a sample input.
The committed .onnx and .pb files were produced by this script; run it again to regenerate them."""
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = Path(__file__).resolve().parent
rng = np.random.default_rng(7)


def weight(name, shape, fan_in):
    return numpy_helper.from_array(rng.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32), name)


inits = [
    weight("conv1.w", (8, 1, 3, 3), 9), numpy_helper.from_array(np.zeros(8, np.float32), "conv1.b"),
    weight("conv2.w", (16, 8, 3, 3), 72), numpy_helper.from_array(np.zeros(16, np.float32), "conv2.b"),
    weight("fc.w", (10, 16 * 7 * 7), 784), numpy_helper.from_array(np.zeros(10, np.float32), "fc.b"),
]
nodes = [
    helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p2"], ["flat"], name="flatten"),
    helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
graph = helper.make_graph(nodes, "mnist_cnn",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="aotc-examples")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, str(here / "mnist_cnn.onnx"))

# A crude "7": a horizontal bar and a diagonal stroke.
img = np.zeros((1, 1, 28, 28), np.float32)
img[0, 0, 5:8, 6:22] = 1.0
for r in range(8, 24):
    c = 21 - (r - 8) // 2
    img[0, 0, r, c - 1:c + 2] = 1.0
(here / "mnist_cnn_input_0.pb").write_bytes(numpy_helper.from_array(img, "image").SerializeToString())
print("wrote", here / "mnist_cnn.onnx", "and", here / "mnist_cnn_input_0.pb")
