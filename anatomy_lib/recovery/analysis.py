"""What recovery runs say: per-layer summaries, rank correlations with importance, the sham's drift."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.bootstrap import statistic_interval
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
                                ("partial Spearman | initial damage",
                                 lambda i: partial_spearman(values[i], importance[i], damage[i]))):
            rho, low, high = statistic_interval(len(merged), statistic, n_boot, seed, level)
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
