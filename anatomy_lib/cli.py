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


COMMANDS = {"info": (cmd_info, "describe a specimen and its baseline perplexity")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (func, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        _common(p)
        p.set_defaults(func=func)
    args = parser.parse_args(argv)
    return args.func(args)
