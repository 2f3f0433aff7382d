"""The nodes a 16-bit storage width cannot hold: what `--keep-fp32` should name for a model.

fp16 holds magnitudes up to 65504. A node whose float32 operands or results exceed that (in an
onnxruntime run on the sample input) would store an infinity, so the model scripts keep such
nodes in fp32 (`aotc compile --keep-fp32 ...`) and print their names; bf16 has float32's range.
"""
import onnx
import numpy as np
from onnx import TensorProto, helper, shape_inference

FP16_MAX = 65504.0
# lower_precision.cpp's integer-valued float results (kept float32 at any storage width).
ROUNDING_OPS = {"Round", "Floor", "Ceil", "Sign"}
INTEGER_CLOSED_OPS = {"Add", "Sub", "Mul", "Neg", "Abs", "MatMul", "Conv", "Clip", "Max", "Min", "Relu",
                      "ReduceSum", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Slice",
                      "Gather", "Concat", "Split", "Expand", "Identity", "Pad", "Tile", "MaxPool"}


def out_of_range_nodes(model, feeds, precision, margin=0.5):
    """Names of the nodes with a float32 operand or result above margin * the width's largest."""
    if precision != "fp16":
        return []
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m = shape_inference.infer_shapes(m)
    floats = {vi.name for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)
              if vi.type.tensor_type.elem_type == TensorProto.FLOAT}
    floats |= {i.name for i in m.graph.initializer if i.data_type == TensorProto.FLOAT}
    present = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for name in node.output:
            if name and name in floats and name not in present:
                m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
                present.add(name)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    values = dict(zip(names, sess.run(None, feeds)))
    values.update(feeds)
    for i in m.graph.initializer:
        if i.data_type == TensorProto.FLOAT:
            values[i.name] = onnx.numpy_helper.to_array(i)
    limit = margin * FP16_MAX

    def big(name):
        v = values.get(name)
        return v is not None and v.dtype == np.float32 and v.size and np.nanmax(np.abs(v)) > limit

    return [n.name for n in m.graph.node if any(big(x) for x in list(n.input) + list(n.output) if x)]


def storage_rounded_run(model, feeds, precision):
    """onnxruntime's outputs with every float32 activation stored at `precision`'s width: each
    node's float32 result rounded to fp16 (saturating at 65504) or bf16 and widened again before
    its readers. What storage at 16 bits alone does to a model, whatever the compiler: the
    reference for models whose error is dominated by it (8-bit quantizers reading 16-bit
    activations move values across step boundaries, and the flips compound layer by layer).
    Integer-valued results stay float32, as aotc's lower-precision keeps them (an int32
    accumulator converted to float, a Round, ring ops of such: passes/lower_precision.cpp)."""
    import onnxruntime as ort
    width = {"fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}[precision]
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = shape_inference.infer_shapes(m)
    floats = {vi.name for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
              if vi.type.tensor_type.elem_type == TensorProto.FLOAT}
    outputs = {o.name for o in m.graph.output}
    limit_lo, limit_hi = "storage_rounded_lo", "storage_rounded_hi"
    largest = FP16_MAX if precision == "fp16" else float(np.finfo(np.float32).max)
    m.graph.initializer.extend([onnx.numpy_helper.from_array(np.array(-largest, np.float32), limit_lo),
                                onnx.numpy_helper.from_array(np.array(largest, np.float32), limit_hi)])
    elem = {vi.name: vi.type.tensor_type.elem_type
            for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    integral = set()
    for init in m.graph.initializer:
        elem[init.name] = init.data_type
        if init.data_type == TensorProto.FLOAT:
            v = onnx.numpy_helper.to_array(init)
            if v.size and np.all(v == np.floor(v)) and np.all(np.abs(v) <= 2.0 ** 24):
                integral.add(init.name)
    floating = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE)

    def integral_result(node):
        if node.op_type == "Cast":
            return elem.get(node.input[0]) not in floating
        if node.op_type in ROUNDING_OPS:
            return True
        float_inputs = [x for x in node.input if x and elem.get(x) == TensorProto.FLOAT]
        return node.op_type in INTEGER_CLOSED_OPS and bool(float_inputs) and all(x in integral for x in float_inputs)

    nodes, renamed = [], {}
    for node in m.graph.node:  # topologically ordered: readers come after their producers
        keeps_integers = integral_result(node)  # on the model's own names, before the renaming
        node.input[:] = [renamed.get(x, x) for x in node.input]
        nodes.append(node)
        for name in node.output:
            if keeps_integers:
                integral.add(name)
            if name not in floats or name in outputs or keeps_integers:
                continue
            clipped, narrow, wide = name + "_sr_clip", name + "_sr_narrow", name + "_sr"
            nodes += [helper.make_node("Clip", [name, limit_lo, limit_hi], [clipped]),
                      helper.make_node("Cast", [clipped], [narrow], to=width),
                      helper.make_node("Cast", [narrow], [wide], to=TensorProto.FLOAT)]
            renamed[name] = wide
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)
