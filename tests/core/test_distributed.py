"""torchrun: 2 gloo processes train the same curve as 1 (growth event included) and split a recovery sweep into
the same tables; a run killed mid-step resumes from its checkpoint to the same final loss, bit for bit."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

pytestmark = pytest.mark.integration  # torchrun: processes start, train and meet

DRIVER = Path(__file__).resolve().parent / "distributed_driver.py"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "ANATOMY_DEVICE": "cpu", "TOKENIZERS_PARALLELISM": "false"}


def _run(*args, processes: int = 1) -> subprocess.CompletedProcess:
    launcher = ([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
                if processes > 1 else [sys.executable])
    return subprocess.run(launcher + [str(DRIVER), *map(str, args)], env=ENV, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("one")
    done = _run(out, "--checkpoints", out / "checkpoints")
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_two_processes_match_one(one_process, tmp_path):
    done = _run(tmp_path, processes=2)
    assert done.returncode == 0, done.stderr[-3000:]
    one, two = pd.read_csv(one_process / "curve.csv"), pd.read_csv(tmp_path / "curve.csv")
    assert list(one["step"]) == list(two["step"]) and list(one["layers"]) == list(two["layers"])
    assert "growth" in set(one["kind"]) and list(one["tokens"]) == list(two["tokens"])
    np.testing.assert_allclose(two["val_loss"], one["val_loss"], rtol=1e-5)
    events = [pd.read_csv(p / "events.csv") for p in (one_process, tmp_path)]
    pd.testing.assert_frame_equal(*events)  # the same layers cloned, decided once on rank 0
    for table in ("runs", "curves"):
        single, split = (pd.read_csv(p / f"recovery_{table}.csv") for p in (one_process, tmp_path))
        timing = [c for c in single.columns if c.startswith("wall")]
        pd.testing.assert_frame_equal(single.drop(columns=timing), split.drop(columns=timing))


def test_a_killed_run_resumes_to_the_same_final_loss(one_process, tmp_path):
    checkpoints = tmp_path / "checkpoints"
    command = (tmp_path, "--checkpoints", checkpoints, "--every", 4, "--skip-recovery")
    killed = _run(*command, "--kill-at-step", 10)  # mid-step 10: the last checkpoint is at step 8
    assert killed.returncode == -9 and not (tmp_path / "curve.csv").exists()
    saved = torch.load(checkpoints / "developmental-seed1.pt", weights_only=True)
    assert saved["loop"]["step"] == 8 and not saved["done"] and saved["n_layers"] == 2
    killed = _run(*command, "--kill-at-step", 9)  # resumed at 8, killed mid-step 17, after growing at 12
    assert killed.returncode == -9
    assert torch.load(checkpoints / "developmental-seed1.pt", weights_only=True)["n_layers"] == 4
    finished = _run(*command)
    assert finished.returncode == 0, finished.stderr[-3000:]
    resumed, uninterrupted = pd.read_csv(tmp_path / "curve.csv"), pd.read_csv(one_process / "curve.csv")
    columns = ["step", "tokens", "flops", "val_loss", "layers", "lr", "kind"]
    pd.testing.assert_frame_equal(resumed[columns], uninterrupted[columns], check_exact=True)


def test_foreign_and_corrupt_checkpoints_are_refused(tmp_path):
    from anatomy_lib.growth.checkpoints import Checkpointing, load_checkpoint, save_checkpoint

    path = Checkpointing(tmp_path).path("uniform", 0)
    save_checkpoint(path, {"format": ["anatomy-growth-checkpoint", 1], "fingerprint": "another run"})
    with pytest.raises(RuntimeError, match="written by another run"):
        load_checkpoint(path, "this run")
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(RuntimeError, match="cannot be read .*; delete it"):
        load_checkpoint(path, "this run")
    torch.save({"something": "else"}, path)
    with pytest.raises(RuntimeError, match="not a growth checkpoint"):
        load_checkpoint(path, "this run")
    assert load_checkpoint(tmp_path / "absent.pt", "this run") is None
    with pytest.raises(ValueError, match="checkpoint interval"):
        Checkpointing(tmp_path, every=0)


def test_the_global_batch_must_divide_among_processes(monkeypatch):
    from anatomy_lib.core import distributed
    from anatomy_lib.growth import trainer

    monkeypatch.setattr(trainer, "world", lambda: distributed.World(rank=0, size=3))
    params = __import__("anatomy_lib.growth", fromlist=["GrowthParams"]).GrowthParams.for_profile("smoke")
    with pytest.raises(ValueError, match="divide evenly among 3 processes"):
        trainer.train(params.arm("uniform"), params.config(), None, seed=0)
