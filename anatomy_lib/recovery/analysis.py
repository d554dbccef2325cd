"""What recovery runs say: recovery judged against the sham of the same layer (or the baseline) with paired
intervals over blocks, per-layer summaries, the verdicts under every criterion, rank correlations with
importance, the sham's drift."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.bootstrap import resample_indices, statistic_interval
from ..core.checks import one_of
from ..core.stats import partial_spearman, spearman


def per_layer(runs: pd.DataFrame) -> pd.DataFrame:
    """Damaged runs pooled over noise seeds, one row per layer. A layer counts as recovered only if every seed
    recovered; its steps to recover are then the slowest seed's."""
    damaged = runs[runs["kind"] == "damaged"]
    rows = []
    for layer, group in damaged.groupby("layer", sort=True):
        everyone = bool(group["recovered"].all())
        rows.append({"layer": int(layer), "seeds": len(group), "sigma": group["sigma"].mean(),
                     "initial_excess_nll": group["initial_excess_nll"].mean(),
                     "recovered": everyone, "recovered_seeds": int(group["recovered"].sum()),
                     "steps_to_recover": group["steps_to_recover"].max() if everyone else np.nan,
                     "budget": int(group["budget"].iloc[0]),
                     "recovered_fraction": group["recovered_fraction"].mean(),
                     "area_excess_nll": group["area_excess_nll"].mean(),
                     "normalized_area": group["normalized_area"].mean()})
    return pd.DataFrame(rows)


def steps_label(row) -> str:
    """'12' or '> 200': a run that did not recover is never given a number of steps."""
    return f"{row.steps_to_recover:.0f}" if row.recovered else f"> {row.budget}"


MIN_LAYERS_FOR_INTERVAL = 8  # a bootstrap over fewer layers (with ties) gives intervals narrower than the data carry


def rank_correlations(layers: pd.DataFrame, importance_table: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                      level: float = 0.95) -> pd.DataFrame:
    """Spearman correlation of recovery (steps to recover, area) with importance (chapter 2's change %), and the
    partial correlation given the initial damage, each with a percentile bootstrap interval over layers.

    A layer that did not recover ranks above every layer that did (as "more than the budget"), tied with the
    others that did not: a rank, never an imputed number of steps.
    """
    merged = layers.merge(importance_table[["layer", "change_pct"]], on="layer")
    steps = merged["steps_to_recover"].fillna(merged["budget"] + 1).to_numpy()
    importance = merged["change_pct"].to_numpy()
    damage = merged["initial_excess_nll"].to_numpy()
    rows = []
    for name, values in (("steps to recover", steps), ("area under excess NLL", merged["area_excess_nll"].to_numpy())):
        for kind, statistic in (("Spearman", lambda i: spearman(values[i], importance[i])),
                                ("partial Spearman, given initial damage",
                                 lambda i: partial_spearman(values[i], importance[i], damage[i]))):
            rho, low, high = statistic_interval(len(merged), statistic, n_boot, seed, level, rows=True)
            rows.append({"recovery measure": name, "correlation": kind, "rho": rho, "ci_low": low,
                         "ci_high": high, "layers": len(merged)})
    return pd.DataFrame(rows)


def sham_drift(runs: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """For each sham run: the largest and the final move of the NLL caused by fine-tuning alone, against the
    tolerance that recovery is judged with."""
    rows = []
    for run in runs[runs["kind"] == "sham"].itertuples():
        curve = curves[(curves["layer"] == run.layer) & (curves["kind"] == "sham")]
        rows.append({"layer": run.layer, "largest_move_nll": float(curve["excess_nll"].abs().max()),
                     "final_move_nll": float(curve["excess_nll"].iloc[-1]), "tolerance_nll": run.tolerance_nll,
                     "within_tolerance": bool(curve["excess_nll"].abs().max() <= run.tolerance_nll)})
    return pd.DataFrame(rows)


# ---- recovery judged against a reference, with paired intervals over blocks ------------------------------------
REFERENCES = ("sham", "baseline")


@dataclass(frozen=True)
class Criterion:
    """When a damaged run counts as recovered. ``reference``: the sham of the same layer at the same step
    (fine-tuning's own drift taken out) or the intact baseline (raw). ``share``: recovered once the paired
    bootstrap interval's lower end of the share of the initial damage undone reaches it; ``share=None`` is the
    paired-interval rule: recovered once the interval of the remaining excess over the reference reaches zero."""

    reference: str = "sham"
    share: float | None = 0.9

    def __post_init__(self):
        one_of(self.reference, REFERENCES, "recovery reference")
        if self.share is not None and not 0 < self.share <= 1:
            raise ValueError(f"the share of the damage undone lies in (0, 1], got {self.share}")

    @property
    def label(self) -> str:
        rule = f"{self.share:.0%} undone" if self.share is not None else "indistinguishable (paired interval)"
        return f"{rule}, {'sham-corrected' if self.reference == 'sham' else 'raw'}"

    @property
    def short_label(self) -> str:
        """The label in few words, for a table (the rule, then what it is measured against)."""
        rule = f"{self.share:.0%} undone" if self.share is not None else "paired interval"
        return f"{rule} vs {'sham' if self.reference == 'sham' else 'intact'}"


MAIN_CRITERION = Criterion()
SENSITIVITY = tuple(Criterion(reference, share) for reference in REFERENCES for share in (0.5, 0.75, 0.9, None))


def at_sigma(table: pd.DataFrame, sigma: float | None) -> pd.Series:
    """Rows of ``table`` at noise level ``sigma`` (every row for None: a matched sweep picks its sigma per run).
    Sigmas go through CSV and back, so they are compared to within 1e-9."""
    if sigma is None:
        return pd.Series(True, index=table.index)
    return (table["sigma"] - sigma).abs() < 1e-9


def protocol_label(protocol: str, sigma: float, target_nats: float | None = None) -> str:
    if protocol == "matched":
        return "matched" + (f" ({target_nats:g} nats)" if target_nats is not None else "")
    return f"fixed sigma {sigma:g}"


def _block_matrix(blocks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(steps, (steps, blocks) NLL matrix) of one run's per-block table."""
    wide = blocks.pivot(index="step", columns="block", values="nll").sort_index()
    return wide.index.to_numpy(), wide.to_numpy(dtype=np.float64)


def judge_curve(steps, damaged, reference, criterion: Criterion = MAIN_CRITERION, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> dict:
    """One run judged by ``criterion``: ``damaged`` and ``reference`` are (steps, blocks) NLLs of the damaged run
    and of its reference (the sham at the same steps, or the intact model), paired block by block. Returns the
    remaining excess per step, the share of the initial damage undone with its paired interval (the same
    resampled blocks for the run, its reference and its initial damage), and the evaluation steps at which the
    run counts as recovered (never step 0)."""
    excess = np.asarray(damaged, dtype=np.float64) - np.asarray(reference, dtype=np.float64)
    draws = resample_indices(excess.shape[1], n_boot, seed)
    remaining = excess.mean(axis=1)
    boot = excess[:, draws].mean(axis=2)  # (steps, n_boot)
    undone = 1 - remaining / remaining[0]
    boot_undone = 1 - boot / boot[0]
    tail = (1 - level) / 2 * 100
    undone_low = np.percentile(boot_undone, tail, axis=1)
    excess_low = np.percentile(boot, tail, axis=1)
    met = (excess_low <= 0) if criterion.share is None else (undone_low >= criterion.share)
    met[0] = False
    return {"initial": float(remaining[0]), "remaining": remaining, "undone": undone, "undone_low": undone_low,
            "undone_high": np.percentile(boot_undone, 100 - tail, axis=1), "recovered_at": np.asarray(steps)[met]}


def judged_runs(tables: dict[str, pd.DataFrame], criterion: Criterion = MAIN_CRITERION, n_boot: int = 2000,
                seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Every damaged run judged by ``criterion``: the share of its initial damage undone at each evaluation
    against the reference (paired over blocks: the same resampled blocks for the damaged run, its reference
    and its initial damage), the first step it counts as recovered (NaN: not within the budget, never imputed),
    the share undone at the end with its interval, and the area under the remaining excess (nats x steps)."""
    blocks, runs = tables["blocks"], tables["runs"]
    base = tables["baseline"].sort_values("block")["nll"].to_numpy(dtype=np.float64)
    shams = {int(layer): _block_matrix(group) for layer, group in blocks[blocks["kind"] == "sham"].groupby("layer")}
    rows = []
    for run in runs[runs["kind"] == "damaged"].itertuples():
        mine = blocks[(blocks["kind"] == "damaged") & (blocks["layer"] == run.layer) & (blocks["protocol"] ==
                      run.protocol) & (blocks["noise_seed"] == run.noise_seed) & np.isclose(blocks["sigma"], run.sigma)]
        steps, damaged = _block_matrix(mine)
        if criterion.reference == "sham":
            if run.layer not in shams:
                continue
            sham_steps, reference = shams[run.layer]
            if not np.array_equal(sham_steps, steps):
                raise ValueError(f"the sham of L{run.layer} was evaluated at other steps than its damaged run")
        else:
            reference = np.broadcast_to(base, damaged.shape)
        judged = judge_curve(steps, damaged, reference, criterion, n_boot, seed, level)
        initial, remaining = judged["initial"], judged["remaining"]
        recovered_at = judged["recovered_at"]
        area = float(np.sum((remaining[1:] + remaining[:-1]) / 2 * np.diff(steps)))
        rows.append({"layer": int(run.layer), "protocol": run.protocol, "sigma": float(run.sigma),
                     "noise_seed": int(run.noise_seed), "criterion": criterion.label,
                     "initial_excess_nll": float(initial), "recovered": bool(len(recovered_at)),
                     "steps_to_recover": float(recovered_at[0]) if len(recovered_at) else np.nan,
                     "budget": int(run.budget), "final_excess_nll": float(remaining[-1]),
                     "recovered_fraction": float(judged["undone"][-1]),
                     "fraction_low": float(judged["undone_low"][-1]),
                     "fraction_high": float(judged["undone_high"][-1]), "area_excess_nll": area,
                     "normalized_area": area / (initial * run.budget) if initial > 0 else np.nan})
    return pd.DataFrame(rows)


def judged_layers(judged: pd.DataFrame, protocol: str = "matched") -> pd.DataFrame:
    """``judged_runs`` of one protocol pooled over noise seeds, one row per (layer, sigma) in ``per_layer``'s
    columns: a layer counts as recovered only if every seed did, its steps then the slowest seed's."""
    rows = []
    mine = judged[judged["protocol"] == protocol]
    keys = ["layer"] if protocol == "matched" else ["sigma", "layer"]
    for key, group in mine.groupby(keys, sort=True):
        everyone = bool(group["recovered"].all())
        rows.append({"layer": int(group["layer"].iloc[0]), "protocol": protocol,
                     "sigma": float(group["sigma"].mean()), "seeds": len(group),
                     "initial_excess_nll": group["initial_excess_nll"].mean(), "recovered": everyone,
                     "recovered_seeds": int(group["recovered"].sum()),
                     "steps_to_recover": group["steps_to_recover"].max() if everyone else np.nan,
                     "budget": int(group["budget"].iloc[0]), "recovered_fraction": group["recovered_fraction"].mean(),
                     "fraction_low": group["fraction_low"].min(), "fraction_high": group["fraction_high"].max(),
                     "area_excess_nll": group["area_excess_nll"].mean(),
                     "normalized_area": group["normalized_area"].mean()})
    return pd.DataFrame(rows)


def sensitivity_table(tables: dict[str, pd.DataFrame], criteria=SENSITIVITY, target_nats: float | None = None,
                      n_boot: int = 2000) -> pd.DataFrame:
    """Steps to recover of every layer under every protocol and criterion ('> 200': not within the budget):
    how much each verdict owes to the choice of rule."""
    columns = {}
    for criterion in criteria:
        judged = judged_runs(tables, criterion, n_boot)
        pooled = pd.concat([judged_layers(judged, p) for p in dict.fromkeys(judged["protocol"])], ignore_index=True)
        columns[criterion.label] = {(protocol_label(r.protocol, r.sigma, target_nats), r.layer): steps_label(r)
                                    for r in pooled.itertuples()}
    table = pd.DataFrame(columns)
    table.index = pd.MultiIndex.from_tuples(table.index, names=["protocol", "layer"])
    return table.reset_index()
