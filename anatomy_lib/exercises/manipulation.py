"""Chapter 5's exercises: scaling a layer's contribution by alpha (on a pre-norm and a post-norm family), and
an edit that gives the original weights back bit for bit, even when the block inside it raises."""
from __future__ import annotations

from contextlib import contextmanager

import torch

from ..core.adapter import GEMMA_SUPPORTED
from ..core.specimens import tiny_specimen
from ..core.surgery import WeightSurgery, surgery
from ..manipulation.strategies import Manipulation, apply
from .checking import Case, Exercise

# ---- the alpha scaling --------------------------------------------------------------------------------------
SCALE_STUB = '''def scale_contribution(editor, layer, alpha):
    """Inside an open `surgery(model)`, make `layer` add alpha times its usual contribution to the residual
    stream. editor.adapter.writer_names() lists the tensors through which the layer writes to the stream;
    editor.adapter.gain_offset(name) is 1.0 for a gain stored as an offset from one (Gemma's norms: the model
    multiplies by 1 + w), else 0.0. Use editor.original(layer, name) and editor.replace(layer, name, value)."""
    raise NotImplementedError  # your code here
'''


def scale_contribution(editor, layer: int, alpha: float) -> None:
    """The library's answer: chapter 5's ``scale`` strategy on the writers."""
    apply(editor, layer, Manipulation("scale", alpha=alpha, scope="writers"))


def _state_after(adapter, edit, layer, alpha) -> dict[str, torch.Tensor]:
    with surgery(adapter) as editor:
        edit(editor, layer, alpha)
        return {k: v.detach().clone() for k, v in adapter.model.state_dict().items()}


def _scale_cases() -> tuple[Case, ...]:
    # transformers 4.x cannot run Gemma 3 through the adapter: there the post-norm case is left out
    families = ("llama", "gemma3") if GEMMA_SUPPORTED else ("llama",)
    adapters = {arch: tiny_specimen(arch, n_layers=4, hidden=32, vocab=64).adapter for arch in families}

    def case(arch, layer, alpha):
        def test(fn):
            adapter = adapters[arch]
            expected = _state_after(adapter, scale_contribution, layer, alpha)
            got = _state_after(adapter, fn, layer, alpha)
            for name, value in expected.items():
                if not torch.allclose(got[name], value, rtol=1e-5, atol=1e-7):
                    return f"tensor {name} differs from the library's edit (alpha {alpha:g}, layer {layer})"
            return None
        return test

    cases = (Case("Llama (pre-norm), alpha 0.5", "only the tensors that write into the stream change (o and down "
                  "here): scaling q and k as well changes the attention's temperature, not the output's size",
                  case("llama", 1, 0.5)),
             Case("Llama, alpha 0 (the layer skipped)", "alpha = 0 zeroes the writers and nothing else",
                  case("llama", 2, 0.0)))
    if not GEMMA_SUPPORTED:
        return cases
    return cases + (Case("Gemma 3 (post-norm), alpha 0.5", "a post-norm block writes through its post-norm gain, "
                         "stored as w with the model multiplying by 1 + w: scale 1 + w, i.e. w becomes "
                         "alpha (1 + w) - 1", case("gemma3", 1, 0.5)),)


def _scales_every_matrix(editor, layer, alpha):
    for name in editor.adapter.matrix_names:
        editor.replace(layer, name, editor.original(layer, name) * alpha)


def _attention_only(editor, layer, alpha):
    for name in editor.adapter.writer_names("attn"):
        editor.replace(layer, name, editor.original(layer, name) * alpha)


def _ignores_offset(editor, layer, alpha):
    for name in editor.adapter.writer_names():
        editor.replace(layer, name, editor.original(layer, name) * alpha)


# ---- an edit that undoes itself --------------------------------------------------------------------------------
RESTORE_STUB = '''from contextlib import contextmanager


@contextmanager
def scaled(adapter, layer, alpha):
    """Inside the with-block, layer `layer` writes alpha times its contribution (its writers, the tensors
    adapter.writer_names(), multiplied by alpha; adapter.tensor(layer, name) is the live tensor). On leaving,
    every tensor is bit for bit what it was, also when the block raised."""
    raise NotImplementedError  # your code here
    yield
'''


@contextmanager
def scaled(adapter, layer: int, alpha: float):
    """The library's answer: ``WeightSurgery`` keeps a clone of every tensor it touches and copies it back in
    ``restore``, which ``surgery`` calls in a ``finally``."""
    editor = WeightSurgery(adapter)
    try:
        editor.scale(layer, adapter.writer_names(), alpha)
        yield
    finally:
        editor.restore()


def _restore_cases() -> tuple[Case, ...]:
    adapter = tiny_specimen("llama", n_layers=4, hidden=32, vocab=64, seed=2).adapter
    model = adapter.model
    ids = torch.arange(12).reshape(1, 12) % 64

    def snapshot():
        return {k: v.detach().clone() for k, v in model.state_dict().items()}

    def changed(before) -> str | None:
        after = model.state_dict()
        for name, value in before.items():
            if not torch.equal(after[name], value):
                with torch.no_grad():
                    after[name].copy_(value)  # leave the model intact for the next case
                return f"{name} is not bit for bit what it was"
        return None

    def inside(fn):
        with torch.inference_mode(), scaled(adapter, 1, 0.7):
            expected = model(ids).logits
        with torch.inference_mode(), fn(adapter, 1, 0.7):
            got = model(ids).logits
        return None if torch.allclose(got, expected, atol=1e-5) else "inside the block the logits differ from a " \
                                                                       "layer scaled by 0.7"

    def after(alpha):
        def test(fn):
            before = snapshot()
            with fn(adapter, 2, alpha):
                pass
            problem = changed(before)
            return None if problem is None else f"after a block with alpha {alpha:g}: {problem}"
        return test

    def through_error(fn):
        before = snapshot()
        try:
            with fn(adapter, 1, 0.5):
                raise KeyboardInterrupt  # what a reader's interrupted cell raises
        except KeyboardInterrupt:
            pass
        else:
            return "the interruption inside the block was swallowed: it must reach the caller"
        problem = changed(before)
        return None if problem is None else f"after an interrupted block: {problem}"

    return (Case("inside the block", "multiply the writers of the layer by alpha, in place, before the yield",
                 inside),
            Case("after the block, alpha 0.7 and 0.3", "dividing by alpha does not give the original bits back "
                 "(x * 0.7 / 0.7 is not always x in float32), and alpha = 0 cannot be undone at all: keep a clone "
                 "of each tensor and copy it back", lambda fn: after(0.7)(fn) or after(0.3)(fn) or after(0.0)(fn)),
            Case("after an interrupted block", "restore in a finally block (try: ... yield ... finally: restore), "
                 "so that an exception or a KeyboardInterrupt restores too, and is not swallowed", through_error))


@contextmanager
def _divides_back(adapter, layer, alpha):
    with torch.no_grad():
        for name in adapter.writer_names():
            adapter.tensor(layer, name).mul_(alpha)
        yield
        for name in adapter.writer_names():
            adapter.tensor(layer, name).div_(alpha)


@contextmanager
def _without_finally(adapter, layer, alpha):
    saved = {name: adapter.tensor(layer, name).detach().clone() for name in adapter.writer_names()}
    with torch.no_grad():
        for name in saved:
            adapter.tensor(layer, name).mul_(alpha)
    yield
    with torch.no_grad():
        for name, value in saved.items():
            adapter.tensor(layer, name).copy_(value)


@contextmanager
def _keeps_references(adapter, layer, alpha):
    saved = {name: adapter.tensor(layer, name).detach() for name in adapter.writer_names()}  # views, not copies
    with torch.no_grad():
        for name in saved:
            adapter.tensor(layer, name).mul_(alpha)
    try:
        yield
    finally:
        with torch.no_grad():
            for name, value in saved.items():
                adapter.tensor(layer, name).copy_(value)


EXERCISES = (
    Exercise("alpha-scaling", 5, "Scaling a layer's contribution by alpha",
             "Write chapter 5's scale strategy for a pre-norm (Llama) and a post-norm (Gemma-3) family.",
             SCALE_STUB, scale_contribution, _scale_cases,
             mistakes={"every matrix scaled": (_scales_every_matrix, "Llama (pre-norm)"),
                       "the stored gain scaled, not 1 + w": (_ignores_offset, "Gemma 3"),
                       "the attention's output only (the MLP forgotten)": (_attention_only, "Llama (pre-norm)")},
             shows=(apply, WeightSurgery.scale)),
    Exercise("exact-restore", 5, "An edit that always undoes itself",
             "Write the context manager every edit in the book runs inside: the model comes back bit for bit.",
             RESTORE_STUB, scaled, _restore_cases,
             mistakes={"dividing by alpha on the way out": (_divides_back, "after the block"),
                       "restoring without a finally": (_without_finally, "after an interrupted block"),
                       "the originals kept as references (detach, not clone)": (_keeps_references,
                                                                                "after the block")},
             shows=(surgery, WeightSurgery.restore)),
)
