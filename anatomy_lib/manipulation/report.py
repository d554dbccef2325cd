"""Chapter 5 in sentences and verdicts, and how the verdicts move with the cuts the paper leaves unsaid."""
from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from ..core import rules as v
from ..core.display import Vocabulary, estimate_text
from ..importance.analysis import Thresholds as ImportanceThresholds
from ..importance.report import THRESHOLD_GRID as IMPORTANCE_GRID
from .strategies import PAPER_ALPHA, Manipulation

# this chapter's words for its tables' columns (and the intervals its estimates carry): ``show_table(t)``
show_table = Vocabulary(
    {"label": "edit", "generated_ppl": "perplexity of its own text", "distinct_2": "distinct-2",
     "repetition_rate": "repetition", "empty_share": "empty answers", "fact_rate": "facts right",
     "fact_change": "facts right, change"},
    {"fact_rate": ("fact_rate_low", "fact_rate_high"), "fact_change": ("fact_change_low", "fact_change_high")})

PAPER = {"alpha": PAPER_ALPHA, "scale_change_pct": 49.0}


def _fact_rate(row) -> str:
    return (f"facts {row.fact_rate:.0%} [{row.fact_rate_low:.0%}, {row.fact_rate_high:.0%}] of "
            f"{row.facts_total}")


EXPERIMENT = "the connective layers compressed five ways"  # the one experiment behind chapter 5's rows


@dataclass(frozen=True)
class Thresholds:
    """The cuts chapter 5's verdicts turn on; the paper states none of them (``threshold_sensitivity`` tries each
    over ``THRESHOLD_GRID``)."""

    # "destroys coherence": the claimed loss of facts, as a share of the intact rate (reproduced from half of it,
    # partly below); "keeps coherence" is inconclusive while its interval still allows a loss of this size
    loss_share: float = 0.5
    repetition_rise: float = 0.2  # "keeps coherence": the repetition rate rises by at most this much
    huge_pct: float = 1e6  # "millions of percent": the interval's lower end at least this


THRESHOLD_GRID = {"loss_share": (0.25, 0.5, 0.75), "repetition_rise": (0.1, 0.2, 0.3),
                  "huge_pct": (1e5, 1e6, 1e7)}
# chapter 2's cut of connective tissue decides which layers are compressed: the same grid as chapter 2's table
CONNECTIVE_CUTS = IMPORTANCE_GRID["connective_pct"]
THRESHOLD_WORDS = {"loss_share": "a claimed loss of", "repetition_rise": "repetition rising at most",
                   "huge_pct": "'millions' from", "connective_pct": "connective tissue below"}


def threshold_label(parameter: str, value: float) -> str:
    if parameter == "loss_share":
        return f"{value:.0%} of the intact rate"
    if parameter == "connective_pct":
        return f"+{value:g}%"
    return f"+{value:g}" if parameter == "repetition_rise" else f"+{value:,.0f}%"


def threshold_sensitivity(tables: dict[str, pd.DataFrame], params=None, thresholds: Thresholds = Thresholds(),
                          grid: dict[str, tuple] | None = None,
                          by_cut: dict[float, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Every claim of ``paper_claims`` as each threshold of ``Thresholds`` moves over ``grid`` (default
    ``THRESHOLD_GRID``) with the others at ``thresholds``: tidy, as ``core.rules.sensitivity`` gives it. The same
    continuations are re-judged; nothing is recomputed. ``by_cut``: the compression table at each cut of chapter
    2's connective threshold (``compute.compression_at_cuts``), judged at ``thresholds`` as the parameter
    ``connective_pct``."""
    parts = [v.sensitivity(lambda value, name=name: paper_claims(tables, params, replace(thresholds, **{name: value})),
                           values, name, getattr(thresholds, name))
             for name, values in (THRESHOLD_GRID if grid is None else grid).items()]
    if by_cut:
        # a cut that calls no layer connective leaves nothing to compress: no claim is stated there, so the cut
        # has no column in the table (``cut_sentence`` names it), rather than seven "not comparable" read as seven
        # verdicts that moved
        parts.append(v.sensitivity(lambda cut: paper_claims({**tables, "compression": by_cut[cut]}, params, thresholds)
                                   if (by_cut[cut]["strategy"] != "intact").any() else [],
                                   list(by_cut), "connective_pct", ImportanceThresholds().connective_pct))
    return pd.concat(parts, ignore_index=True)


def cut_sentence(layers_by_cut: dict[float, tuple[int, ...]]) -> str:
    """Which layers each cut of chapter 2's connective threshold compresses (``compute.connective_cuts``)."""
    book = ImportanceThresholds().connective_pct
    parts = []
    for cut, layers in layers_by_cut.items():
        named = (f"{len(layers)} ({', '.join(f'L{layer}' for layer in layers)})" if layers
                 else "none, so nothing is compressed and no claim is stated")
        mark = " (the book's cut)" if cut == book else ""
        parts.append(f"+{cut:g}%{mark}: {named}")
    return ("The layers compressed at each cut of chapter 2's connective threshold (an interval wholly below it, "
            "and not wholly below zero): "
            + "; ".join(parts) + ".")


def paper_claims(tables: dict[str, pd.DataFrame], params=None, thresholds: Thresholds = Thresholds()):
    """Only scaling (alpha = 0.9, +49%) keeps coherence; zero / clone / mix destroy it ("millions of percent").
    Coherence is judged on the fact rate's paired change against the intact model, with its interval; the cuts
    the paper leaves unsaid are ``thresholds``."""
    comp = tables["compression"]
    intact = comp[comp["strategy"] == "intact"].iloc[0]
    if (comp["strategy"] == "intact").all():
        return _nothing_to_compress()
    scaled = comp[comp["label"].str.endswith("writers)") & (comp["alpha"] == PAPER["alpha"])]
    claims = []
    if not scaled.empty:
        row = scaled.iloc[0]
        claims.append(v.Claim(f"scale alpha={PAPER['alpha']} on the connective layers: perplexity change",
                              f"+{PAPER['scale_change_pct']:g}%",
                              estimate_text(row.change_pct, row.ci_low, row.ci_high, unit="%"),
                              v.number(PAPER["scale_change_pct"], row.change_pct, row.ci_low, row.ci_high),
                              "agreement within a factor of two, same sign", "number", kind=v.MAGNITUDE))
        kept = row.fact_change_low <= 0 <= row.fact_change_high or row.fact_change_low > 0
        kept = kept and row.empty_share == 0 and row.repetition_rate <= intact.repetition_rate + \
            thresholds.repetition_rise
        # "keeps" needs power too: an interval that still allows losing half the intact facts cannot say it
        large_loss = intact.fact_rate * thresholds.loss_share
        told = row.fact_change_low > -large_loss
        claims.append(v.Claim(f"scale alpha={PAPER['alpha']} keeps generation coherent", "yes",
                              f"{_fact_rate(row)} (intact {intact.fact_rate:.0%}); change "
                              f"{row.fact_change:+.0%} [{row.fact_change_low:+.0%}, {row.fact_change_high:+.0%}]",
                              v.qualitative(bool(kept)) if told or not kept else v.INCONCLUSIVE,
                              "coherent: no loss of facts established (paired interval reaches zero), no empty "
                              f"continuation, repetition at most +{thresholds.repetition_rise:g} over intact; "
                              "inconclusive where the interval still allows a loss of "
                              f"{thresholds.loss_share:.0%} of the intact rate ({large_loss:.0%})", "qualitative"))
    for strategy in ("zero", "clone", "mix", "lowrank_mix"):
        rows = comp[comp["strategy"] == strategy]
        if rows.empty:
            continue
        row = rows.iloc[0]
        claims.append(v.Claim(f"{row.label} on the connective layers destroys coherence", "yes",
                              f"{_fact_rate(row)}; change {row.fact_change:+.0%} [{row.fact_change_low:+.0%}, "
                              f"{row.fact_change_high:+.0%}]; perplexity {row.change_pct:+,.0f}%",
                              v.comparison(row.fact_change, row.fact_change_low, row.fact_change_high,
                                           paper_direction=-1, paper_size=intact.fact_rate * thresholds.loss_share),
                              "a loss of facts whose paired interval excludes zero, at least half of a claimed "
                              f"loss of {thresholds.loss_share:.0%} of the intact rate (under half: partly)",
                              "comparison"))
    others = comp[comp["strategy"].isin(["zero", "clone", "mix", "lowrank_mix"])]
    if not others.empty:
        huge = others[others["ci_low"] >= thresholds.huge_pct]
        claims.append(v.Claim("the other strategies cost millions of percent", "yes",
                              "; ".join(f"{r.strategy} {r.change_pct:+,.0f}%" for r in others.itertuples()),
                              v.share(len(huge), len(others)),
                              "a strategy counts when its interval's lower end is at least "
                              f"+{thresholds.huge_pct:,.0f}%", "share", kind=v.MAGNITUDE))
    return v.in_experiment(EXPERIMENT, claims)


NO_CONNECTIVE = "no layer of this specimen is connective tissue (chapter 2): there is nothing to compress"


def _nothing_to_compress() -> list:
    """The compression claims on a specimen (or at a cut) without connective tissue: the same claims, named as
    ``paper_claims`` names them (so they join across specimens and cuts), none of them testable."""
    titles = ([f"scale alpha={PAPER['alpha']} on the connective layers: perplexity change",
               f"scale alpha={PAPER['alpha']} keeps generation coherent"]
              + [f"{Manipulation(s).label()} on the connective layers destroys coherence"
                 for s in ("zero", "clone", "mix", "lowrank_mix")]
              + ["the other strategies cost millions of percent"])
    paper = [f"+{PAPER['scale_change_pct']:g}%"] + ["yes"] * (len(titles) - 1)
    return v.in_experiment(EXPERIMENT, [v.Claim(t, p, "no connective tissue", v.qualitative(None), NO_CONNECTIVE,
                                                "qualitative") for t, p in zip(titles, paper)])


def findings(tables: dict[str, pd.DataFrame], params=None, specimen_name: str = "the specimen") -> list[str]:
    """What chapter 5 finds, in sentences computed from its tables."""
    comp = tables["compression"]
    intact = comp[comp["strategy"] == "intact"].iloc[0]
    writers = comp[comp["label"].str.endswith("writers)")].sort_values("alpha")
    out = [f"On {specimen_name}, the intact model answers {intact.facts_correct} of {intact.facts_total} factual "
           f"questions ({intact.fact_rate:.0%} [{intact.fact_rate_low:.0%}, {intact.fact_rate_high:.0%}])."]
    if writers.empty:
        return out + [f"On {specimen_name}, {NO_CONNECTIVE}."]
    best = writers.loc[writers["change_pct"].idxmin()]
    out.append(f"Scaling the connective layers' writers together, the lowest perplexity is at alpha = "
               f"{best.alpha:g}: {estimate_text(best.change_pct, best.ci_low, best.ci_high, unit='%')}"
               + (", a small improvement over the intact model." if best.ci_high < 0 else "."))
    removed = writers[writers["alpha"] == 0]
    if not removed.empty:
        r = removed.iloc[0]
        out.append(f"Removing them (alpha = 0) costs {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}] and "
                   f"leaves {_fact_rate(r)}.")
    for r in comp[comp["strategy"].isin(["zero", "clone", "mix", "lowrank_mix"])].itertuples():
        out.append(f"{r.label}: perplexity {r.change_pct:+,.0f}% [{r.ci_low:+,.0f}, {r.ci_high:+,.0f}], "
                   f"{_fact_rate(r)}, change {r.fact_change:+.0%} [{r.fact_change_low:+.0%}, "
                   f"{r.fact_change_high:+.0%}].")
    heat = tables["heatmap"]
    if not heat.empty:
        gentle = heat.groupby("label")["change_pct"].median().sort_values()
        out.append(f"On single layers the gentlest strategy (median change over the mapped layers) is "
                   f"{gentle.index[0]} ({gentle.iloc[0]:+.1f}%), the harshest {gentle.index[-1]} "
                   f"({gentle.iloc[-1]:+,.0f}%).")
    return out
