"""The prepared GPU script: its estimate from the committed store, its one-line refusals, and a real run of a
chapter at the smoke profile on the CPU (into the tests' temporary store)."""
from pathlib import Path

import pytest

from anatomy_lib import paper_run

COMMITTED = Path(__file__).resolve().parents[2] / "data"


def test_dry_run_estimates_every_step_in_order(monkeypatch, capsys):
    monkeypatch.setenv("ANATOMY_DATA", str(COMMITTED))
    assert paper_run.main(["--dry-run", "--gpu", "H200"]) == 0
    out = capsys.readouterr().out
    assert out.index("growth") < out.index("importance") < out.index("recovery")  # most valuable first
    assert "total on one H200: about" in out and "window" in out
    table = paper_run.estimate("paper", "H200", cpu_gflops=200.0)
    assert list(table["chapter"]) == list(paper_run.ORDER)
    assert (table["stored quick runs"] > 0).all() and (table["paper, H200 (min)"] >= 0).all()
    # the same CPU measurements, a slower GPU: a longer estimate
    assert paper_run.estimate("paper", "Colab T4", cpu_gflops=200.0)["paper, Colab T4 (min)"].sum() > \
        table["paper, H200 (min)"].sum()


def test_bad_input_is_refused_in_one_line(capsys):
    assert paper_run.main(["--only", "nope"]) == 2
    assert "choose among growth" in capsys.readouterr().err
    assert paper_run.main(["--profile", "paper"]) == 2 or paper_run.torch.cuda.is_available()
    assert paper_run.main(["--dry-run", "--gpu", "K80"]) == 2
    with pytest.raises(paper_run.NotReady, match="choose one of"):
        paper_run.preflight("default", "huge", "cpu")
    with pytest.raises(paper_run.NotReady, match="does not load"):
        paper_run.preflight("/no/such/model.gguf", "smoke", "cpu")


def test_steps_by_name_or_number_keep_the_order():
    assert paper_run.steps(["structure", "7", "importance"]) == [7, 2, 4]
    assert paper_run.steps(None) == list(paper_run.ORDER)


def test_a_smoke_run_computes_and_stores_a_chapter(real_specimen, capsys):
    lines = paper_run.run(real_specimen.name, "smoke", only=["specimen"])
    assert len(lines) == 1 and lines[0].startswith("chapter 1 (specimen)") and "claims:" in lines[0]
    assert "weights" in capsys.readouterr().out


def test_cpu_memory_counts_the_cache_the_kernel_would_give_back():
    """A busy file cache keeps the free pages low on a machine with room to spare: the check reads what is
    available, never less than the free pages (a small margin for what changes between the two reads)."""
    import os

    free_pages = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2 ** 30
    assert paper_run.free_memory_gib("cpu") >= 0.9 * free_pages
