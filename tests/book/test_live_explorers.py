"""Live explorers (a kernel behind them) never fail silently: every knob's range comes from the model, each
button is pressed with every knob at both ends of its range, and whatever happens ends as a result or as an
error message in the output area, never as a stale output."""
import dataclasses

import ipywidgets as widgets
import pandas as pd
import pytest

from anatomy_lib import importance, manipulation, predictability, recovery, specimen
from anatomy_lib.specimen import explorers as specimen_explorers


@pytest.fixture(scope="module")
def lab(real_specimen):
    from anatomy_lib.core.lab import open_lab

    lab = open_lab(real_specimen, "smoke", progress=False)
    lab = dataclasses.replace(lab, blocks=lab.blocks.subset(2))
    return lab


def _ends(control):
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider)):
        return [control.min, control.max]
    if isinstance(control, (widgets.Dropdown, widgets.ToggleButtons)):
        return [control.options[0], control.options[-1]]
    return []


def _shown(output) -> str:
    return str(output.outputs)


def test_manipulation_rank_stops_at_the_narrowest_matrix(lab):
    box = manipulation.manipulation_explorer(lab, (14,), "lowrank_mix")
    rank = next(c for c in box.children[0].children[1].children if getattr(c, "description", "") == "rank")
    narrowest = min(min(lab.adapter.tensor(0, n).shape) for n in lab.adapter.matrix_names)
    assert rank.max == narrowest == 192  # k and v: 3 key/value heads of 64


def test_manipulation_explorer_at_the_ends_of_every_range(lab):
    box = manipulation.manipulation_explorer(lab, (0,), "scale", 0.9)
    pick, knobs = box.children[0].children
    output = box.children[1]
    button = knobs.children[-1]
    button.click()  # the defaults must give a result, not an error
    assert "change" in _shown(output) and "error:" not in _shown(output)
    outcomes = []
    for layers in ((0,), (lab.adapter.n_layers - 1,)):
        pick.value = layers
        for control in knobs.children[:-1]:
            for value in _ends(control):
                before = control.value
                control.value = value
                button.click()
                shown = _shown(output)
                assert ("change" in shown or "error:" in shown) and not button.disabled
                assert button.description == "apply"
                outcomes.append("error:" not in shown)
                control.value = before
    assert sum(outcomes) >= len(outcomes) / 2, f"only {sum(outcomes)} of {len(outcomes)} presses gave a result"


def test_ablation_explorer_passes_the_chapter_tensors_and_reports_errors(lab, monkeypatch):
    box = importance.ablation_explorer(lab, (0,), "neighbor_mean", tensors="matrices")
    pick, controls = box.children[0].children
    how, button = controls.children
    output = box.children[1]
    for layer in (0, lab.adapter.n_layers - 1):
        for mode in how.options:
            pick.value, how.value = (layer,), mode
            button.click()
            assert f"{mode} ablation" in _shown(output)
    def broken(*args, **kwargs):
        raise RuntimeError("the engine is unavailable")

    monkeypatch.setattr(type(lab), "measure", broken)  # a Lab is frozen: patch its class for this test
    button.click()
    assert "error: the engine is unavailable" in _shown(output) and not button.disabled


def test_figure_explorers_show_errors_instead_of_stale_figures(lab, monkeypatch):
    from anatomy_lib.predictability import PredictabilityParams

    box = predictability.prediction_explorer(lab.specimen, PredictabilityParams(proj_dim=8, seed=3), "gate", 15)
    pick, slider = box.children[0].children
    output = box.children[1]
    for layer in (slider.min, slider.max):
        slider.value = layer
        assert "Figure" in _shown(output) and "error" not in _shown(output)
    box = specimen.layer_explorer(lab.specimen, 0)
    slider, output = box.children
    slider.value = slider.max
    assert "Figure" in _shown(output)
    monkeypatch.setattr(specimen_explorers, "singular_values",
                        lambda *a, **k: (_ for _ in ()).throw(ValueError("boom")))
    slider.value = slider.min
    assert "error: boom" in _shown(output)


def test_recovery_explorer_at_the_ends_of_its_ranges(lab):
    from anatomy_lib.recovery import RecoveryParams

    params = RecoveryParams.for_profile("smoke", layers=(11,), sham_layers=(), repeat_layers=())
    tables = {"curves": pd.DataFrame(columns=["layer", "kind", "noise_seed", "step", "excess_nll"]),
              "runs": pd.DataFrame({"tolerance_nll": [0.05]})}
    box = recovery.recovery_explorer(lab, params, tables, layer=11)
    left, right = box.children[0].children
    pick, mode, amount = left.children
    lr, steps, button, bar = right.children
    output = box.children[1]
    assert "no stored run for layer 11" in _shown(output)
    button.click()  # the defaults must train and draw, not fail
    assert bar.description.startswith("done") and "Figure" in _shown(output) and "error:" not in _shown(output)
    outcomes = []
    for control, value in ((mode, "sigma"), (amount, amount.min), (lr, lr.max), (steps, steps.min),
                           (pick, pick.options[-1]), (mode, "target nats"), (amount, amount.max)):
        control.value = value
        button.click()
        assert not button.disabled and (bar.description == "failed" or bar.description.startswith("done"))
        assert "Figure" in _shown(output) or "error:" in _shown(output)
        outcomes.append(bar.description.startswith("done"))
    assert sum(outcomes) >= len(outcomes) / 2, f"only {sum(outcomes)} of {len(outcomes)} presses trained"
