"""Command-line entry points, one subcommand per diagnostic (``info`` describes a specimen)."""
from __future__ import annotations

import argparse
import time

from .runtime import PROFILES


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--specimen", default="default",
                        help="'default', 'smollm2-135m-instruct-q4', a hub id, a folder or a .gguf path")
    parser.add_argument("--profile", default="quick", choices=list(PROFILES))
    parser.add_argument("--corpus", default="sotu", help="'sotu' (1960 on), a split name, or a text file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the block selection")


def cmd_info(args) -> int:
    from .lab import open_lab

    started = time.perf_counter()
    lab = open_lab(args.specimen, args.profile, args.corpus, seed=args.seed)
    spec, adapter = lab.specimen, lab.adapter
    ppl, low, high = lab.engine.baseline.interval(n_boot=lab.profile.n_boot)
    print(f"specimen      {spec.name}")
    print(f"source        {spec.source}")
    print(f"family        {adapter.family}, {adapter.n_layers} layers, hidden {adapter.hidden_size}")
    print(f"parameters    {spec.n_parameters:,}")
    print(f"weights hash  {spec.weights_hash}")
    print(f"device        {spec.device} ({spec.dtype})")
    print(f"corpus        {lab.blocks.description.get('corpus')} {lab.blocks.description.get('years', '')}, "
          f"{lab.blocks.n_blocks} blocks x {lab.blocks.block_len} tokens (seed {args.seed})")
    print(f"perplexity    {ppl:.2f}  (95% bootstrap interval over blocks {low:.2f}..{high:.2f})")
    print(f"elapsed       {time.perf_counter() - started:.1f} s")
    return 0


def cmd_importance(args) -> int:
    import pandas as pd

    from .importance import MODES, importance, rank_agreement
    from .lab import open_lab

    lab = open_lab(args.specimen, args.profile, args.corpus, seed=args.seed)
    modes = MODES if "all" in args.mode else args.mode
    for mode in modes:
        table = importance(lab, mode, tensors=args.tensors, seed=args.seed, recompute=args.recompute)
        with pd.option_context("display.max_rows", 200, "display.width", 160):
            print(f"\n{lab.specimen.name}, {mode} ablation, profile {lab.profile.name}: "
                  f"baseline perplexity {table['base_ppl'].iloc[0]:.3f}")
            print(table[["layer", "change_pct", "ci_low", "ci_high", "block_influence", "class"]]
                  .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            print(f"Spearman(Block Influence, change) = {rank_agreement(table):.3f}")
    return 0


def _importance_args(parser: argparse.ArgumentParser) -> None:
    from .importance import MODES, TENSOR_SETS

    parser.add_argument("--mode", nargs="+", default=["neighbor_mean"], choices=list(MODES) + ["all"])
    parser.add_argument("--tensors", default="all", choices=list(TENSOR_SETS),
                        help="tensors neighbor_mean replaces: all (matrices and norms) or matrices only")
    parser.add_argument("--recompute", action="store_true", help="ignore a stored result")


def cmd_predictability(args) -> int:
    from .lab import open_lab
    from .predictability import predictability

    lab = open_lab(args.specimen, args.profile, args.corpus, seed=args.seed)
    tables = predictability(lab, args.formulation, args.context, args.alpha, args.proj_dim,
                            [tuple(args.substitute), tuple(range(10, 20))], seed=args.seed, recompute=args.recompute)
    means = tables["fits"].groupby(["model", "fit", "component"], sort=False)["r2"].mean().unstack("component")
    print(f"\n{lab.specimen.name}: mean R^2 ({args.formulation}, context {args.context}, alpha {args.alpha})")
    print(means.to_string(float_format=lambda v: f"{v:+.3f}"))
    print("\nsubstitution of predicted weights:")
    print(tables["substitution"].to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    return 0


def cmd_structure(args) -> int:
    from .lab import open_lab
    from .structure import structure, summarize

    lab = open_lab(args.specimen, args.profile, args.corpus, seed=args.seed)
    tables = structure(lab, n_shuffles=args.shuffles, seed=args.seed, recompute=args.recompute)
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
    import pandas as pd

    from .importance import importance
    from .lab import open_lab
    from .manipulate import DEFAULT_ALPHAS, connective_layers, manipulation

    lab = open_lab(args.specimen, args.profile, args.corpus, seed=args.seed)
    compress = args.compress or connective_layers(importance(lab, "neighbor_mean", seed=args.seed))
    tables = manipulation(lab, args.heatmap_layers, args.sweep_layers, compress, args.alphas or DEFAULT_ALPHAS,
                          seed=args.seed, recompute=args.recompute)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200):
        heat = tables["heatmap"].pivot_table(index="label", columns="layers", values="change_pct", sort=False)
        print(f"\n{lab.specimen.name}: single-layer perplexity change (%)")
        print(heat.to_string(float_format=lambda v: f"{v:+,.1f}"))
        print(f"\ncompression: layers {compress}")
        cols = ["label", "change_pct", "ci_low", "ci_high", "distinct_2", "repetition_rate", "facts_correct"]
        print(tables["compression"][cols].to_string(index=False, float_format=lambda v: f"{v:+,.2f}"))
    return 0


def _manipulate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--heatmap-layers", type=int, nargs="+", default=[0, 3, 7, 11, 14, 17, 22, 29])
    parser.add_argument("--sweep-layers", type=int, nargs="+", default=[11, 14])
    parser.add_argument("--compress", type=int, nargs="*", default=None,
                        help="layers to scale together (default: connective tissue from the importance map)")
    parser.add_argument("--alphas", type=float, nargs="*", default=None)
    parser.add_argument("--recompute", action="store_true")


def _predictability_args(parser: argparse.ArgumentParser) -> None:
    from .predictability import FORMULATIONS

    parser.add_argument("--formulation", default="layerwise", choices=list(FORMULATIONS))
    parser.add_argument("--context", type=int, default=1)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--proj-dim", type=int, default=64)
    parser.add_argument("--substitute", type=int, nargs="+", default=[15], help="layers to substitute together")
    parser.add_argument("--recompute", action="store_true")


def _structure_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shuffles", type=int, default=5)
    parser.add_argument("--recompute", action="store_true")


COMMANDS = {
    "info": (cmd_info, "describe a specimen and its baseline perplexity", None),
    "importance": (cmd_importance, "per-layer ablation: perplexity change with intervals", _importance_args),
    "predictability": (cmd_predictability, "ridge R^2 in and out of sample, substitution perplexity",
                       _predictability_args),
    "structure": (cmd_structure, "delta correlations against null models", _structure_args),
    "manipulate": (cmd_manipulate, "zero / clone / mix / low-rank mix / scale, and the compression experiment",
                   _manipulate_args),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (func, help_text, extra) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        _common(p)
        if extra is not None:
            extra(p)
        p.set_defaults(func=func)
    args = parser.parse_args(argv)
    return args.func(args)
