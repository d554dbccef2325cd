"""Where things run: the device, its dtype, whether progress bars are drawn, and a one-thread block for small
LAPACK calls (sizes live in ``profiles``)."""
from __future__ import annotations

import os
from contextlib import contextmanager

import torch

DEVICE_ENV = "ANATOMY_DEVICE"
DTYPE_ENV = "ANATOMY_DTYPE"
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def get_device() -> torch.device:
    """cuda, then mps, then cpu; the environment variable ``ANATOMY_DEVICE`` overrides the choice."""
    requested = os.environ.get(DEVICE_ENV, "").strip()
    if requested:
        device = torch.device(requested)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"{DEVICE_ENV}={requested} but CUDA is not available; use cpu.")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_dtype(device: torch.device | str) -> torch.dtype:
    """The dtype a specimen is loaded in on ``device`` (``ANATOMY_DTYPE`` overrides it).

    float32 on every device by default: the model is small, and the diagnostics compare perplexity changes of
    a few percent, which half precision would blur. On a GPU, bfloat16 is one variable away.
    """
    requested = os.environ.get(DTYPE_ENV, "").strip()
    if requested:
        if requested not in _DTYPES:
            raise ValueError(f"{DTYPE_ENV}={requested!r} is not one of {sorted(_DTYPES)}")
        return _DTYPES[requested]
    return torch.float32


PROGRESS_ENV = "ANATOMY_PROGRESS"


def show_progress() -> bool:
    """Whether the default is to draw progress bars: yes, unless ``ANATOMY_PROGRESS=0`` (the book's build sets
    it, so that finished bars do not stay on the published pages)."""
    return os.environ.get(PROGRESS_ENV, "1").strip() != "0"


@contextmanager
def one_thread():
    """Torch on one CPU thread inside the block, its thread count restored after (even on an exception): for
    LAPACK calls on a layer's matrices (singular values, a truncated SVD), which gain little from a second thread
    and, in a Jupyter kernel on a machine whose cores are busy, run ten to a hundred times slower with two: their
    OpenMP threads spin-wait (measured: 0.9 to 7.6 s against 0.06 s for one 1536 x 576 ``svdvals``; 0.09 s with
    ``OMP_WAIT_POLICY=PASSIVE``, which only takes effect when set before the process starts; matrix products are
    not affected)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
