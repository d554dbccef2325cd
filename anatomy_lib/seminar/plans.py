"""The course: a 90-minute plan written for each session (a set-up session 0, then one per chapter), with what is
introduced before the prediction, the predictions (each naming the output on the chapter's page that answers it,
and answered by a function of the stored results), the live work, the exercises, the groups, the discussion, a
pre-reading, and a homework with its rubric; and the final project.

A plan's order is checked (``order_problems``): nothing that answers a prediction is shown before the students
have written their answer down. The answers themselves are in ``answers`` (with the model answer of each homework
and the answer of any task set in class); the sheets and the guide's HTML in ``sheets``.

A pre-reading names where it starts and, computed from the page (``sheets.reading_html``), where it stops: the next
heading, or the paragraph a plan names where a section gives a prediction away before its end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from .. import exercises
from ..core.specimens import GEMMA_SPECIMEN
from ..growth import FrontierParams
from ..growth.bytes import VOCAB_SIZE
from ..importance import SECOND_SELECTION
from . import answers as a

SESSION_MINUTES = 90
CELLS = ("read", "pause", "live")  # read from the built page, no computer, cells run in the session


@dataclass(frozen=True)
class Question:
    text: str
    answered_by: str  # the output of the chapter's page that answers it (a figure, table or finding)
    answer: Callable  # Evidence -> Markdown, computed from the stored results


@dataclass(frozen=True)
class Segment:
    minutes: int
    activity: str
    cells: str  # one of CELLS
    shows: tuple[str, ...] = ()  # outputs of the chapter's page on screen in this segment
    predict: bool = False  # the segment in which the predictions are written down
    answer: Callable | None = None  # Evidence -> Markdown: the answer to a task set in this segment (teacher's notes)


@dataclass(frozen=True)
class Homework:
    exercises: tuple[str, ...]  # keys of exercises that check themselves
    question: str  # a short written question
    rubric: tuple[tuple[int, str], ...]  # (points, what earns them)
    # Evidence -> Markdown: what a full-marks answer says, computed where it has numbers; in the teacher's notes
    # only, never on the handout or the slides. None: the notes say there is no model answer.
    model_answer: Callable | None = None

    @property
    def points(self) -> int:
        return sum(p for p, _ in self.rubric)


@dataclass(frozen=True)
class SessionPlan:
    number: int
    title: str
    goals: str
    introduce: str  # concepts introduced before the prediction (no results)
    # (the heading of the section to read, exactly as the page has it: a section of the chapter (session 0: of the
    # introduction) that explains the method, never one that shows the results; the outside work's BibTeX key).
    # The reading stops at the next heading of its level or above (``sheets.reading_stop``).
    reading: tuple[str, str]
    predictions: tuple[Question, ...]
    segments: tuple[Segment, ...]
    groups: dict  # {group: overrides} for ``groups.group_verdicts``
    fallback: str  # the same session without a kernel
    discussion: tuple[Question, ...]
    homework: Homework
    group_note: str = ""  # what to compare across the groups (never what they will find: the notes compute that)
    misconceptions: tuple[str, ...] = field(default=())  # beyond the exercises' catalogued mistakes
    reading_also: tuple[str, ...] = ()  # further sections of the same page, each read to its own stop
    # the opening words of the paragraph the reading stops before, where its section gives a prediction away before
    # its next heading (the stop is then that paragraph, not the heading)
    reading_stop: str = ""
    group_tasks: dict = field(default_factory=dict)  # {group: what it reads and does}, beside its overrides

    @property
    def chapter(self) -> int | None:
        """The chapter the session teaches (session n teaches chapter n; session 0 none)."""
        return self.number or None

    @property
    def predict(self) -> str:  # the handout's prediction text (one question per box)
        return " ".join(q.text for q in self.predictions)

    @property
    def discuss(self) -> str:
        return " ".join(q.text for q in self.discussion)

    @property
    def exercise_keys(self) -> tuple[str, ...]:
        return tuple(e.key for e in exercises.of_chapter(self.chapter)) if self.chapter else ()


INTRO_TITLE = "Anatomy of a Transformer"  # the introduction's (book/intro.md) title: its opening
INTRO_SECTIONS = ("How to read it", "Which model produced which figure")  # its sections on reading the book
GEMMA = {"specimen": GEMMA_SPECIMEN}
FRONTIER = {"experiment": "frontier"}
DESIGN = FrontierParams.for_profile("quick")  # chapter 7's compute-optimal design, at the profile the book is built at
FRONTIER_SECTION = "Growth where the question has an answer"  # chapter 7's first section: the frontier
SMALL_BUDGET_SECTION = "The paper's protocol at a small budget: the models"
# chapter 7's outputs, named as the page names them: its caption and section, or its section and columns
SPEEDUP_CAPTION = "speed-up to each reference's loss (geometric mean, paired by seed)"
SPEEDUP_COLUMN = f"vs {DESIGN.target_layers} layers from the start"  # as ``growth.frontier_speedups`` heads it
SPEEDUP_TABLE = f"the table '{SPEEDUP_CAPTION}' in '{FRONTIER_SECTION}', its column '{SPEEDUP_COLUMN}'"
SIDE_BY_SIDE = "the guide's side-by-side verdicts"  # the groups' table under the session in the seminar guide
FINAL_LOSS_TABLE = "the final-loss table in 'Loss against compute' (its columns final_loss and minus_uniform)"


def _exercise_segment(minutes: int, chapter: int, then: str) -> Segment:
    keys = ", ".join(e.key for e in exercises.of_chapter(chapter))
    return Segment(minutes, f"In pairs, the exercises that check themselves ({keys}): write, check, read the hint, "
                            f"check again. {then}", "live")


PLANS: dict[int, SessionPlan] = {
    0: SessionPlan(
        0, "Setting up", "Every student has the book running (in Colab or locally) and knows its conventions.",
        "What the book is: a replication of one paper, chapter by chapter, with controls the paper lacks. The two "
        "commands (`make book`, `make test`); profiles (`smoke`, `quick`, `paper`); the results store under "
        "`data/` and its manifests; the verdict words and the rule behind each.",
        (INTRO_TITLE, "wietrzykowski2026anatomical"),
        (Question("How long will chapter 2 take to run on your machine at its defaults, and why is it far less than "
                  "its computation took?", "the guide's table of how long each chapter takes", a.answer_store_speed),),
        (Segment(15, "The teacher introduces the paper and the book's conventions (profiles, the store, the verdict "
                     "words).", "read"),
         Segment(5, "Everyone writes an answer to the prediction.", "pause", predict=True),
         Segment(30, "Set-up: half the room opens chapter 1 in Colab (the rocket icon), half clones the repository "
                     "and runs `make book` or `make install`; the teacher helps whoever is stuck.", "live",
                 shows=("the guide's table of how long each chapter takes",)),
         Segment(20, "Everyone runs chapter 1's first cells and the first exercise's stub, then its check "
                     "(`exercises.check`), and reads the hint it prints.", "live"),
         Segment(10, "Groups: Colab and local machines compare chapter 1's execution time with the guide's table.",
                 "live"),
         Segment(10, "Discussion and the reading for session 1.", "pause")),
        {"Colab": {}, "a local machine": {}},
        "the built book alone: every page is static, and the exercises' checkers run in any Python with the "
        "library installed",
        (Question("Which of the book's conventions would you change for your own replication, and why?",
                  "the introduction", a.answer_conventions),),
        Homework(("layer-parameters",),
                 "In five sentences: what does a verdict word in this book promise, and what does it not?",
                 ((2, "names the rule behind a verdict (a stated threshold, an interval)"),
                  (2, "says what an 'inconclusive' verdict would need to become decided"),
                  (1, "one concrete example from the book's pages")),
                 model_answer=a.model_verdict_words),
        group_note="Colab loads the paper's base model from the hub; the local machine falls back to the offline "
                   "specimen: the first place the two halves of the room see different numbers.",
        misconceptions=("running a chapter recomputes its results (it reads them from the store when they match)",
                        "Colab's numbers are wrong because they differ from the site's (they come from another "
                        "checkpoint, the base model)",
                        "an exercise's failed first check is an error in the library (the stub is meant to fail)"),
        # how to read the book, never its findings: the introduction's "What the book found" is skipped
        reading_also=INTRO_SECTIONS),
    1: SessionPlan(
        1, "The specimen", "Read an architecture off a loaded model; know where the parameters sit; an interval "
        "over text blocks, and why tokens are the wrong unit.",
        "A decoder layer's tensors (q, k, v, o; gate, up, down; the norm gains), grouped-query attention, tied "
        "embeddings. Perplexity as the exponential of the mean NLL. The bootstrap: resample the unit that is "
        "independent.",
        ("1. The specimen", "efron1993bootstrap"),
        (Question("What share of the parameters is the token embedding?", "the budget table", a.answer_embedding_share),
         Question("Would a perplexity interval be narrower or wider if it resampled tokens instead of blocks?",
                  "the perplexity interval", a.answer_interval_unit)),
        (Segment(15, "The teacher draws one decoder layer on the board from its config (no model loaded yet) and "
                     "introduces the bootstrap over blocks.", "read"),
         Segment(10, "Everyone writes an answer to the two predictions.", "pause", predict=True),
         Segment(15, "Run chapter 1 live: the architecture, then the budget table and the perplexity interval; "
                     "compare with the predictions.", "live", shows=("the budget table", "the perplexity interval")),
         _exercise_segment(25, 1, "layer-parameters was the set-up session's homework: pairs compare theirs first. "
                                  "Those who finish derive the Gemma layer's count by hand."),
         Segment(15, "Groups: one reads the chapter on the book's specimen, one on Gemma-3-270M; the claims go side "
                     "by side.", "live", shows=(SIDE_BY_SIDE,)),
         Segment(10, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "read the budget table and the interval on the built page; the exercises' checkers run in any Python "
        "with the library installed",
        (Question("The offline specimen is quantised and instruction-tuned. Which later claims could that change, "
                  "and which should be immune?", "chapter 4's quantisation null", a.answer_checkpoint),),
        Homework(("perplexity-interval",),
                 "Gemma-3-270M has about twice SmolLM2-135M's parameters and fewer layers. Where do Gemma's extra "
                 "parameters sit, and what does that predict about layer ablations on it?",
                 ((2, "the embedding's share computed from the vocabulary and width"),
                  (2, "the per-layer count from the config (the head size read from it, not width / heads)"),
                  (1, "a prediction stated before looking at chapter 2 on Gemma")),
                 model_answer=a.model_gemma_parameters),
        group_note="Chapter 1's claims describe the paper's specimen: compare each size claim across the two "
                   "columns, and ask which sizes a claim about 'the model' would need to carry over."),
    2: SessionPlan(
        2, "Importance by ablation", "Ablate one layer at a time; read intervals; compare ablation methods.",
        "The residual stream; what removing a layer means (zero it, skip it, replace it by its neighbours' mean) "
        "and why the choice matters; a paired bootstrap interval of a perplexity change.",
        ("The sweep", "men2024shortgpt"),
        (Question("Which layer will matter most?", "the figure in 'The anatomy strip'", a.answer_most_important),
         Question("Will replacing a layer by its neighbours' mean and skipping it agree?",
                  "the figure in 'Ablation modes compared'", a.answer_methods_agree)),
        (Segment(15, "The teacher introduces the three ablation operators on one layer of a drawn residual stream, "
                     "and the paired interval (no map shown yet).", "read"),
         Segment(10, "Everyone writes an answer to the two predictions, as a layer number and yes/no.", "pause",
                 predict=True),
         Segment(15, "Run chapter 2 (stored): the anatomy strip, then the figure in 'Ablation modes compared'.", "live",
                 shows=("the figure in 'The anatomy strip'", "the figure in 'Ablation modes compared'")),
         _exercise_segment(20, 2, ""),
         Segment(15, "Groups: the defaults, another selection of evaluation text, Gemma-3-270M; the verdicts go "
                     "side by side.", "live", shows=(SIDE_BY_SIDE,)),
         Segment(15, "Discussion.", "pause")),
        {"defaults": {}, "another selection of text": {"blocks_seed": SECOND_SELECTION, "seed": SECOND_SELECTION},
         "Gemma-3-270M": GEMMA},
        "the static explorer on the page answers the single-layer questions; joint ablations need a kernel",
        (Question("What would an \"anti-layer\" need to be real?", "the importance map's intervals",
                  a.answer_anti_layer),),
        Homework(("neighbour-mean", "paired-interval"),
                 "Is the paper's importance map a map of the model or of its ablation method? Answer from two "
                 "numbers on chapter 2's page.",
                 ((2, "quotes the two operators' costs for the same layer"),
                  (2, "separates the ranking (shared) from the size (method-bound)"),
                  (1, "says what a third operator would have to show")),
                 model_answer=a.model_map_or_method),
        group_note="A verdict that survives another selection of text is a property of the model on this corpus; "
                   "one that moves is a property of the sample."),
    3: SessionPlan(
        3, "Weight predictability", "In-sample against held-out fits; baselines any predictor must beat.",
        "Ridge regression; what R² measures (against the mean of the actual values) and why it can be negative; "
        "in-sample against held-out; a random projection of weights as features.",
        ("3. Weight predictability and the R²-perplexity paradox", "hoerl1970ridge"),
        (Question("With one sample per layer pair and more features than samples, what in-sample R² will a randomly "
                  "initialised model reach?", "the in-sample against held-out R² figure", a.answer_random_in_sample),
         Question("Will ridge beat copying the previous layer on held-out layers?", "the fits table",
                  a.answer_ridge_vs_previous)),
        (Segment(15, "The teacher introduces ridge, R² against the mean, and the split of layer pairs into training "
                     "and held-out ones, on the board (no figure yet).", "read"),
         Segment(10, "Everyone writes a number for the first prediction and yes/no for the second.", "pause",
                 predict=True),
         Segment(15, "Run chapter 3 (stored): the in-sample against held-out figure, then the fits table.", "live",
                 shows=("the in-sample against held-out R² figure", "the fits table")),
         _exercise_segment(20, 3, ""),
         Segment(15, "Groups: the book's specimen and Gemma-3-270M; the substitution verdicts side by side.", "live",
                 shows=(SIDE_BY_SIDE,)),
         Segment(15, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the kernel-free prediction explorer on the page",
        (Question("Is there an \"R²-perplexity paradox\" once R² is measured out of sample?", "the substitution table",
                  a.answer_paradox),),
        Homework(("held-out-ridge", "r2"),
                 "R² is measured against the held-out layer's own mean, so a constant at that mean scores exactly 0 "
                 "and all zeros at most 0. Using only the other layers' weights (never the held-out layer's values "
                 "or any statistic of them), design a predictor whose held-out R² would be above 0, where the mean "
                 "of the other layers is not. What would it have to know that ridge on a projection does not?",
                 ((2, "states the bar (above 0: better than any constant) and the mean layer's held-out R² below it"),
                  (2, "uses only other layers' weights, with information beyond the previous layer (depth, "
                      "position, component)"),
                  (1, "says how it would be held out (no layer pair touching the predicted layer in the fit)")),
                 model_answer=a.model_predictor),
        group_note="Compare in-sample against held-out R² on each specimen, then the substitution rows: each "
                   "specimen substitutes the layers at the same relative depth, which its cell names where the "
                   "numbers differ."),
    4: SessionPlan(
        4, "Weight structure", "Derive the delta correlation for independent layers; use shuffled and random models "
        "as nulls; separate quantisation noise from structure.",
        "Deltas between consecutive layers, D_l = W_(l+1) - W_l; covariance algebra; a null model (what the "
        "statistic gives when there is no structure).",
        ("4. Weight structure: the -0.50 and its null models", "rudelson2007sampling"),
        (Question("What lag-one correlation do independent layers give, and what do a random walk and an "
                  "autoregressive process give?", "the delta-correlation figure", a.answer_delta_nulls),),
        (Segment(15, "The teacher introduces deltas and covariance rules (var of a difference, cov of overlapping "
                     "differences) without computing the answer.", "read"),
         Segment(15, "Everyone derives, on paper, the correlation for independent layers, then guesses the other "
                     "two.", "pause", predict=True),
         Segment(15, "Run chapter 4 (stored): the delta-correlation figure with its nulls.", "live",
                 shows=("the delta-correlation figure",)),
         _exercise_segment(20, 4, "The ar1-null exercise holds the derivation to a formula."),
         Segment(15, "Groups: the book's specimen and Gemma-3-270M.", "live", shows=(SIDE_BY_SIDE,)),
         Segment(10, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the kernel-free delta map explorer on the page",
        (Question("When does a number that matches a null model still tell us something?", "the nulls' figure",
                  a.answer_null_match),),
        Homework(("delta-correlation", "ar1-null"),
                 f"A colleague finds lag-1 delta correlations of {a.COLLEAGUE_CORRELATION:g} in another model. What "
                 "does it say about its layers, by the AR(1) formula, and what null would you run before believing "
                 "it?",
                 ((2, f"solves -(1 - a)/2 = {a.COLLEAGUE_CORRELATION:g} for a"),
                  (2, "names a shuffled or random-initialisation null"),
                  (1, "mentions quantisation noise as a confound")),
                 model_answer=a.model_colleague_correlation),
        group_note="Compare each specimen's lag-1 correlation with its own nulls (shuffled layers, a random "
                   "initialisation), not with the paper's number: the same verdict on both says a result generalises, "
                   "not that it says anything about structure.",
        # the opening's second paragraph derives the value for independent layers: today's first prediction
        reading_stop="Before reading meaning into -0.50"),
    5: SessionPlan(
        5, "Manipulation strategies", "Weight surgery that always restores the model; scaling against replacing; "
        "measuring coherence with factual questions and intervals.",
        "Which tensors write to the residual stream (pre-norm and post-norm families); scaling a layer by alpha; "
        "a coherence measure with fixed prompts and an interval; surgery that restores bit for bit.",
        ("What each strategy does", "wang2023ioi"),
        (Question("Which strategy keeps the most facts when applied to every connective-tissue layer at once?",
                  "the facts table", a.answer_best_strategy),
         Question("Is there an alpha that improves perplexity?", "the alpha curves", a.answer_alpha_improves)),
        (Segment(15, "The teacher introduces the five strategies on one layer and the factual questions (shown, "
                     "unanswered).", "read"),
         Segment(10, "Everyone ranks the five strategies by facts kept and picks an alpha.", "pause",
                 predict=True),
         Segment(15, "Run chapter 5 (stored): the strategy map, the alpha curves, then the facts table.", "live",
                 shows=("the strategy map", "the alpha curves", "the facts table")),
         _exercise_segment(20, 5, ""),
         Segment(15, "Groups: the book's specimen and Gemma-3-270M (a post-norm family).", "live",
                 shows=(SIDE_BY_SIDE,)),
         Segment(15, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the kernel-free strategy explorer on the page",
        (Question("What makes a coherence measure trustworthy? How many questions does a difference need?",
                  "the facts table's intervals", a.answer_coherence),),
        Homework(("alpha-scaling", "exact-restore"),
                 "Write three factual prompts that would separate scale(0.9) from the intact model better than the "
                 "chapter's, and say why.",
                 ((2, "prompts with one checkable answer each"),
                  (2, "argues from the interval's width how many such prompts are needed"),
                  (1, "avoids prompts the intact model already fails")),
                 model_answer=a.model_prompts),
        group_note="On a post-norm family the writers are different tensors: the same strategy is a different edit."),
    6: SessionPlan(
        6, "Recovery speed", "Damage matched in nats; shams as controls; recovery judged by an interval.",
        "Fine-tuning a damaged model; matching damage in nats (not in noise level); the sham (the same fine-tuning "
        "without damage); a criterion for 'recovered' that holds up to its interval.",
        ("What we chose, and why", "efron1993bootstrap"),
        (Question("Will the most important layer recover slowest?", "the recovery-against-importance figure",
                  a.answer_slowest_recovery),
         Question("How much does fine-tuning alone (the sham) move the loss?", "the recovery curves with their shams",
                  a.answer_sham)),
        (Segment(15, "The teacher introduces matched damage, the sham and the criterion; no curve is shown.", "read"),
         Segment(10, "Everyone writes a yes/no and a number in nats.", "pause", predict=True),
         Segment(15, "Run chapter 6 (stored): the recovery curves with their shams, then recovery against "
                     "importance.", "live",
                 shows=("the recovery curves with their shams", "the recovery-against-importance figure")),
         _exercise_segment(20, 6, ""),
         Segment(15, "Groups: the book's specimen and Gemma-3-270M.", "live", shows=(SIDE_BY_SIDE,)),
         Segment(15, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the kernel-free recovery explorer on the page (recomputing a run takes minutes per layer on a CPU)",
        (Question("\"Recovers within N steps\" is a claim about an optimiser as much as about a layer. What would a "
                  "claim about the layer alone look like?", "the criterion sensitivity table", a.answer_optimiser),),
        Homework(("recovery-criterion", "matched-damage"),
                 "Propose the smallest experiment that would make 'recovery speed correlates with importance' "
                 "decidable on a 2-core laptop CPU: seeds, layers, budget, and the interval you expect.",
                 ((2, "noise seeds as the unit of replication"),
                  (2, "a budget where some layer recovers, with the sham"),
                  (1, "a power or interval argument")),
                 model_answer=a.model_recovery_experiment),
        group_note="Compare each specimen's sham (what the fine-tuning does without damage) before its verdicts: a "
                   "raw recovery criterion would judge the specimens by their sham's drift, not by their layers."),
    7: SessionPlan(
        7, "Growth at matched compute", "Matched compute; several seeds; the controls that could explain a gain away; "
        "a regime where the question has an answer.",
        "FLOP accounting (2 FLOPs per multiply-add, attention's T x T products, the head; forward and backward); "
        f"compute-optimal sizes: C*, the compute-optimal budget, is {DESIGN.tokens_per_parameter:g} tokens per body "
        "parameter (decoder layers and final norm, the embedding not counted) times the training FLOPs per token; "
        "growth operators (G_stack, MIDAS). The warm-up-stable-decay schedule is named when the frontier is shown "
        "(its decay branches make one trunk serve every budget).",
        (SMALL_BUDGET_SECTION, "hoffmann2022chinchilla"),
        (Question("At equal FLOPs, will growing a model beat training it at full depth from the start?",
                  SPEEDUP_TABLE, a.answer_growth_vs_uniform),
         Question("Will a shallow model trained on the whole budget beat both?", FINAL_LOSS_TABLE,
                  a.answer_shallow_wins)),
        (Segment(15, "The teacher introduces FLOP accounting, compute-optimal sizes and the growth operators, on "
                     "the board (no figure yet).", "read"),
         Segment(10, "In pairs, the students size the chapter's own target on paper: "
                     f"{DESIGN.target_layers} layers of width {DESIGN.width} ({DESIGN.heads} heads, a gated MLP of "
                     f"width {DESIGN.mlp_width}, a byte vocabulary of {VOCAB_SIZE} with tied embeddings, context "
                     f"{DESIGN.context}): its body parameters, its tokens at {DESIGN.tokens_per_parameter:g} per body "
                     "parameter, and its C* in training FLOPs.", "pause", answer=a.answer_sizing),
         Segment(5, "Everyone writes yes/no for both predictions.", "pause", predict=True),
         Segment(15, f"Run chapter 7's first section, '{FRONTIER_SECTION}' (stored): the frontier figure, then "
                     f"{SPEEDUP_TABLE}. Nothing of the small-budget study yet: one group reads it next.", "live",
                 shows=("the frontier figure", SPEEDUP_TABLE)),
         _exercise_segment(15, 7, ""),
         Segment(15, "Jigsaw (8 minutes reading, 7 explaining): each group reads one experiment's verdicts, then "
                     "explains them to the other, which copies them into its own grid with the reason.", "live",
                 shows=(FINAL_LOSS_TABLE, "the claims table")),
         Segment(15, "Discussion: the two regimes compared.", "pause")),
        {"the paper's protocol at a small budget": {}, "the compute-optimal frontier": FRONTIER},
        "the kernel-free growth explorer on the page; training needs hours on a CPU",
        (Question("The paper compared at equal steps. What does that comparison reward, and what would convince you "
                  "that a growth schedule helps?", "the equal-steps row", a.answer_equal_steps),),
        Homework(("forward-flops", "finetune-step-flops"),
                 f"Size a target model for a budget of {a.flops_text(a.SIZING_BUDGET_FLOPS)} training FLOPs as "
                 f"chapter 7 sizes its own: {DESIGN.target_layers} layers, a byte vocabulary of {VOCAB_SIZE} with tied "
                 f"embeddings, heads of size {DESIGN.width // DESIGN.heads}, a gated MLP (gate, up and down "
                 f"matrices) {DESIGN.mlp_width // DESIGN.width} times the width, context {DESIGN.context}. Which "
                 "width (a "
                 "multiple of the head size) puts its C* (the compute-optimal budget: "
                 f"{DESIGN.tokens_per_parameter:g} tokens per body parameter, the decoder layers and final norm but "
                 "not the embedding, times the training FLOPs per token in the chapter's convention) nearest the "
                 "budget? Give its body parameters and tokens; then say which depth you would grow it from.",
                 ((2, "training FLOPs per token from the convention (attention and head included, not 6 per "
                      "parameter), then the width whose C* is nearest the budget"),
                  (2, "body parameters and tokens stated, with tokens per body parameter"),
                  (1, f"a starting depth with a reason (G_stack stacks its base "
                      f"{DESIGN.target_layers // DESIGN.start_layers} times over, or the frontier's best depth)")),
                 model_answer=a.model_sizing),
        group_note="A jigsaw: the groups judge different claims, so compare the regimes, not the columns: at each "
                   "experiment's budget, how many tokens per body parameter the target sees, what the shallow model "
                   "at the same FLOPs does, and whether a verdict would survive the move to the other regime.",
        group_tasks={"the paper's protocol at a small budget":
                     f"reads '{SMALL_BUDGET_SECTION}' to 'Paper vs this book': {FINAL_LOSS_TABLE} and the claims "
                     "of 'growth against uniform training on one budget' with their controls; then explains its "
                     "verdicts to the other group",
                     "the compute-optimal frontier":
                     f"reads the claims of '{FRONTIER_SECTION}' (the frontier's 'Paper vs this book' rows, 'growth "
                     "against the compute-optimal frontier') beside the speed-up table shown live; then explains its "
                     "verdicts to the other group"}),
    8: SessionPlan(
        8, "The atlas", "Compare two specimens at the same relative depth; tell a property of a checkpoint from a "
        "property of transformers.",
        "Relative depth (l / (n - 1)); a claim's generality; why a layer number does not travel between models.",
        ("The two real specimens", "gromov2024unreasonable"),
        (Question("Which of the paper's layer-specific claims will hold on Gemma-3-270M at the same relative depth?",
                  "the atlas's claims table", a.answer_gemma),),
        (Segment(15, "The teacher introduces relative depth with the same-depth exercise's rule.", "read"),
         Segment(10, "Everyone marks, on the handout, the claims they expect to hold on Gemma.", "pause",
                 predict=True),
         Segment(20, "Run chapter 8 (stored): both specimens at relative depth, then the claims table.", "live",
                 shows=("the atlas's claims table",)),
         _exercise_segment(20, 8, ""),
         Segment(10, "Groups: SmolLM2 and Gemma columns of the claims, read as pairs.", "live"),
         Segment(15, "Discussion.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the atlas page itself: every figure is static",
        (Question("How many specimens would a claim about \"transformers\" need?", "the atlas's claims table",
                  a.answer_how_many),),
        Homework(("same-depth",),
                 "Pick one claim that holds on both specimens and one that does not. For each, what would a third "
                 "specimen have to show?",
                 ((2, "one claim of each kind, quoted with both verdicts"),
                  (2, "a prediction for a third specimen with a reason"),
                  (1, "names a model that would be a good third specimen and why")),
                 model_answer=a.model_two_claims),
        group_note="Compare each claim across the two columns: one that holds on both is a candidate for generality; "
                   "one that holds on one, a property of that checkpoint."),
    9: SessionPlan(
        9, "The verdicts", "Read every claim's verdict with its rule; find the choices a verdict depends on.",
        "The verdict words and their rules (chapter 9's rules table); an experiment counted once; a control.",
        ("How verdicts are computed", "kunsch1989jackknife"),
        (Question("Which of the paper's claims will survive the controls?", "the table in 'Every claim'",
                  a.answer_survive),),
        (Segment(15, "The teacher introduces the rules table (no verdicts shown).", "read"),
         Segment(10, "Everyone writes, per chapter, the verdict they expect.", "pause", predict=True),
         Segment(15, "Run chapter 9 (stored): the headline at the top of the page, then the table in 'Every "
                     "claim'.", "live", shows=("the table in 'Every claim'",)),
         _exercise_segment(20, 9, ""),
         Segment(15, "Groups: the verdicts on SmolLM2 and on Gemma-3-270M.", "live", shows=("the claims table",)),
         Segment(15, "Discussion, and the final projects assigned.", "pause")),
        {"the book's specimen": {}, "Gemma-3-270M": GEMMA},
        "the verdicts page itself: every table is static",
        (Question("Which verdicts would change on the base model, at the `paper` profile, or with another corpus?",
                  "the inconclusive rows", a.answer_what_changes),),
        Homework(("number-rule",),
                 "Choose one 'inconclusive' verdict and write the experiment that would settle it.",
                 ((2, "the claim and its current interval"),
                  (2, "the size of the experiment that would decide it"),
                  (1, "what each outcome would mean")),
                 model_answer=a.model_settle_inconclusive)),
}

FINAL_PROJECT = (
    "Design and run the experiment that would settle one claim the book calls inconclusive (or one verdict that "
    "moves with a threshold in a sensitivity table). Hand in a notebook that runs from a clean clone with the "
    "book's library, and two pages: the claim, the design (what is varied, the unit of replication, the control, "
    "the budget), the result with its interval, and the verdict by the book's rules.")
PROJECT_RUBRIC = ((4, "the design can decide the claim: a unit of replication, a control, and a power argument"),
                  (4, "the notebook runs from a clean clone and every number in the text is computed"),
                  (4, "the result is reported with its interval and judged by a stated rule"),
                  (3, "the limits: what the experiment cannot conclude, and what would come next"))


def session_plan(number: int) -> pd.DataFrame:
    """The minute-by-minute plan of a session: start, end, activity, whether its cells run live, are read from
    the built page, or the computers stay closed, and what of the chapter's page is on screen."""
    if number not in PLANS:
        raise ValueError(f"no session {number}; choose one of {sorted(PLANS)}")
    rows, start = [], 0
    for segment in PLANS[number].segments:
        rows.append({"from (min)": start, "to (min)": start + segment.minutes, "activity": segment.activity,
                     "cells": segment.cells, "on screen": "; ".join(segment.shows)})
        start += segment.minutes
    return pd.DataFrame(rows)


def session_minutes(number: int) -> int:
    return sum(s.minutes for s in PLANS[number].segments)


def order_problems(plan: SessionPlan) -> list[str]:
    """What in a plan's order would reveal a prediction's answer before it is written down: an output that answers
    a prediction on screen in or before the prediction segment; a plan without exactly one prediction segment;
    minutes that do not add to the session."""
    problems = []
    predicting = [i for i, s in enumerate(plan.segments) if s.predict]
    if len(predicting) != 1:
        return [f"session {plan.number}: {len(predicting)} prediction segments, expected 1"]
    answers = {q.answered_by for q in plan.predictions}
    for i, segment in enumerate(plan.segments[:predicting[0] + 1]):
        shown = answers & set(segment.shows)
        if shown:
            problems.append(f"session {plan.number}, segment {i + 1}: {sorted(shown)} on screen before the "
                            "prediction is written")
    if sum(s.minutes for s in plan.segments) != SESSION_MINUTES:
        problems.append(f"session {plan.number}: {sum(s.minutes for s in plan.segments)} minutes, expected "
                        f"{SESSION_MINUTES}")
    if not any(answers & set(s.shows) for s in plan.segments[predicting[0] + 1:]):
        problems.append(f"session {plan.number}: no segment after the prediction shows what answers it")
    bad = {s.cells for s in plan.segments} - set(CELLS)
    if bad:
        problems.append(f"session {plan.number}: unknown cells {sorted(bad)}; choose from {CELLS}")
    return problems


def misconceptions(plan: SessionPlan) -> list[str]:
    """The mistakes a teacher should expect in this session: the catalogued mistakes of its exercises (each
    caught by a checker case, tested) and the plan's own."""
    out = [f"{mistake} ({e.key})" for e in exercises.of_chapter(plan.chapter) for mistake in e.mistakes] \
        if plan.chapter else []
    return out + list(plan.misconceptions)
