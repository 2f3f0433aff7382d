#!/usr/bin/env bash
# Set-up and build, then compile the bundled example model for this machine, build the generated
# package with its own CMake, and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

rm -rf out/mnist_cnn
set -x
build/aotc compile examples/mnist_cnn.onnx --target x86-64 -o out/mnist_cnn
cmake -S out/mnist_cnn -B out/mnist_cnn/build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build out/mnist_cnn/build
out/mnist_cnn/build/mnist_cnn_run --input examples/mnist_cnn_input_0.pb --output-dir out/mnist_cnn/result --print --bench 20
