"""GGUF quantisation of fp32 matrices: the gguf package's quantisers, and Q4_K and Q6_K by llama.cpp's reference
algorithms, packed in GGML's layout and read back by the gguf package's own decoder."""
import numpy as np
import pytest

from anatomy_lib.core.quantise import (
    FORMATS,
    _make_qkx2_quants,
    _make_qx_quants,
    quantise,
    quantise_q4_k,
    quantise_q6_k,
)


@pytest.mark.parametrize("fmt,bound", [("Q4_1", 0.12), ("Q5_0", 0.07), ("Q8_0", 0.01), ("Q4_K", 0.1),
                                       ("Q6_K", 0.025)])
def test_every_format_reads_back_close_to_the_matrix(fmt, bound):
    matrix = np.random.default_rng(0).standard_normal((32, 512)).astype(np.float32) * 0.02
    back = quantise(matrix, fmt)
    assert back.shape == matrix.shape and back.dtype == np.float32
    assert 0 < np.sqrt(((back - matrix) ** 2).mean()) / matrix.std() < bound


def test_q4_k_bytes_decode_to_their_own_grid():
    """What the gguf decoder reads from our bytes is d * scale * q - dmin * min for the scales and quants we
    packed: the layout is GGML's. A matrix already on a Q4_K grid comes back unchanged (quantising twice is
    quantising once), as Gemma-3-270M's own Q4_K tensors do (tests/specimen)."""
    matrix = np.random.default_rng(1).standard_normal((8, 256)).astype(np.float32)
    data = quantise_q4_k(matrix)
    assert data.shape == (8, 144)  # 2 fp16 + 12 scale bytes + 128 quant bytes per 256 values
    once = quantise(matrix, "Q4_K")
    np.testing.assert_array_equal(quantise(once, "Q4_K"), once)
    per_block = once.reshape(-1, 32)
    assert max(len(np.unique(row)) for row in per_block) <= 16  # 4-bit levels per sub-block


def test_q6_k_bytes_decode_to_their_own_grid():
    """Q6_K's layout, as Q4_K's: 210 bytes per 256 values, quantising twice is quantising once, at most 64 levels
    per 16-value sub-block, and a zero sub-block stays zero."""
    matrix = np.random.default_rng(3).standard_normal((4, 512)).astype(np.float32)
    matrix[0, :16] = 0.0
    data = quantise_q6_k(matrix)
    assert data.shape == (4, 420)  # 128 + 64 quant bytes, 16 int8 scales, one fp16 scale per 256 values
    once = quantise(matrix, "Q6_K")
    np.testing.assert_array_equal(quantise(once, "Q6_K"), once)
    assert max(len(np.unique(row)) for row in once.reshape(-1, 16)) <= 64
    assert (once[0, :16] == 0).all()


def test_the_signed_scale_search_fits_a_symmetric_grid_exactly():
    levels = np.random.default_rng(4).integers(-31, 32, size=(5, 16)).astype(np.float32)
    levels[:, 0] = -32
    scale = _make_qx_quants(0.01 * levels)
    np.testing.assert_allclose(scale, 0.01, rtol=1e-5)


def test_the_scale_search_fits_an_affine_grid_exactly():
    levels = np.random.default_rng(2).integers(0, 16, size=(5, 32)).astype(np.float32)
    levels[:, 0], levels[:, 1] = 0, 15
    x = 0.03 * levels - 0.2
    scale, minimum, found = _make_qkx2_quants(x, np.ones_like(x))
    np.testing.assert_allclose(scale[:, None] * found - minimum[:, None], x, atol=1e-6)


def test_unknown_formats_name_the_valid_ones():
    with pytest.raises(ValueError, match="valid formats") as error:
        quantise(np.zeros((2, 256)), "Q3_K")
    assert all(fmt in str(error.value) for fmt in FORMATS)
    with pytest.raises(ValueError, match="multiple of 256"):
        quantise_q4_k(np.zeros((2, 100)))
    with pytest.raises(ValueError, match="multiple of 256"):
        quantise_q6_k(np.zeros((2, 100)))
