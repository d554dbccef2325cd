"""Benchmarks (scripts, never timed tests): ``python -m anatomy_lib.bench perplexity``.

Prints, from one run on one specimen: the engine's tokens/s; that throughput as a fraction of this machine's
fp32 matmul peak measured in the same run; and for a sweep that ablates each layer in turn (the paper's
neighbour-mean ablation), the time of the prefix-cache engine against (a) a naive loop of full forwards
through the model's own ``forward`` and (b) the same engine with the cache disabled (start at layer 0).
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


def bench_perplexity(specimen: str, n_blocks: int, block_len: int, batch_size: int, layers: list[int] | None):
    from .corpus import load_corpus, token_blocks
    from .engine import PerplexityEngine, plain_evaluation
    from .importance import ablate
    from .lab import cached_specimen
    from .surgery import surgery

    torch.manual_seed(0)
    peak = matmul_peak_gflops()
    spec = cached_specimen(specimen)
    blocks = token_blocks(load_corpus("sotu"), spec.tokenizer, n_blocks, block_len, seed=0)
    print(f"specimen {spec.name}: {blocks.n_blocks} blocks x {blocks.block_len} tokens, batch {batch_size}, "
          f"{torch.get_num_threads()} threads")
    started = time.perf_counter()
    engine = PerplexityEngine(spec.model, blocks, batch_size=batch_size, progress=False)
    build_s = time.perf_counter() - started
    adapter = engine.adapter

    started = time.perf_counter()
    engine.evaluate(start=0)
    full_s = time.perf_counter() - started
    tokens_per_s = engine.n_tokens / full_s
    fpt = flops_per_token(adapter, block_len)
    achieved = tokens_per_s * fpt / 1e9
    print(f"matmul peak (fp32, 2048^2)   {peak:8.1f} GFLOP/s")
    print(f"engine throughput            {tokens_per_s:8.1f} tokens/s  ({fpt / 1e9:.3f} GFLOP/token)")
    print(f"fraction of matmul peak      {achieved / peak:8.1%}  ({achieved:.1f} GFLOP/s)")

    layers = list(range(adapter.n_layers)) if layers is None else layers
    timings = {"prefix cache": build_s, "engine, no cache": full_s, "naive full forwards": 0.0}
    results = {k: [] for k in timings}
    started = time.perf_counter()
    results["naive full forwards"].append(plain_evaluation(spec.model, blocks, batch_size).mean_nll)
    timings["naive full forwards"] += time.perf_counter() - started
    for layer in tqdm(layers, desc="sweep", leave=False):
        with surgery(adapter) as op:
            ablate(op, layer, "neighbor_mean")
            for name, run in (("prefix cache", lambda: engine.evaluate()),
                              ("engine, no cache", lambda: engine.evaluate(start=0)),
                              ("naive full forwards", lambda: plain_evaluation(spec.model, blocks, batch_size))):
                started = time.perf_counter()
                results[name].append(run().mean_nll)
                timings[name] += time.perf_counter() - started
    agree = max(abs(a - b) for a, b in zip(results["prefix cache"], results["naive full forwards"][1:]))
    print(f"sweep over {len(layers)} layers (neighbour-mean ablation; baseline pass included in each):")
    for name, seconds in timings.items():
        print(f"  {name:22s} {seconds:8.1f} s")
    print(f"prefix-cache speed-up        {timings['naive full forwards'] / timings['prefix cache']:8.2f}x over the "
          f"naive loop, {timings['engine, no cache'] / timings['prefix cache']:.2f}x over the engine without cache")
    print(f"largest NLL difference, cache vs naive: {agree:.2e} nats")
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["perplexity"])
    parser.add_argument("--specimen", default="smollm2-135m-instruct-q4")
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--block-len", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--layers", type=int, nargs="*", default=None, help="layers to sweep (default: all)")
    args = parser.parse_args(argv)
    bench_perplexity(args.specimen, args.blocks, args.block_len, args.batch_size, args.layers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
