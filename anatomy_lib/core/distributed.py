"""Running under ``torchrun``: which process this is, how processes share work, and how results meet again.

Without ``torchrun`` (no ``WORLD_SIZE`` in the environment) this is a world of one process and every helper is
the identity, so no caller needs two code paths. Under ``torchrun --nproc_per_node=N`` the processes join one
group: ``gloo`` on CPUs, ``nccl`` when each process has a GPU (``ANATOMY_DEVICE=cpu`` forces gloo).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """Whether this is rank 0, the process that logs, shows progress and writes results."""
        return self.rank == 0

    @property
    def device(self) -> torch.device:
        """The device of this process (its own GPU under nccl, else the CPU)."""
        if dist.is_initialized() and dist.get_backend() == "nccl":
            return torch.device("cuda", self.local_rank)
        return torch.device("cpu")


def world() -> World:
    if dist.is_available() and dist.is_initialized():
        return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", dist.get_rank())))
    return World()


def init_from_environment() -> World:
    """Join the process group ``torchrun`` describes (``WORLD_SIZE`` > 1); otherwise a world of one."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized():
        use_gpu = torch.cuda.is_available() and os.environ.get("ANATOMY_DEVICE", "") != "cpu"
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if use_gpu:
            torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl" if use_gpu else "gloo")
    return world()


def shard(items: list, at: World | None = None) -> list:
    """This process's share of independent jobs: every size-th item, starting at its rank."""
    at = at or world()
    return list(items)[at.rank::at.size]


def gather(results: list, at: World | None = None) -> list:
    """Undo ``shard``: every process's results, in the order of the unsharded jobs (on every process)."""
    at = at or world()
    if at.size == 1:
        return list(results)
    parts: list = [None] * at.size
    dist.all_gather_object(parts, list(results))
    ordered = [None] * sum(len(p) for p in parts)
    for rank, part in enumerate(parts):
        ordered[rank::at.size] = part
    return ordered


def broadcast(value, at: World | None = None):
    """Rank 0's ``value`` on every process (a decision that must not differ between processes)."""
    at = at or world()
    if at.size == 1:
        return value
    box = [value if at.main else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier(at: World | None = None) -> None:
    if (at or world()).size > 1:
        dist.barrier()


def all_sum(values: list[float], at: World | None = None) -> list[float]:
    """Element-wise sum of ``values`` over every process (float64)."""
    at = at or world()
    if at.size == 1:
        return list(values)
    tensor = torch.tensor(values, dtype=torch.float64, device=at.device)
    dist.all_reduce(tensor)
    return tensor.tolist()
