"""Benchmarks (scripts, never timed tests).

``python -m anatomy_lib.benchmark perplexity`` prints, from one run on one specimen: the engine's tokens/s; that
throughput as a fraction of this machine's fp32 matmul peak measured in the same run; and, for a sweep that
ablates each layer in turn (the paper's neighbour-mean ablation), the time of the importance diagnostic with
its prefix cache against (a) a naive loop of full forwards through the model's own ``forward`` and (b) the same
engine restarting at layer 0. ``python -m anatomy_lib.benchmark importance --modes skip ...`` times the sweep for
other ablation modes.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from tqdm.auto import tqdm


def matmul_peak_gflops(size: int = 2048, repeats: int = 8, dtype=torch.float32) -> float:
    """Best-of-three fp32 GFLOP/s of a square matmul: the ceiling any forward pass can reach here."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    a @ b
    best = 0.0
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(repeats):
            a @ b
        best = max(best, repeats * 2 * size ** 3 / (time.perf_counter() - started) / 1e9)
    return best


def flops_per_token(adapter, context: int) -> float:
    """Forward FLOPs per token: 2 per weight of every layer matrix and the head, plus causal attention."""
    matrices = sum(adapter.tensor(l, n).numel() for l in range(adapter.n_layers) for n in adapter.matrix_names)
    head = adapter.head.weight.numel()
    q_width = adapter.tensor(0, "q").shape[0]
    attention = adapter.n_layers * 2 * 2 * (context / 2) * q_width  # QK^T and AV over half the context on average
    return 2.0 * (matrices + head) + attention


def _setup(specimen: str, n_blocks: int, block_len: int):
    from .corpus import load_corpus, token_blocks
    from .lab import cached_specimen

    spec = cached_specimen(specimen)
    blocks = token_blocks(load_corpus("sotu"), spec.tokenizer, n_blocks, block_len, seed=0)
    print(f"specimen {spec.name}: {blocks.n_blocks} blocks x {blocks.block_len} tokens, "
          f"{torch.get_num_threads()} threads")
    return spec, blocks


def sweep_timings(spec, blocks, batch_size: int, layers: list[int] | None, mode: str) -> dict:
    """Time a full importance sweep three ways: the diagnostic itself (prefix cache, cache build included),
    the same engine restarting every evaluation at layer 0, and a naive loop of the model's own forward."""
    from dataclasses import replace

    from .engine import plain_evaluation
    from .importance import ImportanceParams, ablation, importance_sweep
    from .lab import Lab
    from .runtime import get_profile
    from .surgery import surgery

    layers = list(range(spec.adapter.n_layers)) if layers is None else layers
    profile = replace(get_profile("quick"), name="benchmark", n_blocks=blocks.n_blocks, batch_size=batch_size,
                      n_boot=200)
    lab = Lab(spec, profile, blocks, progress=False)
    started = time.perf_counter()
    table = importance_sweep(lab, ImportanceParams(mode=mode), layers, progress=False)
    timings = {"prefix cache (the diagnostic)": time.perf_counter() - started}
    engine = lab.engine

    def timed_loop(name: str, evaluate) -> list[float]:
        started = time.perf_counter()
        values = []
        for layer in tqdm(layers, desc=name, leave=False):
            with surgery(spec.adapter) as editor:
                ablation([layer], mode)(editor)
                values.append(evaluate())
        timings[name] = time.perf_counter() - started
        return values

    def timed_baseline(evaluate) -> tuple[float, float]:  # every way pays one pass of the intact model
        started = time.perf_counter()
        value = evaluate()
        return value, time.perf_counter() - started

    _, base_time = timed_baseline(lambda: engine.evaluate(start=0))
    timed_loop("engine, no cache", lambda: engine.evaluate(start=0).mean_nll)
    timings["engine, no cache"] += base_time
    base, base_time = timed_baseline(lambda: plain_evaluation(spec.model, blocks, batch_size).mean_nll)
    naive = timed_loop("naive full forwards", lambda: plain_evaluation(spec.model, blocks, batch_size).mean_nll)
    timings["naive full forwards"] += base_time

    ours = np.log1p(table["change_pct"].to_numpy() / 100) + engine.baseline.mean_nll
    print(f"sweep of {len(layers)} layers, {mode} ablation (baseline pass included in each):")
    for name, seconds in timings.items():
        print(f"  {name:30s} {seconds:8.1f} s")
    cached = timings["prefix cache (the diagnostic)"]
    print(f"  prefix-cache speed-up          {timings['naive full forwards'] / cached:8.2f}x over the naive loop, "
          f"{timings['engine, no cache'] / cached:.2f}x over the engine without cache")
    print(f"  largest NLL difference, diagnostic vs naive: {np.abs(ours - np.asarray(naive)).max():.2e} nats "
          f"(baselines differ by {abs(base - engine.baseline.mean_nll):.2e})")
    return timings


def bench_perplexity(specimen: str, n_blocks: int, block_len: int, batch_size: int, layers: list[int] | None):
    """Throughput, fraction of the matmul peak, and the neighbour-mean sweep against the naive loop."""
    from .engine import PerplexityEngine

    torch.manual_seed(0)
    peak = matmul_peak_gflops()
    spec, blocks = _setup(specimen, n_blocks, block_len)
    engine = PerplexityEngine(spec.model, blocks, batch_size=batch_size, progress=False)
    started = time.perf_counter()
    engine.evaluate(start=0)
    tokens_per_s = engine.n_tokens / (time.perf_counter() - started)
    fpt = flops_per_token(engine.adapter, block_len)
    achieved = tokens_per_s * fpt / 1e9
    print(f"matmul peak (fp32, 2048^2)   {peak:8.1f} GFLOP/s")
    print(f"engine throughput            {tokens_per_s:8.1f} tokens/s  ({fpt / 1e9:.3f} GFLOP/token)")
    print(f"fraction of matmul peak      {achieved / peak:8.1%}  ({achieved:.1f} GFLOP/s)")
    return sweep_timings(spec, blocks, batch_size, layers, "neighbor_mean")


def bench_importance(specimen: str, n_blocks: int, block_len: int, batch_size: int, layers: list[int] | None,
                     modes: list[str]):
    spec, blocks = _setup(specimen, n_blocks, block_len)
    return {mode: sweep_timings(spec, blocks, batch_size, layers, mode) for mode in modes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib.benchmark", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["perplexity", "importance"])
    parser.add_argument("--specimen", default="smollm2-135m-instruct-q4")
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--block-len", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--layers", type=int, nargs="*", default=None, help="layers to sweep (default: all)")
    parser.add_argument("--modes", nargs="+", default=["neighbor_mean", "skip"], help="importance: modes")
    args = parser.parse_args(argv)
    if args.what == "perplexity":
        bench_perplexity(args.specimen, args.blocks, args.block_len, args.batch_size, args.layers)
    else:
        bench_importance(args.specimen, args.blocks, args.block_len, args.batch_size, args.layers, args.modes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
