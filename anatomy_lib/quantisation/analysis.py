"""What the quantisation null's tables say: each statistic's change under each scheme, with an interval over
layers, per kind of model (chapter 7's uniform models, its stacked ones, the random init)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.bootstrap import statistic_interval
from .compute import FP32

HELD_OUT, IN_SAMPLE = "out-of-sample", "in-sample"
# statistic -> (chapter, table, how its rows are picked, value column)
STATISTICS = {
    "held-out ridge R^2": (3, "fits", lambda t: t[(t.predictor == "ridge") & (t.fit == HELD_OUT)], "r2"),
    "in-sample ridge R^2": (3, "fits", lambda t: t[(t.predictor == "ridge") & (t.fit == IN_SAMPLE)], "r2"),
    "mean-layer R^2": (3, "fits", lambda t: t[t.predictor == "mean layer"], "r2"),
    "previous-layer R^2": (3, "fits", lambda t: t[t.predictor == "previous layer"], "r2"),
    "held-out ridge cosine": (3, "fits", lambda t: t[(t.predictor == "ridge") & (t.fit == HELD_OUT)], "cosine"),
    "lag-1 delta correlation": (4, "deltas", lambda t: t[(t.null == "specimen") & (t.lag == 1)], "corr"),
    "lag-1, layer-shuffled null": (4, "deltas", lambda t: t[(t.null == "layer-shuffled") & (t.lag == 1)], "corr"),
}


def per_layer(tables: dict[str, pd.DataFrame], statistic: str) -> pd.DataFrame:
    """One statistic per (arm, scheme, layer): the mean over components, seeds and shuffles."""
    _, name, pick, column = STATISTICS[statistic]
    rows = pick(tables[name])
    return rows.groupby(["arm", "scheme", "layer"], as_index=False, sort=False)[column].mean() \
        .rename(columns={column: "value"})


def deltas(tables: dict[str, pd.DataFrame], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per statistic, kind of model and scheme: the fp32 and quantised means over layers and the change
    (quantised minus fp32) with a percentile bootstrap interval over layers."""
    out = []
    for statistic, (chapter, *_rest) in STATISTICS.items():
        table = per_layer(tables, statistic)
        for arm, group in table.groupby("arm", sort=False):
            fp32 = group[group["scheme"] == FP32].set_index("layer")["value"]
            for scheme, rows in group[group["scheme"] != FP32].groupby("scheme", sort=False):
                quantised = rows.set_index("layer")["value"].reindex(fp32.index)
                change = (quantised - fp32).to_numpy()
                estimate, low, high = statistic_interval(len(change), lambda i: float(np.mean(change[i])),
                                                         n_boot, seed)
                out.append({"chapter": chapter, "statistic": statistic, "arm": arm, "scheme": scheme,
                            "fp32": float(fp32.mean()), "quantised": float(quantised.mean()), "change": estimate,
                            "ci_low": low, "ci_high": high, "layers": len(change)})
    return pd.DataFrame(out)


def error_summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Relative rms error of the round trip per scheme and format (mean over matrices), with the share of
    matrices in each format."""
    errors = tables["errors"]
    summary = errors.groupby(["scheme", "format"], as_index=False, sort=False).agg(
        matrices=("relative_error", "size"), relative_error=("relative_error", "mean"))
    summary["share"] = summary["matrices"] / summary.groupby("scheme")["matrices"].transform("sum")
    return summary
