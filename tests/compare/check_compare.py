#!/usr/bin/env python3
"""Checks `aotc compare` (docs/compare.md): a small model (tests/verify/make_models.py plain.onnx:
MatMul+Add+Relu, MatMul, Softmax) across x86-64, the two emulated NPUs and cuda-sm80; the page
loaded in headless Chromium must show every target's column and roofline plot and, for the
selected node, each target's kernel source side by side. Also the estimate's arithmetic against
the model's shapes, and the bad input: an unknown target, -o into a missing folder, and a model
one target refuses (its column shows the refusal, the others render).

  tests/compare/check_compare.py build/aotc [--work DIR]

About 2 minutes on 2 cores (each runnable target builds two packages: the timed one and verify's).
"""
import argparse
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "verify"))
import headless_browser  # noqa: E402
import make_models  # noqa: E402

TARGETS = ["x86-64", "ascend-910b", "mlu370", "cuda-sm80"]
failures = []


def check(ok, what, detail=""):
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    if not ok:
        failures.append(f"{what}\n{detail}".rstrip())
    return ok


def compare(aotc, model, targets, out, *extra):
    cmd = [str(aotc), "compare", str(model), "--targets", ",".join(targets), "-o", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True)


def det_model(path):
    """Relu, then the determinant of each 3x3 matrix: the CPU targets have a Det kernel, the
    emulated NPUs none, so mlu370 refuses the model."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Det", ["r"], ["y"], name="det")]
    graph = helper.make_graph(nodes, "det", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def node_columns(dom):
    """target -> the inner HTML of its column in the rendered node view."""
    view = dom[dom.find('id="node-view"'):]
    return {m.group(1): m.group(2) for m in re.finditer(r'<div class="node-col" data-target="([^"]+)">(.*?)</div>', view, re.S)}


def check_page(page, columns):
    dom, why = headless_browser.dump_dom(page)
    if dom is None:
        print(f"skip: headless browser check: {why}")
        return
    for t in columns:
        name = t["name"]
        check(f'id="col-{name}"' in dom, f"page: column of {name}")
        check(re.search(rf'<svg class="roofline" id="roofline-{re.escape(name)}"', dom) is not None, f"page: roofline plot of {name}")
    check('id="times"' in dom, "page: the time plot")
    cols = node_columns(dom)
    selected = re.search(r'<select id="node"[^>]*>', dom)
    for t in columns:
        col = cols.get(t["name"])
        if not check(col is not None, f"page: {t['name']} in the side-by-side node view", dom[-3000:]):
            continue
        if t["status"] != "compiled":
            check("refused" in col, f"page: {t['name']}'s node view shows its refusal")
            continue
        sources = re.findall(r'<pre class="source">(.*?)</pre>', col, re.S)
        text = html.unescape("".join(sources))
        functions = re.findall(r'<p class="file">[^<]*: (k\d+_\w+)</p>', col)
        # The selected node's kernel as the package has it: a definition of the named function.
        ok = bool(functions) and all(re.search(rf"\b{f}\s*\(", text) for f in functions) and "{" in text
        check(ok, f"page: {t['name']}'s kernel source for the selected node ({', '.join(functions) or 'none'})", col[:1500])
    return dom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("aotc")
    ap.add_argument("--work", default="/tmp/aotc_compare_check")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    make_models.main_into(work / "models")

    # The model on four targets: two run emulated, one natively, one cannot run here.
    p = compare(aotc, work / "models" / "plain.onnx", TARGETS, work / "plain.html", "--runs", "2")
    if not check(p.returncode == 0, f"compare plain.onnx on {','.join(TARGETS)} exits 0", p.stdout + p.stderr):
        return finish()
    page = json.loads((work / "plain_files" / "compare.json").read_text())
    columns = page["targets"]
    by_name = {t["name"]: t for t in columns}
    check([t["name"] for t in columns] == TARGETS, "compare.json: one column per target, in order")
    for name in ("x86-64", "ascend-910b", "mlu370"):
        t = by_name[name]
        m, d = t.get("measured", {}), t.get("drift", {})
        check(t["status"] == "compiled" and isinstance(m.get("total_ms"), float) and m["total_ms"] > 0,
              f"{name}: compiled, run here, measured {m.get('total_ms')} ms", json.dumps(m))
        check(isinstance(d.get("worst_max_rel"), float) and d["worst_max_rel"] < 1e-3 and d["first_divergent_node"] is None,
              f"{name}: drift from verify: worst max_rel {d.get('worst_max_rel')}, no divergent node", json.dumps(d))
    for name in ("ascend-910b", "mlu370"):
        check("emulated, not a chip time" in by_name[name]["measured"]["kind"], f"{name}: its time is labelled emulated")
    check("emulated" not in by_name["x86-64"]["measured"]["kind"], "x86-64: its time is a CPU time")
    cuda = by_name["cuda-sm80"]
    check(cuda["status"] == "compiled" and cuda["runs_here"] is False and "cannot run here" in cuda["run_note"]
          and "measured" not in cuda and isinstance(cuda["estimate_total_us"], float),
          "cuda-sm80: an estimate-only column saying it cannot run here", json.dumps(cuda)[:800])
    check(any(k["measured_us"] for k in by_name["x86-64"]["kernels_detail"]), "x86-64: per-kernel measured times (--profile)")
    for t in columns:
        check(len(t["kernels_detail"]) == t["kernels"], f"{t['name']}: one estimate per kernel ({t['kernels']})")

    # The estimate against the model's shapes: fc2 is r[8x32] @ w2[32x16] -> z[8x16] in fp32.
    for t in columns:
        fc2 = next((k for k in t["kernels_detail"] if k["node"] == "fc2"), None)
        if not check(fc2 is not None, f"{t['name']}: a kernel for node fc2"):
            continue
        flops, moved = 2 * 8 * 32 * 16, 4 * (8 * 32 + 32 * 16 + 8 * 16)
        peak, bw = t["roofline"]["peak_gflops"] * 1e9, t["roofline"]["peak_gbps"] * 1e9
        expect_us = max(flops / peak, moved / bw) * 1e6
        bound = "compute" if flops / peak >= moved / bw else "memory"
        check(fc2["flops"] == flops and fc2["bytes"] == moved and abs(fc2["estimate_us"] - expect_us) <= 1e-9 * expect_us
              and fc2["bound"] == bound,
              f"{t['name']}: fc2 estimate {fc2['estimate_us']:.4g} us, {fc2['bound']}-bound "
              f"(expected {expect_us:.4g} us, {bound}-bound from {flops} FLOPs and {moved} bytes)", json.dumps(fc2))
    check_page(work / "plain.html", columns)

    # Bad input.
    p = compare(aotc, work / "models" / "plain.onnx", ["x86-64", "nope"], work / "bad.html")
    line = p.stderr.strip()
    check(p.returncode == 1 and "unknown target 'nope'" in line and len(line.splitlines()) == 1,
          f"unknown target: exit {p.returncode}: {line}")
    p = compare(aotc, work / "models" / "plain.onnx", ["x86-64"], work / "missing" / "page.html")
    line = p.stderr.strip()
    check(p.returncode == 1 and str(work / "missing") in line and len(line.splitlines()) == 1,
          f"-o into a missing folder: exit {p.returncode}: {line}")
    det_model(work / "models" / "det.onnx")
    p = compare(aotc, work / "models" / "det.onnx", ["x86-64", "mlu370"], work / "det.html", "--no-run")
    if check(p.returncode == 0, "a model mlu370 refuses: exit 0", p.stdout + p.stderr):
        columns = json.loads((work / "det_files" / "compare.json").read_text())["targets"]
        mlu = columns[1]
        check(mlu["status"] == "refused" and "Det" in mlu.get("refusal", ""),
              f"mlu370 column: refused: {mlu.get('refusal')}")
        check(columns[0]["status"] == "compiled" and columns[0]["kernels"] >= 1, "x86-64 column still compiled")
        check_page(work / "det.html", columns)
    return finish()


def finish():
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"check_compare: {len(failures)} failures", file=sys.stderr)
        return 1
    print("check_compare: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
