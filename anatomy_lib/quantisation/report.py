"""The quantisation null in sentences, for chapters 3 and 4 and for the verdicts chapter's "explanations tested"."""
from __future__ import annotations

import pandas as pd

from ..core.display import nonzero_readable
from .analysis import deltas, error_summary
from .compute import SCHEME_SPECIMEN

INDEPENDENT_LAGS_NULL = -0.5  # chapter 4: the lag-1 delta correlation of independent layers


def signed(value: float, digits: int = 4) -> str:
    """A signed number with no "-0.0000": a value that rounds to zero is written unsigned, and a nonzero value that
    ``digits`` decimals would round to zero gets up to three more ("-0.00004", never "0.0000" for a change that is
    there)."""
    return nonzero_readable(value, f"+.{digits}f")


def _change(row) -> str:
    return f"{signed(row.change)} [{signed(row.ci_low)}, {signed(row.ci_high)}]"


def _before_after(before: float, after: float) -> str:
    """"before to after" with as many decimals (four to seven) as it takes for two different values to read
    differently: a move the sentence reports is never shown as "-0.5005 to -0.5005"."""
    digits = 4
    while digits < 7 and before != after and signed(before, digits) == signed(after, digits):
        digits += 1
    return f"{signed(before, digits)} to {signed(after, digits)}"


def error_sentences(tables: dict[str, pd.DataFrame]) -> list[str]:
    out = []
    for scheme, rows in error_summary(tables).groupby("scheme", sort=False):
        weighted = float((rows["relative_error"] * rows["share"]).sum())
        formats = ", ".join(f"{r.format} {r.share:.0%}" for r in rows.itertuples())
        out.append(f"{SCHEME_SPECIMEN.get(scheme, '')} scheme {scheme} rounds each layer matrix with a relative rms "
                   f"error of {weighted:.1%} on average ({formats} of the matrices).")
    return out


def retrain_sentence(tables: dict[str, pd.DataFrame], stored_runs: pd.DataFrame | None) -> str | None:
    """Whether the retrained models are chapter 7's: their final losses beside the stored runs'."""
    if stored_runs is None or stored_runs.empty:
        return None
    mine = tables["models"].dropna(subset=["final_val_loss"])
    merged = mine.merge(stored_runs[["arm", "seed", "final_val_loss"]], on=["arm", "seed"], suffixes=("", "_stored"))
    if merged.empty:
        return None
    gap = (merged["final_val_loss"] - merged["final_val_loss_stored"]).abs().max()
    return (f"The {len(merged)} retrained models are chapter 7's: their final validation losses differ from the "
            f"stored runs' by at most {gap:.1e} nats.")


def findings(tables: dict[str, pd.DataFrame], chapter: int, stored_runs: pd.DataFrame | None = None) -> list[str]:
    """What the quantisation null shows for chapter 3 (predictability) or 4 (structure), in computed sentences:
    the rounding error, then every statistic of that chapter per kind of model, fp32 and its change under each
    scheme (interval over layers), then what that means for the chapter's comparison."""
    table = deltas(tables)
    mine = table[table["chapter"] == chapter]
    out = error_sentences(tables)
    sentence = retrain_sentence(tables, stored_runs)
    if sentence:
        out.append(sentence)
    for (statistic, arm), rows in mine.groupby(["statistic", "arm"], sort=False):
        out.append(f"{statistic}, {arm}: {signed(rows['fp32'].iloc[0], 3)} in fp32; quantisation changes it by "
                   + "; ".join(f"{_change(r)} ({r.scheme})" for r in rows.itertuples()) + " (mean over layers, 95% "
                   "interval over layers).")
    out.append(conclusion(table, chapter))
    return out


def conclusion(table: pd.DataFrame, chapter: int) -> str:
    """One sentence: how far quantisation moves the chapter's headline statistic on the models the book controls."""
    if chapter == 3:
        rows = table[table["statistic"] == "held-out ridge R^2"]
        worst = rows.loc[rows["change"].abs().idxmax()]
        return (f"Quantisation moves the held-out R^2 of ridge by at most {_change(worst)} "
                f"({worst.scheme}, {worst.arm} models): the size of "
                "the effect 4-bit rounding can have on chapter 3's headline statistic.")
    rows = table[table["statistic"] == "lag-1 delta correlation"].copy()
    rows["toward"] = (rows["fp32"] - INDEPENDENT_LAGS_NULL).abs() - (rows["quantised"] - INDEPENDENT_LAGS_NULL).abs()
    worst = rows.loc[rows["toward"].idxmax()]
    verb = "toward" if worst.toward > 0 else "no closer to"
    # the largest change over every row ``findings`` lists for the chapter (the layer-shuffled null's included), in
    # the same words and digits as those lines, so the summary never undercuts a change printed beside it
    shown = table[table["chapter"] == chapter]
    largest = shown.loc[shown["change"].abs().idxmax()]
    amount = nonzero_readable(abs(worst.toward), ".4f")
    return (f"Quantisation moves the lag-1 delta correlation at most {amount} {verb} the independent-layers "
            f"value of {INDEPENDENT_LAGS_NULL:+.2f} ({worst.scheme}, {worst.arm} models: "
            f"{_before_after(worst.fp32, worst.quantised)}, mean over layers); the largest change of "
            f"chapter {chapter}'s statistics on any model, the layer-shuffled null's included, is {_change(largest)} "
            f"({largest.statistic}, {largest.arm}, {largest.scheme}).")
