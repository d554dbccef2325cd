"""The powered recovery sweep: its design (every layer at every rate, seeds as units, shams kept), one matched
sigma per layer and seed shared by every rate, runs kept and resumed across workers, partial results read."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import state_hash, tiny_lab, tiny_specimen

from anatomy_lib.core.results import ResultStore
from anatomy_lib.core.rules import SURVIVES_COLUMN, claims_table
from anatomy_lib.recovery import RecoveryContext, RecoveryParams, findings, paper_claims, streams_entering
from anatomy_lib.recovery.analysis import Criterion, judged_runs
from anatomy_lib.recovery.chapter import (
    POWERED,
    QUICK_ALONE,
    chapter_claims,
    chapter_findings,
    evidence_sentence,
    powered_at_budget,
    quick_beside,
    verdict_evidence,
)
from anatomy_lib.recovery.power import (
    POWER_COMMAND,
    REDUCED_DESIGNS,
    PowerDesign,
    critical_place,
    critical_sentence,
    design_sentence,
    drift_sentence,
    power_correlations,
    power_curves,
    power_design,
    power_kept,
    power_progress,
    power_sensitivity,
    power_sensitivity_sentence,
    power_steps,
    power_table,
    power_tables,
    power_view,
    rate_sentence,
    rate_steps,
    run_power,
    steps_cell,
    truncated,
)

BASE = RecoveryParams.for_profile("smoke", layers=(1, 3), sham_layers=(), repeat_layers=(), lr=1e-3,
                                  bisection_steps=2)
DESIGN = PowerDesign(lrs=(1e-3, 3e-3), seeds=2, steps=4, eval_blocks=4, early_evals=(1,), eval_every=2)


def _context(spec, blocks):
    lab = tiny_lab(spec, blocks)
    pool = torch.from_numpy(np.random.default_rng(3).integers(0, 256, size=(8, 24)))
    streams = streams_entering(spec.adapter, pool, range(spec.adapter.n_layers))
    return lab, RecoveryContext(lab, pool, streams, tolerance=0.01, base_nll=lab.engine.baseline.mean_nll)


def test_the_design_runs_every_layer_at_every_rate_with_its_seeds_and_sham():
    sweeps = DESIGN.sweeps(BASE)
    assert [s.lr for s in sweeps] == [1e-3, 3e-3]
    for sweep in sweeps:
        assert sweep.damage == "matched" and sweep.sigmas == () and sweep.steps == 4 and sweep.eval_blocks == 4
        assert sorted((r[0], r[1], r[2]) for r in sweep.runs()) == sorted(DESIGN.units(BASE))
    # each layer's first seed beside its sham, the deepest (cheapest) first: a partial result holds judged pairs
    assert DESIGN.units(BASE) == [(3, "damaged", 0), (3, "sham", 0), (1, "damaged", 0), (1, "sham", 0),
                                  (3, "damaged", 1), (1, "damaged", 1)]
    assert DESIGN.n_runs(BASE) == 12
    # the work's order: the pairs at every rate (the grid, judged), the further seeds at the chapter's rate (its
    # sweep complete soonest), then at the others; every run once
    assert DESIGN.schedule(BASE) == [((3, "damaged", 0), (0, 1)), ((3, "sham", 0), (0, 1)),
                                     ((1, "damaged", 0), (0, 1)), ((1, "sham", 0), (0, 1)),
                                     ((3, "damaged", 1), (0,)), ((1, "damaged", 1), (0,)),
                                     ((3, "damaged", 1), (1,)), ((1, "damaged", 1), (1,))]
    runs = sorted((unit, rate) for unit, rates in DESIGN.schedule(BASE) for rate in rates)
    assert runs == sorted((unit, rate) for unit in DESIGN.units(BASE) for rate in (0, 1))
    single = PowerDesign(lrs=(1e-3,), seeds=2)
    assert [rates for _, rates in single.schedule(BASE)] == [(0,)] * 6
    with pytest.raises(ValueError, match="learning rate"):
        PowerDesign(lrs=(1e-3, -1.0))
    with pytest.raises(ValueError, match="seeds"):
        PowerDesign(seeds=0)


def test_a_reduced_design_runs_its_own_layers_and_a_specimen_gets_its_design():
    reduced = PowerDesign(lrs=(1e-3,), seeds=2, steps=4, layers=(3,))
    (sweep,) = reduced.sweeps(BASE)
    assert sweep.layers == sweep.sham_layers == sweep.repeat_layers == (3,)
    assert reduced.units(BASE) == [(3, "damaged", 0), (3, "sham", 0), (3, "damaged", 1)]
    assert sorted((r[0], r[1], r[2]) for r in sweep.runs()) == sorted(reduced.units(BASE))
    assert DESIGN.layers_of(BASE) == (1, 3)  # no layers of its own: the chapter sweep's
    assert power_design("gemma3-270m-q4") is REDUCED_DESIGNS["gemma3-270m-q4"]
    assert power_design("smollm2-135m-instruct-q4") == PowerDesign()
    gemma = REDUCED_DESIGNS["gemma3-270m-q4"]
    assert gemma.seeds >= 3 and len(gemma.layers) >= 4  # seeds as units; enough layers to rank
    assert "learning rate 0.001" in power_progress({1e-3: {"missing": 0}}, reduced, BASE)
    with pytest.raises(ValueError, match="layer indices"):
        PowerDesign(layers=(-1,))


def test_the_progress_names_the_seeds_kept_and_what_a_table_row_is():
    """A seed is named by its number, never as a bare list that reads as a count ("noise seeds kept so far: 0"),
    and the sentence says the table has one row per rate and layer judged, so fewer rows than runs read right."""
    base = BASE  # its layers are named, so the units need no lab to resolve them
    units = len(DESIGN.units(base))

    def kept_with(seeds, missing):
        runs = pd.DataFrame({"noise_seed": seeds})
        return {lr: {"runs": runs, "missing": missing} for lr in DESIGN.lrs}

    one = power_progress(kept_with([0, 0], units - 2), DESIGN, base)
    assert "only noise seed 0 so far" in one and "kept so far: 0" not in one
    assert "one row per learning rate and layer whose damaged run is kept beside its sham" in one
    assert "noise seeds 0 and 1 so far" in power_progress(kept_with([0, 1], units - 3), DESIGN, base)
    assert "noise seeds 0, 1 and 2 so far" in power_progress(kept_with([2, 0, 1], 1), DESIGN, base)
    pairs = pd.DataFrame({"noise_seed": [0, 0, 1], "layer": [1, 1, 3], "kind": ["damaged", "sham", "damaged"]})
    some = power_progress({lr: {"runs": pairs, "missing": units - 3} for lr in DESIGN.lrs}, DESIGN, base)
    assert "no row yet for L3, whose damaged run and sham are not both kept" in some  # L1 has its pair
    both = pd.concat([pairs, pd.DataFrame({"noise_seed": [0], "layer": [3], "kind": ["sham"]})])
    assert "no row yet" not in power_progress({lr: {"runs": both, "missing": 1} for lr in DESIGN.lrs}, DESIGN, base)
    nothing = {lr: {"missing": units} for lr in DESIGN.lrs}
    assert "has not started: none of its 12 runs is kept yet" in power_progress(nothing, DESIGN, base)


@pytest.mark.integration
def test_a_powered_sweep_shares_the_damage_across_rates_resumes_and_is_read_part_way(tiny, tiny_blocks, monkeypatch):
    lab, context = _context(tiny, tiny_blocks)
    before = state_hash(tiny.model)
    # two units, then stop: the chapter reads what is kept, and says how much is missing
    assert not run_power(lab, DESIGN, BASE, max_units=2, progress=False, context=context)
    assert state_hash(tiny.model) == before
    kept = power_kept(lab, DESIGN, BASE)
    assert {lr: tables["missing"] for lr, tables in kept.items()} == {1e-3: 4, 3e-3: 4}
    partial = power_table(kept, n_boot=200)  # layer 3's damaged run and its sham: judged, one seed, no interval
    assert list(partial["layer"]) == [3, 3] and partial["undone_low"].isna().all()
    only_damaged = {lr: {**tables, "runs": tables["runs"][tables["runs"]["kind"] == "damaged"],
                         "blocks": tables["blocks"][tables["blocks"]["kind"] == "damaged"]}
                    for lr, tables in kept.items()}
    assert power_table(only_damaged, n_boot=200).empty  # no sham kept beside it: nothing judged yet
    progress = power_progress(kept, DESIGN, BASE.resolved(lab), "tiny")
    assert "4 of 12 runs are kept" in progress and "only noise seed 0 so far" in progress
    assert "`python -m anatomy_lib recovery-power --specimen tiny` resumes" in progress
    view = power_view(lab, BASE, n_boot=200, design=DESIGN)  # as the chapter shows it: the same tables
    assert view["progress"] == power_progress(kept, DESIGN, BASE.resolved(lab), lab.specimen.name)
    shown = power_tables(view)
    assert "at the end of 4 steps" in shown["end"].data and "steps to undo half" in shown["half"].data
    assert shown["rho"] is None  # one layer kept: nothing to rank
    assert "layers L1, L3, 2 noise seeds and a sham each, at learning rates 0.001, 0.003" in design_sentence(
        view, "tiny")
    runs = pd.concat([kept[lr]["runs"].assign(lr=lr) for lr in kept])
    damaged = runs[runs["kind"] == "damaged"]
    assert (damaged.groupby(["layer", "noise_seed"])["sigma"].nunique() == 1).all()  # one sigma, every rate
    assert (damaged["protocol"] == "matched").all() and (runs[runs["kind"] == "sham"]["sigma"] == 0).all()
    # a second call resumes: every run, then each rate's sweep stored and its run files gone
    assert run_power(lab, DESIGN, BASE, progress=False, context=context)
    assert state_hash(tiny.model) == before
    kept = power_kept(lab, DESIGN, BASE)
    assert all(tables["missing"] == 0 for tables in kept.values())
    assert all(not lab.checkpoints(tables["params"]).folder.exists() for tables in kept.values())
    assert "complete: 12 runs" in power_progress(kept, DESIGN, BASE.resolved(lab))
    for tables in kept.values():  # its time is its runs' (each trained in some earlier call), not the assembly's
        manifest = ResultStore().load(RecoveryParams.DIAGNOSTIC, lab.request(tables["params"]))[1]
        assert manifest["wall_time_s"] == pytest.approx(tables["runs"]["wall_s"].sum(), abs=1e-3)
        assert manifest["computed_by"] == POWER_COMMAND  # run apart: a chapter's recomputation leaves it out
    table = power_table(kept, n_boot=200)
    assert set(table["lr"]) == {1e-3, 3e-3} and set(table["layer"]) == {1, 3} and (table["seeds"] == 2).all()
    # the curves the figure draws end where the table reads them, against the sham and raw
    curves = power_curves(kept)
    assert curves["complete"].all() and (curves["seeds"] == 2).all()
    last = curves[curves["step"] == DESIGN.steps].set_index(["lr", "layer"]).sort_index()
    ends = table.set_index(["lr", "layer"]).sort_index()
    assert np.allclose(last["undone"], ends["undone"], atol=1e-6)
    assert np.allclose(last["undone_raw"], ends["undone_raw"])
    assert (curves.loc[curves["step"] == 0, "undone"].abs() < 1e-9).all()  # nothing undone before training
    from anatomy_lib.recovery.figures import power_curves_figure

    monkeypatch.setenv("ANATOMY_STRICT_FIGURES", "1")  # a figure a reader could not read raises
    fig = power_curves_figure(curves, {1: "connective tissue", 3: "output processor"}, 3, 4, 0.9, "tiny")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2  # one panel per rate
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "L3, the paper's critical layer" in legend and "connective tissue" in legend
    without = power_curves_figure(curves[curves["layer"] == 1], {1: "connective tissue"}, 3, 4, 0.9, "tiny")
    assert not any("critical" in t.get_text() for t in without.legends[0].get_texts())  # named only where drawn
    assert power_curves({1e-3: {"missing": 4}}).empty
    assert table["undone_low"].notna().all()  # two seeds: an interval over seeds
    # the raw share beside it (against the intact model), so a sham that drifts is seen
    raw = judged_runs(kept[1e-3], Criterion("baseline", 0.9), 200, 0).groupby("layer")["recovered_fraction"].mean()
    at = table[table["lr"] == 1e-3].set_index("layer")["undone_raw"]
    assert np.allclose(at.sort_index(), raw.sort_index())  # over 1 where fine-tuning improves on the intact model
    # nothing is trained when everything is stored
    assert run_power(lab, DESIGN, BASE, progress=False, context=None)


@pytest.mark.integration
def test_the_claims_are_read_at_every_rate_and_at_an_earlier_budget(tiny_blocks, monkeypatch):
    """One family (the judging is family-blind; the runs are tested per family above)."""
    tiny = tiny_specimen("llama", n_layers=5, seed=1)
    lab, context = _context(tiny, tiny_blocks)
    assert run_power(lab, DESIGN, BASE, progress=False, context=context)
    kept = power_kept(lab, DESIGN, BASE)
    # the claims at every rate, at the whole budget and read at an earlier one (evaluations after it dropped)
    importance = pd.DataFrame({"layer": range(5), "change_pct": [500.0, 20.0, 5.0, 40.0, 300.0],
                               "class": ["input processor", "connective tissue", "connective tissue",
                                         "important (middle)", "output processor"]})
    short = truncated(kept[1e-3], 2)
    assert short["curves"]["step"].max() == 2 and (short["runs"]["budget"] == 2).all() and short["params"].steps == 2
    grid = power_sensitivity(kept, importance, budgets=(2,))
    assert set(grid["value"]) == {(1e-3, 2), (1e-3, 4), (3e-3, 2), (3e-3, 4)}
    assert not grid["claim"].str.contains(r"within \d+ steps").any()
    running = {lr: {**tables, "missing": 1} for lr, tables in kept.items()}
    assert power_sensitivity(running, importance).empty  # a rate not complete is left out
    assert power_sensitivity_sentence(power_sensitivity(running, importance), running).startswith("No learning rate")
    assert "still running" not in power_sensitivity_sentence(grid, kept)
    one_done = {**kept, 3e-3: {**kept[3e-3], "missing": 1}}
    said = power_sensitivity_sentence(power_sensitivity(one_done, importance, budgets=(2,)), one_done)
    assert said.endswith("Only lr 0.001 is complete (lr 0.003 still running): the claims are not yet tried across "
                         "the learning-rate grid.")
    # steps to a lower share, per rate and layer, and recovery against importance over the layers kept
    steps = power_steps(kept, n_boot=200)
    assert sorted(zip(steps["lr"], steps["layer"])) == [(1e-3, 1), (1e-3, 3), (3e-3, 1), (3e-3, 3)]
    assert (steps["seeds"] == DESIGN.seeds).all() and (steps["reached"] <= steps["seeds"]).all()
    assert (steps["median_steps"].isna() == (steps["reached"] == 0)).all()
    assert (steps["recovered"] == steps["steps_to_recover"].notna()).all()
    by_rate = rate_steps(steps, kept)  # each complete rate, read at the evaluations its runs have
    assert list(by_rate["lr"]) == [1e-3, 3e-3] and (by_rate["layers"] == 2).all()
    assert list(by_rate["evaluations"].iloc[0]) == sorted(int(s) for s in kept[1e-3]["curves"]["step"].unique() if s)
    assert rate_steps(steps, {**kept, 3e-3: {**kept[3e-3], "missing": 1}})["lr"].tolist() == [1e-3]
    assert rate_sentence(by_rate).startswith('Steps to recover by the criterion "50% undone vs sham"')
    rho = power_correlations(steps, importance, n_boot=200, min_layers=2)
    assert len(rho) == 4 * 2 and set(rho["lr"]) == {1e-3, 3e-3} and (rho["layers"] == 2).all()
    assert power_correlations(steps, importance, n_boot=200, min_layers=3).empty
    # the chapter protocol: the claims judged on the powered sweep at the chapter's rate once it is complete
    monkeypatch.setitem(REDUCED_DESIGNS, lab.specimen.name, DESIGN)
    base = BASE.resolved(lab)
    powered = powered_at_budget(lab, base, importance)
    assert powered["params"].lr == base.lr and (powered["runs"]["budget"] == DESIGN.steps).all()
    assert powered_at_budget(lab, replace(base, lr=2e-3), importance) is None  # no such rate in the design
    quick = {**truncated(kept[3e-3], 2), "importance": importance}  # a stand-in for the chapter's quick sweep
    quick_params = quick.pop("params")
    assert verdict_evidence(quick, quick_params)[0] is quick
    assert "judged on the quick sweep (2 layers: L1, L3; 2 noise seeds per layer" in evidence_sentence(quick,
                                                                                                     quick_params)
    both = {**quick, POWERED: powered}
    assert verdict_evidence(both, quick_params) == (powered, powered["params"])
    assert "judged on the powered sweep at lr 0.001 (2 layers, 2 noise seeds per layer" in evidence_sentence(
        both, quick_params)
    claims = chapter_claims(both, quick_params)
    on_powered = paper_claims(powered, powered["params"])
    assert [(c.claim, c.verdict) for c in claims] == [(c.claim, c.verdict) for c in on_powered]
    assert all(c.note.endswith("; powered sweep, 2 noise seeds per layer") for c in claims)
    # the quick sweep's own standing on each claim, a column beside the powered sweep's verdicts
    table = claims_table(claims, quick_beside(both, quick_params))
    standing_alone = {c.claim: c.standing for c in paper_claims(quick, quick_params)}
    assert list(table[QUICK_ALONE]) == [standing_alone.get(c.claim, "not stated") for c in claims]
    after = SURVIVES_COLUMN if SURVIVES_COLUMN in table else "Verdict"
    assert list(table.columns).index(QUICK_ALONE) == list(table.columns).index(after) + 1
    assert chapter_claims(quick, quick_params) == paper_claims(quick, quick_params)
    assert quick_beside(quick, quick_params) == {}
    # the findings state the numbers the verdicts rest on: the quick sweep's, then the powered sweep's, each marked
    assert chapter_findings(quick, quick_params) == findings(quick, quick_params)
    said = chapter_findings(both, quick_params, "tiny")
    on_quick = findings(quick, quick_params, "tiny")
    assert said[:len(on_quick)] == [f"Quick sweep: {s}" for s in on_quick]
    assert said[len(on_quick)].startswith("Powered sweep (the verdicts' evidence: lr 0.001, read at the paper's 4 "
                                          "steps): On tiny")
    assert all(s.startswith("Powered sweep: ") for s in said[len(on_quick) + 1:])
    assert not any("fixed-noise protocol" in s for s in said[len(on_quick):])  # left out of its design on purpose


def _steps(lr: float, pooled: list[float], budget: int = 400) -> pd.DataFrame:
    """A ``power_steps`` table at one rate: a layer's pooled steps, NaN where a seed did not get there."""
    return pd.DataFrame({"lr": lr, "layer": range(len(pooled)), "criterion": "50% undone vs sham",
                         "recovered": [not np.isnan(p) for p in pooled], "steps_to_recover": pooled,
                         "budget": budget})


def _complete(*lrs: float) -> dict:
    return {lr: {"missing": 0, "curves": pd.DataFrame({"step": [0, 10, 50, 100, 200, 300, 400]})} for lr in lrs}


def test_the_rate_sentence_says_how_far_the_rate_moves_the_median_layer():
    nan = np.nan
    slow, fast = _steps(1e-4, [300.0, 400.0, nan, nan, nan]), _steps(1e-3, [50.0, 50.0, 100.0, 200.0, nan])
    by_rate = rate_steps(pd.concat([slow, fast]), _complete(1e-4, 1e-3))
    assert np.isnan(by_rate["median_steps"].iloc[0]) and by_rate["median_steps"].iloc[1] == 100.0
    assert list(by_rate["reached"]) == [2, 4] and list(by_rate["fastest"]) == [300.0, 50.0]
    said = rate_sentence(by_rate)
    # the slow rate's median layer is past its budget: the fold is a lower bound
    assert "the median layer more than 400 steps" in said and "steps fall more than 4.0-fold" in said
    assert "at steps 10, 50, 100, 200, 300, 400" in said and "set by the optimiser as much as by the layer" in said
    assert "300-400 steps at lr 0.0001, 50-200 steps at lr 0.001" in said
    # a lower bound on the fold, under the spread between layers: which moves the steps more is not said
    spread = rate_sentence(rate_steps(pd.concat([slow, _steps(1e-3, [50.0, 300.0, 100.0, 100.0, nan])]),
                                      _complete(1e-4, 1e-3)))
    assert "steps fall more than 4.0-fold" in spread and "differ up to 6-fold" in spread
    assert "this budget cannot say" in spread and "layers differ more" not in spread
    barely = rate_sentence(rate_steps(pd.concat([slow, _steps(1e-3, [300.0, 300.0, 300.0, nan, nan])]),
                                      _complete(1e-4, 1e-3)))
    assert "how far the rate moves it is not measured" in barely and "less than two-fold" not in barely
    # both medians measured and close: no claim that the rate sets the steps
    both = _complete(1e-4, 1e-3)
    close = rate_sentence(rate_steps(pd.concat([_steps(1e-4, [100.0, 150.0, 300.0]),
                                                _steps(1e-3, [100.0, 100.0, 200.0])]), both))
    assert "steps fall 1.5-fold" in close and "less than two-fold" in close and "optimiser" not in close
    # the rate moves the median layer two-fold, the layers at one rate differ ten-fold: the layers are the larger part
    layers_apart = rate_sentence(rate_steps(pd.concat([_steps(1e-4, [30.0, 200.0, 300.0]),
                                                       _steps(1e-3, [10.0, 100.0, 100.0])]), both))
    assert "steps fall 2.0-fold" in layers_apart and "the layers differ more at one rate" in layers_apart
    # the fast rate leaves the median layer past its budget: no fold at all
    stuck = rate_sentence(rate_steps(pd.concat([slow, _steps(1e-3, [50.0, nan, nan])]), _complete(1e-4, 1e-3)))
    assert "does not make the median layer's steps a measured number" in stuck and "steps fall" not in stuck
    # a rate still running is left out; none complete, nothing said
    assert rate_steps(fast, {1e-3: {"missing": 2}}).empty and rate_sentence(rate_steps(fast, {})) == ""


def test_the_drift_sentence_says_where_the_sham_reads_as_much_as_the_layer():
    end = pd.DataFrame({"lr": [1e-4, 1e-4, 1e-3, 1e-3], "layer": [11, 29, 11, 29], "budget": 400,
                        "initial_excess_nll": [0.3, 0.3, 0.3, 0.3], "sham_final_move_nll": [-0.06, -0.01, 0.02, 0.24]})
    both = {1e-4: {"missing": 0}, 1e-3: {"missing": 0}}
    said = drift_sentence(end, both)
    assert "at lr 0.0001, -0.060 to -0.010 nats (at most 20% of the damage, L11)" in said
    assert "at lr 0.001, +0.020 to +0.240 nats (at most 80% of the damage, L29)" in said
    assert "(lr 0.001: L29)" in said and "raw share beside them" in said
    calm = drift_sentence(end[end["lr"] == 1e-4], both)
    assert "lr 0.001" not in calm and "stays under 50% of the damage" in calm
    running = drift_sentence(end, {1e-4: {"missing": 0}, 1e-3: {"missing": 3}})  # read from the shams kept so far
    assert "at lr 0.001 (the layers kept so far), +0.020 to +0.240" in running and "(lr 0.001: L29)" in running
    assert "at lr 0.0001, -0.060" in running  # a complete rate says nothing of the kind
    assert drift_sentence(end.iloc[:0], both) == ""


def _pairs(excess_at_200: dict[int, list[float]], sham_at_200: float = -0.03) -> pd.DataFrame:
    """A rate's curves: each layer's damaged runs (one per noise seed, 0.3 nats at step 0) and its sham."""
    rows = []
    for layer, ends in excess_at_200.items():
        rows += [{"layer": layer, "kind": "sham", "noise_seed": 0, "step": step, "excess_nll": e}
                 for step, e in ((0, 0.0), (200, sham_at_200))]
        rows += [{"layer": layer, "kind": "damaged", "noise_seed": seed, "step": step, "excess_nll": e}
                 for seed, end in enumerate(ends) for step, e in ((0, 0.3), (200, end))]
    return pd.DataFrame(rows)


def test_where_the_critical_layer_stands_among_the_layers_at_the_papers_budget():
    # L11 undoes 90% against the sham (0.3 -> 0.0 against a sham at -0.03); L1 about 50%; L29 about 93%
    fast = {11: [0.00, 0.00, 0.00], 1: [0.12, 0.11, 0.13], 29: [-0.01, -0.02, -0.005]}
    kept = {1e-4: {"missing": 0, "curves": _pairs(fast)}, 1e-3: {"missing": 5, "curves": _pairs(fast)}}
    place = critical_place(kept, 11, 200)
    assert list(place["lr"]) == [1e-4]  # a rate still running is left out
    row = place.iloc[0]
    assert row.undone == pytest.approx(0.9) and (row.others, row.behind, row.clearly_behind, row.clearly_ahead) == \
        (2, 1, 1, 0)
    said = critical_sentence(place, 11)
    assert "90% [90%, 90%] at lr 0.0001, ahead of 1 of the 2 other layers (1 clearly; 0 clearly ahead of it)" in said
    assert "nothing sets it apart as the slowest" in said
    slow = critical_place({1e-4: {"missing": 0, "curves": _pairs({11: [0.15, 0.16, 0.14], 1: [0.0, 0.01, 0.0],
                                                                  29: [0.02, 0.0, 0.01]})}}, 11, 200)
    assert slow.iloc[0].clearly_ahead == 2 and "among the slower layers" in critical_sentence(slow, 11)
    assert critical_sentence(critical_place(kept, 5, 200), 5) == ""  # the layer was not run


def test_a_steps_cell_says_how_many_seeds_got_there():
    row = pd.DataFrame({"median_steps": [100.0, np.nan], "reached": [2, 0], "seeds": [3, 3],
                        "budget": [400, 400]})
    assert [steps_cell(r) for r in row.itertuples()] == ["100 (2 of 3)", "> 400 (0 of 3)"]


@pytest.mark.integration
def test_a_resumed_unit_keeps_its_damage_and_a_held_unit_is_left_to_its_worker(tiny_blocks, monkeypatch):
    from anatomy_lib.core.locks import claimed
    from anatomy_lib.recovery import power

    tiny = tiny_specimen("llama", n_layers=5, seed=1)
    lab, context = _context(tiny, tiny_blocks)
    base = BASE.resolved(lab)
    design = PowerDesign(lrs=(2e-3, 4e-3), seeds=2, steps=4, eval_blocks=4, early_evals=(1,), eval_every=2)
    sweeps, stores = design.sweeps(base), [lab.checkpoints(s) for s in design.sweeps(base)]
    # another worker holds the first unit: this one runs the next, leaves the first alone
    with claimed(power._unit_lock(stores[0], 3, "damaged", 0)) as mine:
        assert mine
        run_power(lab, design, base, max_units=1, progress=False, context=context)
    first = [power._run_index(s, 3, "damaged", 0) for s in sweeps]
    second = [power._run_index(s, 3, "sham", 0) for s in sweeps]
    assert not any(store.path(i).is_file() for store, i in zip(stores, first))
    assert all(store.path(i).is_file() for store, i in zip(stores, second))
    # a unit kept at one rate only (a worker stopped part-way): resumed with the damage it had, no new search
    run_power(lab, design, base, max_units=1, progress=False, context=context)
    sigma = stores[0].load(first[0])[0]["sigma"]
    stores[1].path(first[1]).unlink()
    monkeypatch.setattr(power, "matched_sigma", lambda *a, **k: pytest.fail("the kept sigma is searched again"))
    run_power(lab, design, base, max_units=1, progress=False, context=context)
    assert stores[1].load(first[1])[0]["sigma"] == sigma


@pytest.mark.integration
def test_a_unit_held_by_a_worker_that_stops_is_run_by_the_one_left(tiny_blocks):
    """One surviving worker finishes the sweep: a unit held by another worker when this one passed it is waited
    for at the end of the pass and run here, since its worker let it go undone."""
    import threading

    from anatomy_lib.core.locks import claimed
    from anatomy_lib.recovery import power

    tiny = tiny_specimen("llama", n_layers=5, seed=2)
    lab, context = _context(tiny, tiny_blocks)
    base = BASE.resolved(lab)
    design = PowerDesign(lrs=(2e-3,), seeds=1, steps=2, eval_blocks=4, early_evals=(1,), eval_every=2)
    (sweep,) = design.sweeps(base)
    store = lab.checkpoints(sweep)
    other_worker = claimed(power._unit_lock(store, 3, "damaged", 0))
    assert other_worker.__enter__()
    threading.Timer(1.0, other_worker.__exit__, (None, None, None)).start()  # it stops without running it
    assert run_power(lab, design, base, progress=False, context=context)
    runs = power_kept(lab, design, base)[2e-3]["runs"]
    assert sorted(zip(runs["layer"], runs["kind"])) == [(1, "damaged"), (1, "sham"), (3, "damaged"), (3, "sham")]


def test_the_block_sentence_says_why_the_powered_sweep_adds_seeds_past_its_blocks():
    from anatomy_lib.recovery.power import block_power, block_power_sentence

    # two layers with two seeds each, far apart (sd ~0.14), against a narrow interval over blocks (se ~0.026)
    judged = pd.DataFrame({"protocol": "matched", "layer": [1, 1, 3, 3], "noise_seed": [0, 1, 0, 1],
                           "recovered_fraction": [0.45, 0.65, 0.50, 0.70],
                           "fraction_low": [0.40, 0.60, 0.45, 0.65], "fraction_high": [0.50, 0.70, 0.55, 0.75]})
    power = block_power(judged, blocks_then=8, blocks_now=16)
    assert power["se_now"] == pytest.approx(power["se_then"] / np.sqrt(2)) and power["seed_dof"] == 2
    said = block_power_sentence(power)
    assert said.startswith("Why 16 evaluation blocks: ") and "beyond 16 blocks the powered sweep adds seeds" in said
    alone = block_power_sentence(block_power(judged[judged["noise_seed"] == 0], 8, 16))
    assert "no layer has two noise seeds" in alone


def test_a_verdict_that_moves_with_the_rate_is_read_beside_its_measurement():
    by_rate = pd.DataFrame({
        "claim": ["L11 does not recover within the budget"] * 2 + ["recovery speed correlates with importance"] * 2,
        "parameter": "rate and budget", "value": [(1e-4, 200), (1e-3, 200)] * 2,
        "verdict": ["reproduced", "not reproduced", "inconclusive", "inconclusive"],
        "survives": ["not discriminating", "not held", "not held", "not held"],
        "standing": ["not discriminating", "not reproduced", "inconclusive", "inconclusive"],
        "default": [True, False, True, False],
        "ours": ["steps to recover per noise seed: > 200, > 200", "steps to recover per noise seed: 100, 200",
                 "+0.20", "+0.34"]})
    said = power_sensitivity_sentence(by_rate, {1e-4: {"missing": 0}, 1e-3: {"missing": 0}})
    assert "1 of 2 claims keep their standing" in said
    assert ("\"L11 does not recover within the budget\" at lr 0.001, 200 steps: steps to recover per noise seed: "
            "100, 200.") in said
    assert "against the intact model, as the paper would" in said and "+0.34" not in said  # only what moved
