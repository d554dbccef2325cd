"""Kernel-free explorers: every choice of their controls has a precomputed answer in a Stack whose index is
linked (in the browser, by jslink) to the control; built here from the committed results."""
import json
from pathlib import Path

import ipywidgets as widgets
import pandas as pd

from anatomy_lib import growth as ch7
from anatomy_lib import importance, manipulation
from anatomy_lib import recovery as ch6

STORE = Path(__file__).resolve().parents[2] / "data" / "results"


def _tables(specimen: str, diagnostic: str, **params) -> dict[str, pd.DataFrame]:
    """The committed tables of one diagnostic whose request parameters include ``params``."""
    for manifest in sorted((STORE / specimen / diagnostic).glob("*.json")):
        meta = json.loads(manifest.read_text())
        if all(meta["request"].get("params", {}).get(k) == v for k, v in params.items()):
            return {name: pd.read_csv(manifest.with_name(f"{manifest.stem}.{name}.csv")) for name in meta["tables"]}
    raise LookupError(f"no committed {diagnostic} result with {params}")


def _leaf(explorer: widgets.VBox, *indices: int):
    stack = explorer.children[-1]
    for i in indices:
        assert isinstance(stack, widgets.Stack)
        stack = stack.children[i]
    return stack


SPECIMEN = "smollm2-135m-instruct-q4"


def test_importance_explorer_answers_every_layer_and_mode():
    from anatomy_lib.importance import MODES, classify

    tables = {}
    for mode in MODES:
        table = _tables(SPECIMEN, "importance", mode=mode)["layers"]
        table["class"] = classify(table, 30)
        tables[mode] = table
    said = {mode: _tables(SPECIMEN, "continuations", mode=mode)["layers"] for mode in MODES}
    explorer = importance.static_importance_explorer(tables, said, layer=11)
    how, where = explorer.children[0].children
    assert "anatomy-static" in explorer._dom_classes and where.value == "L11"
    top = explorer.children[-1]
    assert len(top.children) == len(MODES) and all(len(s.children) == 30 for s in top.children)
    assert top.selected_index == how.index and top.children[0].selected_index == where.index
    row = tables["skip"].set_index("layer").loc[29]
    text = _leaf(explorer, MODES.index("skip"), 29).value
    assert f"{row.change_pct:+,.1f}%" in text and "L29" in text and "ablated model" in text


def test_recovery_and_growth_explorers_hold_one_figure_per_choice():
    from anatomy_lib.recovery.sweep import merged

    recovery = merged(_tables(SPECIMEN, "recovery", damage="matched"), _tables(SPECIMEN, "recovery", damage="sigma"))
    explorer = ch6.static_recovery_explorer(recovery, {}, SPECIMEN, layer=11)
    layers = sorted(recovery["curves"]["layer"].unique())
    protocols = explorer.children[0].children[1].options
    assert list(protocols) == ["matched", "fixed sigma 0.25", "fixed sigma 1"]
    top = explorer.children[-1]
    assert len(top.children) == len(layers) and all(len(s.children) == len(protocols) for s in top.children)
    assert all(isinstance(c, widgets.Image) and len(c.value) > 1000 for s in top.children for c in s.children)
    growth = _tables("growth-sotu", "growth")
    explorer = ch7.static_growth_explorer(growth)
    arms, seeds = growth["curves"]["arm"].nunique(), growth["curves"]["seed"].nunique()
    assert [len(s.children) for s in explorer.children[-1].children] == [seeds] * arms
    weight = sum(len(c.value) for s in explorer.children[-1].children for c in s.children)
    assert weight < 2_000_000  # the page must stay under 3 MB


def test_manipulation_explorer_reads_the_stored_grid():
    tables = _tables(SPECIMEN, "manipulate")
    layers = json.loads(next((STORE / SPECIMEN / "manipulate").glob("*.json")).read_text())["request"]["params"][
        "compress_layers"]
    explorer = manipulation.static_manipulation_explorer(tables, layers, alpha=0.9)
    pick, knob = explorer.children[0], explorer.children[1]
    assert pick.value.startswith("scale (writers) on the") and "connective layers" in pick.value
    assert knob.value == "0.9"
    text = _leaf(explorer, pick.index, knob.index).value
    row = tables["compression"].query("label == 'scale(alpha=0.9, writers)'").iloc[0]
    assert f"{row.change_pct:+,.1f}%" in text and "facts answered" in text
    # every choice answers at every alpha: a pair stored at only some alphas (scale over all tensors of the
    # connective layers: alpha 0.9 alone) is not offered
    answers = [_leaf(explorer, p, a).value for p in range(len(pick.options)) for a in range(len(knob.options))]
    assert not any("not in the stored grid" in a for a in answers)
    assert not any(o.startswith("scale (all)") and "connective" in o for o in pick.options)


def test_a_specimen_without_connective_tissue_shows_its_single_layers_only():
    """Gemma has no connective tissue: its explorer offers the sweep layers, each answered from the grid."""
    tables = _tables("gemma3-270m-q4", "manipulate")
    explorer = manipulation.static_manipulation_explorer(tables, (), alpha=0.9)
    pick = explorer.children[0]
    assert list(pick.options) == ["scale (writers) on L6", "scale (all) on L6", "scale (writers) on L8",
                                  "scale (all) on L8"]
    text = _leaf(explorer, list(pick.options).index("scale (writers) on L6"), explorer.children[1].index).value
    row = tables["sweeps"].query("knob == 'alpha' and scope == 'writers' and layers == 6 and value == 0.9").iloc[0]
    assert f"{row.change_pct:+,.1f}%" in text


def test_a_specimen_picker_switches_whole_explorers_without_a_kernel():
    from anatomy_lib.core.widgets import STATIC_CLASS, specimen_choice

    one, two = (widgets.VBox([widgets.HTML(text)]).add_class(STATIC_CLASS) for text in ("a", "b"))
    assert specimen_choice({"only": one}) is one
    picked = specimen_choice({"smollm2": one, "gemma": two})
    pick, stack = picked.children
    assert list(pick.options) == ["smollm2", "gemma"] and list(stack.children) == [one, two]
    assert STATIC_CLASS in picked._dom_classes and STATIC_CLASS not in one._dom_classes
    links = [w for w in widgets.Widget.widgets.values() if isinstance(w, widgets.widgets.widget_link.Link)
             and w.source == (pick, "index") and w.target == (stack, "selected_index")]
    assert links, "the picker is tied to the stack in the browser"


def test_a_specimen_without_stored_results_is_left_out_of_the_picker(tiny_blocks):
    """``by_specimen`` offers a second specimen only where its results are stored: a read-only lab that lacks
    them raises NotStored inside the builder and is left out, one that has them gets its own explorer."""
    from anatomy_lib.core.specimens import tiny_specimen
    from anatomy_lib.core.widgets import STATIC_CLASS, by_specimen
    from tests.conftest import tiny_lab

    own = widgets.VBox([widgets.HTML("own")]).add_class(STATIC_CLASS)
    stored, missing = (tiny_lab(tiny_specimen("llama", n_layers=3, seed=s), tiny_blocks) for s in (7, 8))
    importance.compute(stored, progress=False)  # stored for this one only
    build = lambda lab: widgets.VBox([widgets.HTML(str(len(importance.compute(lab, progress=False))))])
    assert by_specimen("own", own, [missing.read_only()], build) is own
    picked = by_specimen("own", own, [stored.read_only(), missing.read_only()], build)
    assert list(picked.children[0].options) == ["own", stored.specimen.name]


def test_chapters_1_3_and_4_answer_without_a_kernel():
    """Chapters 1, 3 and 4's published explorers: a leaf per choice of every control, each saying the numbers it
    shows, computed from the same functions as the chapter (a tiny model stands in for the specimen)."""
    import torch

    from anatomy_lib import predictability, specimen, structure
    from anatomy_lib.core.specimens import tiny_specimen
    from anatomy_lib.specimen import effective_rank, singular_values
    from anatomy_lib.structure import delta_correlation_matrix

    spec = tiny_specimen("llama", n_layers=4, seed=3)
    layers = specimen.static_layer_explorer(spec, layer=2)
    assert "anatomy-static" in layers._dom_classes and layers.children[0].value == "L2"
    assert len(layers.children[-1].children) == 4
    rank = effective_rank(singular_values(spec.adapter, 3)).set_index("tensor").loc["q", "effective_rank"]
    text = _leaf(layers, 3).children[0].value
    assert "<b>L3</b>" in text and f"{rank:,.0f} of" in text
    assert isinstance(_leaf(layers, 3).children[1], widgets.Image)

    fits = _tables(SPECIMEN, "predictability")["fits"]
    explorer = predictability.static_prediction_explorer(fits, SPECIMEN, "gate", 15)
    pick, where = explorer.children[0].children
    assert pick.value == "gate" and where.value == "L15"
    components = list(dict.fromkeys(fits["component"]))
    row = fits.query("component == 'down' and layer == 20 and model == 'layer-shuffled' and predictor == 'ridge' "
                     "and fit == 'out-of-sample'").iloc[0]
    layers_ = sorted(fits["layer"].unique())
    text = _leaf(explorer, components.index("down"), layers_.index(20)).children[0].value
    assert "down, L20" in text and f"{row.r2:+.2f}" in text

    models = {"specimen": (spec, None), "layer-shuffled": (spec, [3, 1, 0, 2])}
    maps = structure.static_delta_map_explorer(models, "up")
    names = list(spec.adapter.matrix_names)
    matrix = delta_correlation_matrix(spec.adapter.stacked("up", [3, 1, 0, 2]))
    text = _leaf(maps, names.index("up"), 1).children[0].value
    assert "up, layer-shuffled" in text and f"{torch.tensor(matrix).diagonal(1).mean().item():+.3f}" in text


def test_the_layer_explorer_at_smoke_precomputes_the_ends_and_the_chosen_layer():
    from anatomy_lib import specimen
    from anatomy_lib.core.specimens import tiny_specimen

    spec = tiny_specimen("llama", n_layers=6, seed=3)
    layers = specimen.static_layer_explorer(spec, layer=2, profile="smoke")
    assert list(layers.children[0].options) == ["L0", "L2", "L5"] and layers.children[0].value == "L2"
    assert "<b>L5</b>" in _leaf(layers, 2).children[0].value
