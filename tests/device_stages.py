"""The two stages of the device test suites (docs/device-checks.md), shared by
tests/conformance/run_node_tests.py, tests/models/run_light_models.py and
tests/opencl/check_device_kernels.py.

`--stage prepare` compiles the packages here and writes into the work folder everything a run
needs, listed in manifest.json with paths relative to that folder; `--stage run`, on the machine
with the device, reads the manifest back and builds, runs and compares without aotc.
`--runner-wrapper CMD` runs every package's runner under CMD (compute-sanitizer, valgrind).
"""
import json
import shlex
import shutil
from pathlib import Path

MANIFEST = "manifest.json"


def add_stage_arguments(ap, prepared_what):
    """Adds --stage and --runner-wrapper; `prepared_what` says what prepare leaves in --work."""
    ap.add_argument("--stage", choices=["all", "prepare", "run"], default="all",
                    help=f"prepare: compile and store {prepared_what} in --work; run: build and run "
                         "a prepared --work (on the device's machine); all: both")
    ap.add_argument("--runner-wrapper", default="",
                    help="a command each runner runs under, e.g. 'compute-sanitizer --error-exitcode 9' "
                         "or 'valgrind --error-exitcode=9'; its failure fails the test")


def write_manifest(work, target, **fields):
    """Writes work/manifest.json: the target and `fields` (paths in them relative to `work`)."""
    (Path(work) / MANIFEST).write_text(json.dumps({"target": target, **fields}, indent=1))


def read_manifest(ap, work, target):
    """The manifest of a prepared folder, checked against --target; clears its build and outputs."""
    path = Path(work) / MANIFEST
    if not path.exists():
        ap.error(f"{work} holds no {MANIFEST}: prepare it with --stage prepare first")
    manifest = json.loads(path.read_text())
    if manifest["target"] != target:
        ap.error(f"{work} was prepared for target {manifest['target']}, not {target}")
    for d in ("build", "out"):
        shutil.rmtree(Path(work) / d, ignore_errors=True)
    return manifest


def runner_command(args, runner):
    """The command line that starts `runner`, under --runner-wrapper if given."""
    return shlex.split(args.runner_wrapper) + [str(runner)]
