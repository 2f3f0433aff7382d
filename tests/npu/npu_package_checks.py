"""What the package checks of every NPU target share (tests/ascendc/check_ascend_package.py,
tests/bang/check_mlu_package.py, tests/tiled/check_tiled_package.py): the models, the build and
run helpers, and the checks every NPU package passes the same way -- a refused model names its op
types and nodes, a package that needs more device memory than the emulation has fails at init
with the sizes, and the softmax package's output against numpy."""
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []


def check(condition, what):
    print(f"{'ok  ' if condition else 'FAIL'} {what}", flush=True)
    if not condition:
        FAILURES.append(what)


def save(model, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def softmax_model(path):
    """x[64, 1000] -> MatMul(W[1000, 1000]) -> Softmax: 4 MB of weights, rows of 1000 floats."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((1000, 1000)) * 0.03).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
         helper.make_node("Softmax", ["h"], ["y"], axis=-1, name="probabilities")],
        "softmax_rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 1000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 1000])], [w])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return numpy_helper.to_array(w)


def softmax_reference(x, w):
    h = x.astype(np.float64) @ w.astype(np.float64)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def unsupported_model(path):
    # Ops with no tile plan on the NPU targets: a cubic Resize (nearest ones with integer factors
    # are box copies) and a TopK.
    g = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["r"], name="up1", mode="cubic"),
         helper.make_node("TopK", ["r", "k"], ["y", "i"], name="top1", axis=3)],
        "refused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 10, 2]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 10, 2])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
         numpy_helper.from_array(np.array([2], np.int64), "k")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def build(pkg, build_dir, options):
    p = run(["cmake", "-S", pkg, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"] + options)
    if p.returncode == 0:
        p = run(["cmake", "--build", build_dir, "-j2"])
    check(p.returncode == 0, f"build {build_dir.name} ({' '.join(options) or 'defaults'})")
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-3000:])
    return p.returncode == 0


# The package CMake options that build a target's emulation with IEEE numerics: the rewrite checks
# compare exact decompositions with onnxruntime, not the MLU370 numeric model's truncation.
IEEE_DEFINES = {"mlu370": ["-DAOTC_MLU_NUMERICS=ieee"]}


def compile_and_build_model(aotc, model, target, work, name="m"):
    """Checks and saves `model` in `work` (wiped first), compiles it for `target` as package `name`
    and builds it (Release, IEEE numerics); exits with a FAILED message on any error. Returns the
    build folder."""
    work = Path(work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    onnx.checker.check_model(model)
    onnx.save(model, str(work / f"{name}.onnx"))
    p = subprocess.run([str(aotc), "compile", str(work / f"{name}.onnx"), "--target", target, "-o", str(work / "pkg"),
                        "--name", name], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAILED: compile: {p.stderr.strip()}")
    for cmd in (["cmake", "-S", str(work / "pkg"), "-B", str(work / "build"), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release"] + IEEE_DEFINES.get(target, []),
                ["cmake", "--build", str(work / "build")]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"FAILED: {' '.join(cmd[:3])}: exit {r.returncode}\n{(r.stdout + r.stderr)[-2000:]}")
    return work / "build"


def check_refusal(aotc, work, target):
    """1. A model with ops the target has no kernel for is refused at compile time."""
    unsupported_model(work / "refused.onnx")
    p = run([aotc, "compile", work / "refused.onnx", "--target", target, "-o", work / "refused"])
    msg = " ".join(p.stderr.split())
    check(p.returncode == 2, f"an unsupported model exits with 2 (got {p.returncode})")
    check(f"target {target} cannot compile 2 of 2 nodes (op types: Resize, TopK)" in msg and
          "node 'up1'" in msg and "node 'top1'" in msg,
          f"the refusal lists the op types and names the nodes: {msg[:400]}")
    check(not (work / "refused").exists(), "no package is left behind")


def compile_softmax(aotc, work, target, extra=()):
    """The package of the other checks; returns (package, w, x) or None."""
    w = softmax_model(work / "softmax.onnx")
    pkg = work / "softmax"
    p = run([aotc, "compile", work / "softmax.onnx", "--target", target, "-o", pkg, "--name", "softmax",
             *extra])
    check(p.returncode == 0, f"compile the softmax model: {p.stderr.strip()[:300]}")
    if p.returncode != 0:
        return None
    x = np.random.default_rng(3).standard_normal((64, 1000)).astype(np.float32)
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    return pkg, w, x


def run_softmax(work, build_dir, out_name, timeout=300):
    return run([build_dir / "softmax_run", "--input", work / "x.pb", "--output-dir", work / out_name],
               timeout=timeout)


def check_small_device_memory(work, pkg, option, build_name):
    """3. Less device memory than the weights: init fails with the sizes."""
    if build(pkg, work / build_name, [f"-D{option}=1000000"]):
        p = run_softmax(work, work / build_name, "out_" + build_name)
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"init fails with a status (exit {p.returncode})")
        check(re.search(r"needs \d+ bytes of device memory \(weights 4000\d\d\d, arena \d+, inputs and "
                        r"outputs \d+\), more than the 1000000 bytes free", msg) is not None,
              f"the message gives the sizes: {msg[:500]}")


def read_output(out_dir, index=0):
    t = onnx.TensorProto()
    t.ParseFromString((Path(out_dir) / f"output_{index}.pb").read_bytes())
    return numpy_helper.to_array(t)


def relative_l2(y, ref):
    return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
