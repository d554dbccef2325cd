"""Recovery: the cached step equals the naive one, runs restore the model, controls behave, inputs are checked."""
import dataclasses
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import state_hash, tiny_lab, tiny_specimen

from anatomy_lib.core.surgery import surgery
from anatomy_lib.recovery import (
    RecoveryContext,
    RecoveryParams,
    add_damage,
    cached_step_loss,
    fine_tune,
    initial_excess,
    matched_sigma,
    naive_step_loss,
    per_layer,
    rank_correlations,
    recovery,
    recovery_run,
    recovery_sweep,
    steps_label,
    streams_entering,
    summarize_curve,
    trainable_parameters,
    training_snapshot,
)

SMALL = RecoveryParams.for_profile("smoke", layers=(1, 3), sham_layers=(2,), repeat_layers=(), steps=6,
                                   eval_every=3, early_evals=(1,), lr=1e-3)


def _context(spec, blocks, params=SMALL, layers=(0, 1, 2, 3, 4)):
    lab = tiny_lab(spec, blocks)
    pool = torch.from_numpy(np.random.default_rng(3).integers(0, 256, size=(8, 24)))
    streams = streams_entering(spec.adapter, pool, layers)
    return RecoveryContext(lab, pool, streams, tolerance=0.01, base_nll=lab.engine.baseline.mean_nll)


@pytest.mark.parametrize("layer", [0, 2, 4])
def test_cached_step_equals_naive_step(tiny, layer):
    adapter = tiny.adapter
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 256, size=(3, 20)))
    stream = streams_entering(adapter, ids, [layer])[layer]
    trainable = trainable_parameters(adapter, layer, "layer")
    with training_snapshot(adapter, trainable):
        cached = cached_step_loss(adapter, stream, ids, layer)
        cached_grads = torch.autograd.grad(cached, trainable)
        naive = naive_step_loss(tiny.model, ids)
        naive_grads = torch.autograd.grad(naive, trainable)
    torch.testing.assert_close(cached, naive, rtol=1e-5, atol=1e-6)
    for a, b in zip(cached_grads, naive_grads):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not stream.requires_grad and not torch.is_inference(stream)


@pytest.mark.integration
def test_a_run_restores_the_model_bit_for_bit(tiny, tiny_blocks):
    context = _context(tiny, tiny_blocks)
    before = state_hash(tiny.model)
    flags = [p.requires_grad for p in tiny.model.parameters()]
    for params in (SMALL, replace(SMALL, trainable="layer_and_above", noise_tensors="all")):
        row, curve, blocks = recovery_run(context, 1, "damaged", 0, params, sigma=0.5)
        assert state_hash(tiny.model) == before
    assert [p.requires_grad for p in tiny.model.parameters()] == flags
    assert all(p.grad is None for p in tiny.model.parameters()) and tiny.adapter.active_edits == {}
    assert curve["step"].tolist() == SMALL.eval_schedule() == [0, 1, 3, 6]
    assert row["sigma"] == 0.5 and np.isfinite(curve["nll"]).all() and curve["train_loss"].iloc[1:].notna().all()
    # the per-block NLLs average to the curve: what the paired intervals resample is what the curve shows
    means = blocks.groupby("step")["nll"].mean()
    assert np.allclose(means.to_numpy(), curve["nll"].to_numpy()) and row["protocol"] == "fixed"


@pytest.mark.integration
@pytest.mark.parametrize("error", [RuntimeError("stop"), KeyboardInterrupt()])
def test_an_interrupted_run_restores_the_model(tiny, tiny_blocks, error):
    context = _context(tiny, tiny_blocks)
    before = state_hash(tiny.model)

    def fail(step):
        if step == 3:
            raise error

    with pytest.raises(type(error)):
        recovery_run(context, 2, "damaged", 0, SMALL, sigma=0.5, on_step=fail)
    assert state_hash(tiny.model) == before and tiny.adapter.active_edits == {}
    assert all(p.requires_grad for p in tiny.model.parameters())


@pytest.mark.integration
def test_learning_rate_zero_leaves_the_damage_where_it_was(tiny, tiny_blocks):
    context = _context(tiny, tiny_blocks)
    lab, layer = context.eval_lab, 2
    damaged = initial_excess(lab, layer, 0.8, seed=0)
    with training_snapshot(tiny.adapter, trainable_parameters(tiny.adapter, layer, "layer")):
        with surgery(tiny.adapter) as editor:
            add_damage(editor, layer, 0.8, 0)
            curve = fine_tune(tiny.adapter, lab.engine, layer, context.streams[layer], context.pool_ids, SMALL, lr=0)
    nll = [point["nll"] for point in curve]
    assert nll == [nll[0]] * len(nll)
    assert nll[0] - lab.engine.baseline.mean_nll == pytest.approx(damaged, rel=1e-5)


@pytest.mark.integration
def test_the_sham_is_undamaged_and_judged_by_the_same_rules(tiny, tiny_blocks):
    row, curve, _ = recovery_run(_context(tiny, tiny_blocks), 2, "sham", 0, SMALL)
    assert row["sigma"] == 0.0 and curve["excess_nll"].iloc[0] == pytest.approx(0.0, abs=1e-9)


def test_matched_sigma_hits_its_target(real_specimen):
    # a randomly initialised model predicts nearly uniformly whatever its noise, so this needs real weights
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, "smoke", progress=False)
    lab = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    before = state_hash(real_specimen.model)
    for layer, target in ((11, 0.3), (25, 0.1)):
        sigma, excess = matched_sigma(lab, layer, target, seed=0, bisection_steps=8)
        assert excess == pytest.approx(target, rel=0.05)
        assert initial_excess(lab, layer, sigma, seed=0) == pytest.approx(excess, rel=1e-6)
    assert state_hash(real_specimen.model) == before


def test_the_sham_table_and_the_panels_read_plainly():
    """The sham's largest move is a size (no sign, said in its header) beside its signed final move; a panel's
    title names its layer and class without nesting the class's own parentheses."""
    import matplotlib.pyplot as plt

    from anatomy_lib.recovery import sham_drift, show_table
    from anatomy_lib.recovery.figures import recovery_curves_figure

    curves = pd.DataFrame({"layer": 6, "kind": "sham", "protocol": "matched", "noise_seed": 0, "sigma": 0.0,
                           "step": [0, 10, 50], "excess_nll": [0.0, 0.02, -0.05]})
    runs = pd.DataFrame({"layer": [6], "kind": ["sham"], "tolerance_nll": [0.1]})
    drift = sham_drift(runs, curves)
    assert drift["largest_move_nll"].iloc[0] == pytest.approx(0.05) and drift["final_move_nll"].iloc[0] < 0
    html = show_table(drift, {"largest_move_nll": ".4f", "final_move_nll": "+.4f"}).data
    assert "largest |move| (nats)" in html and "0.0500" in html and "+0.0500" not in html
    fig = recovery_curves_figure(curves, {6: "important (middle)"})
    assert fig.axes[0].get_title() == "L6, important (middle)"
    plt.close(fig)


def test_summary_never_imputes_steps():
    curve = pd.DataFrame({"layer": 3, "kind": "damaged", "noise_seed": 0, "sigma": 1.0, "step": [0, 5, 10],
                          "excess_nll": [0.5, 0.3, 0.2]})
    row = summarize_curve(curve, tolerance=0.1, budget=10)
    assert not row["recovered"] and np.isnan(row["steps_to_recover"])
    assert row["recovered_fraction"] == pytest.approx(0.6) and row["area_excess_nll"] == pytest.approx(3.25)
    assert steps_label(pd.Series({**row}).to_frame().T.itertuples().__next__()) == "> 10"
    quick = summarize_curve(curve.assign(excess_nll=[0.5, 0.05, 0.2]), tolerance=0.1, budget=10)
    assert quick["recovered"] and quick["steps_to_recover"] == 5


def test_rank_correlation_and_censoring():
    layers = pd.DataFrame({"layer": range(6), "recovered": [True] * 4 + [False] * 2,
                           "steps_to_recover": [1, 2, 5, 9, np.nan, np.nan], "budget": 10,
                           "area_excess_nll": [1.0, 2, 3, 4, 5, 6], "initial_excess_nll": 0.3})
    importance = pd.DataFrame({"layer": range(6), "change_pct": [1.0, 10, 20, 30, 40, 50]})
    table = rank_correlations(layers, importance, n_boot=200).set_index(["recovery measure", "correlation"])
    assert table.loc[("area under excess NLL", "Spearman"), "rho"] == pytest.approx(1.0)
    assert table.loc[("steps to recover", "Spearman"), "rho"] > 0.95  # the two censored layers tie at the top
    runs = pd.DataFrame({"layer": [1, 1], "kind": "damaged", "recovered": [True, False],
                         "steps_to_recover": [3.0, np.nan], "budget": 10, "sigma": 1.0,
                         "initial_excess_nll": 0.3, "recovered_fraction": 0.5, "area_excess_nll": 1.0,
                         "normalized_area": 0.3})
    pooled = per_layer(runs).iloc[0]
    assert not pooled.recovered and np.isnan(pooled.steps_to_recover) and pooled.recovered_seeds == 1


def test_bad_input_names_the_valid_choices(tiny, tiny_blocks):
    with pytest.raises(ValueError, match=">= 0"):
        RecoveryParams(sigmas=(-0.1,), damage="sigma")
    for lr in (0.0, -1e-4, float("nan")):
        with pytest.raises(ValueError, match="learning rate"):
            RecoveryParams(lr=lr)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        RecoveryParams(steps=0)
    with pytest.raises(ValueError, match=r"choose one of \['layer', 'layer_and_above'\]"):
        RecoveryParams(trainable="everything")
    with pytest.raises(ValueError, match="choose one of"):
        RecoveryParams(damage="some")
    with pytest.raises(ValueError, match="choose one of"):
        RecoveryParams.for_profile("huge")
    with pytest.raises(ValueError, match=r"valid layers are 0\.\.4"):
        recovery(tiny_lab(tiny, tiny_blocks), replace(SMALL, layers=(7,)))
    with pytest.raises(ValueError, match="learning rate"):
        context = _context(tiny, tiny_blocks)
        fine_tune(tiny.adapter, context.eval_lab.engine, 1, context.streams[1], context.pool_ids, SMALL, lr=-1.0)


def test_profiles_and_schedule():
    quick = RecoveryParams.for_profile("quick")
    assert quick == RecoveryParams() and quick.eval_schedule()[0] == 0 and quick.eval_schedule()[-1] == quick.steps
    assert len(quick.layers) >= 9 and set(quick.sham_layers) <= set(quick.layers)
    assert len(RecoveryParams.for_profile("paper").layers) == 30
    kinds = [kind for _, kind, _, _ in quick.runs()]
    assert kinds.count("sham") == len(quick.sham_layers)
    assert [seed for layer, kind, seed, sigma in quick.runs() if layer == 11 and kind == "damaged" and sigma is None
            ] == [0, 1]
    # every damaged layer has its own sham; the fixed-noise protocol damages every layer at each sigma once
    assert set(quick.sham_layers) == set(quick.layers)
    fixed = quick.fixed_protocol().runs()
    assert sorted(fixed) == sorted((layer, "damaged", 0, sigma) for layer in quick.layers for sigma in (0.25, 1.0))


def test_quick_sizes_gemma_apart():
    """At quick, Gemma-3-270M's sweep is six layers (edges, the paper's L11 and L14, the output end, at its
    depth), one noise seed, a sham each and no fixed-noise protocol; every other specimen keeps the defaults."""
    gemma = RecoveryParams.for_profile("quick", specimen="gemma3-270m-q4")
    assert gemma.layers.at_depth(18) == (0, 1, 6, 8, 14, 17) and gemma.sham_layers == gemma.layers
    assert gemma.repeat_layers == () and gemma.sigmas == ()
    assert len(gemma.runs()) == 12
    assert RecoveryParams.for_profile("quick", specimen="smollm2-135m-instruct-q4") == RecoveryParams()
    with pytest.raises(ValueError, match="needs at least one sigma"):
        gemma.fixed_protocol()


SIGMA_GRID = replace(SMALL, damage="sigma", sigmas=(0.25, 1.0), layers=(1, 3), repeat_layers=(3,), repeat_count=2,
                     sham_layers=(1,))


def test_runs_count_the_sigma_grid():
    """damage="sigma" runs every damaged run once per sigma: the one count the sweep runs, the estimate charges
    and the CLI and chapter print."""
    params = SIGMA_GRID
    assert len(params.runs()) == (1 + 2) * 2 + 1
    assert params.work() == len(params.runs()) * params.steps * params.batch_size * params.train_len
    assert replace(params, damage="matched").work() < params.work()


@pytest.mark.integration
def test_a_sigma_sweep_runs_what_it_counts(tiny, tiny_blocks):
    params = SIGMA_GRID
    tables = recovery_sweep(_context(tiny, tiny_blocks, params), params, progress=False)
    assert len(tables["runs"]) == len(params.runs())
    assert sorted(tables["runs"].query("kind == 'damaged'")["sigma"].unique()) == [0.25, 1.0]


def test_recovery_explorer_shows_stored_runs_and_trains_on_press(real_specimen):
    from anatomy_lib.core.lab import open_lab
    from anatomy_lib.recovery import recovery_explorer

    lab = open_lab(real_specimen, "smoke", progress=False)
    params = RecoveryParams.for_profile("smoke", layers=(28,), sham_layers=(), repeat_layers=())
    tables = recovery(lab, params, progress=False)
    before = state_hash(real_specimen.model)
    box = recovery_explorer(lab, params, tables, {28: "output processor"}, layer=28)
    (left, right), output = box.children[0].children, box.children[1]
    pick, mode, amount = left.children
    lr, steps, button, bar = right.children
    figure = lambda: "Figure" in str(output.outputs[0]["data"]) if output.outputs else False
    assert figure()
    pick.value = 3  # no stored run there: the explorer says so instead of drawing nothing
    assert "no stored run for layer 3" in str(output.outputs)
    pick.value, steps.value, mode.value, amount.value = 28, 3, "sigma", 0.5
    button.click()
    assert bar.value == 3 and bar.description.startswith("done") and not button.disabled
    assert figure()
    assert state_hash(real_specimen.model) == before
    lr.value = 1e-30  # below the slider's range: the slider clamps it, training still runs
    steps.value = steps.min
    button.click()
    assert bar.description.startswith("done")


BOTH_PROTOCOLS = replace(SMALL, layers=(1, 3), sham_layers=(1, 3), repeat_layers=(3,), repeat_count=2, lr=3e-3)


@pytest.mark.integration
def test_recovery_is_judged_against_the_sham_under_both_protocols(tiny_blocks):
    """Every criterion of the sensitivity table, both protocols, the claims and findings, from one small sweep;
    against the sham of the same layer, a damaged run's remaining excess is the damaged minus the sham NLL (one
    family: the judging is family-blind, the runs are tested per family above)."""
    from anatomy_lib.recovery import findings, paper_claims
    from anatomy_lib.recovery.analysis import MAIN_CRITERION, SENSITIVITY, Criterion, judged_runs, sensitivity_table
    from anatomy_lib.recovery.sweep import merged

    params = BOTH_PROTOCOLS
    tiny = tiny_specimen("llama", n_layers=5, seed=1)
    context = _context(tiny, tiny_blocks, params)
    tables = merged(recovery_sweep(context, params, progress=False),
                    recovery_sweep(context, params.fixed_protocol((0.25, 1.0)), progress=False))
    assert set(tables["runs"]["protocol"]) == {"matched", "fixed", "sham"}
    judged = judged_runs(tables, MAIN_CRITERION)
    assert len(judged) == len(tables["runs"].query("kind == 'damaged'"))
    one = judged[(judged["layer"] == 1) & (judged["protocol"] == "fixed") & (judged["sigma"] == 1.0)].iloc[0]
    curves = tables["curves"]
    damaged = curves[(curves["layer"] == 1) & (curves["protocol"] == "fixed") & (curves["sigma"] == 1.0)]
    sham = curves[(curves["layer"] == 1) & (curves["kind"] == "sham")]
    assert one.final_excess_nll == pytest.approx(damaged["nll"].iloc[-1] - sham["nll"].iloc[-1], abs=1e-9)
    assert one.fraction_low <= one.recovered_fraction <= one.fraction_high
    raw = judged_runs(tables, Criterion("baseline", 0.9))
    assert raw["final_excess_nll"].to_numpy() == pytest.approx(
        tables["runs"].query("kind == 'damaged'")["final_excess_nll"].to_numpy(), abs=1e-9)
    table = sensitivity_table(tables, n_boot=200)
    assert list(table.columns) == ["protocol", "layer", *[c.label for c in SENSITIVITY]]
    assert set(table["protocol"]) == {"matched", "fixed sigma 0.25", "fixed sigma 1"}
    importance = pd.DataFrame({"layer": range(5), "change_pct": [500.0, 20.0, 5.0, 40.0, 300.0],
                               "class": ["input processor", "connective tissue", "connective tissue",
                                         "important (middle)", "output processor"]})
    claims = paper_claims({**tables, "importance": importance}, params)
    assert claims and all(c.control == "sham of the same layer" for c in claims)
    correlation = next(c for c in claims if c.claim == "recovery speed correlates with importance")
    assert correlation.verdict == "inconclusive" and "[" not in correlation.ours  # 5 layers: no interval shown
    assert "no interval is shown" in correlation.note
    said = findings({**tables, "importance": importance}, params, "tiny")
    assert said and not any("nan" in sentence for sentence in said)
    # what the fixed-noise protocol gives each claim (the powered sweep's notes carry it): every sigma, in words
    from anatomy_lib.recovery.chapter import fixed_noise_verdicts

    fixed = fixed_noise_verdicts({**tables, "importance": importance}, params)
    assert set(fixed) == {c.claim for c in claims}
    assert all(text.startswith("sigma 0.25: ") and "; sigma 1: " in text for text in fixed.values())
    assert fixed_noise_verdicts({**tables, "runs": tables["runs"].query("protocol != 'fixed'"),
                                 "importance": importance}, params) == {}
    from anatomy_lib.recovery import criterion_sensitivity

    grid = criterion_sensitivity({**tables, "importance": importance}, params)
    assert set(grid["value"]) == set(SENSITIVITY) and grid["default"].sum() == len(claims)
    book = grid[grid["default"]].set_index("claim")["standing"]
    assert book.to_dict() == {c.claim: c.standing for c in claims}  # the book's criterion is the chapter's verdict


def test_a_critical_layer_that_fails_with_every_other_layer_is_not_distinctive():
    from anatomy_lib.recovery.report import _distinctive

    layers = pd.DataFrame({"layer": [1, 11, 29], "recovered": [False, False, False]})
    assert _distinctive(layers, 11) == "; 2 of 2 other layers did not recover either: not distinctive of this layer"
    layers["recovered"] = [True, False, False]
    assert _distinctive(layers, 11) == "; 1 of 2 other layers did not recover either"
    assert _distinctive(layers[layers["layer"] == 11], 11) == ""


def test_almost_at_once_says_which_half_goes_untested_and_that_its_window_is_the_warm_up():
    from anatomy_lib.recovery.report import _quick_caveats

    layers = pd.DataFrame({"layer": [1, 5, 17]})
    classes = {1: "input processor", 5: "critical core", 17: "output processor"}
    said = _quick_caveats(layers, classes, RecoveryParams(quick_steps=10, warmup_steps=10))
    assert "no layer run here is classed connective tissue, so that half of the claim is untested" in said
    assert "the first 10 of its 10 steps are the learning-rate warm-up" in said and "at 50% of the rate" in said
    both = {**classes, 5: "connective tissue"}
    assert _quick_caveats(layers, both, RecoveryParams(quick_steps=10, warmup_steps=0)) == ""
    assert "the first 4 of its 10 steps" in _quick_caveats(layers, both, RecoveryParams(quick_steps=10,
                                                                                         warmup_steps=4))


def _judged(protocol: str, sigma: float, damage: dict[int, float], recovered: set[int]) -> pd.DataFrame:
    """A ``judged_runs`` table of one seed per layer: each layer's initial damage and whether it recovered."""
    return pd.DataFrame([{"layer": layer, "protocol": protocol, "sigma": sigma, "noise_seed": 0,
                          "initial_excess_nll": nats, "recovered": layer in recovered,
                          "steps_to_recover": 50.0 if layer in recovered else np.nan, "budget": 200,
                          "recovered_fraction": 0.5, "fraction_low": 0.4, "fraction_high": 0.6,
                          "area_excess_nll": 1.0, "normalized_area": 0.1} for layer, nats in damage.items()])


def test_at_one_noise_level_the_critical_layers_contrast_is_set_beside_how_far_it_starts():
    from anatomy_lib.recovery.report import _fixed_contrast

    damage = {1: 0.05, 8: 0.08, 11: 0.41, 29: 0.38}
    raw = pd.concat([_judged("matched", 0.5, dict.fromkeys(damage, 0.3), set()),
                     _judged("fixed", 0.25, damage, {1, 8}), _judged("fixed", 1.0, damage, set())])
    contrast, none = _fixed_contrast(raw, 11, 0.3)  # one sentence per fixed sigma; none for the matched protocol
    assert contrast.startswith("fixed sigma 0.25: one noise level damages the layers unequally: L11 starts from "
                               "0.41 nats, the largest of the 4 layers run (the others 0.05-0.38)")
    assert "L11 does not recover within the budget while 2 of the 3 others do" in contrast
    assert "mixes the layer with how far it starts" in contrast
    assert "neither L11 nor any of the 3 others recovers" in none and "no contrast" in none
    second = _fixed_contrast(_judged("fixed", 0.25, {**damage, 29: 0.5}, {11}), 11, 0.3)[0]
    assert "the 2nd largest" in second and "L11 recovers within the budget, as 0 of the 3 others do" in second
    assert _fixed_contrast(_judged("fixed", 0.25, {1: 0.1, 8: 0.2}, set()), 11, 0.3) == []  # L11 not run


def test_a_sweep_resumes_from_its_finished_runs(tiny, tiny_blocks, tmp_path):
    """Runs kept as they finish are read back instead of trained again, and the tables equal an uninterrupted
    sweep's; once the result is stored the kept runs are gone."""
    from anatomy_lib.core.results import RunCheckpoints, _as_stored
    from anatomy_lib.recovery import recovery

    context = _context(tiny, tiny_blocks)
    whole = _as_stored(recovery_sweep(context, SMALL, progress=False))
    kept = RunCheckpoints(tmp_path / "key.runs")
    first = recovery_run(context, *SMALL.runs()[0][:3], SMALL, SMALL.runs()[0][3])
    kept.save(0, first)
    assert kept.finished() == 1
    row, curve, blocks = kept.load(0)
    pd.testing.assert_series_equal(pd.Series(row), pd.Series(first[0]))  # NaN (not recovered) included
    pd.testing.assert_frame_equal(curve, first[1], check_dtype=False)
    resumed = _as_stored(recovery_sweep(context, SMALL, progress=False, checkpoints=kept))
    for name in whole:
        table = whole[name].drop(columns="wall_s", errors="ignore")
        pd.testing.assert_frame_equal(resumed[name].drop(columns="wall_s", errors="ignore"), table)
    assert kept.finished() == len(SMALL.runs())
    lab = tiny_lab(tiny, tiny_blocks)
    params = SMALL.resolved(lab)
    lab.checkpoints(params).save(0, first)
    lab.stored(params, lambda: whole)  # the whole result stored: the next read clears the kept runs
    recovery(lab, SMALL, progress=False)
    assert lab.checkpoints(params).finished() == 0 and not lab.checkpoints(params).folder.exists()
