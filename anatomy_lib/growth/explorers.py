"""Chapter 7's explorers: train arms live at the smoke size, or pick a stored run in the published page."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from ..core.widgets import STATIC_CLASS, figure_widget, linked_stacks, needs_kernel, redraw, run_busy
from .analysis import mean_curves
from .compute import text_data
from .figures import growth_curves_figure
from .params import ARMS, GrowthParams
from .trainer import train


def stored_growth_figure(tables: dict, arm: str, seed: int):
    """One stored run's validation curve beside the uniform arm's of the same seed, its growth events marked."""
    curves, events = tables["curves"], tables["events"]
    shown = curves[curves["arm"].isin([arm, "uniform"]) & (curves["seed"] == seed)]
    grown = events[(events["arm"] == arm) & (events["seed"] == seed)] if len(events) else events
    return growth_curves_figure(shown, mean_curves(shown), grown, specimen_name=f"stored runs, seed {seed}")


def growth_explorer(tables, params, arms=("uniform", "developmental")):
    """Pick an arm and a seed: its stored validation curve beside the uniform arm's (same seed). Press *train*:
    the chosen ``arms`` are trained live at the ``smoke`` size, with a progress bar, and drawn."""
    curves = tables["curves"]
    stored_arms = list(dict.fromkeys(curves["arm"]))
    pick = widgets.Dropdown(options=stored_arms, value=stored_arms[-1], description="arm")
    seed = widgets.Dropdown(options=sorted(curves["seed"].unique().tolist()), description="seed")
    live_arms = widgets.SelectMultiple(options=list(ARMS), value=tuple(arms), rows=6, description="train")
    button = widgets.Button(description="train (smoke size)", button_style="primary", icon="play")
    bar = widgets.IntProgress(value=0, min=0, max=1, description="idle")
    output = widgets.Output()

    def draw(_=None):
        redraw(output, lambda: stored_growth_figure(tables, pick.value, seed.value))

    def work():
        bar.value = 0
        small = GrowthParams.for_profile("smoke", arms=tuple(live_arms.value) or ("uniform",), seeds=1)
        _, data = text_data(small)
        bar.max, bar.description = len(small.arms), "training"
        fresh, events = [], []
        for name in small.arms:
            curve, records, _ = train(small.arm(name), small.config(), data, 0)
            fresh.append(curve)
            events.append(records)
            bar.value += 1
        live = pd.concat(fresh, ignore_index=True)
        events = pd.concat(events, ignore_index=True)
        redraw(output, lambda: growth_curves_figure(live, mean_curves(live), events,
                                                     specimen_name="trained just now (smoke size)"))
        bar.description = "done"

    for control in (pick, seed):
        control.observe(draw, names="value")
    button.on_click(lambda _: run_busy(button, bar, output, work))
    draw()
    controls = widgets.HBox([widgets.VBox([pick, seed]), widgets.VBox([live_arms, button, bar])])
    return needs_kernel(widgets.VBox([controls, output]))


def static_growth_explorer(tables: dict, arm: str = "developmental") -> widgets.VBox:
    """Pick an arm and a seed: its stored validation curve beside the uniform arm's of the same seed."""
    curves = tables["curves"]
    arms = list(dict.fromkeys(curves["arm"]))
    seeds = sorted(int(s) for s in curves["seed"].unique())
    pick = widgets.Dropdown(options=arms, value=arm if arm in arms else arms[-1], description="arm")
    seed = widgets.Dropdown(options=[str(s) for s in seeds], description="seed")

    def leaf(a: int, s: int):
        return figure_widget(stored_growth_figure(tables, arms[a], seeds[s]))

    return widgets.VBox([widgets.HBox([pick, seed]), linked_stacks([pick, seed], leaf)]).add_class(STATIC_CLASS)
