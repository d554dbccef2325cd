"""Why is a critical layer critical? The massive activation it writes, tested causally.

``activations.py`` describes massive activations; this module asks whether they *explain* a layer's importance.

- ``onset_by_growth``: where the massive activation is born. The massive feature is the one holding the largest
  entry of any layer's output; its site in each block is the position where that entry sits. The birth layer
  is the layer with the largest jump of the feature there (log10 of its magnitude leaving over entering, the
  mean over blocks, with a bootstrap interval over blocks), not the first layer whose output crosses a threshold
  (``activations.appearance_layer``): a single entry just past the threshold at an early layer is not the birth.
- ``massive_sites``: the entries of the birth layer's output that are massive (features x positions, per block).
- ``restore_massive`` and ``remove_massive_write``: two stream edits through ``WeightSurgery.override_output``,
  so surgery removes them like any other edit. The first hands on the intact model's values at the sites (read
  from the prefix cache: the edit runs at the layer itself, so what enters it is the intact stream, and each
  block is found in the cache by that stream); the second hands on, at the sites, what entered the layer,
  removing only the layer's write there.
- ``causal_test``: the birth layer ablated (each operator) with and without the restore, the intact layer with
  its massive write removed, and the same at a control layer of similar importance that writes no massive
  value: the share of the damage the restore undoes and the share the removal reproduces, with intervals.

Damage is measured in mean NLL (log perplexity): changes here span orders of magnitude, and a share of a
log-perplexity change is the share of the perplexity ratio's exponent.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from ..core.bootstrap import mean_interval, resample_indices, statistic_interval
from ..core.checks import one_of, positive_number
from ..core.lab import NotStored
from ..core.params import DiagnosticParams
from .compute import MODES, ImportanceParams, ablation, importance

CAUSAL_OPERATORS = ("neighbor_mean", "skip")
INTERVENTIONS = ("ablate", "ablate + restore", "remove write")


@dataclass(frozen=True)
class MassiveParams(DiagnosticParams):
    """The causal test of the massive activation: what counts as massive, the ablations tested, and how a
    control layer is chosen."""

    DIAGNOSTIC = "massive_causal"
    VERSION = 1

    ratio: float = field(default=1000.0, metadata={"help": "massive: |activation| >= ratio x the stream's median"})
    floor: float = field(default=100.0, metadata={"help": "massive: and |activation| >= floor"})
    operators: tuple[str, ...] = field(default=CAUSAL_OPERATORS, metadata={
        "choices": MODES, "help": "weight ablations of the birth and control layers"})
    control_growth: float = field(default=0.3, metadata={
        "help": "a control layer changes the massive entries by at most this, in log10 (a factor of 2)"})
    seed: int = field(default=0, metadata={"help": "seed of the bootstrap intervals"})

    def __post_init__(self):
        positive_number(self.ratio, "ratio")
        positive_number(self.floor, "floor")
        positive_number(self.control_growth, "control_growth")
        if not self.operators:
            raise ValueError(f"choose at least one operator of {list(MODES)}")
        for operator in self.operators:
            one_of(operator, MODES, "ablation mode")
        object.__setattr__(self, "operators", tuple(self.operators))


def _threshold(stream: torch.Tensor, params: MassiveParams) -> float:
    return max(params.floor, params.ratio * float(stream.float().abs().reshape(-1).median()))


def onset_by_growth(engine, params: MassiveParams = MassiveParams(), n_boot: int = 2000) -> dict[str, pd.DataFrame]:
    """The massive feature's magnitude entering and leaving every layer at its site in each block, and the layer
    where it is born (the largest mean jump). Tables: ``onset`` (one row per layer) and ``summary`` (one row)."""
    n_layers = engine.adapter.n_layers
    leaving = [engine.stream(layer + 1) for layer in range(n_layers)]
    peaks = [float(s.float().abs().max()) for s in leaving]
    peak_layer = int(np.argmax(peaks))
    peak_stream = leaving[peak_layer].float().abs()
    feature = int(peak_stream.amax(dim=(0, 1)).argmax())
    site = peak_stream[..., feature].argmax(dim=1)  # (blocks,): the position of the feature's largest entry
    rows = torch.arange(len(site))
    magnitude = torch.stack([engine.stream(layer).float()[rows, site, feature].abs()
                             for layer in range(n_layers + 1)]).double().numpy()  # (n_layers + 1, blocks)
    growth = np.log10(np.maximum(magnitude[1:], 1e-12) / np.maximum(magnitude[:-1], 1e-12))  # (layers, blocks)
    records = []
    for layer in range(n_layers):
        mean, low, high = mean_interval(growth[layer], n_boot, params.seed)
        records.append({"layer": layer, "feature": feature, "growth": mean, "ci_low": low, "ci_high": high,
                        "entering": float(np.median(magnitude[layer])),
                        "leaving": float(np.median(magnitude[layer + 1]))})
    onset = pd.DataFrame(records)
    birth = int(onset["growth"].idxmax())
    draws = growth[:, resample_indices(growth.shape[1], n_boot, params.seed)].mean(axis=2)  # (layers, n_boot)
    positions = site.numpy()
    summary = pd.DataFrame([{
        "feature": feature, "birth_layer": birth, "peak_layer": peak_layer, "peak_abs": peaks[peak_layer],
        "birth_growth": onset.loc[birth, "growth"], "birth_ci_low": onset.loc[birth, "ci_low"],
        "birth_ci_high": onset.loc[birth, "ci_high"],
        "birth_share": float(np.mean(draws.argmax(axis=0) == birth)),  # resamples of blocks electing the birth
        "blocks_electing": int(np.sum(growth.argmax(axis=0) == birth)), "blocks": growth.shape[1],
        "first_position_share": float(np.mean(positions == 0)),
        "runner_up": int(onset["growth"].drop(index=birth).idxmax()),
        "runner_up_growth": float(onset["growth"].drop(index=birth).max())}])
    return {"onset": onset, "summary": summary}


@dataclass(frozen=True)
class MassiveSites:
    """The massive entries of one layer's output in the intact model: ``features`` (the hidden features that
    hold any), and ``mask`` (blocks, positions, len(features)), True where the entry is massive."""

    layer: int
    features: tuple[int, ...]
    mask: torch.Tensor

    @property
    def entries(self) -> int:
        return int(self.mask.sum())


def massive_sites(engine, layer: int, params: MassiveParams = MassiveParams()) -> MassiveSites:
    """The entries of the stream leaving ``layer`` that are massive (at least ``ratio`` times that stream's
    median magnitude and ``floor``)."""
    stream = engine.stream(engine.adapter.check_layer(layer) + 1).float().abs()
    massive = stream >= _threshold(stream, params)
    features = tuple(torch.nonzero(massive.any(dim=(0, 1))).flatten().tolist())
    return MassiveSites(layer, features, massive[..., list(features)])


def _cached_rows(engine, layer: int, entering: torch.Tensor) -> torch.Tensor:
    """The evaluation blocks whose intact stream entering ``layer`` is ``entering`` (batch, T, hidden): a stream
    edit at a layer sees that layer's intact input, so every batch row is one cached block."""
    cached = engine.stream(layer).to(entering.device, torch.float32)
    if entering.shape[1:] != cached.shape[1:]:
        raise ValueError("the massive-activation edits act on the lab's evaluation blocks only (not on generation)")
    flat = entering.float().reshape(len(entering), -1)
    distance = torch.cdist(flat, cached.reshape(len(cached), -1))
    rows = distance.argmin(dim=1)
    scale = cached.reshape(len(cached), -1).norm(dim=1)[rows]
    if bool((distance.gather(1, rows[:, None]).squeeze(1) > 1e-3 * scale).any()):
        raise RuntimeError(f"the stream entering L{layer} is not the intact model's: restore_massive must be "
                           "the edit's only change before this layer")
    return rows.cpu()


def restore_massive(engine, sites: MassiveSites, layer: int | None = None):
    """The stream edit that hands on, at ``sites``, the intact model's values of the stream leaving ``layer``
    (default: the sites' own layer), whatever the (ablated) layer computed. For ``Lab.measure``; combine it
    with an ablation of the same layer."""
    layer = sites.layer if layer is None else layer
    intact = engine.stream(layer + 1)
    features = torch.tensor(sites.features)

    def transform(entering, leaving):
        rows = _cached_rows(engine, layer, entering)
        mask = sites.mask[rows].to(leaving.device)
        new = leaving.clone()
        chosen = new[..., features]
        chosen[mask] = intact[rows][..., features].to(leaving.device, leaving.dtype)[mask]
        new[..., features] = chosen
        return new

    def edit(editor):
        editor.override_output(layer, transform)

    return edit


def remove_massive_write(engine, sites: MassiveSites, layer: int | None = None):
    """The stream edit that leaves ``layer`` intact but hands on, at ``sites``, what entered it: the layer's
    write to the massive entries, and only that, is removed."""
    layer = sites.layer if layer is None else layer
    features = torch.tensor(sites.features)

    def transform(entering, leaving):
        rows = _cached_rows(engine, layer, entering)
        mask = sites.mask[rows].to(leaving.device)
        new = leaving.clone()
        chosen = new[..., features]
        chosen[mask] = entering[..., features].to(leaving.dtype)[mask]
        new[..., features] = chosen
        return new

    def edit(editor):
        editor.override_output(layer, transform)

    return edit


def combined(*edits):
    """One edit applying several in order (an ablation and a restore of the same layer)."""
    def edit(editor):
        for each in edits:
            each(editor)

    return edit


def control_layer(onset: pd.DataFrame, importance_table: pd.DataFrame, birth: int, max_growth: float) -> int | None:
    """The layer of importance closest to the birth layer's (in log perplexity) among those whose write changes
    the massive feature by less than ``max_growth`` (log10) at its sites; None if no layer qualifies."""
    change = importance_table.set_index("layer")["change_pct"]
    quiet = onset[(onset["growth"].abs() < max_growth) & (onset["layer"] != birth)]["layer"]
    if not len(quiet):
        return None
    target = np.log1p(change[birth] / 100)
    distance = {int(l): abs(np.log1p(change[l] / 100) - target) for l in quiet}
    return min(distance, key=distance.get)


def _share(base, reference, other, mode: str, n_boot: int, seed: int):
    """(share, low, high): the share of ``reference``'s damage (mean NLL over the intact model's) that ``other``
    undoes (mode 'undone': 1 - other/reference) or reproduces (mode 'reproduced': other/reference), with a
    paired bootstrap over blocks."""
    d_ref, d_other = np.asarray(reference) - base, np.asarray(other) - base

    def statistic(i):
        ref = d_ref[i].mean()
        if not np.isfinite(ref) or abs(ref) < 1e-12:
            return np.nan
        ratio = d_other[i].mean() / ref
        return 1 - ratio if mode == "undone" else ratio

    return statistic_interval(len(base), statistic, n_boot, seed)


def causal_test(lab, params: MassiveParams = MassiveParams()) -> dict[str, pd.DataFrame]:
    """The causal tables of one lab's specimen: ``onset``, ``summary`` (with the control layer and the sites),
    and ``causal`` (one row per layer role, operator and intervention; shares against that layer and operator's
    plain ablation). The control is chosen on chapter 2's neighbour-mean map of the same lab (from the store)."""
    engine, n_boot = lab.engine, lab.profile.n_boot
    tables = onset_by_growth(engine, params, n_boot)
    birth = int(tables["summary"].iloc[0]["birth_layer"])
    sites = massive_sites(engine, birth, params)
    neighbour_mean = importance(lab, ImportanceParams("neighbor_mean", seed=params.seed), progress=lab.progress)
    control = control_layer(tables["onset"], neighbour_mean, birth, params.control_growth)
    base = engine.baseline.block_nll
    roles = [(role, layer) for role, layer in (("birth", birth), ("control", control)) if layer is not None]
    bar = tqdm(total=len(roles) * (1 + 2 * len(params.operators)), desc="massive activation: causal test",
               disable=not lab.progress)
    rows = []
    for role, layer in roles:
        removed = lab.measure(remove_massive_write(engine, sites, layer), seed=params.seed)
        bar.update()
        for operator in params.operators:
            ablated = lab.measure(ablation([layer], operator, engine=engine), seed=params.seed)
            restored = lab.measure(combined(ablation([layer], operator, engine=engine),
                                            restore_massive(engine, sites, layer)), seed=params.seed)
            bar.update(2)
            for intervention, measured, mode in (("ablate", ablated, None), ("ablate + restore", restored, "undone"),
                                                 ("remove write", removed, "reproduced")):
                share = _share(base, ablated.block_nll, measured.block_nll, mode, n_boot, params.seed) if mode \
                    else (np.nan, np.nan, np.nan)
                rows.append({"role": role, "layer": layer, "operator": operator, "intervention": intervention,
                             **measured.row(), "nll_change": float(np.mean(measured.block_nll - base)),
                             "share": share[0], "share_low": share[1], "share_high": share[2]})
    bar.close()
    tables["summary"] = tables["summary"].assign(
        control_layer=control if control is not None else -1, sites_features=" ".join(map(str, sites.features)),
        sites_entries=sites.entries, sites_first_position_share=float(sites.mask[:, 0].sum()) / max(sites.entries, 1))
    tables["causal"] = pd.DataFrame(rows)
    return tables


def massive_causal(lab, params: MassiveParams = MassiveParams(), recompute: bool = False) -> dict[str, pd.DataFrame]:
    """``causal_test`` of a lab's specimen, through the results store."""
    return lab.stored(params, lambda: causal_test(lab, params), recompute)


EXPLAINS = 0.5  # the share of the damage the restore must undo, and the removal reproduce, by its whole interval


def causal_verdict(causal: pd.DataFrame, role: str = "birth", operator: str = "neighbor_mean") -> str:
    """Whether the massive activation explains a layer's damage under one operator, by a stated rule on the
    intervals: "explains" when the restore undoes and the removal reproduces at least ``EXPLAINS`` of it (both
    whole intervals), "does not explain" when both intervals lie below it, "partly explains" when one of the two
    holds by its whole interval and the other does not, "inconclusive" otherwise (an interval across the line)."""
    rows = causal[(causal["role"] == role) & (causal["operator"] == operator)].set_index("intervention")
    if not {"ablate + restore", "remove write"} <= set(rows.index):
        return "not run"
    undone, reproduced = rows.loc["ablate + restore"], rows.loc["remove write"]
    above = [r.share_low >= EXPLAINS for r in (undone, reproduced)]
    below = [r.share_high < EXPLAINS for r in (undone, reproduced)]
    if all(above):
        return "explains"
    if all(below):
        return "does not explain"
    if any(above) and any(below):
        return "partly explains"
    return "inconclusive"


def massive_panel(labs, params: MassiveParams = MassiveParams()) -> dict[str, dict[str, pd.DataFrame]]:
    """``massive_causal`` of every lab ({specimen: tables}); a read-only lab without it stored is left out."""
    panel = {}
    for lab in labs:
        try:
            panel[lab.specimen.name] = massive_causal(lab, params)
        except NotStored:
            continue
    return panel
