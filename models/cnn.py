"""Layers shared by the CNN builders (resnet50.py, mobilenet_v2.py), written as torchvision
models export them with BatchNormalization kept as its own node (training=PRESERVE, or a
TF/Keras export) rather than folded into the convolution.

Scaling so that random weights keep activations O(1) through a deep residual net:
convolutions use He initialisation (variance 2/fan_in, preserved through ReLU); BatchNorm
statistics are near (0, 1) with gamma near 1, except the last BatchNorm of each residual branch,
whose small gamma (as with torchvision's zero_init_residual, but not zero) keeps the residual
sum from doubling its variance at every block.
"""
import numpy as np

RESIDUAL_GAMMA = (0.2, 0.4)


def conv(b, x, c_in, c_out, kernel, stride=1, group=1, name="conv"):
    """Conv without bias, pads (kernel - 1) / 2 on every side, as torchvision writes it."""
    fan_in = (c_in // group) * kernel * kernel
    with b.scope(name):
        w = b.normal((c_out, c_in // group, kernel, kernel), np.sqrt(2.0 / fan_in), "weight")
    pad = (kernel - 1) // 2
    return b.op("Conv", x, w, kernel_shape=[kernel, kernel], strides=[stride, stride],
                pads=[pad] * 4, group=group, dilations=[1, 1])


def batch_norm(b, x, channels, name, residual_end=False):
    with b.scope(name):
        lo, hi = RESIDUAL_GAMMA if residual_end else (0.8, 1.2)
        gamma = b.uniform((channels,), lo, hi, "weight")
        beta = b.normal((channels,), 0.05, "bias")
        mean = b.normal((channels,), 0.1, "running_mean")
        var = b.uniform((channels,), 0.8, 1.25, "running_var")
    return b.op("BatchNormalization", x, gamma, beta, mean, var, epsilon=1e-5, momentum=0.9)


def classifier(b, x, features, classes, name="fc"):
    """GlobalAveragePool -> Flatten -> Gemm(transB) as torchvision's avgpool/flatten/fc export."""
    pooled = b.op("Flatten", b.op("GlobalAveragePool", x), axis=1)
    with b.scope(name):
        w = b.normal((classes, features), 1.0 / np.sqrt(features), "weight")
        bias = b.normal((classes,), 0.02, "bias")
    return b.op("Gemm", pooled, w, bias, alpha=1.0, beta=1.0, transB=1)


def sample_image(batch, resolution, rng):
    """A normalised image batch: ImageNet-style inputs have roughly zero mean, unit variance."""
    return {"input": rng.normal(0.0, 1.0, (batch, 3, resolution, resolution)).astype(np.float32)}
