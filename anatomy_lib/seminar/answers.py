"""The teacher's answers, computed: each prediction and discussion question of a session answered from the stored
results the chapter shows, in a sentence with its numbers (never typed: a new result changes the answer).

``Evidence`` loads what the answers read once, read-only (a result that is not stored raises ``NotStored``
rather than starting a computation): the chapters' tables and claims on the book's specimen and on the second
one. Each ``answer_*`` function (a prediction, a discussion question or a task set in class) and each ``model_*``
function (a homework's model answer, for the teacher only) takes it and returns Markdown.
"""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pandas as pd
from scipy import stats

from ..core import rules
from ..core.display import estimate_text
from ..core.lab import open_lab
from ..core.specimens import GEMMA_SPECIMEN
from ..core.stats import t_interval
from ..exercises import specimen as specimen_exercises
from ..exercises.structure import ar1_delta_correlation
from ..growth import FrontierParams, frontier_analysis, frontier_report, parameter_counts
from ..growth.report import EXPERIMENT as SMALL_BUDGET_EXPERIMENT
from ..verdicts import CHAPTERS, book_claims, headline
from .timing import chapter_runs

BY_NUMBER = {c.number: c for c in CHAPTERS}
SIZING_BUDGET_FLOPS = 1e15  # session 7's homework: the budget a target model is sized for
COLLEAGUE_CORRELATION = -0.3  # session 4's homework: the lag-1 delta correlation a colleague reports
RECOVERY_RHO = 0.5  # session 6's homework: the correlation of recovery with importance worth detecting
SHARED_ORDER = 0.8  # a rank correlation from which two importance maps are read as giving the same order
LEVEL, POWER = 0.95, 0.8  # the intervals' level and the power a design is sized for (as the book's rules)


def flops_text(flops: float) -> str:
    """A round FLOP count as a plain power of ten ("1e15", not Python's "1e+15")."""
    return f"{flops:.0e}".replace("e+", "e")


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


def _inconclusive(ev: Evidence) -> dict | None:
    claims = ev.claims()
    found = claims[claims["Verdict"] == rules.INCONCLUSIVE]
    return found.iloc[0].to_dict() if len(found) else None


def model_verdict_words(ev: Evidence) -> str:
    everything = ev.claims()
    claims = everything[everything["chapter"] != 1]  # counted as the introduction counts them: the paper's findings
    counts = claims["Verdict"].value_counts()
    example = _inconclusive(ev)
    decided = (f" For example \"{example['Claim']}\" (chapter {example['chapter']}): {example['Ours']}; "
               f"{example['Note']}." if example is not None else "")
    return (f"A verdict word ({', '.join(rules.VERDICTS)}) promises that our measurement was held to the paper's "
            "number by a rule stated once for the whole book (chapter 9's rules table), with an interval wherever "
            "there is one. It does not promise that the claim holds beyond this specimen, profile and corpus, nor "
            "that the measurement survives the strongest control beside it (a column of its own). Of the paper's "
            f"{len(claims)} findings judged on {ev.name} (chapters 2 to 7; chapter 1's "
            f"{len(everything) - len(claims)} facts about the specimen counted apart, as the introduction counts): "
            + ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
            + ". An inconclusive verdict becomes decided once its interval excludes either the paper's value or no "
            "effect: more of its unit of replication (text blocks, seeds, layers)." + decided)


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


def _budget_parts(ev: Evidence, on_second: bool) -> dict[str, float]:
    tables = ev.tables(1, on_second)
    budget = tables["budget"].set_index("part")
    architecture = tables["architecture"].set_index("property")["value"]

    def row(starts: str) -> pd.Series:
        return budget.loc[[p for p in budget.index if p.startswith(starts)][0]]

    return {"total": float(row("total")["parameters"]), "embedding": float(row("token embedding")["parameters"]),
            "embedding_pct": float(row("token embedding")["share_pct"]), "layers": float(row("all ")["parameters"]),
            "layer": float(row("one decoder layer")["parameters"]),
            "layer_pct": float(row("one decoder layer")["share_pct"]),
            "n_layers": int(architecture["decoder layers"]), "width": int(architecture["d_model"]),
            "vocabulary": int(architecture["vocabulary"]), "head_dim": int(architecture["head dim"]),
            "heads": int(architecture["query heads"])}


def model_gemma_parameters(ev: Evidence) -> str:
    mine, gemma = _budget_parts(ev, False), _budget_parts(ev, True)
    return (f"In the embedding. {ev.second_name} has {gemma['total'] / 1e6:.0f}M parameters against "
            f"{mine['total'] / 1e6:.0f}M; its tied embedding ({gemma['vocabulary']:,} entries x width "
            f"{gemma['width']}) holds {gemma['embedding'] / 1e6:.0f}M ({gemma['embedding_pct']:.0f}%) against "
            f"{mine['embedding'] / 1e6:.0f}M ({mine['embedding_pct']:.0f}%), while its {gemma['n_layers']} layers "
            f"together hold {gemma['layers'] / 1e6:.0f}M against {mine['layers'] / 1e6:.0f}M for "
            f"{mine['n_layers']}. One Gemma layer has {gemma['layer'] / 1e6:.2f}M parameters "
            f"({gemma['layer_pct']:.1f}% of the model): its head size {gemma['head_dim']} is read from the config "
            f"({gemma['heads']} query heads make q {gemma['heads'] * gemma['head_dim']} wide, not the width "
            f"{gemma['width']}), against {mine['layer'] / 1e6:.2f}M ({mine['layer_pct']:.1f}%) for one of "
            f"{ev.name}'s. Prediction: removing one of Gemma's layers removes 1/{gemma['n_layers']} of its depth "
            f"against 1/{mine['n_layers']}, but a {'smaller' if gemma['layer_pct'] < mine['layer_pct'] else 'larger'} "
            "share of its parameters; the share alone says nothing of its importance (chapter 2 measures that).")


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


def model_map_or_method(ev: Evidence) -> str:
    tables = ev.tables(2)
    mean, skip = (tables[m].set_index("layer")["change_pct"] for m in ("neighbor_mean", "skip"))
    top = int(mean.idxmax())
    rho = float(mean.rank().corr(skip.rank()))
    return (f"Of both, in different respects. The same layer costs two different amounts: L{top} replaced by its "
            f"neighbours' mean {_pct(mean[top])}, skipped {_pct(skip[top])}, so the size of a layer's importance "
            f"belongs to the ablation method. The order is "
            + ("shared" if rho >= SHARED_ORDER else "only partly shared")
            + f" (Spearman {rho:.2f} over {len(mean)} layers), so the ranking "
            + ("is" if rho >= SHARED_ORDER else "is only in part") + " a property of the model. A third operator "
            "(zeroing, or the layer's mean activation) "
            "would have to give the same order with a size of its own for the map to be read as the model's.")


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


def model_predictor(ev: Evidence) -> str:
    fits = _fits(ev)
    ridge, previous, mean = (fits[("specimen", name, "out-of-sample")] for name in ("ridge", "previous layer",
                                                                                     "mean layer"))
    random_mean = fits[("random init", "mean layer", "out-of-sample")]
    n_layers = _budget_parts(ev, False)["n_layers"]
    independent = -1 / (n_layers - 1)
    return (f"The bar is a held-out R² above 0, which no constant reaches. On {ev.name} the mean of the other "
            f"layers scores {mean:+.3f}, copying the previous layer {previous:+.2f}, ridge {ridge:+.2f}: none is "
            f"above it. If the layers were independent draws around a common mean (chapter 4's null), the mean of "
            f"the other {n_layers - 1} would score about -1/{n_layers - 1} = {independent:+.3f} (the randomly "
            f"initialised model gives {random_mean:+.3f}); the specimen's {mean:+.3f} is "
            f"{'close to' if abs(mean - independent) <= abs(independent) / 2 else 'far from'} that. A predictor "
            "that could do better has to know what varies smoothly with depth, if anything does: a per-element "
            "trend in the layer index fitted on the other layers, or the two neighbours interpolated, by component. "
            "It is held out by leaving every layer pair that touches the predicted layer out of the fit. A full "
            "answer may conclude that no such predictor exists for these weights, and say why.")


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


def model_colleague_correlation(ev: Evidence) -> str:
    a = 1 + 2 * COLLEAGUE_CORRELATION  # -(1 - a)/2 = c solved for a
    lag1 = ev.tables(4)["weights"].query("lag == 1").groupby("model")["corr"].mean()
    return (f"-(1 - a)/2 = {COLLEAGUE_CORRELATION:g} gives a = {a:g}: each layer keeps {a:.0%} of the previous "
            "layer's deviation from the mean, a smooth drift, not an oscillation (that would need a below 0, a "
            f"correlation below {ar1_delta_correlation(0.0):g}). Before believing it: the same statistic on the "
            "model's layers in shuffled order, and on a random initialisation of the same shape (on "
            f"{ev.name}: shuffled {lag1['layer-shuffled']:+.3f}, random {lag1['random init']:+.3f}, the specimen "
            f"{lag1['specimen']:+.3f}); and the quantisation noise of its checkpoint, independent from layer to "
            f"layer, which pulls the value toward {ar1_delta_correlation(0.0):g}.")


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


def model_prompts(ev: Evidence) -> str:
    facts = _facts(ev)
    n = int(ev.tables(5)["answers"].groupby("label").size().iloc[0])
    intact, scaled = float(facts["intact"]), float(facts["scale(alpha=0.9, writers)"])
    difference = abs(scaled - intact)
    p = (intact + scaled) / 2
    z = stats.norm.ppf(0.5 + LEVEL / 2) + stats.norm.ppf(POWER)
    needed = 2 * p * (1 - p) * (z / difference) ** 2 if difference else math.inf
    size = (f"about {needed:,.0f} questions per model to detect a difference of {difference * 100:.0f} points at "
            f"{POWER:.0%} power (two shares near {p:.0%}), against the chapter's {n}" if math.isfinite(needed) else
            "no number of questions, since the two shares are equal on the chapter's questions")
    return ("Prompts with one short checkable answer that the intact model gets right and that depend on a fact "
            "spread over many layers: a capital (\"The capital of Australia is\"), a date (\"The Second World War "
            "ended in\"), a symbol (\"The chemical symbol for gold is\"). Why they separate: scale(0.9) shrinks every "
            "writer a little, so prompts the intact model answers with a small margin are the first to flip. "
            f"How many: intact answers {intact:.0%}, scale(0.9) {scaled:.0%}; {size}.")


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


def model_recovery_experiment(ev: Evidence) -> str:
    row = ev.claim(6, "recovery speed correlates")
    runs = ev.tables(6)["runs"]
    params = BY_NUMBER[6].defaults(ev.lab.profile.name, ev.name)
    damaged, sham = (runs.loc[runs["kind"] == kind, "wall_s"].mean() for kind in ("damaged", "sham"))
    damaged_runs = runs[runs["kind"] == "damaged"]
    recovered = int(damaged_runs["recovered"].sum())
    z = stats.norm.ppf(0.5 + LEVEL / 2) + stats.norm.ppf(POWER)
    layers = math.ceil((z / math.atanh(RECOVERY_RHO)) ** 2 + 3)  # Fisher's z for a correlation
    n_layers = _budget_parts(ev, False)["n_layers"]
    seeds = params.repeat_count
    hours = min(layers, n_layers) * (seeds * damaged + sham) / 3600
    half_width = math.tanh(stats.norm.ppf(0.5 + LEVEL / 2) / math.sqrt(layers - 3))
    return (f"The correlation is over layers, so the layer is its unit and noise seeds replicate within a layer. "
            f"Now: {said(row)}. Detecting a Spearman correlation of {RECOVERY_RHO:g} at {POWER:.0%} power needs "
            f"about {layers} layers (Fisher's z), which {'exceeds' if layers > n_layers else 'fits'} the "
            f"specimen's {n_layers}: run {'every layer' if layers >= n_layers else f'{layers} layers'}, each with "
            f"{seeds} noise seeds and its sham, at the chapter's {params.steps} steps (where the raw criterion sees "
            f"{recovered} of {len(damaged_runs)} damaged runs recover). At the stored runs' speed "
            f"({damaged / 60:.1f} minutes a damaged run, "
            f"{sham / 60:.1f} a sham, on a 2-core CPU) that is about {hours:.1f} hours. Expect an interval about "
            f"±{half_width:.2f} wide where the correlation is near zero, so only a correlation of about "
            f"{RECOVERY_RHO:g} or more would be decided.")


# ---- session 7 -------------------------------------------------------------------------------------------------
def _arms(ev: Evidence) -> pd.Series:
    return ev.tables(7)["runs"].groupby("arm")["final_val_loss"].mean()


def _paired_final(runs: pd.DataFrame, arm: str, control: str) -> tuple[float, float, float]:
    """Final validation loss of ``arm`` minus ``control``, paired by seed, with its t-interval."""
    final = runs.pivot(index="seed", columns="arm", values="final_val_loss")
    return t_interval((final[arm] - final[control]).to_numpy())


def _nats(estimate: tuple[float, float, float]) -> str:
    return estimate_text(*estimate, decimals=3)


def _frontier(ev: Evidence):
    """The frontier's tables and parameters where its sweep is complete, else (None, parameters)."""
    tables = ev.tables(7)
    found = tables.get("frontier")
    complete = found is not None and frontier_report.is_complete(found)
    return (found if complete else None), tables["frontier_params"]


def _speedup(row) -> str:
    interval = f" [{row.ci_low:.2f}, {row.ci_high:.2f}]" if np.isfinite(row.ci_low) else ""
    return f"{row.speedup:.2f}x{interval}"


def _small_budget_tokens_per_parameter(ev: Evidence) -> float:
    """Tokens the small-budget study's uniform arm sees per body parameter of its target."""
    params = BY_NUMBER[7].defaults(ev.lab.profile.name, None)
    tokens = params.budget_steps * params.batch * params.context
    return tokens / parameter_counts(params.shape, params.target_layers)["body"]


def answer_growth_vs_uniform(ev: Evidence) -> str:
    runs = ev.tables(7)["runs"]
    growing = [arm for arm in ("gstack", "developmental") if arm in set(runs["arm"])]
    names = frontier_report.ARM_NAMES
    small = "; ".join(f"{names.get(arm, arm)} minus uniform {_nats(_paired_final(runs, arm, 'uniform'))}, minus "
                      f"shallow {_nats(_paired_final(runs, arm, 'shallow'))}" for arm in growing)
    seeds = runs["seed"].nunique()
    ahead = [names.get(arm, arm) for arm in growing if _paired_final(runs, arm, "uniform")[2] < 0]
    behind_shallow = [names.get(arm, arm) for arm in growing if _paired_final(runs, arm, "shallow")[1] > 0]
    claims = ev.claims()
    small_claims = claims[(claims["chapter"] == 7) & (claims["Experiment"] == SMALL_BUDGET_EXPERIMENT)]
    explained = small_claims.loc[small_claims["Survives"] == rules.SURVIVES_NO, "Claim"].tolist()
    small_sentence = (f"At the chapter's small budget (the final-loss table; nats per token, paired by seed over "
                      f"{seeds} seeds; below zero: the growing arm lower): {small}. "
                      + (f"{', '.join(ahead)} beat{'s' if len(ahead) == 1 else ''} full depth there (an interval "
                         "below zero)" if ahead else "No growing arm beats full depth there detectably")
                      + (f"; the shallow model at the same FLOPs beats {', '.join(behind_shallow)} (an interval above "
                         "zero), so what growth gains there it gains by being shallow for longer" if behind_shallow
                         else "; no growing arm is shown to trail the shallow model at the same FLOPs")
                      + (". Under 'survives its control' the small budget's claims read 'no' for: "
                         + "; ".join(f'"{c}"' for c in explained) + "." if explained else "."))
    found, params = _frontier(ev)
    if found is None:
        return ("The compute-optimal frontier is not complete, so the verdict uses the small budget only. "
                + small_sentence)
    target = f"depth{params.target_layers}"
    at_c = frontier_analysis.speedups(found["finals"], (1.0,), reference=target)
    ahead = [names.get(r.arm, r.arm) for r in at_c.itertuples() if r.ci_low > 1]
    behind = [names.get(r.arm, r.arm) for r in at_c.itertuples() if r.ci_high < 1]
    verdict = (f"Yes for {', '.join(ahead)}" if ahead else "No: no growing arm needs detectably less compute"
               + (f" and {', '.join(behind)} needs more" if behind else ""))
    speedups = "; ".join(f"{names.get(r.arm, r.arm)} {_speedup(r)}" for r in at_c.itertuples())
    return (f"{verdict}, read at C*, where the {params.target_layers}-layer target is sized for its budget (the "
            "comparison the question needs). Speed-up to the loss of the target trained from the start, above 1 "
            f"when growing needs less compute: {speedups}. {small_sentence} The small budget's target sees "
            f"{_small_budget_tokens_per_parameter(ev):.2f} tokens per body parameter against "
            f"{params.tokens_per_parameter:g} at C*: far too large for its budget, which is why the verdict is read "
            "at C*.")


def answer_equal_steps(ev: Evidence) -> str:
    row = ev.claim(7, "the paper's protocol")
    opening = (f"Equal steps reward the arm that is cheap per step: a growing model is shallow early, so equal steps "
               f"give it fewer FLOPs. Even so, {said(row)}. ")
    found, params = _frontier(ev)
    if found is None:
        return opening + ("What would convince: a speed-up against the compute-optimal frontier at matched FLOPs, "
                          "paired by seed, whose interval lies above 1; that sweep is not complete yet.")
    table = frontier_report.speedup_table(found)
    names = frontier_report.ARM_NAMES
    at_c = "; ".join(f"{names.get(r.arm, r.arm)} {_speedup(r)}" for r in table.itertuples() if r.multiple == 1.0)
    above = [f"{names.get(r.arm, r.arm)} at {r.multiple:g} C*" for r in table.itertuples() if r.ci_low > 1]
    return (opening + "What would convince: a speed-up against the frontier (the best fixed depth at each budget, "
            "the shallow model at the same FLOPs included) at matched FLOPs, paired by seed, whose interval lies "
            "wholly above 1, at a budget where the target is the right size. The book's values at C*: "
            f"{at_c}. Of the {len(table)} read-outs ({', '.join(f'{m:g} C*' for m in sorted(set(table['multiple'])))}"
            " for each growing arm), "
            + (f"{len(above)} have an interval wholly above 1: {', '.join(above)}." if above else
               "none has an interval wholly above 1 (an estimate above 1 with an interval reaching below it does "
               "not convince): none convinces yet."))


def answer_sizing(ev: Evidence) -> str:
    params = FrontierParams.for_profile(ev.lab.profile.name)
    body = params.body_parameters
    per_token = params.token_flops(params.target_layers)
    tokens = params.tokens_per_parameter * body
    rule_of_thumb = 6 * body * tokens
    return (f"Body parameters (decoder layers and final norm): {body:,}. Tokens at "
            f"{params.tokens_per_parameter:g} per body parameter: {tokens / 1e6:.2f}M. Training FLOPs per token in "
            f"the chapter's convention: {per_token / 1e6:.2f}M (forward and backward, attention's T x T products and "
            f"the head included), so C* = {params.c_star:.3g} FLOPs. The rule of thumb 6 N D gives "
            f"{rule_of_thumb:.3g}: at this width the attention and the head add "
            f"{params.c_star / rule_of_thumb - 1:.0%}, which is why the chapter counts them.")


def _sized_for(params: FrontierParams, budget: float) -> FrontierParams:
    """The design's width (a multiple of its head size) whose C* is nearest ``budget`` on a log scale."""
    head = params.width // params.heads
    candidates = [params.at_width(head * k) for k in range(1, 129)]
    return min(candidates, key=lambda p: abs(math.log(p.c_star / budget)))


def model_sizing(ev: Evidence) -> str:
    params = FrontierParams.for_profile(ev.lab.profile.name)
    sized = _sized_for(params, SIZING_BUDGET_FLOPS)
    tokens = sized.tokens_per_parameter * sized.body_parameters
    found, _ = _frontier(ev)
    design = ev.tables(7)["frontier"]["design"]
    train_bytes = float((design["tokens"] / design["passes"]).iloc[0])
    best = ""
    if found is not None:
        front = frontier_analysis.frontier_table(found["finals"]).set_index("multiple")
        if 1.0 in front.index:
            best = (f"; or from the frontier's best fixed depth at C* in the chapter's sweep, the "
                    f"{front.loc[1.0, 'best_depth'].removeprefix('depth')}-layer model")
    return (f"Width {sized.width} ({sized.heads} heads, MLP {sized.mlp_width}): {sized.body_parameters:,} body "
            f"parameters, {sized.token_flops(sized.target_layers) / 1e6:.2f}M training FLOPs per token, so "
            f"{tokens / 1e6:.1f}M tokens at {sized.tokens_per_parameter:g} per body parameter and C* = "
            f"{sized.c_star:.3g} FLOPs, the nearest to {flops_text(SIZING_BUDGET_FLOPS)} (the next widths give "
            f"{sized.at_width(sized.width - sized.width // sized.heads).c_star:.3g} and "
            f"{sized.at_width(sized.width + sized.width // sized.heads).c_star:.3g}); {tokens / train_bytes:.1f} "
            f"passes over the chapter's {train_bytes / 1e6:.1f}M training bytes. Grow it from "
            f"{sized.start_layers} layers, as G_stack stacks its base {sized.target_layers // sized.start_layers} "
            f"times over{best}.")


def answer_shallow_wins(ev: Evidence) -> str:
    arms = _arms(ev)
    best = arms.idxmin()
    return (f"Yes: the {best} arm ends lowest at {arms[best]:.3f} nats per token, against "
            f"{arms['uniform']:.3f} for uniform and {arms['developmental']:.3f} for developmental (means over "
            "seeds). At this budget the target depth is far too large: a small model wins a small budget before "
            "growth is tested. The chapter's byte-level frontier is the experiment sized for the question.")




# ---- session 8 -------------------------------------------------------------------------------------------------
def _both_specimens(ev: Evidence) -> pd.DataFrame:
    """The dissection chapters' claims on both specimens, matched by chapter and position (columns of the second
    specimen end in " 2")."""
    first, second = ev.claims(), ev.claims(on_second=True)
    dissection = [c.number for c in CHAPTERS if not c.trains_own_models and c.number != 1]
    first = first[first["chapter"].isin(dissection)].assign(position=lambda t: t.groupby("chapter").cumcount())
    second = second[second["chapter"].isin(dissection)].assign(position=lambda t: t.groupby("chapter").cumcount())
    return first.merge(second, on=["chapter", "position"], suffixes=("", " 2"))


HOLDS = ("supported", "supported in part")  # a measurement reproduced and not matched by its control


def _held_on_both(both: pd.DataFrame) -> pd.DataFrame:
    """The claims that hold on both specimens: reproduced and surviving their control on each (a reproduced
    measurement that its control, or every comparison unit, matches holds nowhere)."""
    return both[both["Standing"].isin(HOLDS) & both["Standing 2"].isin(HOLDS)]


def _generality(ev: Evidence) -> tuple[int, int, int]:
    both = _both_specimens(ev)
    same = int((both["Verdict"] == both["Verdict 2"]).sum())
    return len(both), same, len(_held_on_both(both))


def answer_gemma(ev: Evidence) -> str:
    n, same, held = _generality(ev)
    return (f"Of the {n} dissection claims judged on both specimens, {same} get the same verdict on "
            f"{ev.second_name} at the same relative depth as on {ev.name}, and {held} hold on both (reproduced "
            "and surviving their control on each). "
            "Claims tied to a layer number move most; the pattern claims (the ends matter more than the middle; "
            "deltas at the null) travel.")


def answer_how_many(ev: Evidence) -> str:
    n, same, _ = _generality(ev)
    return (f"More than two: with two specimens, {n - same} of {n} claims already change verdict between them. A "
            "claim about transformers needs specimens that differ in the ways it might depend on (family, depth, "
            "training data, quantisation).")


def model_two_claims(ev: Evidence) -> str:
    both = _both_specimens(ev)
    held = _held_on_both(both)
    moved = both[both["Verdict"] != both["Verdict 2"]]
    parts = []
    if len(held):
        r = held.iloc[0]
        parts.append(f"Holds on both: \"{r['Claim']}\" (chapter {r['chapter']}), {r['Standing']} on {ev.name} "
                     f"({r['Ours']}) and {r['Standing 2']} on {ev.second_name} ({r['Ours 2']}); a third specimen "
                     "of another family should show it too if it is a property of transformers.")
    else:
        parts.append("No claim holds on both specimens (reproduced and surviving its control on each), so the first "
                     "half has no example here: say so.")
    if len(moved):
        r = moved.iloc[0]
        parts.append(f"Moves: \"{r['Claim']}\" (chapter {r['chapter']}), {r['Verdict']} on {ev.name} against "
                     f"{r['Verdict 2']} on {ev.second_name}; a third specimen decides which of the two is the "
                     "exception, and one that differs from both in the suspected cause (family, depth, training "
                     "data, quantisation) says whether that cause matters.")
    return (" ".join(parts) + " A good third specimen differs from both in one way at a time: a base model of "
            "SmolLM2's family at another depth, for instance.")


# ---- session 9 -------------------------------------------------------------------------------------------------
def answer_survive(ev: Evidence) -> str:
    return " ".join(headline(ev.claims()))


def answer_what_changes(ev: Evidence) -> str:
    claims = ev.claims()
    inconclusive = claims[claims["Verdict"] == "inconclusive"]["Claim"].tolist()
    return ("The inconclusive ones first: " + "; ".join(f'"{c}"' for c in inconclusive)
            + ". Each needs more seeds or more text (the paper profile), not another rule.") if inconclusive else (
        "No claim is inconclusive at the quick profile.")


def model_settle_inconclusive(ev: Evidence) -> str:
    example = _inconclusive(ev)
    if example is None:
        return "No claim is inconclusive at this profile: the question has no subject until one is."
    return (f"For example \"{example['Claim']}\" (chapter {example['chapter']}): {example['Ours']} "
            f"({example['Note']}). Its interval holds both the paper's value and no effect. The experiment: more of "
            "its unit of replication until the interval is narrower than the distance between the two (an "
            "interval narrows as one over the square root of the units: half as wide takes four times as many), "
            "under the same rule "
            "and control. If the interval then excludes no effect in the paper's direction, the claim is "
            "reproduced or partly so; if it excludes the paper's value, not reproduced.")
