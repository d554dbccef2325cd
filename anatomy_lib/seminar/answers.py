"""The teacher's answers, computed: each prediction and discussion question of a session answered from the stored
results the chapter shows, in a sentence with its numbers (never typed: a new result changes the answer).

``Evidence`` loads what the answers read once, read-only (a result that is not stored raises ``NotStored``
rather than starting a computation): the chapters' tables and claims on the book's specimen and on the second
one. Each ``answer_*`` function takes it and returns Markdown.
"""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pandas as pd

from ..core.lab import open_lab
from ..core.specimens import GEMMA_SPECIMEN
from ..exercises import specimen as specimen_exercises
from ..exercises.structure import ar1_delta_correlation
from ..growth import frontier_analysis, frontier_report
from ..verdicts import CHAPTERS, book_claims, headline
from .timing import chapter_runs

BY_NUMBER = {c.number: c for c in CHAPTERS}


class Evidence:
    """The stored results behind the answers, loaded on first use and kept (read-only labs)."""

    def __init__(self, lab, second: str | None = GEMMA_SPECIMEN):
        self.lab = lab.read_only()
        self.second_name = second
        self._second = None
        self._tables: dict = {}
        self._claims: dict = {}

    @property
    def second(self):
        if self._second is None and self.second_name:
            self._second = open_lab(self.second_name, self.lab.profile, progress=False).read_only()
        return self._second

    def tables(self, chapter: int, on_second: bool = False) -> dict[str, pd.DataFrame]:
        key = (chapter, on_second)
        if key not in self._tables:
            lab = self.second if on_second else self.lab
            book_chapter = BY_NUMBER[chapter]
            params = book_chapter.defaults(lab.profile.name, None if book_chapter.trains_own_models
                                           else lab.specimen.name)
            with contextlib.redirect_stdout(io.StringIO()):
                self._tables[key] = book_chapter.compute(lab, params, progress=False)
        return self._tables[key]

    def claims(self, on_second: bool = False) -> pd.DataFrame:
        if on_second not in self._claims:
            lab = self.second if on_second else self.lab
            with contextlib.redirect_stdout(io.StringIO()):
                self._claims[on_second] = book_claims(lab)
        return self._claims[on_second]

    def claim(self, chapter: int, starts: str, on_second: bool = False) -> dict:
        """The first claim of ``chapter`` whose name starts with ``starts`` (a row of ``book_claims``)."""
        table = self.claims(on_second)
        rows = table[(table["chapter"] == chapter) & table["Claim"].str.startswith(starts)]
        if rows.empty:
            raise KeyError(f"chapter {chapter} has no claim starting {starts!r}; its claims: "
                           f"{list(table.loc[table['chapter'] == chapter, 'Claim'])}")
        return rows.iloc[0].to_dict()

    @property
    def name(self) -> str:
        return self.lab.specimen.name


def said(row: dict) -> str:
    """A claim in a sentence: the paper's value, ours and the verdict."""
    return f"the paper says {row['Paper']}, we measure {row['Ours']} ({row['Verdict']})"


def _pct(value: float) -> str:
    return f"{value:+,.0f}%"


# ---- session 0 -------------------------------------------------------------------------------------------------
def answer_store_speed(ev: Evidence) -> str:
    runs = chapter_runs()
    mine = runs[(runs["chapter"] == 2) & (runs["profile"] == ev.lab.profile.name)
                & (runs["specimen"] == ev.name)]
    return (f"About as long as loading the model and drawing the figures: the chapter finds its results in the "
            f"store (matched by specimen, weights hash, corpus and parameters) and reads them. Computing them took "
            f"{mine['wall_time_s'].sum() / 60:.0f} minutes on the machine named in their {len(mine)} manifests; a "
            "changed parameter recomputes, and the chapter says so with an estimate before it starts.")


def answer_conventions(ev: Evidence) -> str:
    profile = ev.lab.profile
    return (f"Any answer with a reason is fine; the book's own choices are stated where they are made. The quick "
            f"profile, for instance, evaluates {profile.n_blocks} blocks of {profile.block_len} tokens: enough for "
            "intervals a few percent wide on a 2-core CPU, far less than the paper profile asks for.")


# ---- session 1 -------------------------------------------------------------------------------------------------
def answer_embedding_share(ev: Evidence) -> str:
    budget = ev.tables(1)["budget"].set_index("part")
    embedding = budget.loc[[p for p in budget.index if p.startswith("token embedding")][0]]
    layers = budget.loc[[p for p in budget.index if p.startswith("all ")][0]]
    one = budget.loc["one decoder layer"]
    return (f"On {ev.name} the tied embedding holds {embedding['share_pct']:.1f}% of the parameters "
            f"({embedding['parameters'] / 1e6:.1f}M), the decoder layers {layers['share_pct']:.1f}% together and "
            f"{one['share_pct']:.2f}% each: the embedding is the largest tensor by far, most groups guess lower.")


def answer_interval_unit(ev: Evidence) -> str:
    ppl = ev.tables(1)["perplexity"].iloc[0]
    n_blocks = len(ev.tables(1)["baseline"])
    nll = specimen_exercises._block_losses()
    _, low, high = specimen_exercises.perplexity_interval(nll, 2000, 0)
    _, tok_low, tok_high = specimen_exercises._resamples_tokens(nll, 2000, 0)
    return (f"Narrower, and wrongly so. The chapter's interval over {n_blocks} blocks is {ppl['perplexity']:.1f} "
            f"[{ppl['ci_low']:.1f}, {ppl['ci_high']:.1f}]. On the exercise's synthetic losses ({nll.shape[0]} "
            f"blocks of {nll.shape[1]} tokens whose blocks differ in difficulty) resampling blocks gives a width of "
            f"{high - low:.2f} and "
            f"resampling tokens {tok_high - tok_low:.2f}, {(high - low) / (tok_high - tok_low):.1f} times narrower: "
            "tokens of one block share a topic and a speaker, so they are not independent draws.")


def answer_checkpoint(ev: Evidence) -> str:
    claims = ev.claims()
    caveated = claims[claims["Checkpoint"].astype(bool)]
    kinds = claims.loc[claims["chapter"] != 1, "Kind"].value_counts()
    return ("Magnitudes are exposed, patterns less so: of the paper's findings, "
            + ", ".join(f"{n} are {k or 'unlabelled'} claims" for k, n in kinds.items())
            + f". {len(caveated)} rows carry a note that their magnitude was measured on {ev.name}, not the "
            "paper's checkpoint. Quantisation adds noise of a known size to every weight (chapter 4's null measures "
            "what it does to the delta statistic); instruction tuning changes what the layers do, which matters "
            "most for chapter 5's facts and chapter 6's recovery.")


# ---- session 2 -------------------------------------------------------------------------------------------------
def _top(table: pd.DataFrame) -> pd.Series:
    return table.sort_values("change_pct").iloc[-1]


def answer_most_important(ev: Evidence) -> str:
    tables = ev.tables(2)
    top = _top(tables["neighbor_mean"])
    second = tables["neighbor_mean"].sort_values("change_pct").iloc[-2]
    l11 = ev.claim(2, "L11 alone")
    where = ", the first layer" if int(top["layer"]) == 0 else ""
    return (f"L{int(top['layer'])}{where}: replacing it by its neighbours' mean costs "
            f"{_pct(top['change_pct'])} [{_pct(top['ci_low'])}, {_pct(top['ci_high'])}] in perplexity, then "
            f"L{int(second['layer'])} ({_pct(second['change_pct'])}). The paper's L11 comes after them: "
            f"{said(l11)}. Most groups predict a middle layer (the paper's critical core).")


def answer_methods_agree(ev: Evidence) -> str:
    tables = ev.tables(2)
    mean, skip = (tables[m].set_index("layer")["change_pct"] for m in ("neighbor_mean", "skip"))
    rho = float(mean.rank().corr(skip.rank()))
    top_m, top_s = int(mean.idxmax()), int(skip.idxmax())
    return (f"On the ranking, yes: the Spearman correlation of the two maps over {len(mean)} layers is {rho:.2f}, "
            f"and both put L{top_m} first (skip: L{top_s}). On the size, no: skipping L{top_s} costs "
            f"{_pct(skip[top_s])} against {_pct(mean[top_m])} for the neighbour mean. A map's numbers belong to "
            "its ablation method; its order is what they share.")


def answer_anti_layer(ev: Evidence) -> str:
    row = ev.claim(2, "anti-layers")
    table = ev.tables(2)["neighbor_mean"]
    lowest = table.sort_values("change_pct").iloc[0]
    return (f"An interval wholly below zero: removing the layer must lower the perplexity on every resample of the "
            f"text. {said(row).capitalize()}; the lowest point estimate is L{int(lowest['layer'])} at "
            f"{lowest['change_pct']:+.1f}% [{lowest['ci_low']:+.1f}, {lowest['ci_high']:+.1f}], whose interval "
            "holds zero.")


# ---- session 3 -------------------------------------------------------------------------------------------------
def _fits(ev: Evidence) -> pd.DataFrame:
    return ev.tables(3)["fits"].groupby(["model", "predictor", "fit"])["r2"].mean()


def answer_random_in_sample(ev: Evidence) -> str:
    fits = _fits(ev)
    paper = ev.claim(3, "R^2 of gate, in-sample")["Paper"]
    return (f"About 1: the randomly initialised model reaches {fits[('random init', 'ridge', 'in-sample')]:.3f} "
            f"in sample, the specimen {fits[('specimen', 'ridge', 'in-sample')]:.3f}. With one sample per layer "
            "pair and more features than samples, a ridge fit interpolates its training pairs whatever the weights "
            f"are; the paper's {paper} cannot tell a trained model from a random one.")


def answer_ridge_vs_previous(ev: Evidence) -> str:
    fits = _fits(ev)
    ridge, previous, mean = (fits[("specimen", name, "out-of-sample")] for name in ("ridge", "previous layer",
                                                                                     "mean layer"))
    verdict = "Yes" if ridge > previous else "No"
    return (f"{verdict}: on {ev.name} held-out R² is {ridge:.2f} for ridge and {previous:.2f} for copying the "
            f"previous layer. But {'neither beats' if max(ridge, previous) < mean else 'not both beat'} the mean "
            f"of the other layers ({mean:.2f}); R² is 0 for predicting the weights' own mean, so "
            + ("all three are worse than that." if max(ridge, previous, mean) < 0 else "read each against 0."))


def answer_paradox(ev: Evidence) -> str:
    one = ev.claim(3, "PPL after substituting layer(s) 15")
    block = ev.claim(3, "PPL after substituting layer(s) 10")
    return (f"It dissolves once R² is held out: no layer is predicted, so nothing says a prediction could stand in "
            f"for it. One layer substituted: {said(one)}; ten layers: {said(block)}. The damage grows with the "
            "number of layers replaced, not with the fit's R², which is negative throughout.")


# ---- session 4 -------------------------------------------------------------------------------------------------
def answer_delta_nulls(ev: Evidence) -> str:
    weights = ev.tables(4)["weights"]
    lag1 = weights[weights["lag"] == 1].groupby("model")["corr"].mean()
    return (f"Independent layers give {ar1_delta_correlation(0.0):+.2f}, a random walk 0, an autoregressive process "
            f"with a = 0.5 {ar1_delta_correlation(0.5):+.2f} (the ar1-null exercise derives -(1 - a)/2). Measured: "
            f"the specimen {lag1['specimen']:+.3f}, its layers shuffled {lag1['layer-shuffled']:+.3f}, a random "
            f"initialisation {lag1['random init']:+.3f}: the specimen sits on the null for independent layers.")


def answer_null_match(ev: Evidence) -> str:
    row = ev.claim(4, "-0.50 reveals")
    return (f"It tells us what the layers are not: not a smooth drift (which would give about 0) and not an "
            f"alternation (below -0.5). As evidence for a standing wave it carries nothing: {said(row)}.")


# ---- session 5 -------------------------------------------------------------------------------------------------
def _facts(ev: Evidence) -> pd.Series:
    return ev.tables(5)["answers"].groupby("label")["correct"].mean()


def answer_best_strategy(ev: Evidence) -> str:
    facts = _facts(ev)
    others = facts.drop(index=[i for i in facts.index if i.startswith("scale") or i == "intact"])
    best_other = others.idxmax()
    n = int(ev.tables(5)["answers"].groupby("label").size().iloc[0])
    return (f"Scaling by 0.9: {facts['scale(alpha=0.9, writers)']:.0%} of the {n} factual questions answered "
            f"against {facts['intact']:.0%} intact. Every replacing strategy loses almost all of them (the best, "
            f"{best_other}, keeps {others.max():.0%}; zero keeps {facts['zero']:.0%}).")


def answer_alpha_improves(ev: Evidence) -> str:
    row = ev.claim(5, "scale alpha=0.9 on the connective layers: perplexity")
    return (f"On perplexity, barely, if at all: {said(row)}. Read the interval before the point: whether it "
            "excludes zero, and whether a change of that size is a finding or a rounding of the connective layers' "
            "definition. On facts, compare the share answered with its interval (the coherence question).")


def answer_coherence(ev: Evidence) -> str:
    facts = _facts(ev)
    n = int(ev.tables(5)["answers"].groupby("label").size().iloc[0])
    p = float(facts["intact"])
    half_width = 1.96 * np.sqrt(p * (1 - p) / n)
    return (f"Fixed prompts with checkable answers and an interval. With {n} questions and {p:.0%} answered "
            f"intact, a 95% interval is about ±{half_width:.0%} wide: a strategy must move the share by more than "
            "that to be told apart, which is why scale(0.9) and intact cannot be separated and zero can.")


# ---- session 6 -------------------------------------------------------------------------------------------------
def answer_slowest_recovery(ev: Evidence) -> str:
    row = ev.claim(6, "recovery speed correlates")
    runs = ev.tables(6)["runs"]
    matched = runs[(runs["kind"] == "damaged")].groupby("layer")["recovered_fraction"].first()
    return (f"Nobody can tell: {said(row)}. Over the {len(matched)} layers run, the raw share of damage undone at "
            f"the end runs from {matched.min():.0%} to {matched.max():.0%}, and no layer recovers within the budget "
            "by the sham-corrected criterion, so there is no speed to correlate.")


def answer_sham(ev: Evidence) -> str:
    runs = ev.tables(6)["runs"]
    sham = runs[runs["kind"] == "sham"]["final_excess_nll"]
    target = BY_NUMBER[6].defaults(ev.lab.profile.name, ev.name).target_nats
    return (f"Fine-tuning alone moves the loss by {sham.min():+.3f} to {sham.max():+.3f} nats on {ev.name} (the "
            f"sham of each layer, the same steps without damage), against {target:g} nats of damage: a recovery "
            "measured against the intact model counts that drift as recovery.")


def answer_optimiser(ev: Evidence) -> str:
    row = ev.claim(6, "L11 does not recover")
    return (f"A claim about the layer would hold across learning rates, budgets and optimisers, and against the "
            f"sham of the same layer. Here: {said(row)}, but none of the layers run recovers either, so the "
            "verdict cannot single out L11.")


# ---- session 7 -------------------------------------------------------------------------------------------------
def _arms(ev: Evidence) -> pd.Series:
    return ev.tables(7)["runs"].groupby("arm")["final_val_loss"].mean()


def answer_growth_vs_uniform(ev: Evidence) -> str:
    developmental = ev.claim(7, "developmental (the paper's arm)")
    gstack = ev.claim(7, "G_stack (a published operator)")
    small = ev.claim(7, "developmental vs uniform")
    tables = ev.tables(7)
    found = tables.get("frontier")
    opening = ""
    if found is not None and not len(found.get("missing", ())):
        target = f"depth{tables['frontier_params'].target_layers}"
        speed = frontier_analysis.speedups(found["finals"], (1.0,), reference=target)
        names = frontier_report.ARM_NAMES
        ahead = [names.get(arm, arm) for arm in speed.loc[speed["ci_low"] > 1, "arm"]]
        behind = [names.get(arm, arm) for arm in speed.loc[speed["ci_high"] < 1, "arm"]]
        opening = (f"Yes for {', '.join(ahead)}. " if ahead else
                   "No: no growing arm needs detectably less compute"
                   + (f", and {', '.join(behind)} needs more. " if behind else ". "))
    return (opening + "At the compute-optimal size (the question's regime), compute to reach the loss of the "
            f"target depth trained from the start: developmental, {said(developmental)}; G_stack, {said(gstack)} "
            "(a speed-up below 1 means growing needed more compute). On the chapter's small budget, where the "
            f"target is far too large for its budget: {said(small)}.")


def answer_shallow_wins(ev: Evidence) -> str:
    arms = _arms(ev)
    best = arms.idxmin()
    return (f"Yes: the {best} arm ends lowest at {arms[best]:.3f} nats per token, against "
            f"{arms['uniform']:.3f} for uniform and {arms['developmental']:.3f} for developmental (means over "
            "seeds). At this budget the target depth is far too large: a small model wins a small budget before "
            "growth is tested. The chapter's byte-level frontier is the experiment sized for the question.")


def answer_equal_steps(ev: Evidence) -> str:
    row = ev.claim(7, "the paper's protocol")
    return (f"Equal steps reward the arm that is cheap per step: a growing model is shallow early, so equal steps "
            f"give it fewer FLOPs. Even so, {said(row)}.")


# ---- session 8 -------------------------------------------------------------------------------------------------
def _generality(ev: Evidence) -> tuple[int, int, int]:
    first, second = ev.claims(), ev.claims(on_second=True)
    dissection = [c.number for c in CHAPTERS if not c.trains_own_models and c.number != 1]
    first = first[first["chapter"].isin(dissection)].assign(position=lambda t: t.groupby("chapter").cumcount())
    second = second[second["chapter"].isin(dissection)].assign(position=lambda t: t.groupby("chapter").cumcount())
    both = first.merge(second, on=["chapter", "position"], suffixes=("", " 2"))
    same = int((both["Verdict"] == both["Verdict 2"]).sum())
    held = int(((both["Verdict"] == "reproduced") & (both["Verdict 2"] == "reproduced")).sum())
    return len(both), same, held


def answer_gemma(ev: Evidence) -> str:
    n, same, held = _generality(ev)
    return (f"Of the {n} dissection claims judged on both specimens, {same} get the same verdict on "
            f"{ev.second_name} at the same relative depth as on {ev.name}, and {held} are reproduced on both. "
            "Claims tied to a layer number move most; the pattern claims (the ends matter more than the middle; "
            "deltas at the null) travel.")


def answer_how_many(ev: Evidence) -> str:
    n, same, _ = _generality(ev)
    return (f"More than two: with two specimens, {n - same} of {n} claims already change verdict between them. A "
            "claim about transformers needs specimens that differ in the ways it might depend on (family, depth, "
            "training data, quantisation).")


# ---- session 9 -------------------------------------------------------------------------------------------------
def answer_survive(ev: Evidence) -> str:
    return " ".join(headline(ev.claims()))


def answer_what_changes(ev: Evidence) -> str:
    claims = ev.claims()
    inconclusive = claims[claims["Verdict"] == "inconclusive"]["Claim"].tolist()
    return ("The inconclusive ones first: " + "; ".join(f'"{c}"' for c in inconclusive)
            + ". Each needs more seeds or more text (the paper profile), not another rule.") if inconclusive else (
        "No claim is inconclusive at the quick profile.")
