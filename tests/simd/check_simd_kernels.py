#!/usr/bin/env python3
"""Checks the SIMD kernels of the x86-64-avx2/avx512 targets against onnxruntime on the shapes
that the node tests and models/ leave out: depthwise convolutions with odd widths (below, at
and past one vector), strides 1 to 3, dilation, asymmetric padding, 5x5 taps, batch 2, fused
activations and residuals; implicit-GEMM convolutions with strides, dilation, padding wider than
the kernel and groups, on each of the four paths (im2col, shifted, transposed with packed or
in-place pixels; a path left with no case fails the check);
GEMMs with ragged tiles, M = 1 and reductions deep enough for K blocking; the row-wise 2-D
MaxPool/AveragePool (vectorised interior columns, per-tap borders) with strides, dilation,
ceil_mode, rows too narrow for an interior and windows that start in the padding; Softmax and
LayerNormalization rows (8-lane maxima and double sums, a ragged tail) split among threads;
MobileNet-style chains whose images the layout pass keeps in NCHW8c (stem into the blocked
layout, 1x1s reading it, depthwise kernels on it, fused residuals, the last 1x1 back to NCHW);
on AVX-512 also in NCHW16c (a package compiled with --nchwc-block 16).

All cases are branches of ONE model, so each (target, threads) pair is one package and one
build; the packages of every thread count are built together. Each output must match
onnxruntime within a relative L2 error of 1e-5. The exit status is non-zero on any mismatch;
the last line reads "N passed, M failed".
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOLERANCE = 1e-5

# name: (input NCHW, kernel (kh, kw), strides, dilations, pads (t, l, b, r), bias, after)
# `after` is what follows the convolution: None, "relu", "clip6" or "residual" (Add of the input).
DEPTHWISE = {
    "dw3x3_s1_relu": ((1, 13, 17, 19), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "relu"),
    "dw3x3_s2_clip6": ((1, 8, 20, 21), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True, "clip6"),
    "dw5x5_s2_nobias": ((1, 6, 15, 15), (5, 5), (2, 2), (1, 1), (2, 2, 2, 2), False, None),
    "dw3x3_dilated": ((1, 5, 9, 30), (3, 3), (1, 1), (2, 2), (2, 2, 2, 2), True, None),
    "dw3x3_narrow_asym": ((1, 7, 7, 5), (3, 3), (1, 1), (1, 1), (0, 1, 2, 0), True, "relu"),
    "dw3x3_residual": ((1, 9, 11, 33), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "residual"),
    "dw3x2_s3x1": ((2, 4, 13, 10), (3, 2), (3, 1), (1, 1), (0, 0, 0, 0), True, "relu"),
    "dw3x3_s1x2_wide": ((1, 3, 6, 70), (3, 3), (1, 2), (1, 1), (1, 1, 1, 1), False, "clip6"),
    # The phase-row copy in whole vectors (stride 1 and 2: full vectors, one more ending at the
    # last interior column, a masked one when the interior is narrower than a vector) and the
    # output rows computed several at a time with a remainder (MobileNetV2's planes).
    "dw3x3_s2_28": ((1, 5, 28, 28), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True, "clip6"),
    "dw3x3_s2_14": ((1, 6, 14, 14), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True, "clip6"),
    "dw3x3_s1_14": ((1, 5, 14, 14), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "relu"),
    "dw3x3_s1_7": ((1, 6, 7, 7), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "residual"),
    "dw3x3_s2_32_endpad": ((1, 3, 32, 32), (3, 3), (2, 2), (1, 1), (0, 0, 1, 1), False, None),
    "dw5x5_s2_28": ((1, 4, 28, 28), (5, 5), (2, 2), (1, 1), (2, 2, 2, 2), True, "relu"),
    # Enough work (0.9 M multiply-adds) to be split among threads by channels.
    "dw3x3_threads": ((1, 32, 56, 56), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "clip6"),
}

# name: (input NCHW, weight (M, C / group, kh, kw), strides, dilations, pads (t, l, b, r), group):
# the implicit GEMM, whose im2col packing handles padding, strides and dilation.
CONV = {
    "conv3x3_s1": ((1, 5, 9, 23), (12, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_s1_wide": ((1, 5, 9, 40), (12, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_s2_dilated": ((1, 4, 17, 19), (8, 4, 3, 3), (2, 2), (2, 2), (2, 1, 0, 3), 1),
    "conv3x3_wide_pads": ((1, 3, 4, 5), (6, 3, 3, 3), (1, 1), (1, 1), (4, 6, 3, 7), 1),
    "conv5x3_s3_grouped": ((2, 8, 20, 31), (10, 4, 5, 3), (3, 2), (1, 1), (2, 0, 1, 1), 2),
    # Unit stride with a grid at most 8% wider than the output: the GEMM reads the zero-padded
    # input in place (no im2col), an unpadded one reads X itself; the grid columns past the
    # output width are dropped. The 1x1s take im2col panels, but those with at most 24 output
    # channels, which read an unpadded unit-stride input in place.
    "conv3x3_s1_dilated_grouped": ((1, 6, 13, 50), (12, 2, 3, 3), (1, 1), (2, 1), (1, 2, 0, 3), 3),
    "conv3x3_valid_in_place": ((1, 5, 8, 40), (6, 5, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    "conv1x1_in_place": ((2, 16, 7, 9), (20, 16, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    "conv1x1_in_place_threads": ((1, 32, 28, 41), (16, 32, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    "conv1x1_im2col": ((1, 16, 7, 9), (40, 16, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    # Two threads splitting 4 row tiles (AVX-512): the im2col panels packed once, half by each
    # thread, and shared (on AVX2 conv3x3_deep takes that path; here its 13 panels span two groups).
    "conv1x1_shared_panels_threads": ((1, 384, 14, 14), (48, 384, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    "conv1x1_padded": ((1, 8, 5, 6), (10, 8, 1, 1), (1, 1), (1, 1), (1, 0, 2, 1), 1),
    "conv1x5_s1": ((1, 7, 6, 60), (9, 7, 1, 5), (1, 1), (1, 1), (0, 2, 0, 2), 1),
    # K = 576 and 1350. K is cut into blocks with running sums in scratch only when A (here W)
    # and a group of B panels do not fit in L2 (gemm_blocking): these sum the whole of K in
    # registers on AVX-512 and some are blocked on AVX2 (512 KiB L2); W of 1.2 MB on narrow
    # planes (im2col: the shifted grid would be 20% wider) is blocked on both.
    "conv3x3_im2col_blocks": ((1, 128, 24, 10), (256, 128, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_deep": ((1, 64, 9, 11), (20, 64, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_deep_shifted": ((1, 64, 5, 30), (20, 64, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_deep_threads": ((1, 150, 14, 14), (40, 150, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_deep_threads_shifted": ((1, 150, 7, 28), (40, 150, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    # K = 535: K blocks of 179, 179 and a shorter 177 rows; M = 14: a 2-row tail tile.
    "conv1x5_deep_ragged_blocks": ((1, 107, 6, 20), (14, 107, 1, 5), (1, 1), (1, 1), (0, 2, 0, 2), 1),
    # Strided and still at most 8% wider (grid OW + (KW - 1) DW / SW): the GEMM reads stride-phase
    # planes of the padded input (conv5x3_s3_grouped above: 3 row phases, 2 column phases).
    "conv7x7_s2_stem": ((1, 3, 20, 100), (16, 3, 7, 7), (2, 2), (1, 1), (3, 3, 3, 3), 1),
    "conv3x3_s2_pad_asym": ((1, 6, 15, 61), (12, 6, 3, 3), (2, 2), (1, 1), (0, 1, 1, 0), 1),
    "conv3x3_s2_dilated_one_phase": ((1, 4, 12, 70), (8, 4, 3, 3), (2, 2), (2, 2), (2, 2, 2, 2), 1),
    "conv3x3_s2_deep": ((1, 64, 14, 60), (20, 64, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1),
    # Small planes and many channels: computed transposed (output pixels as rows, channels as
    # columns), the pixel tiles packed or, too big to pack, read in place. Tails: 49 pixels =
    # 8 x 6 + 1, 56 channels = 3 x 16 + 8; K blocked (576); strided; grouped; two threads.
    "conv3x3_small_plane_transposed": ((1, 64, 7, 7), (56, 64, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "conv1x1_small_plane_transposed": ((1, 256, 7, 7), (96, 256, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    "conv3x3_s2_transposed": ((1, 48, 13, 14), (64, 48, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1),
    "conv1x1_s2_transposed_grouped": ((2, 512, 14, 14), (128, 256, 1, 1), (2, 2), (1, 1), (0, 0, 0, 0), 2),
    # Output rows of 2 pixels: a pixel tile spans three rows (the packing's per-element path).
    "conv3x3_s2_narrow_transposed": ((1, 64, 10, 4), (64, 64, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1),
    "conv3x3_transposed_in_place": ((1, 128, 32, 33), (64, 128, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    # Output lines of 3 pixels, too short for tiles of their own (LineWindows): the tiles run
    # across lines (PixelRows).
    "conv3x3_transposed_in_place_narrow": ((1, 128, 400, 3), (64, 128, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
}

# The SIMD convolution paths, each named by what its generated code calls.
CONV_PATHS = {
    "im2col": "aotc_simd::pack_im2col_panels<Geometry>",
    "shifted": "aotc_simd::ShiftedRows<Shifted>",
    "transposed, packed pixels": "aotc_simd::pack_pixel_rows<Shifted>",
    "transposed, pixels in place": "aotc_simd::PixelRows<Shifted, kMR>",
    "transposed, pixels in place in line tiles": "aotc_simd::LineWindows<Shifted, kMR,",
}

# MobileNet-style chains, which the layout pass (passes/legalize_layout.h) keeps in NCHW8c
# between the stem and the last convolution: x -> stem Conv (c0 channels, k0 x k0, stride s0,
# padded) + Relu [-> MaxPool with `pool`'s attributes] -> 1x1 to c1 + Clip(0, 6) -> depthwise (kernel, strides, dilations, pads, bias,
# after) -> 1x1 back to c0 [+ the stem's result when the shapes match; no bias when `bare`]
# [-> a 3x3 c0 -> c0 + Relu when `mid`] -> the last Conv to c_out (k x k, stride, pad) + Relu,
# a graph output, so written row-major. Convolutions other than 1x1s with unit strides read the
# NCHWc image by windows (of a zero-padded copy when padded).
# name: (input NCHW, (c0, k0, s0), c1, (kernel, strides, dilations, pads, dw bias, dw after),
#        c_out, bare, mid, (k, stride, pad) of the last, pool)
NCHWC = {
    # Planes of 23 x 29 (ragged pixel tiles), 24 channels (a ragged panel on AVX-512).
    # The last a 3x3 with stride 2 reading a padded copy.
    "nchwc_residual": ((1, 3, 23, 29), (16, 3, 1), 48,
                       ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "clip6"), 24, False, False, (3, 2, 1),
                       None),
    # Stride 2 twice down to 7 x 7; no residual (the plane changes), a projection without bias
    # (BlockedStore); a dilated 2x3 MaxPool with unit strides (interior and border columns).
    "nchwc_s2_to_7x7": ((1, 8, 28, 28), (32, 3, 2), 64,
                        ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True, "clip6"), 16, True, False, (1, 1, 0),
                        dict(kernel_shape=[2, 3], strides=[1, 1], dilations=[2, 2], pads=[1, 2, 1, 2])),
    # Batch 2, a dilated 5x5 depthwise without bias or activation (its rows stored directly), a
    # projection without bias before its residual.
    "nchwc_dw5x5_dilated_batch2": ((2, 5, 19, 17), (8, 5, 1), 24,
                                   ((5, 5), (1, 1), (2, 2), (4, 4, 4, 4), False, None), 8, True, False,
                                   (1, 1, 0), None),
    # Odd depthwise geometry: 3x2 taps, strides 2 x 1, asymmetric pads, every column at an edge;
    # a 3x3 between two NCHWc images (windows of a padded copy, NCHWc result); a MaxPool with
    # ceil_mode whose last windows run past the padding (3x3, stride 2, pads 1 over 11 x 6).
    "nchwc_dw3x2_asym": ((1, 4, 11, 6), (8, 3, 1), 16,
                         ((3, 2), (2, 1), (1, 1), (0, 1, 2, 0), True, "clip6"), 8, False, True, (1, 1, 0),
                         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    # A 7x7 stride-2 stem (as ResNet's) whose pixel tiles are too large to pack: 14-row tiles
    # over the padded input in place, into NCHWc.
    "nchwc_stem7x7_in_place": ((1, 4, 112, 112), (32, 7, 2), 32,
                               ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "clip6"), 16, False, False,
                               (1, 1, 0), None),
    # Enough work to be split among threads everywhere (stem, ResNet's 3x3 stride-2 MaxPool,
    # 1x1s, depthwise by channel blocks); the last a 1x1 with stride 2 (windows read in place).
    "nchwc_threads": ((1, 3, 128, 128), (32, 3, 2), 96,
                      ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, "clip6"), 32, False, False, (1, 2, 0),
                      dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
}

# ResNet's end, which the layout pass keeps in NCHW8c up to the global pooling: x -> stem 3x3
# to c0 + Relu -> 1x1 c0 -> c0 + the stem's result + Relu -> the pooling, a graph output (its
# N x C x 1 x 1 result row-major).
# name: (input NCHW, c0, pooling op)
NCHWC_GLOBAL_POOL = {
    "nchwc_global_average": ((1, 5, 9, 11), 24, "GlobalAveragePool"),
    "nchwc_global_max_batch2": ((2, 3, 7, 7), 16, "GlobalMaxPool"),
}

# Inception's module, which the layout pass keeps in NCHW8c through the concatenation: x -> stem
# 3x3 to c0 + Relu -> four branches (1x1 to c1; 3x3 to c1; 1x1 to c1 then 3x3; the AveragePool
# with `pool`'s attributes then 1x1 to c1), each + Relu -> Concat along the channels -> 1x1 to
# c0 + Relu, a graph output. The concatenation copies whole channel blocks; the AveragePool sums
# windows of blocked vectors.
# name: (input NCHW, c0, c1, pool attributes)
NCHWC_MODULES = {
    # Inception-v2's pool branch: 3x3, stride 1, pads 1, the taps inside the input counted.
    "nchwc_inception_avg3x3": ((1, 3, 13, 11), 16, 8,
                               dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    # Stride 2 with ceil_mode (the last windows past the padding), count_include_pad, batch 2;
    # the branches' convolutions stride 2 to match.
    "nchwc_inception_avg_ceil_pad_batch2": ((2, 5, 12, 9), 16, 16,
                                            dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                                                 ceil_mode=1, count_include_pad=1)),
    # Output lines 3 pixels wide: the strided 3x3 branches' tiles run across lines (PixelRows),
    # too short for tiles of their own (LineWindows).
    "nchwc_inception_narrow": ((1, 3, 7, 6), 16, 8,
                               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
}

# YOLOv8's C2f block with SiLU (Sigmoid, Mul) after every convolution: x -> 3x3 stride-2 stem to
# c0 (NCHWc: the 1x1 reads it blocked) -> 1x1 c0 -> 2 c0 (row-major: a Split reads it) -> Split
# in two -> 3x3 -> 3x3 + the first half (the bottleneck's residual, row-major: Concat reads it)
# -> Concat of the halves and the residual -> 3x3 to c0, a graph output. The pixel tiles of the
# 1x1 and of the residual 3x3 are read in place (over 2 MiB packed) and go through the
# TransposedStore: on AVX-512 in 8-row tiles (transposed_store_tile), 65 x 61 pixels leaving
# a ragged last tile of 5.
# name: (input NCHW, c0)
SILU_CHAINS = {
    "c2f_silu": ((1, 3, 130, 122), 16),
}

# On AVX-512, the pixel-row GEMMs into a row-major result through an exponential epilogue.
SILU_PATHS_512 = {
    "8-row pixel tiles into a row-major result": "constexpr int kMR = 8;  // rows of a register tile (pixels)",
}

# The NCHWc kernels, each named by what its generated code calls.
NCHWC_PATHS = {
    "depthwise over NCHWc, through an epilogue": "aotc_simd::depthwise_blocked<Geometry, false>",
    "depthwise over NCHWc, stored directly": "aotc_simd::depthwise_blocked<Geometry, true>",
    "1x1 reading NCHWc": "aotc_simd::BlockedPixels<kInPlane, kMR, kInB>",
    "NCHWc result, stored directly": "aotc_simd::BlockedStore<kOutPlane, 8>",
    "NCHWc result, through an epilogue": "aotc_simd::blocked_epilogue_store<8>(",
    "NCHWc result, bias and clamp in registers": "aotc_simd::BlockedClampStore<kOutPlane, 8, false,",
    "NCHWc result, residual and clamp in registers": "aotc_simd::BlockedClampStore<kOutPlane, 8, true,",
    "NCHWc input by windows in line tiles": "aotc_simd::LineWindows<Window, kMR,",
    "NCHWc input by windows in tiles across lines": "aotc_simd::PixelRows<Window, kMR>",
    "NCHWc input, row-major result": "Y row-major (tiles transposed)",
    "NCHWc input by windows of a padded copy": "input by windows of a zero-padded copy",
    "NCHWc input by windows in place": "input by windows, in place",
    "MaxPool over NCHWc": "MaxPool over NCHW8c images",
    "NCHWc result of pixel tiles read in place": "input (no im2col); W packed into panels at compile time; Y NCHWc",
    "global pooling of NCHWc": "Pool over an NCHW8c image",
    "AveragePool over NCHWc (an Inception module's Concat blocked)": "AveragePool over NCHW8c images",
}

# On AVX-512 a package compiled with --nchwc-block 16 as well: the chains whose channels are all
# multiples of 16 (nchwc_s2_to_7x7, nchwc_stem7x7_in_place, nchwc_threads,
# nchwc_global_max_batch2) then run their kernels over NCHW16c images, 16-lane vectors per pixel.
NCHWC16_PATHS = {
    "depthwise over NCHW16c": "constexpr int64_t kB = 16, kBlocks = kOutC / kB;",
    "1x1 reading NCHW16c": "constexpr int64_t kInB = 16;",
    "NCHW16c result, stored directly": "aotc_simd::BlockedStore<kOutPlane, 16>",
    "NCHW16c result, through an epilogue": "aotc_simd::blocked_epilogue_store<16>(",
    "NCHW16c result, the epilogue in registers": "aotc_simd::BlockedClampStore<kOutPlane, 16,",
    "MaxPool over NCHW16c": "MaxPool over NCHW16c images",
    "global pooling of NCHW16c": "Pool over an NCHW16c image",
    "AveragePool over NCHW16c": "AveragePool over NCHW16c images",
}

# name: (A shape, B shape) of MatMul with a constant B and a bias Add (the fused epilogue).
MATMUL = {
    "mm_ragged": ((13, 37), (37, 29)),
    "mm_m1": ((1, 64), (64, 100)),
    "mm_batched": ((2, 7, 33), (33, 17)),
    # Deep, but A and a group of B panels fit in L2: every row tile sums the whole of K.
    "mm_deep": ((9, 1100), (1100, 37)),
    # A of more than 1 MiB: K blocks on two threads splitting panels (AVX-512; AVX2 splits its
    # row tiles), then row tiles.
    "mm_deep_threads": ((200, 1300), (1300, 120)),
    "mm_deep_rows": ((400, 700), (700, 20)),
    # Constant B, 8 row tiles: split by rows on 2 threads, both reading every B panel.
    "mm_rows_prepacked": ((48, 200), (200, 70)),
}

# name: (op, input NCHW, kernel, strides, dilations, pads (t, l, b, r), extra attributes)
POOL = {
    "maxpool3x3_s2_stem": ("MaxPool", (1, 4, 24, 37), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), {}),
    # Enough planes (147 Ki elements) to be split among threads.
    "maxpool3x3_s2_threads": ("MaxPool", (1, 16, 96, 96), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), {}),
    "maxpool2x2_ceil": ("MaxPool", (2, 3, 9, 11), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), {"ceil_mode": 1}),
    "maxpool3x2_dilated": ("MaxPool", (1, 2, 13, 40), (3, 2), (1, 2), (2, 3), (2, 1, 1, 1), {}),
    "maxpool3x3_narrow": ("MaxPool", (1, 3, 6, 2), (3, 3), (1, 1), (1, 1), (1, 2, 1, 2), {}),
    "avgpool3x3_s2_exclude_pad": ("AveragePool", (1, 5, 17, 35), (3, 3), (2, 2), (1, 1), (1, 1, 2, 2), {}),
    "avgpool3x3_include_pad": ("AveragePool", (1, 3, 12, 21), (3, 3), (1, 1), (1, 1), (2, 1, 2, 1),
                               {"count_include_pad": 1}),
    "avgpool2x3_ceil_include_pad": ("AveragePool", (1, 2, 10, 19), (2, 3), (2, 3), (1, 1), (1, 1, 0, 1),
                                    {"ceil_mode": 1, "count_include_pad": 1}),
}

# name: (op, input shape): the row kernels, with enough rows x columns (>= 128 Ki) for 2 threads.
ROWS = {
    "softmax_rows_threads": ("Softmax", (2, 256, 301)),
    "layernorm_rows_threads": ("LayerNormalization", (384, 390)),
}


def build_model(rng):
    inits, nodes, inputs, outputs = [], [], [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    feeds = {}
    for name, (shape, (kh, kw), strides, dil, pads, bias, after) in DEPTHWISE.items():
        c = shape[1]
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        conv_in = [x, const(f"{name}_w", rng.standard_normal((c, 1, kh, kw)))]
        if bias:
            conv_in.append(const(f"{name}_b", rng.standard_normal(c)))
        y = f"{name}_conv"
        nodes.append(helper.make_node("Conv", conv_in, [y], name=f"{name}_conv", group=c,
                                      kernel_shape=[kh, kw], strides=list(strides),
                                      dilations=list(dil), pads=[pads[0], pads[1], pads[2], pads[3]]))
        if after == "relu":
            nodes.append(helper.make_node("Relu", [y], [name], name=f"{name}_relu"))
        elif after == "clip6":
            lo, hi = const(f"{name}_lo", np.array(0.0)), const(f"{name}_hi", np.array(6.0))
            nodes.append(helper.make_node("Clip", [y, lo, hi], [name], name=f"{name}_clip"))
        elif after == "residual":
            nodes.append(helper.make_node("Add", [y, x], [name], name=f"{name}_add"))
        else:
            nodes.append(helper.make_node("Identity", [y], [name], name=f"{name}_id"))
        outputs.append(name)

    for name, (shape, w_shape, strides, dil, pads, group) in CONV.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        w, b = const(f"{name}_w", rng.standard_normal(w_shape)), const(f"{name}_b", rng.standard_normal(w_shape[0]))
        nodes.append(helper.make_node("Conv", [x, w, b], [f"{name}_conv"], name=f"{name}_conv", group=group,
                                      strides=list(strides), dilations=list(dil), pads=list(pads)))
        nodes.append(helper.make_node("Relu", [f"{name}_conv"], [name], name=f"{name}_relu"))
        outputs.append(name)

    def conv(name, x, w_shape, bias=True, **attrs):
        ins = [x, const(f"{name}_w", rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:])))]
        if bias:
            ins.append(const(f"{name}_b", rng.standard_normal(w_shape[0])))
        nodes.append(helper.make_node("Conv", ins, [name], name=name, **attrs))
        return name

    def clip6(name, x):
        lo, hi = const(f"{name}_lo", np.array(0.0)), const(f"{name}_hi", np.array(6.0))
        nodes.append(helper.make_node("Clip", [x, lo, hi], [name], name=name))
        return name

    def relu(name, x):
        nodes.append(helper.make_node("Relu", [x], [name], name=name))
        return name

    for name, (shape, (c0, k0, s0), c1, dw, c_out, bare, mid, last, pool) in NCHWC.items():
        kernel, strides, dil, pads, dw_bias, dw_after = dw
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        stem = relu(f"{name}_stem", conv(f"{name}_stem_conv", x, (c0, shape[1], k0, k0),
                                         strides=[s0, s0], pads=[k0 // 2] * 4))
        if pool:
            nodes.append(helper.make_node("MaxPool", [stem], [f"{name}_pool"], name=f"{name}_pool", **pool))
            stem = f"{name}_pool"
        expand = clip6(f"{name}_expand", conv(f"{name}_expand_conv", stem, (c1, c0, 1, 1)))
        d = conv(f"{name}_dw_conv", expand, (c1, 1) + kernel, bias=dw_bias, group=c1,
                 kernel_shape=list(kernel), strides=list(strides), dilations=list(dil), pads=list(pads))
        if dw_after == "clip6":
            d = clip6(f"{name}_dw", d)
        project = conv(f"{name}_project", d, (c0, c1, 1, 1), bias=not bare)
        if strides == (1, 1):
            nodes.append(helper.make_node("Add", [project, stem], [f"{name}_residual"], name=f"{name}_residual"))
            project = f"{name}_residual"
        if mid:
            project = relu(f"{name}_mid", conv(f"{name}_mid_conv", project, (c0, c0, 3, 3), pads=[1] * 4))
        k, stride, pad = last
        relu(name, conv(f"{name}_last", project, (c_out, c0, k, k), strides=[stride] * 2, pads=[pad] * 4))
        outputs.append(name)

    def silu(name, x):
        nodes.append(helper.make_node("Sigmoid", [x], [f"{name}_sigmoid"], name=f"{name}_sigmoid"))
        nodes.append(helper.make_node("Mul", [x, f"{name}_sigmoid"], [name], name=name))
        return name

    for name, (shape, c0) in SILU_CHAINS.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        stem = silu(f"{name}_stem", conv(f"{name}_stem_conv", x, (c0, shape[1], 3, 3), strides=[2, 2], pads=[1] * 4))
        cv1 = silu(f"{name}_cv1", conv(f"{name}_cv1_conv", stem, (2 * c0, c0, 1, 1)))
        halves = [f"{name}_half0", f"{name}_half1"]
        inits.append(numpy_helper.from_array(np.array([c0, c0], np.int64), f"{name}_split"))
        nodes.append(helper.make_node("Split", [cv1, f"{name}_split"], halves,
                                      name=f"{name}_split", axis=1))
        m0 = silu(f"{name}_m0", conv(f"{name}_m0_conv", halves[1], (c0, c0, 3, 3), pads=[1] * 4))
        m1 = silu(f"{name}_m1", conv(f"{name}_m1_conv", m0, (c0, c0, 3, 3), pads=[1] * 4))
        nodes.append(helper.make_node("Add", [halves[1], m1], [f"{name}_residual"], name=f"{name}_residual"))
        nodes.append(helper.make_node("Concat", halves + [f"{name}_residual"], [f"{name}_concat"],
                                      name=f"{name}_concat", axis=1))
        silu(name, conv(f"{name}_cv2", f"{name}_concat", (c0, 3 * c0, 3, 3), pads=[1] * 4))
        outputs.append(name)

    for name, (shape, c0, op) in NCHWC_GLOBAL_POOL.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        stem = relu(f"{name}_stem", conv(f"{name}_stem_conv", x, (c0, shape[1], 3, 3), pads=[1] * 4))
        last = conv(f"{name}_last", stem, (c0, c0, 1, 1))
        nodes.append(helper.make_node("Add", [last, stem], [f"{name}_residual"], name=f"{name}_residual"))
        pooled = relu(f"{name}_relu", f"{name}_residual")
        nodes.append(helper.make_node(op, [pooled], [name], name=name))
        outputs.append(name)

    for name, (shape, c0, c1, pool) in NCHWC_MODULES.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        stem = relu(f"{name}_stem", conv(f"{name}_stem_conv", x, (c0, shape[1], 3, 3), pads=[1] * 4))
        nodes.append(helper.make_node("AveragePool", [stem], [f"{name}_pool"], name=f"{name}_pool", **pool))
        # The pool's output size (ONNX shape inference): every branch strides (and pads) to it.
        probe = helper.make_graph([helper.make_node("AveragePool", ["p"], ["q"], **pool)], "probe",
                                  [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, c0] + list(shape[2:]))],
                                  [helper.make_tensor_value_info("q", TensorProto.FLOAT, None)])
        inferred = onnx.shape_inference.infer_shapes(
            helper.make_model(probe, opset_imports=[helper.make_opsetid("", 17)]), strict_mode=True)
        pooled_shape = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
        stride = pool["strides"][0]
        branch_pads = []
        for axis in (0, 1):  # 3x3 branches: pads so that stride `stride` lands on the pooled size
            need = (pooled_shape[2 + axis] - 1) * stride + 3 - shape[2 + axis]
            branch_pads.append((need // 2, need - need // 2))
        pads3 = [branch_pads[0][0], branch_pads[1][0], branch_pads[0][1], branch_pads[1][1]]
        need1 = [(pooled_shape[2 + a] - 1) * stride + 1 - shape[2 + a] for a in (0, 1)]
        pads1 = [0, 0, max(0, need1[0]), max(0, need1[1])]
        b1 = relu(f"{name}_b1", conv(f"{name}_b1_conv", stem, (c1, c0, 1, 1), strides=[stride] * 2, pads=pads1))
        b2 = relu(f"{name}_b2", conv(f"{name}_b2_conv", stem, (c1, c0, 3, 3), strides=[stride] * 2, pads=pads3))
        b3 = relu(f"{name}_b3a", conv(f"{name}_b3a_conv", stem, (c1, c0, 1, 1)))
        b3 = relu(f"{name}_b3", conv(f"{name}_b3_conv", b3, (c1, c1, 3, 3), strides=[stride] * 2, pads=pads3))
        b4 = relu(f"{name}_b4", conv(f"{name}_b4_conv", f"{name}_pool", (c1, c0, 1, 1)))
        nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], [f"{name}_concat"], name=f"{name}_concat", axis=1))
        relu(name, conv(f"{name}_last", f"{name}_concat", (c0, 4 * c1, 1, 1)))
        outputs.append(name)

    for name, (a_shape, b_shape) in MATMUL.items():
        a = f"{name}_a"
        inputs.append(helper.make_tensor_value_info(a, TensorProto.FLOAT, list(a_shape)))
        feeds[a] = rng.standard_normal(a_shape).astype(np.float32)
        b = const(f"{name}_b", rng.standard_normal(b_shape))
        bias = const(f"{name}_bias", rng.standard_normal(b_shape[-1]))
        nodes.append(helper.make_node("MatMul", [a, b], [f"{name}_mm"], name=f"{name}_mm"))
        nodes.append(helper.make_node("Add", [f"{name}_mm", bias], [name], name=f"{name}_add"))
        outputs.append(name)

    for name, (op, shape, kernel, strides, dil, pads, extra) in POOL.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = rng.standard_normal(shape).astype(np.float32)
        attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads), **extra)
        if dil != (1, 1):
            attrs["dilations"] = list(dil)
        nodes.append(helper.make_node(op, [x], [name], name=name, **attrs))
        outputs.append(name)

    for name, (op, shape) in ROWS.items():
        x = f"{name}_x"
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape)))
        feeds[x] = (rng.standard_normal(shape) * 3).astype(np.float32)
        if op == "Softmax":
            nodes.append(helper.make_node(op, [x], [name], name=name, axis=-1))
        else:
            gamma = const(f"{name}_gamma", rng.standard_normal(shape[-1]))
            beta = const(f"{name}_beta", rng.standard_normal(shape[-1]))
            nodes.append(helper.make_node(op, [x, gamma, beta], [name], name=name, axis=-1, epsilon=1e-5))
        outputs.append(name)

    graph = helper.make_graph(nodes, "simd_kernels", inputs, [], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    # The outputs' shapes come from ONNX's shape inference.
    shapes = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model).graph.value_info}
    model.graph.output.extend(shapes[name] for name in outputs)
    onnx.checker.check_model(model)
    return model, feeds


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="x86-64-avx2")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--work", default="build/simd_kernels")
    args = ap.parse_args()
    import onnxruntime as ort

    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    model, feeds = build_model(np.random.default_rng(7))
    path = work / "simd_kernels.onnx"
    onnx.save(model, str(path))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    input_files = []
    for k, vi in enumerate(model.graph.input):
        f = work / "inputs" / f"input_{k}.pb"
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(numpy_helper.from_array(feeds[vi.name], vi.name).SerializeToString())
        input_files.append(f)

    # The NCHWc kernels are there only on targets whose facts list the NCHW8c layout; NCHW16c
    # with 512-bit vectors.
    targets = subprocess.run([str(aotc), "targets"], capture_output=True, text=True).stdout
    if "\n" + args.target + "\n" not in targets:
        print(f"FAILED: `aotc targets` does not list {args.target}")
        return 1
    facts = targets.split("\n" + args.target + "\n", 1)[1].split("\n  numerics", 1)[0]
    nchwc_paths = NCHWC_PATHS if "NCHW8c" in facts else {}
    sixteen = bool(nchwc_paths) and "512-bit vectors" in facts

    threads = [int(t) for t in args.threads.split(",") if t]
    # (package, threads, extra flags)
    packages = [(f"simd_t{t}", t, []) for t in threads]
    if sixteen:
        packages.append((f"simd_t{threads[-1]}_c16", threads[-1], ["--nchwc-block", "16"]))
    names = [name for name, _, _ in packages]
    for name, t, extra in packages:
        p = subprocess.run([str(aotc), "compile", str(path), "--target", args.target, "-o",
                            str(work / "pkgs" / name), "--name", name, "--threads", str(t)] + extra,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED: aotc compile --threads {t} {' '.join(extra)}: {p.stderr.strip()}")
            return 1
    (work / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(aotc_simd_kernels C CXX)\n" +
        "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    b = subprocess.run(["ninja", "-C", str(work / "build")], capture_output=True, text=True)
    if b.returncode != 0:
        print(f"FAILED: the packages do not build:\n{b.stdout[-3000:]}")
        return 1

    passed, failed = 0, 0
    print(f"{args.target}: NCHWc kernels {'expected' if nchwc_paths else 'not expected (row-major only)'}"
          f"{', NCHW16c too (--nchwc-block 16)' if sixteen else ''}")
    # Which convolution path a case takes is the compiler's choice: check that each path still
    # has a case (a change of the cost estimate could otherwise leave one untested).
    for name in names:
        source = "".join(f.read_text() for f in (work / "pkgs" / name / "src").glob("*.cpp"))
        for path, marker in CONV_PATHS.items():
            if marker not in source:
                print(f"FAILED: {name}: no convolution case takes the {path} path ({marker!r})")
                failed += 1
        for path, marker in (SILU_PATHS_512 if sixteen else {}).items():
            if marker not in source:
                print(f"FAILED: {name}: no case takes the {path} path ({marker!r})")
                failed += 1
        for path, marker in (NCHWC16_PATHS if name.endswith("_c16") else nchwc_paths).items():
            if marker not in source:
                print(f"FAILED: {name}: no NCHWc case takes the {path} path ({marker!r})")
                failed += 1
    for name in names:
        out = work / "out" / name
        cmd = [str(work / "build" / name / f"{name}_run")]
        cmd += [a for f in input_files for a in ("--input", str(f))] + ["--output-dir", str(out)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED: {name} runner: {p.stderr.strip()[:400]}")
            failed += len(model.graph.output)
            continue
        for k, (vi, exp) in enumerate(zip(model.graph.output, expected)):
            t = onnx.TensorProto()
            t.ParseFromString((out / f"output_{k}.pb").read_bytes())
            actual = numpy_helper.to_array(t)
            if actual.shape != exp.shape:
                print(f"FAILED: {name}: {vi.name}: shape {actual.shape}, onnxruntime {exp.shape}")
                failed += 1
                continue
            err = rel_l2(actual, exp)
            ok = err <= TOLERANCE
            print(f"{name}: {vi.name}: relative L2 error {err:.2e} {'ok' if ok else 'FAILED'}")
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
