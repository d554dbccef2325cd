"""GGUF weight quantisation of fp32 matrices, for the quantisation null (is a weight statistic made or unmade by
4-bit rounding?): quantise a matrix to one of llama.cpp's formats and read it back as float32.

The formats are those of the book's two specimens. SmolLM2's GGUF is Q4_1 throughout; Gemma-3-270M's "Q4_K_M"
(``gguf_tensor_types`` reads it) stores q, k, gate and up as Q5_0 (their rows of 640 are not a multiple of the
256-value K-quant super-block), v as Q5_0 or Q8_0, o as Q4_K, down as Q4_K or Q6_K, alternating over layers.

Q4_1, Q5_0 and Q8_0 are quantised by the ``gguf`` package's own quantisers. It has none for K-quants (it reads
them only), so Q4_K is quantised here by llama.cpp's reference algorithm (``quantize_row_q4_K_ref``: per
32-value sub-block a weighted least-squares scale and minimum searched over 21 candidate grids, then both
rounded to 6 bits against the super-block's fp16 scale), packed in GGML's block layout and read back by the
``gguf`` package's own Q4_K decoder, so the layout is checked by an implementation that is not ours. Q6_K
likewise (``quantize_row_q6_K_ref``: per 16-value sub-block a signed scale searched over 19 candidate grids,
weighted by the squared values, then rounded to 8 bits against the super-block's fp16 scale).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, quants

QK_K = 256  # values per K-quant super-block
GGUF_FORMATS = ("Q4_1", "Q5_0", "Q8_0")  # quantised by the gguf package
FORMATS = GGUF_FORMATS + ("Q4_K", "Q6_K")  # quantised here, by llama.cpp's reference algorithms
GROUP_MAX_EPS = 1e-15  # llama.cpp: a sub-block whose largest magnitude is below this quantises to zero


def gguf_tensor_types(path: str | Path) -> dict[str, str]:
    """Every tensor of a GGUF file with the format it is stored in ({name: "Q4_K", ...})."""
    return {t.name: t.tensor_type.name for t in GGUFReader(str(path)).tensors}


def _make_qkx2_quants(x: np.ndarray, weights: np.ndarray, nmax: int = 15, rmin: float = -1.0,
                      rdelta: float = 0.1, nstep: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """llama.cpp's ``make_qkx2_quants`` for many sub-blocks at once (rows of ``x``): the scale, the minimum
    (as a positive offset: value = scale * q - minimum) and the quants that minimise the weighted squared
    error over the candidate grids."""
    x, weights = x.astype(np.float32), weights.astype(np.float32)
    low = np.minimum(x.min(axis=1), 0.0)
    high = x.max(axis=1)
    span = high - low
    flat = span == 0
    safe = np.where(flat, 1.0, span)
    sum_w, sum_x = weights.sum(axis=1), (weights * x).sum(axis=1)

    def levels(iscale):
        return np.clip(np.rint(iscale[:, None] * (x - low[:, None])), 0, nmax)

    iscale = nmax / safe
    best_l = levels(iscale)
    scale, minimum = 1.0 / iscale, low.copy()
    best = (weights * (scale[:, None] * best_l + minimum[:, None] - x) ** 2).sum(axis=1)
    for step in range(nstep + 1):
        candidate = levels((rmin + rdelta * step + nmax) / safe)
        sum_l, sum_l2 = (weights * candidate).sum(axis=1), (weights * candidate ** 2).sum(axis=1)
        sum_xl = (weights * candidate * x).sum(axis=1)
        det = sum_w * sum_l2 - sum_l ** 2
        ok = det > 0
        det_safe = np.where(ok, det, 1.0)
        this_scale = (sum_w * sum_xl - sum_x * sum_l) / det_safe
        this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det_safe
        positive = this_min > 0
        this_scale = np.where(positive, sum_xl / np.where(sum_l2 > 0, sum_l2, 1.0), this_scale)
        this_min = np.where(positive, 0.0, this_min)
        error = (weights * (this_scale[:, None] * candidate + this_min[:, None] - x) ** 2).sum(axis=1)
        better = ok & (error < best)
        best_l = np.where(better[:, None], candidate, best_l)
        best, scale, minimum = (np.where(better, error, best), np.where(better, this_scale, scale),
                                np.where(better, this_min, minimum))
    scale = np.where(flat, 0.0, scale)
    minimum = np.where(flat, low, minimum)
    best_l = np.where(flat[:, None], 0, best_l)
    return scale.astype(np.float32), (-minimum).astype(np.float32), best_l.astype(np.uint8)


def _pack_q4_k(d, dmin, ls, lm, levels) -> np.ndarray:
    """GGML's ``block_q4_K`` bytes: fp16 d and dmin, 12 bytes of 6-bit sub-block scales and minimums, 128 bytes
    of 4-bit quants (two 32-value sub-blocks share each 32 bytes, low nibble first)."""
    n = len(d)
    scales = np.zeros((n, 12), dtype=np.uint8)
    for j in range(8):
        if j < 4:
            scales[:, j] = ls[:, j]
            scales[:, j + 4] = lm[:, j]
        else:
            scales[:, j + 4] = (ls[:, j] & 0xF) | ((lm[:, j] & 0xF) << 4)
            scales[:, j - 4] |= (ls[:, j] >> 4) << 6
            scales[:, j] |= (lm[:, j] >> 4) << 6
    pairs = levels.reshape(n, 4, 2, 32)
    qs = (pairs[:, :, 0, :] | (pairs[:, :, 1, :] << 4)).reshape(n, 128).astype(np.uint8)
    head = np.stack([d.astype(np.float16), dmin.astype(np.float16)], axis=1).view(np.uint8)
    return np.concatenate([head, scales, qs], axis=1)


def _sub_blocks(matrix: np.ndarray, fmt: str, size: int) -> np.ndarray:
    """A K-quant's view of a matrix: (super-blocks, sub-blocks of ``size`` values, ``size``), float32; its rows
    must be a multiple of the 256-value super-block long."""
    if matrix.shape[1] % QK_K:
        raise ValueError(f"{fmt} needs rows of a multiple of {QK_K} values, got {matrix.shape[1]}")
    return matrix.astype(np.float32).reshape(-1, QK_K // size, size)


def quantise_q4_k(matrix: np.ndarray) -> np.ndarray:
    """``block_q4_K`` bytes of a matrix whose rows are a multiple of 256 values long (one row of bytes per row),
    by llama.cpp's reference quantiser without an importance matrix."""
    rows = matrix.shape[0]
    blocks = _sub_blocks(matrix, "Q4_K", 32)
    n = len(blocks)
    rms = np.sqrt((blocks ** 2).mean(axis=2, keepdims=True))
    weights = rms + np.abs(blocks)
    scale, minimum, _ = _make_qkx2_quants(blocks.reshape(-1, 32), weights.reshape(-1, 32))
    scale, minimum = scale.reshape(n, 8), minimum.reshape(n, 8)
    max_scale, max_min = scale.max(axis=1), minimum.max(axis=1)
    inv_scale = np.where(max_scale > 0, 63.0 / np.where(max_scale > 0, max_scale, 1), 0.0)
    inv_min = np.where(max_min > 0, 63.0 / np.where(max_min > 0, max_min, 1), 0.0)
    ls = np.minimum(63, np.rint(inv_scale[:, None] * scale)).astype(np.uint8)
    lm = np.minimum(63, np.rint(inv_min[:, None] * minimum)).astype(np.uint8)
    d = (max_scale / 63.0).astype(np.float16).astype(np.float32)
    dmin = (max_min / 63.0).astype(np.float16).astype(np.float32)
    # the quants again, against the scales as they will be read back (fp16 super-block scales, 6-bit sub-block)
    sub_d, sub_m = d[:, None] * ls, dmin[:, None] * lm
    safe = np.where(sub_d > 0, sub_d, 1.0)
    levels = np.clip(np.rint((blocks + sub_m[..., None]) / safe[..., None]), 0, 15)
    levels = np.where((sub_d > 0)[..., None], levels, 0).astype(np.uint8)
    return _pack_q4_k(d, dmin, ls, lm, levels.reshape(n, QK_K)).reshape(rows, -1)


def _make_qx_quants(x: np.ndarray, nmax: int = 32) -> np.ndarray:
    """llama.cpp's ``make_qx_quants`` with ``rmse_type`` 1 for many sub-blocks at once (rows of ``x``): the signed
    scale (value = scale * level, levels -nmax..nmax-1, the extreme value at -nmax) that maximises the weighted
    fit (weights x^2) over the grid and 18 neighbouring grids."""
    x = x.astype(np.float32)
    pick = np.abs(x).argmax(axis=1)
    extreme = x[np.arange(len(x)), pick]
    live = np.abs(extreme) >= GROUP_MAX_EPS
    safe = np.where(live, extreme, 1.0)
    weights = x * x

    def fit(iscale):
        levels = np.clip(np.rint(iscale[:, None] * x), -nmax, nmax - 1)
        return (weights * x * levels).sum(axis=1), (weights * levels * levels).sum(axis=1)

    sum_lx, sum_l2 = fit(-nmax / safe)
    scale = np.where(sum_l2 > 0, sum_lx / np.where(sum_l2 > 0, sum_l2, 1.0), 0.0)
    best = scale * sum_lx
    for step in range(-9, 10):
        if step == 0:
            continue
        sum_lx, sum_l2 = fit(-(nmax + 0.1 * step) / safe)
        better = (sum_l2 > 0) & (sum_lx * sum_lx > best * sum_l2)
        this = sum_lx / np.where(sum_l2 > 0, sum_l2, 1.0)
        scale, best = np.where(better, this, scale), np.where(better, this * sum_lx, best)
    return np.where(live, scale, 0.0).astype(np.float32)


def _pack_q6_k(d, scales, levels) -> np.ndarray:
    """GGML's ``block_q6_K`` bytes: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 sub-block scales,
    the fp16 super-block scale (levels are 0..63, value = d * scale * (level - 32))."""
    n = len(d)
    halves = levels.reshape(n, 2, 4, 32)  # two 128-value halves, each four runs of 32
    low = halves & 0xF
    ql = np.concatenate([low[:, :, 0] | (low[:, :, 2] << 4), low[:, :, 1] | (low[:, :, 3] << 4)], axis=2)
    high = halves >> 4
    qh = high[:, :, 0] | (high[:, :, 1] << 2) | (high[:, :, 2] << 4) | (high[:, :, 3] << 6)
    return np.concatenate([ql.reshape(n, 128).astype(np.uint8), qh.reshape(n, 64).astype(np.uint8),
                           scales.astype(np.int8).view(np.uint8), d.astype(np.float16).reshape(n, 1).view(np.uint8)],
                          axis=1)


def quantise_q6_k(matrix: np.ndarray) -> np.ndarray:
    """``block_q6_K`` bytes of a matrix whose rows are a multiple of 256 values long (one row of bytes per row),
    by llama.cpp's reference quantiser without an importance matrix."""
    rows = matrix.shape[0]
    blocks = _sub_blocks(matrix, "Q6_K", 16)
    n = len(blocks)
    scales = _make_qx_quants(blocks.reshape(-1, 16)).reshape(n, 16)
    pick = np.abs(scales).argmax(axis=1)
    max_scale = scales[np.arange(n), pick]
    live = np.abs(max_scale) >= GROUP_MAX_EPS
    iscale = np.where(live, -128.0 / np.where(live, max_scale, 1.0), 0.0).astype(np.float32)
    d = np.where(live, 1.0 / np.where(live, iscale, 1.0), 0.0).astype(np.float16)
    sub = np.minimum(127, np.rint(iscale[:, None] * scales)).astype(np.int8)
    # the levels again, against the scales as they will be read back (fp16 super-block, int8 sub-block)
    step = d.astype(np.float32)[:, None] * sub
    safe = np.where(step != 0, step, 1.0)
    levels = np.clip(np.rint(blocks / safe[..., None]), -32, 31) + 32
    levels = np.where((step != 0)[..., None], levels, 32).astype(np.uint8)
    return _pack_q6_k(d, np.where(live[:, None], sub, 0), levels.reshape(n, QK_K)).reshape(rows, -1)


K_QUANTISERS = {"Q4_K": quantise_q4_k, "Q6_K": quantise_q6_k}


def quantise(matrix, fmt: str) -> np.ndarray:
    """``matrix`` (rows, values) quantised to ``fmt`` and read back as float32, as a GGUF loader would."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; valid formats: {list(FORMATS)}")
    matrix = np.ascontiguousarray(np.asarray(matrix, dtype=np.float32))
    data = K_QUANTISERS[fmt](matrix) if fmt in K_QUANTISERS else quants.quantize(matrix, GGMLQuantizationType[fmt])
    return quants.dequantize(data, GGMLQuantizationType[fmt]).reshape(matrix.shape).astype(np.float32)
