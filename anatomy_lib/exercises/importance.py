"""Chapter 2's exercises: the neighbour-mean ablation, and the paired bootstrap interval of a perplexity change."""
from __future__ import annotations

import numpy as np
import torch

from ..core.bootstrap import paired_change_interval as library_paired_change_interval
from ..core.specimens import tiny_specimen
from ..core.surgery import surgery
from ..importance.compute import ablate, neighbors
from .checking import Case, Exercise, differs, interval_level_differs

# ---- the neighbour-mean edit --------------------------------------------------------------------------------
NEIGHBOUR_STUB = '''def neighbour_mean(editor, layer):
    """Inside an open `surgery(model)`, replace every tensor of `layer` by the mean of the same tensor in its
    neighbours (layer - 1 and layer + 1, where they exist). editor.adapter.tensor_names lists the tensors,
    editor.original(l, name) gives a tensor as it was before the surgery, editor.replace(l, name, value) sets one."""
    raise NotImplementedError  # your code here
'''


def neighbour_mean(editor, layer: int) -> None:
    """The library's answer: chapter 2's ``neighbor_mean`` operator."""
    ablate(editor, layer, "neighbor_mean")


def _edited_state(adapter, edit, layers) -> dict[str, torch.Tensor]:
    with surgery(adapter) as editor:
        for layer in layers:
            edit(editor, layer)
        return {k: v.detach().clone() for k, v in adapter.model.state_dict().items()}


def _neighbour_cases() -> tuple[Case, ...]:
    adapter = tiny_specimen("llama", n_layers=5, hidden=32, vocab=64).adapter
    with torch.no_grad():  # norm gains that differ per layer: a fresh model's are all 1, and so is their mean
        generator = torch.Generator().manual_seed(0)
        for name, parameter in adapter.model.named_parameters():
            if parameter.ndim == 1:
                parameter.copy_(torch.rand(parameter.shape, generator=generator) + 0.5)

    def case(layers):
        def test(fn):
            expected = _edited_state(adapter, neighbour_mean, layers)
            got = _edited_state(adapter, fn, layers)
            for name, value in expected.items():
                if not torch.allclose(got[name], value, rtol=1e-5, atol=1e-7):
                    return f"tensor {name} differs after editing layer(s) {layers}"
            return None
        return test

    return (Case("a middle layer (2 of 5)", "average the two neighbours' *original* tensors, every tensor the layer "
                 "has (norm gains too); the layer itself is not one of its neighbours", case([2])),
            Case("the first and the last layer", "layer 0 has only one neighbour (layer 1): its mean is that layer, "
                 "not half of it", case([0, 4])),
            Case("two adjacent layers in one surgery (1, then 2)", "read the neighbours with editor.original: "
                 "after editing layer 1, adapter.tensor(1, ...) is no longer the intact layer", case([1, 2])))


def _includes_itself(editor, layer):
    adapter = editor.adapter
    sources = [n for n in (layer - 1, layer, layer + 1) if 0 <= n < adapter.n_layers]
    for name in adapter.tensor_names:
        editor.replace(layer, name, sum(editor.original(n, name) for n in sources) / len(sources))


def _halves_at_edges(editor, layer):
    adapter = editor.adapter
    for name in adapter.tensor_names:
        total = sum(editor.original(n, name).double() for n in neighbors(adapter.n_layers, layer))
        editor.replace(layer, name, total / 2)


def _reads_edited(editor, layer):
    adapter = editor.adapter
    for name in adapter.tensor_names:
        sources = neighbors(adapter.n_layers, layer)
        editor.replace(layer, name, sum(adapter.tensor(n, name).detach().double() for n in sources) / len(sources))


def _matrices_only(editor, layer):
    adapter = editor.adapter
    for name in adapter.tensor_names:
        if editor.original(layer, name).ndim == 2:
            sources = neighbors(adapter.n_layers, layer)
            editor.replace(layer, name, sum(editor.original(n, name) for n in sources) / len(sources))


# ---- the paired bootstrap interval ---------------------------------------------------------------------------
PAIRED_STUB = '''def paired_change_interval(base_nll, new_nll, n_boot=2000, seed=0):
    """(change %, low %, high %): the perplexity change of an edited model over the intact one, with a 95%
    percentile bootstrap interval. base_nll[i] and new_nll[i] are the mean NLL of text block i before and after."""
    raise NotImplementedError  # your code here
'''


def paired_change_interval(base_nll, new_nll, n_boot: int = 2000, seed: int = 0):
    """The library's answer (``core.bootstrap``): the same resampled blocks enter both means."""
    return library_paired_change_interval(base_nll, new_nll, n_boot, seed)


def _paired_blocks(n_blocks: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Blocks that differ in difficulty far more than the edit changes them: pairing is what makes it visible."""
    rng = np.random.default_rng(seed)
    base = rng.normal(3.2, 0.6, n_blocks)
    return base, base + rng.normal(0.05, 0.03, n_blocks)


def _paired_cases() -> tuple[Case, ...]:
    base, new = _paired_blocks()

    def point(fn):
        return differs(fn(base, new, 200, 0)[0], float(np.expm1(new.mean() - base.mean()) * 100),
                       what="change in %")

    def interval(fn):
        change, low, high = fn(base, new, 2000, 1)
        _, ref_low, ref_high = library_paired_change_interval(base, new, 4000, 0)
        if not low <= change <= high:
            return f"the interval [{low:.3g}, {high:.3g}] does not contain the change {change:.3g}"
        if abs((high - low) / (ref_high - ref_low) - 1) > 0.2:
            return f"interval width {high - low:.3g} points; the paired bootstrap gives about {ref_high - ref_low:.3g}"
        return None

    def level(fn):
        return interval_level_differs(fn(base, new, 8000, 1)[1:],
                                      library_paired_change_interval(base, new, 20000, 0)[1:])

    return (Case("the change in perplexity, in %", "perplexity is exp(mean NLL), so the change is "
                 "exp(mean new - mean base) - 1, times 100 (not the change of the mean NLL)", point),
            Case("the interval, against the library's (width within 20%)", "resample block indices once and use "
                 "the same indices for both models: the blocks' own difficulty then cancels", interval),
            Case("the interval's level (95%, each end within 4% of the interval's width)", "the 2.5th and 97.5th "
                 "percentiles of the resampled changes: the 5th and 95th give a 90% interval", level))


def _relative_nll(base_nll, new_nll, n_boot=2000, seed=0):
    base, new = np.asarray(base_nll), np.asarray(new_nll)
    idx = np.random.default_rng(seed).integers(0, len(base), (n_boot, len(base)))
    draws = (new[idx].mean(1) / base[idx].mean(1) - 1) * 100
    return float((new.mean() / base.mean() - 1) * 100), *np.percentile(draws, [2.5, 97.5])


def _ninety_percent(base_nll, new_nll, n_boot=2000, seed=0):
    base, new = np.asarray(base_nll), np.asarray(new_nll)
    idx = np.random.default_rng(seed).integers(0, len(base), (n_boot, len(base)))
    draws = np.expm1(new[idx].mean(1) - base[idx].mean(1)) * 100
    return float(np.expm1(new.mean() - base.mean()) * 100), *np.percentile(draws, [5, 95])


def _unpaired(base_nll, new_nll, n_boot=2000, seed=0):
    base, new = np.asarray(base_nll), np.asarray(new_nll)
    rng = np.random.default_rng(seed)
    draws = np.expm1(new[rng.integers(0, len(new), (n_boot, len(new)))].mean(1)
                     - base[rng.integers(0, len(base), (n_boot, len(base)))].mean(1)) * 100
    return float(np.expm1(new.mean() - base.mean()) * 100), *np.percentile(draws, [2.5, 97.5])


EXERCISES = (
    Exercise("neighbour-mean", 2, "The neighbour-mean ablation",
             "Write chapter 2's main ablation as an edit inside `surgery`.", NEIGHBOUR_STUB, neighbour_mean,
             _neighbour_cases,
             mistakes={"the layer averaged with its neighbours": (_includes_itself, "a middle layer"),
                       "a missing neighbour counted as zero": (_halves_at_edges, "the first and the last"),
                       "neighbours read after earlier edits": (_reads_edited, "two adjacent layers"),
                       "the matrices only (norm gains left as they were)": (_matrices_only, "a middle layer")},
             shows=(ablate, neighbors)),
    Exercise("paired-interval", 2, "The paired bootstrap interval of a perplexity change",
             "Compute a perplexity change between two models on the same blocks, with a paired interval.",
             PAIRED_STUB, paired_change_interval, _paired_cases,
             mistakes={"the relative change of the mean NLL": (_relative_nll, "the change in perplexity"),
                       "both models resampled independently": (_unpaired, "the interval,"),
                       "a 90% interval (the 5th and 95th percentiles)": (_ninety_percent, "the interval's level")},
             shows=(library_paired_change_interval,)),
)
