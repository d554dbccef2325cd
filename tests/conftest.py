"""Shared fixtures. Tests never reach a hub, run on the CPU, and write results to a temporary store."""
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANATOMY_DEVICE", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["ANATOMY_DATA"] = tempfile.mkdtemp(prefix="anatomy-test-data-")

import numpy as np
import pytest
import torch

from anatomy_lib.core.adapter import GEMMA_SUPPORTED
from anatomy_lib.core.corpus import blocks_from_ids
from anatomy_lib.core.specimens import OFFLINE_SPECIMEN, TINY_ARCHS, tiny_specimen

# Gemma 3 needs transformers >= 5: at the tested floor (4.x) its tests are reported as skipped, not dropped
ARCHS = [pytest.param(arch, marks=pytest.mark.skipif(arch == "gemma3" and not GEMMA_SUPPORTED,
                                                     reason="Gemma 3 needs transformers >= 5"))
         for arch in TINY_ARCHS]


def state_hash(model) -> str:
    from anatomy_lib.core.specimens import weights_hash

    return weights_hash(model)


@pytest.fixture(params=ARCHS)
def tiny(request):
    return tiny_specimen(request.param, n_layers=5, seed=1)


@pytest.fixture
def tiny_blocks():
    ids = np.random.default_rng(0).integers(0, 256, size=4000)
    return blocks_from_ids(ids, n_blocks=4, block_len=48, seed=0)


def tiny_lab(spec, blocks, profile: str = "smoke"):
    """A Lab over a tiny model and hand-made blocks (tiny models have no tokenizer for ``open_lab``)."""
    from anatomy_lib.core.lab import Lab
    from anatomy_lib.core.profiles import get_profile

    return Lab(spec, get_profile(profile), blocks, progress=False)


@pytest.fixture(scope="session")
def real_specimen():
    """The real offline specimen, loaded once per test session."""
    from anatomy_lib.core.lab import cached_specimen

    torch.manual_seed(0)
    return cached_specimen(OFFLINE_SPECIMEN, verbose=False)


@pytest.fixture(scope="session")
def real_gemma():
    """The second real offline specimen (Gemma-3-270M base, Q4_K_M), loaded once per test session."""
    from anatomy_lib.core.lab import cached_specimen
    from anatomy_lib.core.specimens import GEMMA_SPECIMEN

    if not GEMMA_SUPPORTED:
        pytest.skip("Gemma 3 needs transformers >= 5")
    return cached_specimen(GEMMA_SPECIMEN, verbose=False)


def pytest_collection_modifyitems(items):
    """Every test gets its tier: ``chapters`` (executes a notebook), ``specimen`` (the real offline specimen, or
    the committed results and the book's pages), ``integration`` (marked: whole training runs, sweeps and torchrun
    on tiny models) or ``unit`` (tiny random models, a second or two each)."""
    for item in items:
        path = item.path.as_posix()
        if path.endswith("tests/book/test_chapters.py"):
            item.add_marker(pytest.mark.chapters)
        elif {"real_specimen", "real_gemma"} & set(item.fixturenames) or "/tests/book/" in path \
                or "/tests/specimen/" in path or item.get_closest_marker("specimen"):
            item.add_marker(pytest.mark.specimen)
        elif not item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.unit)
