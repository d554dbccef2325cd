"""Chapter 3 in sentences and verdicts."""
from __future__ import annotations

import pandas as pd

from ..core import rules as v
from ..core.display import Vocabulary

# this chapter's words for its tables' columns (and the intervals its estimates carry): ``show_table(t)``
show_table = Vocabulary(
    {"predictor": "predictor", "fit": "fit", "proj_dim": "projection size"},
    {})

PAPER = {"gate_r2": 0.91, "substitution_ppl": 100_000.0}


def paper_claims(tables: dict[str, pd.DataFrame], params=None):
    """R^2 ~ 0.91 for gate and PPL > 100,000 after substitution, beside ours, each judged by a rule of
    ``core.rules``. In-sample R^2 is judged uninformative: a randomly initialised model scores as high."""
    fits = tables["fits"].query("predictor == 'ridge'")
    mean = fits.groupby(["model", "component", "fit"])["r2"].mean()
    gate = "gate" if ("specimen", "gate", "in-sample") in mean.index else fits["component"].iloc[0]
    ins, oos = mean[("specimen", gate, "in-sample")], mean[("specimen", gate, "out-of-sample")]
    rnd = mean[("random init", gate, "in-sample")]
    best = _best_baseline(tables["fits"], gate)
    claims = v.in_experiment("a layer's weights predicted from the other layers'", [
              v.Claim(f"R^2 of {gate}, in-sample", f"{PAPER['gate_r2']:.2f}", f"{ins:.2f}", v.uninformative(),
                      f"a randomly initialised model scores {rnd:.2f} in-sample", "uninformative"),
              v.Claim(f"R^2 of {gate}, held-out layers", f"{PAPER['gate_r2']:.2f} (split not stated)", f"{oos:.2f}",
                      v.number(PAPER["gate_r2"], oos, absolute=0.1),
                      f"leave-one-layer-out; the {best[0]} baseline scores {best[1]:.2f}", "number")],
              kind=v.MAGNITUDE)
    sub = tables["substitution"].query("predictor == 'ridge' and fit == 'out-of-sample'")
    for row in sub.itertuples():
        claims += v.in_experiment("predicted weights substituted into the model", [v.Claim(
            f"PPL after substituting layer(s) {row.layers}", f"> {PAPER['substitution_ppl']:,.0f}",
            f"{row.ppl:,.1f} ({row.change_pct:+,.0f}% [{row.ci_low:+,.0f}, {row.ci_high:+,.0f}])",
            v.bound(PAPER["substitution_ppl"], row.ppl, row.base_ppl * (1 + row.ci_low / 100), reference=row.base_ppl),
            f"baseline {row.base_ppl:.2f}; out-of-sample ridge predictions", "bound")], kind=v.MAGNITUDE)
    return claims


def _best_baseline(fits: pd.DataFrame, component: str) -> tuple[str, float]:
    means = fits.query("model == 'specimen' and component == @component and predictor != 'ridge'") \
        .groupby("predictor")["r2"].mean()
    return str(means.idxmax()), float(means.max())


def findings(tables: dict[str, pd.DataFrame], params=None, specimen_name: str = "the specimen") -> list[str]:
    """What chapter 3 finds, in sentences computed from its tables."""
    fits = tables["fits"]
    spec = fits[fits["model"] == "specimen"]
    held = spec[spec["fit"] == "out-of-sample"].groupby(["predictor", "component"])["r2"].mean().unstack(0)
    ins = spec[(spec["fit"] == "in-sample")].groupby("component")["r2"].mean()
    rnd = fits[(fits["model"] == "random init") & (fits["fit"] == "in-sample")]["r2"].mean()
    out = [f"On {specimen_name}, ridge fits the layers it has seen almost exactly (in-sample R^2 {ins.min():.2f} to "
           f"{ins.max():.2f} over the components), and so does a randomly initialised model ({rnd:.2f} on average): "
           "in-sample R^2 measures the regression's capacity, not the weights."]
    out.append(f"On held-out layers ridge scores R^2 {held['ridge'].min():+.2f} to {held['ridge'].max():+.2f}; "
               f"copying the previous layer {held['previous layer'].min():+.2f} to "
               f"{held['previous layer'].max():+.2f}; "
               f"the mean of the other layers {held['mean layer'].min():+.2f} to {held['mean layer'].max():+.2f}.")
    worse = [c for c in held.index if held.loc[c, "ridge"] < held.loc[c, "mean layer"]]
    out.append(f"Ridge does worse than the mean layer in {len(worse)} of {len(held)} components"
               + (f" ({', '.join(worse)})." if worse else "."))
    if "sweep" in tables and not tables["sweep"].empty:
        sweep = tables["sweep"].groupby(["context", "proj_dim"])["r2"].mean()
        (c, d), top = sweep.idxmax(), sweep.max()
        out.append(f"The best ridge setting of the sweep ({len(sweep)} settings of context and projection size) "
                   f"is context {c}, {d} features, at mean held-out R^2 {top:+.2f} over components and layers; "
                   f"the mean layer scores {held['mean layer'].mean():+.2f}.")
    sub = tables["substitution"]
    for layers, group in sub[sub["fit"] == "out-of-sample"].groupby("layers", sort=False):
        parts = [f"{r.predictor} {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}]"
                 for r in group.itertuples()]
        out.append(f"Swapping layer(s) {layers} for predictions changes perplexity by: " + "; ".join(parts) + ".")
    return out


def substitution_sentences(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Whether held-out R^2 orders the damage a substitution does: per substituted layer set, each predictor's
    mean held-out R^2 (over components and layers) beside the perplexity change its predictions cause, and
    whether the predictor with the highest R^2 is the one that costs least."""
    fits = tables["fits"]
    spec = fits[(fits["model"] == "specimen") & (fits["fit"] == "out-of-sample")]
    r2 = spec.groupby("predictor")["r2"].mean()
    sub = tables["substitution"]
    out = []
    for layers, group in sub[(sub["fit"] == "out-of-sample") & sub["predictor"].isin(r2.index)].groupby(
            "layers", sort=False):
        if len(group) < 2:
            continue
        best, least = r2[group["predictor"]].idxmax(), group.loc[group["change_pct"].idxmin(), "predictor"]
        parts = [f"{r.predictor} (held-out R^2 {r2[r.predictor]:+.2f}) {r.change_pct:+,.0f}%"
                 for r in group.itertuples()]
        verdict = (f"the predictor with the highest R^2 ({best}) is also the one that costs least" if best == least
                   else f"the predictor with the highest R^2 ({best}) is not the one that costs least ({least}): "
                        "a low held-out R^2 does not by itself explain the damage")
        out.append(f"Substituting layer(s) {layers}: " + "; ".join(parts) + f"; {verdict}.")
    return out


def cosine_sentence(fits: pd.DataFrame) -> str:
    """What the cosine similarities of the fits say, in one sentence (their table would be a page of zeros):
    the range of the held-out fits' mean cosine over every model, predictor and component, against the in-sample
    fits'."""
    means = fits.groupby(["model", "predictor", "fit", "component"])["cosine"].mean()
    held = means.xs("out-of-sample", level="fit")
    inside = means.xs("in-sample", level="fit") if "in-sample" in set(fits["fit"]) else None
    text = (f"Mean cosine similarity between predicted and real weights, held-out: {held.min():+.3f} to "
            f"{held.max():+.3f} over every model, predictor and component ({len(held)} means)")
    if inside is not None and len(inside):
        text += f"; in-sample ridge: {inside.min():+.3f} to {inside.max():+.3f}"
    return text + "."
