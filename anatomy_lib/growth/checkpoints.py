"""Saving and resuming a growth run: where its state goes, the fingerprint a saved state must match, atomic
writes that two processes cannot interleave, and forks (whole states kept along the way for another run to
continue from).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..core.checks import positive_int
from ..core.locks import exclusive, share
from .config import Arm, TextData, TrainConfig


@dataclass(frozen=True)
class Checkpointing:
    """Where a run saves its state, and every how many optimiser steps."""

    directory: str | Path
    every: int = 50

    def __post_init__(self):
        positive_int(self.every, "checkpoint interval (steps)")

    def path(self, arm: str, seed: int) -> Path:
        return Path(self.directory) / f"{arm}-seed{seed}.pt"


CHECKPOINT_FORMAT = ("anatomy-growth-checkpoint", 1)


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be resumed from: unreadable, or written by another run."""


def run_fingerprint(arm: Arm, config: TrainConfig, data: TextData, seed: int) -> str:
    """What a checkpoint must belong to: the arm, every training setting, the seed and the data."""
    digest = hashlib.sha256(json.dumps([asdict(arm), asdict(config), seed], sort_keys=True, default=str).encode())
    for array in (data.train, data.validation.numpy(), data.importance.numpy()):
        digest.update(str(array.shape).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def save_checkpoint(path: Path, state: dict) -> None:
    """Write atomically: a kill mid-write leaves the previous checkpoint intact. The temporary file has a name of
    its own and the rename holds the checkpoint's lock, so two processes saving the same run never interleave."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    os.close(fd)
    try:
        torch.save(state, partial)
        share(partial)
        with exclusive(path):
            os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)


def load_checkpoint(path: Path, fingerprint: str) -> dict | None:
    """The saved state of this run, None when there is none; a clear error for a file that cannot be read or
    that another run wrote (never a silent restart from scratch)."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # any unreadable file gets the same advice
        raise CheckpointError(f"checkpoint {path} cannot be read ({type(error).__name__}: truncated, corrupt or "
                              "not written by this trainer); delete it to restart this run from scratch") from error
    if not isinstance(state, dict) or tuple(state.get("format", ())) != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not a growth checkpoint of format {CHECKPOINT_FORMAT}; delete it or choose "
                           "another checkpoint directory")
    if state.get("fingerprint") != fingerprint:
        raise CheckpointError(f"checkpoint {path} was written by another run (other arm, settings, seed or data); "
                           "delete it or choose another checkpoint directory")
    return state


def numpy_rng_from(state: dict) -> np.random.Generator:
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


@dataclass
class Forks:
    """FLOP thresholds at which ``train`` keeps a copy of its whole state (before the first step taken at or past
    each): ``train(..., start=forks.states[t])`` continues from one, under another config or arm."""

    thresholds: tuple[float, ...]
    states: dict[float, dict] = field(default_factory=dict)
