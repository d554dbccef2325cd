"""Where and at what size things run: the device, its dtype, and the named size profiles.

A profile fixes every size knob (how many text blocks, how long, batch size, bootstrap draws) so that a
chapter, a test and the CLI that name the same profile compute the same thing. ``smoke`` is for tests
(seconds), ``quick`` for a 2-core CPU (minutes per diagnostic), ``paper`` for a GPU at the paper's scale.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

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


@dataclass(frozen=True)
class Profile:
    """Every size knob a diagnostic needs; see the module docstring for what each profile is for."""

    name: str
    n_blocks: int  # evaluation text blocks
    block_len: int  # tokens per block
    batch_size: int  # blocks per forward pass
    n_boot: int  # bootstrap resamples for intervals
    gen_tokens: int  # tokens generated for sample continuations

    def as_dict(self) -> dict:
        return asdict(self)


PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", n_blocks=4, block_len=64, batch_size=4, n_boot=200, gen_tokens=12),
    "quick": Profile("quick", n_blocks=16, block_len=512, batch_size=4, n_boot=2000, gen_tokens=40),
    "paper": Profile("paper", n_blocks=128, block_len=1024, batch_size=16, n_boot=5000, gen_tokens=60),
}


def get_profile(profile: str | Profile) -> Profile:
    """Look a profile up by name; an unknown name is an error that lists the valid ones."""
    if isinstance(profile, Profile):
        return profile
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {list(PROFILES)}")
    return PROFILES[profile]


PROGRESS_ENV = "ANATOMY_PROGRESS"


def show_progress() -> bool:
    """Whether the default is to draw progress bars: yes, unless ``ANATOMY_PROGRESS=0`` (the book's build sets
    it, so that finished bars do not stay on the published pages)."""
    return os.environ.get(PROGRESS_ENV, "1").strip() != "0"
