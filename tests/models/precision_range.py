"""The nodes a 16-bit storage width cannot hold: what `--keep-fp32` should name for a model.

fp16 holds magnitudes up to 65504. A node whose float32 operands or results exceed that (in an
onnxruntime run on the sample input) would store an infinity, so the model scripts keep such
nodes in fp32 (`aotc compile --keep-fp32 ...`) and print their names; bf16 has float32's range.
"""
import onnx
import numpy as np
from onnx import TensorProto, helper, shape_inference

FP16_MAX = 65504.0


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
