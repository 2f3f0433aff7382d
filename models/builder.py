"""Shared plumbing for the model scripts in this folder.

`GraphBuilder` appends nodes and seeded initializers to an ONNX graph with short calls
(`b.op("MatMul", x, w)`), so that each model script reads like the module it mirrors.
`run_cli` gives every script the same command line: --size test|full, -o MODEL.onnx and
--inputs-dir DIR for seeded sample inputs as TensorProto files in graph-input order (the
format the aotc package runner reads).
"""
import argparse
import dataclasses
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# torch.finfo(torch.float32).min: the additive "masked" value HF transformers writes.
FLOAT_MIN = float(np.finfo(np.float32).min)
# Serialized protobuf messages cannot exceed 2 GiB; keep a margin for the graph itself.
PROTOBUF_LIMIT = (1 << 31) - (1 << 26)


class GraphBuilder:
    """Collects nodes, initializers and graph I/O for one ONNX graph.

    Weights come from a numpy Generator seeded once per model, so a model built twice with the
    same configuration is bit-identical. Node and value names are derived from a scope prefix
    (`with b.scope("layer.0.attention"):`) the way exporters name them after module paths."""

    def __init__(self, name, seed, opset):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.initializers, self.inputs, self.outputs = [], [], [], []
        self._prefix = []
        self._counts = {}

    # -- naming ------------------------------------------------------------------------------
    class _Scope:
        def __init__(self, builder, name):
            self.builder, self.name = builder, name

        def __enter__(self):
            self.builder._prefix.append(self.name)

        def __exit__(self, *exc):
            self.builder._prefix.pop()

    def scope(self, name):
        return GraphBuilder._Scope(self, name)

    def unique(self, base):
        """A name unique in this graph: '<scope>/<base>_<k>'."""
        full = "/".join(self._prefix + [base])
        k = self._counts.get(full, 0)
        self._counts[full] = k + 1
        return f"{full}_{k}" if k else full

    def param_name(self, base):
        return ".".join(self._prefix + [base])

    # -- graph I/O -----------------------------------------------------------------------------
    def input(self, name, elem_type, shape):
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, value, name, elem_type, shape):
        """Marks `value` as a graph output called `name`, renaming it where it is produced and used."""
        if value != name:
            for node in self.nodes:
                for field in (node.input, node.output):
                    for k, v in enumerate(field):
                        if v == value:
                            field[k] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    # -- initializers --------------------------------------------------------------------------
    def const(self, array, name=None):
        """An initializer holding `array` (dtype kept as given)."""
        name = name or self.unique("const")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def i64(self, values, name=None):
        return self.const(np.asarray(values, dtype=np.int64), name)

    def f32(self, values, name=None):
        return self.const(np.asarray(values, dtype=np.float32), name)

    def normal(self, shape, std, name, mean=0.0):
        # Drawn in float32 directly: the full-size models hold hundreds of millions of weights.
        data = self.rng.standard_normal(shape, dtype=np.float32)
        data *= np.float32(std)
        data += np.float32(mean)
        return self.const(data, self.param_name(name))

    def uniform(self, shape, low, high, name):
        data = self.rng.random(shape, dtype=np.float32)
        data *= np.float32(high - low)
        data += np.float32(low)
        return self.const(data, self.param_name(name))

    # -- nodes ---------------------------------------------------------------------------------
    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Appends one node; returns its output name (or a list when outputs > 1).

        An input given as None becomes the empty name ONNX uses for an omitted optional input."""
        node_name = self.unique(op_type)
        outs = [f"{node_name}_output_{k}" for k in range(outputs)]
        ins = ["" if i is None else i for i in inputs]
        self.nodes.append(helper.make_node(op_type, ins, outs, name=node_name, **attrs))
        return outs[0] if outputs == 1 else outs

    # -- the model -----------------------------------------------------------------------------
    def model(self, doc):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.initializers,
                                  doc_string=doc)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="aotc-models")
        if model.ByteSize() < PROTOBUF_LIMIT:  # larger models are checked from their file by save()
            onnx.checker.check_model(model, full_check=True)
        return model


def fill_value(value):
    """The float `value` attribute of ConstantOfShape."""
    return helper.make_tensor("value", TensorProto.FLOAT, [1], [value])


def linear_weight(b, fan_in, fan_out, name, transposed=False, gain=1.0):
    """A dense weight with std gain/sqrt(fan_in): a unit-variance input gives an output of
    standard deviation `gain`.

    `transposed` stores it [out, in], as torch.nn.Linear does and Gemm(transB=1) reads it;
    otherwise [in, out], as exporters write it for MatMul."""
    shape = (fan_out, fan_in) if transposed else (fan_in, fan_out)
    return b.normal(shape, gain / np.sqrt(fan_in), name)


def count_ops(model):
    """{op_type: count} for the nodes of the main graph."""
    counts = {}
    for n in model.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return dict(sorted(counts.items()))


def write_inputs(model, inputs, directory):
    """Writes `inputs` ({name: array}) as input_<k>.pb in graph-input order; returns the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, vi in enumerate(model.graph.input):
        path = directory / f"input_{k}.pb"
        path.write_bytes(numpy_helper.from_array(inputs[vi.name], vi.name).SerializeToString())
        paths.append(path)
    return paths


def save(model, path):
    """Saves a model; past protobuf's 2 GiB limit the weights go to PATH.data beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if model.ByteSize() < PROTOBUF_LIMIT:
        onnx.save(model, str(path))
        return
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location=path.name + ".data")
    onnx.checker.check_model(str(path), full_check=True)


def run_cli(description, configs, build, sample_inputs, default_name):
    """The command line every model script shares.

    `configs` maps a size ('test', 'full') to a dataclass instance; any of its fields can be
    overridden as --field VALUE (e.g. --layers 4)."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(configs), default="test",
                    help="configuration: 'test' (small, seconds to compile and run) or 'full' "
                         "(the benchmark size)")
    ap.add_argument("-o", "--output", default=None,
                    help=f"where to write the model (default: {default_name}_<size>.onnx)")
    ap.add_argument("--inputs-dir", default=None,
                    help="also write seeded sample inputs as DIR/input_<k>.pb (graph-input order)")
    ap.add_argument("--seed", type=int, default=0, help="seed for the sample inputs")
    some = next(iter(configs.values()))
    for f in dataclasses.fields(some):
        ap.add_argument("--" + f.name.replace("_", "-"), dest="cfg_" + f.name,
                        type=type(getattr(some, f.name)), default=None,
                        help=f"override the size's {f.name}")
    args = ap.parse_args()
    cfg = configs[args.size]
    overrides = {f.name: getattr(args, "cfg_" + f.name) for f in dataclasses.fields(cfg)
                 if getattr(args, "cfg_" + f.name) is not None}
    cfg = dataclasses.replace(cfg, **overrides)
    model = build(cfg)
    out = Path(args.output or f"{default_name}_{args.size}.onnx")
    save(model, out)
    params = sum(int(np.prod(i.dims)) for i in model.graph.initializer if i.data_type == TensorProto.FLOAT)
    print(f"wrote {out}: {len(model.graph.node)} nodes, {params:,} float parameters")
    print("ops: " + " ".join(f"{k}:{v}" for k, v in count_ops(model).items()))
    if args.inputs_dir:
        paths = write_inputs(model, sample_inputs(cfg, np.random.default_rng(args.seed)), args.inputs_dir)
        print("inputs: " + " ".join(str(p) for p in paths))
