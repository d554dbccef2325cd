"""Command-line entry points, one subcommand per diagnostic (``info`` describes a specimen).

Each diagnostic's options are generated from the fields of its parameter dataclass, so a default lives in one
place. Bad input is reported as one line (``error: ...``) with exit status 2; ``--debug`` shows the traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import types
import typing
from dataclasses import MISSING, fields, replace
from pathlib import Path

import pandas as pd
import torch

from .core.distributed import init_from_environment
from .core.lab import open_lab
from .core.profiles import PROFILES
from .core.rules import claims_table
from .core.specimens import SpecimenError
from .growth.analysis import compute_to_target, final_losses
from .growth.budgets import BudgetParams, budgets
from .growth.checkpoints import CheckpointError, Checkpointing
from .growth.compute import growth
from .growth.events import VARIANTS, EventParams, event_summary, growth_events
from .growth.frontier import SECOND_WIDTH, FrontierParams, finished_jobs, frontier, run_frontier
from .growth.params import GrowthParams
from .growth.report import paper_claims
from .growth.scaling import branch_check, crossover, loss_by_budget, paired_differences
from .importance.activations import ActivationParams, activations, appearance_layer
from .importance.analysis import rank_agreement
from .importance.compute import (
    MODES,
    OPERATORS,
    STREAM_OPERATORS,
    ContinuationParams,
    ImportanceParams,
    ablation_continuations,
    importance,
)
from .importance.massive import MassiveParams, massive_causal
from .importance.precision import PrecisionParams, precision_panel, precision_summary
from .manipulation.compute import ManipulationParams, compression_at_cuts, connective_cuts, manipulation
from .manipulation.report import CONNECTIVE_CUTS, threshold_label, threshold_sensitivity
from .predictability.compute import PredictabilityParams, predictability
from .quantisation.analysis import deltas, error_summary
from .quantisation.compute import QuantisationParams, quantisation_null
from .recovery.analysis import (
    MAIN_CRITERION,
    judged_layers,
    judged_runs,
    rank_correlations,
    sensitivity_table,
    sham_drift,
    steps_label,
)
from .recovery.params import RecoveryParams
from .recovery.power import PowerDesign, power_design, power_kept, power_progress, power_table, run_power
from .recovery.sweep import merged, recovery
from .structure.compute import StructureParams, structure, summarize


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--specimen", default="default",
                        help="'default', 'smollm2-135m-instruct-q4', 'gemma3-270m-q4', a hub id, a folder or a "
                             ".gguf path")
    parser.add_argument("--profile", default="quick", choices=list(PROFILES))
    parser.add_argument("--corpus", default="sotu", help="'sotu' (1960 on), a split name, or a text file")
    parser.add_argument("--blocks-seed", type=int, default=0, help="seed of the evaluation-block selection")
    parser.add_argument("--recompute", action="store_true", help="ignore a stored result")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")


def layer_set(text: str) -> tuple[int, ...]:
    """'15' -> (15,); '10-19' -> (10, ..., 19); '3,5,7' -> (3, 5, 7)."""
    try:
        if "-" in text:
            first, last = (int(part) for part in text.split("-", 1))
            return tuple(range(first, last + 1))
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a layer set; write 15, 10-19 or 3,5,7") from None


def _option_kind(annotation) -> tuple[type, bool]:
    """(element type, is a sequence) of a parameter field's annotation."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # X | None
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is tuple:
        element = typing.get_args(annotation)[0]
        return (layer_set if typing.get_origin(element) is tuple else element), True
    return annotation, False


def add_params_options(parser: argparse.ArgumentParser, params_class, skip=()) -> None:
    """One option per field of a parameter dataclass, with its choices and help. An option left out is not set
    at all (``params_from`` then takes the field from the base parameters, e.g. a profile's defaults)."""
    hints = typing.get_type_hints(params_class)
    for f in fields(params_class):
        if f.name in skip:
            continue
        kind, many = _option_kind(hints[f.name])
        default = f.default if f.default is not MISSING else f.default_factory()
        shown = "" if default is None else f" (default: {default})"
        kwargs = {"default": argparse.SUPPRESS, "help": f"{f.metadata.get('help', '')}{shown}"}
        if kind is bool:
            kwargs.update(type=lambda s: s.lower() in ("1", "true", "yes"), metavar="BOOL")
        else:
            kwargs["type"] = kind
        if many:
            kwargs["nargs"] = "+"
        if "choices" in f.metadata:
            kwargs["choices"] = list(f.metadata["choices"])
        parser.add_argument(f"--{f.name.replace('_', '-')}", **kwargs)


def params_from(args, params_class, base=None, **overrides):
    """``base`` (default: the dataclass's defaults) with every option given on the command line, and
    ``overrides``, replaced (sequences become tuples)."""
    values = {}
    for f in fields(params_class):
        if hasattr(args, f.name):
            value = getattr(args, f.name)
            values[f.name] = tuple(value) if isinstance(value, list) else value
    values.update(overrides)
    return replace(base, **values) if base is not None else params_class(**values)


def _lab(args):
    return open_lab(args.specimen, args.profile, args.corpus, seed=args.blocks_seed)


def cmd_info(args) -> int:
    started = time.perf_counter()
    lab = _lab(args)
    spec, adapter = lab.specimen, lab.adapter
    ppl, low, high = lab.engine.baseline.interval(n_boot=lab.profile.n_boot)
    print(f"specimen      {spec.name}")
    print(f"source        {spec.source}")
    print(f"family        {adapter.family}, {adapter.n_layers} layers, hidden {adapter.hidden_size}")
    print(f"parameters    {spec.n_parameters:,}")
    print(f"weights hash  {spec.weights_hash}")
    print(f"device        {spec.device} ({spec.dtype})")
    print(f"corpus        {lab.blocks.description.get('corpus')} {lab.blocks.description.get('years', '')}, "
          f"{lab.blocks.n_blocks} blocks x {lab.blocks.block_len} tokens (seed {args.blocks_seed})")
    print(f"perplexity    {ppl:.2f}  (95% bootstrap interval over blocks {low:.2f}..{high:.2f})")
    print(f"elapsed       {time.perf_counter() - started:.1f} s")
    return 0


def cmd_importance(args) -> int:
    all_params = _per_mode(args, ImportanceParams)
    lab = _lab(args)
    for params in all_params:
        mode = params.mode
        table = importance(lab, params, recompute=args.recompute)
        with pd.option_context("display.max_rows", 200, "display.width", 160):
            print(f"\n{lab.specimen.name}, {mode} ablation, profile {lab.profile.name}: "
                  f"baseline perplexity {table['base_ppl'].iloc[0]:.3f}")
            print(table[["layer", "change_pct", "ci_low", "ci_high", "block_influence", "class"]]
                  .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            print(f"Spearman(Block Influence, change) = {rank_agreement(table):.3f}")
    return 0


# what --mode all and --mode stream name (continuations are stored for chapter 2's four modes only)
MODE_GROUPS = {"all": MODES, "stream": STREAM_OPERATORS}


def _per_mode(args, params_class) -> list:
    """One parameter set per ablation mode named by ``--mode`` (``all``: every mode)."""
    modes = [m for name in args.mode for m in MODE_GROUPS.get(name, (name,))]
    return [params_from(args, params_class, mode=mode) for mode in dict.fromkeys(modes)]


def _mode_args(params_class, modes=MODES):
    """Options of a per-mode command: its parameter class's fields, with ``--mode`` taking several modes, or a
    group of them (``MODE_GROUPS``: all, chapter 2's four; stream, the stream operators)."""
    groups = {name: group for name, group in MODE_GROUPS.items() if set(group) <= set(modes)}

    def add(parser: argparse.ArgumentParser) -> None:
        add_params_options(parser, params_class, skip=("mode",))
        parser.add_argument("--mode", nargs="+", default=["neighbor_mean"], choices=list(modes) + list(groups),
                            help="ablation modes, or " + ", ".join(f"{name} ({', '.join(group)})"
                                                                  for name, group in groups.items())
                            + " (default: neighbor_mean)")

    return add


def cmd_continuations(args) -> int:
    all_params = _per_mode(args, ContinuationParams)
    lab = _lab(args)
    for params in all_params:
        table = ablation_continuations(lab, params, recompute=args.recompute)
        print(f"\n{lab.specimen.name}, {params.mode}: {params.prompt!r}")
        for row in table.itertuples():
            print(f"  L{row.layer:<3d}{row.continuation if row.continuation == row.continuation else ''}")
    return 0


def cmd_activations(args) -> int:
    params = params_from(args, ActivationParams)
    lab = _lab(args)
    tables = activations(lab, params, recompute=args.recompute)
    layers = tables["layers"]
    first = appearance_layer(layers)
    print(f"\n{lab.specimen.name}: the stream leaving each layer (massive: >= {params.ratio:g} x the median and "
          f">= {params.floor:g}); they appear at " + (f"L{first}" if first is not None else "no layer"))
    shown = layers[["layer", "max_abs", "median_abs", "ratio", "top_feature", "top_position", "massive_tokens"]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:,.3g}"))
    if len(tables["features"]):
        print("\nmassive features (largest first, per layer):")
        print(tables["features"].to_string(index=False, float_format=lambda v: f"{v:,.3g}"))
    return 0


def cmd_massive(args) -> int:
    params = params_from(args, MassiveParams)
    lab = _lab(args)
    tables = massive_causal(lab, params, recompute=args.recompute)
    summary = tables["summary"].iloc[0]
    print(f"\n{lab.specimen.name}: feature {summary.feature} is born at L{summary.birth_layer} (growth 10^"
          f"{summary.birth_growth:.2f} [{summary.birth_ci_low:.2f}, {summary.birth_ci_high:.2f}] over blocks); "
          f"control layer L{summary.control_layer}")
    shown = tables["causal"][["role", "layer", "operator", "intervention", "change_pct", "ci_low", "ci_high", "share",
                              "share_low", "share_high"]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:,.3g}"))
    return 0


def cmd_precision(args) -> int:
    params = params_from(args, PrecisionParams, seed=args.blocks_seed)
    panel = precision_panel(args.specimen, params, args.profile, corpus=args.corpus)
    print(f"\n{args.specimen}: the intact model in each precision")
    print(panel["base"].to_string(index=False, float_format=lambda v: f"{v:,.4g}"))
    print("\nthe importance map in each precision (ranges over finite changes; departures from float32 in orders "
          "of magnitude of 1 + change)")
    print(precision_summary(panel).to_string(index=False, float_format=lambda v: f"{v:,.3g}"))
    return 0


def cmd_predictability(args) -> int:
    params = params_from(args, PredictabilityParams)
    lab = _lab(args)
    tables = predictability(lab, params, recompute=args.recompute)
    means = tables["fits"].groupby(["model", "predictor", "fit", "component"], sort=False)["r2"].mean() \
        .unstack("component")
    print(f"\n{lab.specimen.name}: mean R^2 ({params.formulation}, context {params.context}, "
          f"ridge_alpha {params.ridge_alpha})")
    print(means.to_string(float_format=lambda v: f"{v:+.3f}"))
    print("\nsubstitution of predicted weights:")
    print(tables["substitution"].to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    return 0


def cmd_structure(args) -> int:
    params = params_from(args, StructureParams)
    lab = _lab(args)
    tables = structure(lab, params, recompute=args.recompute)
    print(f"\n{lab.specimen.name}: mean delta correlation by model, lag and component")
    print(summarize(tables["weights"]).pivot_table(index=["model", "lag"], columns="component", values="mean",
                                                   sort=False).to_string(float_format=lambda v: f"{v:+.3f}"))
    q = tables["quantisation"].groupby("component", sort=False)[["corr", "noise_share", "corr_without_noise",
                                                                 "on_grid_share"]].mean()
    print("\nquantisation noise (Q4_1):")
    print(q.to_string(float_format=lambda v: f"{v:+.3f}"))
    f = tables["functional"]
    print(f"\nresidual-stream updates: mean corr(u_l, u_l+1) = {f['corr'].mean():+.3f}, "
          f"mean token cosine = {f['mean_token_cosine'].mean():+.3f}")
    return 0


def cmd_manipulate(args) -> int:
    params = params_from(args, ManipulationParams)
    lab = _lab(args)
    params = params.resolved(lab)
    tables = manipulation(lab, params, recompute=args.recompute)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        heat = tables["heatmap"].pivot_table(index="label", columns="layers", values="change_pct", sort=False)
        print(f"\n{lab.specimen.name}: single-layer perplexity change (%)")
        print(heat.to_string(float_format=lambda v: f"{v:+,.1f}"))
        print(f"\ncompression: layers {list(params.compress_layers)}")
        cols = ["label", "change_pct", "ci_low", "ci_high", "distinct_2", "repetition_rate", "fact_rate",
                "fact_change_low", "fact_change_high"]
        print(tables["compression"][cols].to_string(index=False, float_format=lambda v: f"{v:+,.2f}"))
    return 0


def cmd_compression_cuts(args) -> int:
    """Chapter 5's compression experiment at each cut of chapter 2's connective threshold whose layers differ from
    the chapter's (stored), and the compression verdicts at each cut."""
    lab = _lab(args)
    params = lab.defaults(ManipulationParams).resolved(lab)
    cuts = tuple(args.connective_pct)
    for cut, layers in connective_cuts(lab, cuts, params.seed).items():
        print(f"+{cut:g}%: {len(layers)} layers {list(layers)}")
    tables = manipulation(lab, params, recompute=False)
    by_cut = compression_at_cuts(lab, params, tables, cuts, recompute=args.recompute)
    table = threshold_sensitivity(tables, params, grid={}, by_cut=by_cut)
    wide = table.assign(value=table["value"].astype(float)).pivot(index="claim", columns="value", values="standing")
    wide.columns = [threshold_label("connective_pct", cut) for cut in wide.columns]
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(f"\n{lab.specimen.name}: the compression verdicts at each connective cut")
        print(wide.to_string())
    return 0


def _cuts_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--connective-pct", type=float, nargs="+", default=list(CONNECTIVE_CUTS),
                        help=f"cuts of chapter 2's connective threshold, in percent (default: {CONNECTIVE_CUTS})")


def cmd_recovery(args) -> int:
    lab = _lab(args)
    params = params_from(args, RecoveryParams, base=lab.defaults(RecoveryParams))
    params = params.resolved(lab)  # the specimen's layers, checked before anything is printed
    if args.fixed_protocol and params.damage != "matched":
        raise ValueError("--fixed-protocol runs beside a matched sweep: drop --damage sigma")
    runs = params.runs()
    print(f"{lab.specimen.name}, profile {lab.profile.name}: {len(runs)} runs of {params.steps} steps "
          f"(layers {list(params.layers)}; shams at {list(params.sham_layers)})")
    tables = recovery(lab, params, recompute=args.recompute)
    if args.fixed_protocol:
        fixed = params.fixed_protocol(params.sigmas)
        print(f"\nthe fixed-noise protocol: {len(fixed.runs())} runs at sigmas {list(fixed.sigmas)}")
        tables = merged(tables, recovery(lab, fixed, recompute=args.recompute))
    table = tables["runs"].copy()
    table["steps"] = [steps_label(r) for r in table.itertuples()]
    cols = ["layer", "kind", "noise_seed", "sigma", "initial_excess_nll", "steps", "recovered_fraction",
            "area_excess_nll"]
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print(f"\n(steps above: within {table['tolerance_nll'].iloc[0]:.4f} nats of the baseline, unpaired)")
        if params.sham_layers:
            print("\nshams:")
            print(sham_drift(tables["runs"], tables["curves"]).to_string(index=False,
                                                                         float_format=lambda v: f"{v:+.4f}"))
        print("\nsteps to recover under every criterion ('> N': not within the budget):")
        print(sensitivity_table(tables, target_nats=params.target_nats).to_string(index=False))
        if params.damage == "matched" and params.sham_layers:
            imp = importance(lab, ImportanceParams())
            print(f"\nrank correlations with importance (chapter 2, neighbor_mean; {MAIN_CRITERION.label}):")
            layers = judged_layers(judged_runs(tables, MAIN_CRITERION), "matched")
            print(rank_correlations(layers, imp).to_string(index=False, float_format=lambda v: f"{v:+.3f}"))
    return 0


def cmd_growth(args) -> int:
    params = params_from(args, GrowthParams, base=GrowthParams.for_profile(args.profile))
    checkpoint = Checkpointing(args.checkpoint_dir, args.checkpoint_every) if args.checkpoint_dir else None
    print(f"growth, profile {args.profile}: arms {list(params.arms)} x {params.seeds} seeds, budget "
          f"{params.budget:.3g} FLOPs each ({params.budget_steps} uniform steps of {params.batch} x {params.context} "
          "tokens)")
    tables = growth(params, recompute=args.recompute, checkpoint=checkpoint)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        print(final_losses(tables["runs"]).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print("\nFLOPs to reach the uniform arm's losses:")
        reach = compute_to_target(tables["curves"])
        print(reach.drop(columns=["target_loss"]).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        print()
        print(claims_table(paper_claims(tables, params)).to_string(index=False))
    return 0


def cmd_growth_budgets(args) -> int:
    params = params_from(args, BudgetParams, base=BudgetParams.for_profile(args.profile))
    print(f"growth budget sweep, profile {args.profile}: arms {list(params.arms)} x {params.seeds} seeds at "
          f"{list(params.multiples)} x {params.budget:.3g} FLOPs; {params.work():.3g} training FLOPs in all")
    tables = budgets(params, recompute=args.recompute)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        print(loss_by_budget(tables).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print()
        print(paired_differences(tables).to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
        print()
        print(crossover(tables))
        print(branch_check(tables).to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
    return 0


def cmd_recovery_power(args) -> int:
    lab = _lab(args)
    base = params_from(args, RecoveryParams, base=lab.defaults(RecoveryParams)).resolved(lab)
    design = params_from(args, PowerDesign, base=power_design(lab.specimen.name))
    design.sweeps(base)[0].check(lab.adapter)  # its layers, against the specimen, before the plan is printed
    print(f"{lab.specimen.name}, profile {lab.profile.name}: the powered recovery sweep, layers "
          f"{list(design.layers_of(base))} "
          f"x {design.seeds} noise seeds and a sham each, at learning rates {list(design.lrs)}, {design.steps} steps, "
          f"{design.eval_blocks} evaluation blocks: {design.n_runs(base)} runs")
    if args.threads:
        torch.set_num_threads(args.threads)
    complete = run_power(lab, design, base, max_units=args.max_units)
    kept = power_kept(lab, design, base)
    print(power_progress(kept, design, base))
    table = power_table(kept, n_boot=lab.profile.n_boot)
    if len(table):
        with pd.option_context("display.width", 200, "display.max_rows", 200):
            print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0 if complete or args.max_units is not None else 1


def _power_args(parser: argparse.ArgumentParser) -> None:
    add_params_options(parser, PowerDesign)
    add_params_options(parser, RecoveryParams, skip=[f.name for f in fields(PowerDesign)] + [
        "damage", "sigmas", "repeat_layers", "repeat_count", "sham_layers", "lr"])
    parser.add_argument("--max-units", type=int, help="stop after this many more pieces of work (a layer and seed "
                        "at the rates its turn runs, PowerDesign.schedule); the rest run on a later call")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")


def cmd_growth_frontier(args) -> int:
    params = params_from(args, FrontierParams, base=FrontierParams.for_profile(args.profile))
    if args.at_width:
        params = params.at_width(args.at_width)
    print(f"compute-optimal growth, width {params.width}, profile {args.profile}: depths {list(params.depths)} "
          f"and {list(params.growth_arms)} at {list(params.multiples)} x C* = {params.c_star:.3g} FLOPs; "
          f"{len(params.jobs())} jobs, {params.work():.3g} training FLOPs in all")
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.max_jobs is not None:
        tables = run_frontier(params, checkpoint_dir=args.checkpoint_dir, max_jobs=args.max_jobs)
        finished = finished_jobs(params)
        print(f"{len(finished)} of {len(params.jobs())} jobs finished")
        if tables is None:
            return 0
    tables = frontier(params, recompute=args.recompute, checkpoint_dir=args.checkpoint_dir)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        print(tables["baselines"].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print(tables["finals"].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def _frontier_args(parser: argparse.ArgumentParser) -> None:
    _standalone_args(FrontierParams)(parser)
    parser.add_argument("--checkpoint-dir", help="trainer checkpoints of the running job (finished jobs are kept in "
                        "the results store whatever this says)")
    parser.add_argument("--max-jobs", type=int, help="stop after this many more jobs (the rest run on a later call)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument("--at-width", type=int, help="the same design at this width, token counts scaled with C* "
                        f"(FrontierParams.at_width; the chapter's scale check uses {SECOND_WIDTH})")


def cmd_growth_events(args) -> int:
    params = params_from(args, EventParams, base=EventParams.for_profile(args.profile))
    print(f"growth event study, profile {args.profile}: first events of {list(params.event_arms)} x {params.seeds} "
          f"seeds under {list(VARIANTS)}")
    tables = growth_events(params, recompute=args.recompute)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(event_summary(tables).to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
    return 0


def cmd_quantisation_null(args) -> int:
    params = params_from(args, QuantisationParams, base=QuantisationParams.for_profile(args.profile))
    print(f"quantisation null, profile {args.profile}: chapter 7's {list(params.arms)} x {params.seeds} seeds "
          f"retrained{' and the random init' if params.random_init else ''}, under {list(params.schemes)}")
    tables = quantisation_null(params, recompute=args.recompute)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        print(tables["models"].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print()
        print(error_summary(tables).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print()
        print(deltas(tables).to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
    return 0


def cmd_dissect(args) -> int:
    # only this command needs them: the CLI's import stays light for every other command
    from tqdm.auto import tqdm

    from .core.dissection import dissect  # and it alone reads GGUF files

    with tqdm(total=1, desc="dissect", unit="step") as bar:
        def progress(done, total, label):
            bar.total = total
            bar.set_postfix_str(label)
            bar.update(done - bar.n)

        result = dissect(args.file, on_progress=progress)
    model = result["model"]
    print(f"{model['name']}: {model['architecture']}, {model['n_layers']} layers, formats {model['formats']}, "
          f"in {result['seconds']:.1f} s")
    ridge = pd.DataFrame(result["ridge"]).pivot_table(index="component", columns="predictor", values="r2",
                                                       sort=False)
    deltas = pd.DataFrame(result["deltas"]).groupby(["component", "model"], sort=False)["corr"].mean().unstack()
    layers = pd.DataFrame(result["layers"]).groupby("component", sort=False)[["frobenius", "stable_rank"]].mean()
    table = ridge.add_suffix(" R2 (held out)").join(deltas.add_prefix("lag-1 corr, ")).join(layers)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.json:
        Path(args.json).write_text(json.dumps(result))
        print(f"every row: {args.json}")
    return 0


def _dissect_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .gguf file (architectures: llama, qwen2, qwen3, gemma, gemma2, gemma3)")
    parser.add_argument("--json", help="write every row (per layer and component) to this JSON file")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")


def _standalone_args(params_class, checkpoints: bool = False):
    """Options of a command that trains its own models (no specimen): profile, recompute, debug, the parameters,
    and (``checkpoints``) where to save and resume runs."""
    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--profile", default="quick", choices=list(PROFILES))
        parser.add_argument("--recompute", action="store_true", help="ignore a stored result")
        parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
        if checkpoints:
            parser.add_argument("--checkpoint-dir", help="save every run's state here and resume from it when "
                                "restarted with the same command (results do not depend on it)")
            parser.add_argument("--checkpoint-every", type=int, default=50, help="optimiser steps between checkpoints")
        add_params_options(parser, params_class)

    return add


def _recovery_args(parser: argparse.ArgumentParser) -> None:
    add_params_options(parser, RecoveryParams)
    parser.add_argument("--fixed-protocol", action="store_true", help="also run the fixed-noise protocol beside a "
                        "matched sweep (every layer at each of --sigmas, one noise seed, judged against the matched "
                        "sweep's shams), as chapter 6 does")


def _precision_args(parser: argparse.ArgumentParser) -> None:
    add_params_options(parser, PrecisionParams, skip=("seed",))


def _params_args(params_class):
    def add(parser: argparse.ArgumentParser) -> None:
        add_params_options(parser, params_class)

    return add


COMMANDS = {
    "info": (cmd_info, "describe a specimen and its baseline perplexity", None),
    "importance": (cmd_importance, "per-layer ablation: perplexity change with intervals",
                   _mode_args(ImportanceParams, OPERATORS)),
    "continuations": (cmd_continuations, "greedy continuations of a prompt with each layer removed (chapter 2's "
                      "explorer in the published page)", _mode_args(ContinuationParams)),
    "activations": (cmd_activations, "massive activations: the largest residual value per layer, its ratio to the "
                    "median, the layer where they appear", _params_args(ActivationParams)),
    "massive": (cmd_massive, "the massive activation's birth layer by growth, and the causal test: its ablation "
                "with the massive entries restored, and its massive write alone removed, beside a control layer",
                _params_args(MassiveParams)),
    "precision": (cmd_precision, "chapter 2's importance map in float16 and bfloat16 beside float32, on the same "
                  "blocks: ranges, overflows, the largest departure", _precision_args),
    "predictability": (cmd_predictability, "ridge R^2 in and out of sample, substitution perplexity",
                       _params_args(PredictabilityParams)),
    "structure": (cmd_structure, "delta correlations against null models",
                  _params_args(StructureParams)),
    "manipulate": (cmd_manipulate, "zero / clone / mix / low-rank mix / scale, and the compression experiment",
                   _params_args(ManipulationParams)),
    "compression-cuts": (cmd_compression_cuts, "chapter 5's compression experiment at each cut of chapter 2's "
                         "connective threshold (the layers each cut calls connective), and its verdicts there",
                         _cuts_args),
    "recovery": (cmd_recovery, "damage a layer with noise, fine-tune, count the steps back (defaults: the "
                 "profile's sizes)", _recovery_args),
    "recovery-power": (cmd_recovery_power, "chapter 6 with power: every layer of a recovery sweep with several "
                       "noise seeds and its sham, on more evaluation blocks, at a grid of learning rates; resumable, "
                       "shared by several workers", _power_args),
    "growth": (cmd_growth, "growth training arms at matched FLOPs, several seeds (trains its own small models)",
               _standalone_args(GrowthParams, checkpoints=True)),
    "growth-budgets": (cmd_growth_budgets, "uniform, shallow and G_stack at several budgets, one trajectory and a "
                       "decay branch per budget (trains its own small models)", _standalone_args(BudgetParams)),
    "growth-frontier": (cmd_growth_frontier, "byte-level models at compute-optimal sizes: the frontier of fixed "
                        "depths at C*/8 to 2C* and every growth arm against it, job by job, resumable",
                        _frontier_args),
    "growth-events": (cmd_growth_events, "the first growth event of G_stack and the developmental arm under "
                      "clone-noise, optimiser and re-warm-up variants", _standalone_args(EventParams)),
    "dissect": (cmd_dissect, "chapters 3 and 4 from a GGUF file's weights alone (what the page 'Dissect your own "
                "model' computes in the browser): norms, stable rank, held-out ridge R^2, delta correlations",
                _dissect_args),
    "quantisation-null": (cmd_quantisation_null, "chapters 3 and 4's weight statistics on chapter 7's fp32 models "
                          "and on their Q4_1 and Q4_K_M copies (retrains its models)",
                          _standalone_args(QuantisationParams)),
}

# commands that load no specimen
STANDALONE = {"growth", "growth-budgets", "growth-frontier", "growth-events", "quantisation-null", "dissect"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (func, help_text, extra) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name not in STANDALONE:
            _common(p)
        if extra is not None:
            extra(p)
        p.set_defaults(func=func)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. Under ``torchrun`` every process runs it (growth trains data-parallel, a recovery sweep
    splits its runs) and only rank 0 prints and writes results."""
    args = build_parser().parse_args(argv)
    at = init_from_environment()
    quiet = contextlib.nullcontext() if at.main else contextlib.redirect_stdout(open(os.devnull, "w"))
    try:
        with quiet:
            return args.func(args)
    except (ValueError, SpecimenError, CheckpointError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
