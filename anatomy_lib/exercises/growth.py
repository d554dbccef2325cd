"""Chapter 7's exercises: the FLOPs of a forward pass in the book's convention, and of one fine-tuning step
with only the top layers training (what matched compute is counted in)."""
from __future__ import annotations

from itertools import combinations

from ..core.flops import Shape, step_flops
from ..core.flops import forward_flops as library_forward_flops
from .checking import Case, Exercise

HEAD = "the tied head (tokens x width x vocabulary)"
CONVENTION = ("2 FLOPs per multiply-add of every matrix product; attention as the full T x T score and value "
              "products (no causal halving); nothing for norms, activations, softmax or the loss")


def _parts(shape: Shape, n_layers: int, batch: int) -> dict[str, int]:
    """Named pieces of a forward pass, to say which one a wrong count left out or added."""
    tokens = batch * shape.context
    head_dim = shape.width // shape.heads
    return {"the attention score and value products": n_layers * 4 * tokens * shape.context * shape.width,
            "the attention products' difference between context x width and width x width":
                n_layers * 4 * tokens * shape.width * abs(shape.context - shape.width),
            HEAD: 2 * tokens * shape.width * shape.vocab_size,
            "k and v at full width (grouped-query attention has fewer key/value heads)":
                n_layers * 2 * 2 * tokens * shape.width * (shape.width - shape.kv_heads * head_dim),
            "one whole forward pass": library_forward_flops(shape, n_layers, batch)}


def _compare(got, expected: int, parts: dict[str, int]) -> str | None:
    if got is None:
        return "returned None; expected a number of FLOPs"
    got = int(round(float(got)))
    if got == expected:
        return None
    gap = expected - got
    for size in (1, 2):
        for names in combinations(parts, size):
            for sign, word in ((1, "is missing"), (-1, "has too much")):
                if gap == sign * sum(parts[n] for n in names):
                    return f"got {got:,}, expected {expected:,}: the count {word} exactly " + " and ".join(names)
    return f"got {got:,}, expected {expected:,} ({got / expected:.3f} of it)"


# ---- a forward pass -----------------------------------------------------------------------------------------
FORWARD_STUB = '''def forward_flops(shape, n_layers, batch):
    """FLOPs of one forward pass of `batch` sequences of shape.context tokens through `n_layers` Llama layers
    and the tied head. shape has width, heads, kv_heads, mlp_width, vocab_size, context. Convention: 2 FLOPs
    per multiply-add of every matrix product; attention as the full T x T score and value products (no causal
    halving); nothing for norms, activations, softmax or the loss."""
    raise NotImplementedError  # your code here
'''


def forward_flops(shape: Shape, n_layers: int, batch: int) -> int:
    """The library's answer (``core.flops.forward_flops``, checked against torch's FlopCounterMode in the tests)."""
    return library_forward_flops(shape, n_layers, batch)


# every context differs from its width, so that a count of width x width where context x width belongs shows
SHAPES = {"mha": Shape(width=128, heads=4, kv_heads=4, mlp_width=512, vocab_size=4096, context=96),
          "gqa": Shape(width=128, heads=8, kv_heads=2, mlp_width=384, vocab_size=4096, context=160),
          "long": Shape(width=64, heads=4, kv_heads=1, mlp_width=256, vocab_size=2048, context=1024)}


def _forward_cases() -> tuple[Case, ...]:
    def case(name, n_layers, batch):
        shape = SHAPES[name]
        expected = forward_flops(shape, n_layers, batch)
        return lambda fn: _compare(fn(shape, n_layers, batch), expected, _parts(shape, n_layers, batch))

    return (Case("4 heads, each with its own keys and values", "per layer: q, k, v, o, gate, up and down, each "
                 "2 x tokens x inputs x outputs; plus the attention's two T x T products (2 x 2 x tokens x "
                 "context x width); plus the tied head once", case("mha", 4, 2)),
            Case("grouped-query attention (8 query heads, 2 key/value heads)", "k and v are kv_heads x head_dim "
                 "wide, not width (head_dim = width / heads)", case("gqa", 6, 2)),
            Case("a long context (1,024 tokens)", "the attention products grow with the square of the context: "
                 "context x context per head dimension, for every layer", case("long", 3, 1)))


def _no_attention(shape, n_layers, batch):
    return library_forward_flops(shape, n_layers, batch) - _parts(shape, n_layers, batch)[
        "the attention score and value products"]


def _attention_by_width(shape, n_layers, batch):
    tokens = batch * shape.context
    return library_forward_flops(shape, n_layers, batch) - n_layers * 4 * tokens * shape.width * (
        shape.context - shape.width)


def _no_head(shape, n_layers, batch):
    return library_forward_flops(shape, n_layers, batch) - _parts(shape, n_layers, batch)[HEAD]


def _full_width_kv(shape, n_layers, batch):
    return library_forward_flops(Shape(shape.width, shape.heads, shape.heads, shape.mlp_width, shape.vocab_size,
                                       shape.context), n_layers, batch)


# ---- a fine-tuning step -------------------------------------------------------------------------------------
STEP_STUB = '''def finetune_step_flops(shape, n_layers, top, batch, forward_flops):
    """FLOPs of one training step (forward and backward) when only the top `top` of `n_layers` layers train and
    the embedding (tied with the head) is frozen. `forward_flops(shape, n_layers, batch)` is the forward count
    (yours or the library's). A matrix's backward costs one forward for the gradient of its input (needed
    wherever something below it trains, and inside every trainable layer) and one for its weight (where the
    weight trains); attention's backward costs twice its forward wherever gradients pass through it."""
    raise NotImplementedError  # your code here
'''


def finetune_step_flops(shape: Shape, n_layers: int, top: int, batch: int, forward_flops=library_forward_flops):
    """The library's answer (``core.flops.step_flops`` with the bottom layers and the embedding frozen)."""
    return step_flops(shape, [False] * (n_layers - top) + [True] * top, False, batch)


def _step_parts(shape: Shape, n_layers: int, top: int, batch: int) -> dict[str, int]:
    parts = _parts(shape, 1, batch)
    head, attention = parts[HEAD], parts["the attention score and value products"]
    matrices = library_forward_flops(shape, 1, batch) - head - attention
    frozen = n_layers - top
    return {"the tied head's weight gradient": head,
            "the input gradients through the frozen layers": frozen * (matrices + 2 * attention),
            "the weight gradients of the frozen layers": frozen * matrices}


def _step_cases() -> tuple[Case, ...]:
    shape = SHAPES["gqa"]

    def case(n_layers, top, batch):
        expected = finetune_step_flops(shape, n_layers, top, batch)
        return lambda fn: _compare(fn(shape, n_layers, top, batch, library_forward_flops), expected,
                                   _step_parts(shape, n_layers, top, batch))

    return (Case("every layer trains, the embedding does not", "with the embedding frozen nothing needs the tied "
                 "head's weight gradient (the gradient into the last layer's output is still needed)",
                 case(6, 6, 2)),
            Case("only the top 2 of 6 layers train", "layers below every trainable one need no backward at all: "
                 "nothing below them trains, so no gradient has to pass through them", case(6, 2, 2)),
            Case("only the top layer trains", "inside the lowest trainable layer the input gradients are still "
                 "needed (its norm gain sits before its matrices)", case(6, 1, 1)))


def _three_forwards(shape, n_layers, top, batch, forward_flops):
    return 3 * forward_flops(shape, n_layers, batch)


def _head_gradient_counted(shape, n_layers, top, batch, forward_flops):
    return finetune_step_flops(shape, n_layers, top, batch) + _parts(shape, 1, batch)[HEAD]


def _backward_to_the_bottom(shape, n_layers, top, batch, forward_flops):
    trainable = [False] * (n_layers - top) + [True] * top
    return step_flops(shape, trainable, True, batch) - _parts(shape, 1, batch)[HEAD]


EXERCISES = (
    Exercise("forward-flops", 7, "The FLOPs of a forward pass",
             "Count a forward pass in the book's FLOP convention (" + CONVENTION + ").", FORWARD_STUB,
             forward_flops, _forward_cases,
             mistakes={"attention's T x T products left out": (_no_attention, "4 heads"),
                       "k and v as wide as q": (_full_width_kv, "grouped-query attention"),
                       "the T x T products sized width x width": (_attention_by_width, "4 heads"),
                       "the tied head left out": (_no_head, "4 heads")},
             shows=(library_forward_flops,)),
    Exercise("finetune-step-flops", 7, "The FLOPs of a fine-tuning step",
             "Count forward and backward of a step in which only the top layers train.", STEP_STUB,
             finetune_step_flops, _step_cases,
             mistakes={"three forward passes, whatever trains": (_three_forwards, "every layer trains"),
                       "gradients taken down to the embedding": (_backward_to_the_bottom, "only the top 2"),
                       "the tied head's weight gradient counted (the embedding is frozen)": (
                           _head_gradient_counted, "every layer trains")},
             shows=(step_flops,)),
)
