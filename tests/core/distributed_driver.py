"""Run by tests/core/test_distributed.py, alone or under torchrun: a small growth run and a small recovery sweep on
synthetic data, written to CSV by rank 0. ``--kill-at-step N`` sends this process SIGKILL in the middle of its
N-th optimiser step (after the backward pass, before the update), to test resuming from a checkpoint."""
import argparse
import os
import signal
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anatomy_lib.core.distributed import init_from_environment
from anatomy_lib.growth import GrowthParams
from anatomy_lib.growth.checkpoints import Checkpointing
from anatomy_lib.growth.config import TextData
from anatomy_lib.growth.trainer import train

GROWTH = GrowthParams.for_profile("smoke", budget_steps=24, batch=4)


def growth_data(params: GrowthParams) -> TextData:
    rng = np.random.default_rng(0)
    return TextData(rng.integers(0, params.vocab_size, size=20_000).astype(np.int64),
                    torch.from_numpy(rng.integers(0, params.vocab_size, size=(6, params.context))),
                    torch.from_numpy(rng.integers(0, params.vocab_size, size=(4, params.context))))


def recovery_tables():
    from anatomy_lib.core.corpus import blocks_from_ids
    from anatomy_lib.core.lab import Lab
    from anatomy_lib.core.profiles import get_profile
    from anatomy_lib.core.specimens import tiny_specimen
    from anatomy_lib.recovery import RecoveryContext, RecoveryParams, recovery_sweep, streams_entering

    spec = tiny_specimen("llama", n_layers=5, seed=1)
    blocks = blocks_from_ids(np.random.default_rng(0).integers(0, 256, size=4000), n_blocks=4, block_len=48, seed=0)
    lab = Lab(spec, get_profile("smoke"), blocks, progress=False)
    params = RecoveryParams.for_profile("smoke", layers=(0, 1, 3, 4), sham_layers=(2,), repeat_layers=(1,),
                                        steps=4, eval_every=2, early_evals=(1,), lr=1e-3)
    pool = torch.from_numpy(np.random.default_rng(3).integers(0, 256, size=(8, 24)))
    context = RecoveryContext(lab, pool, streams_entering(spec.adapter, pool, range(5)), tolerance=0.01,
                              base_nll=lab.engine.baseline.mean_nll)
    return recovery_sweep(context, params, progress=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--checkpoints")
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--kill-at-step", type=int)
    parser.add_argument("--skip-recovery", action="store_true")
    args = parser.parse_args()
    at = init_from_environment()
    if args.kill_at_step:
        original, calls = torch.optim.AdamW.step, [0]

        def step(self, *a, **k):
            calls[0] += 1
            if calls[0] == args.kill_at_step:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, *a, **k)

        torch.optim.AdamW.step = step
    checkpoint = Checkpointing(args.checkpoints, args.every) if args.checkpoints else None
    curve, events, _ = train(GROWTH.arm("developmental"), GROWTH.config(), growth_data(GROWTH), seed=1,
                             checkpoint=checkpoint)
    tables = {} if args.skip_recovery else recovery_tables()
    if at.main:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        curve.to_csv(out / "curve.csv", index=False)
        events.to_csv(out / "events.csv", index=False)
        for name, table in tables.items():
            table.to_csv(out / f"recovery_{name}.csv", index=False)


if __name__ == "__main__":
    main()
