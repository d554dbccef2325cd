"""The book's one FLOP convention, and accounting that stays exact while depth and the trainable set change.

Every FLOP figure the book prints (the growth budget, a fraction of the matmul peak, model FLOPs utilisation)
counts as ``torch.utils.flop_counter.FlopCounterMode`` counts eager attention: 2 FLOPs per multiply-add of every
matrix product, attention as the full T x T score and value products (no causal halving), nothing for
element-wise work (norms, activations, softmax, the loss). On a CPU, FlopCounterMode does not see the fused
``scaled_dot_product_attention`` kernel, so a count taken with it is compared on an eager-attention model.
Per training step:

- forward: every layer's matrices, its attention, and the tied head;
- weight gradients: once more the forward cost of every matrix whose weight trains;
- input gradients: once more the forward cost of a matrix wherever something below it trains (gradients have
  to pass through it), and inside every trainable layer (its norm gains sit before its matrices);
- attention backward: twice its forward cost wherever gradients pass through it.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch
from transformers import LlamaConfig


@dataclass(frozen=True)
class Shape:
    """Everything but the depth: width, heads, MLP width, vocabulary, context."""

    width: int = 128
    heads: int = 4
    kv_heads: int = 4
    mlp_width: int = 512
    vocab_size: int = 4096
    context: int = 128

    def __post_init__(self):
        if self.width % self.heads or self.heads % self.kv_heads:
            raise ValueError(f"width {self.width} must divide into {self.heads} heads, and heads into "
                             f"{self.kv_heads} key/value heads")

    def config(self, n_layers: int, attention: str = "sdpa") -> LlamaConfig:
        config = LlamaConfig(vocab_size=self.vocab_size, hidden_size=self.width, intermediate_size=self.mlp_width,
                             num_hidden_layers=n_layers, num_attention_heads=self.heads,
                             num_key_value_heads=self.kv_heads, max_position_embeddings=self.context,
                             tie_word_embeddings=True, rms_norm_eps=1e-5, bos_token_id=0, eos_token_id=0,
                             pad_token_id=None)
        config._attn_implementation = attention
        return config

    def as_dict(self) -> dict:
        return asdict(self)


def _layer_parts(shape: Shape, tokens: int, context: int) -> dict:
    head_dim = shape.width // shape.heads
    kv = shape.kv_heads * head_dim
    return {"qkv": 2 * tokens * shape.width * (shape.width + 2 * kv), "o": 2 * tokens * shape.width * shape.width,
            "gate_up": 2 * tokens * 2 * shape.width * shape.mlp_width,
            "down": 2 * tokens * shape.mlp_width * shape.width,
            "attention": 2 * 2 * tokens * context * shape.width}


def forward_flops(shape: Shape, n_layers: int, batch: int, context: int | None = None) -> int:
    """One forward pass of ``batch`` sequences of ``context`` tokens through ``n_layers`` layers and the head."""
    context = context or shape.context
    tokens = batch * context
    layer = sum(_layer_parts(shape, tokens, context).values())
    return n_layers * layer + 2 * tokens * shape.width * shape.vocab_size


def step_flops(shape: Shape, trainable: list[bool], embedding_trains: bool, batch: int,
               context: int | None = None) -> int:
    """Forward and backward of one training step; ``trainable[i]`` says whether layer i's weights train."""
    context = context or shape.context
    tokens = batch * context
    parts = _layer_parts(shape, tokens, context)
    matrices = parts["qkv"] + parts["o"] + parts["gate_up"] + parts["down"]
    total = forward_flops(shape, len(trainable), batch, context)
    below = embedding_trains  # does anything below the current layer train?
    for trains in trainable:
        if trains:
            total += matrices  # weight gradients
        if trains or below:
            total += matrices + 2 * parts["attention"]  # input gradients
        below = below or trains
    head = 2 * tokens * shape.width * shape.vocab_size
    if embedding_trains:
        total += head  # the tied head's weight gradient
    if below:
        total += head  # gradient into the last residual stream
    return total


def adapter_forward_flops(adapter, context: int) -> float:
    """Forward FLOPs per token of any adapted model at sequence length ``context``, in this convention: 2 per
    weight of every layer matrix and of the head, plus the full T x T attention products (2 x 2 x T x q width a
    layer). For a Llama-family model it equals ``forward_flops(shape_of(adapter, context), ...) / tokens``."""
    matrices = sum(adapter.tensor(layer, name).numel() for layer in range(adapter.n_layers)
                   for name in adapter.matrix_names)
    attention = adapter.n_layers * 2 * 2 * context * adapter.tensor(0, "q").shape[0]
    return 2.0 * (matrices + adapter.head.weight.numel()) + attention


def shape_of(adapter, context: int) -> Shape:
    """The ``Shape`` of a Llama-family specimen (width, heads, MLP, vocabulary) at sequence length ``context``
    (GPT-2 has no gate and fused attention: count it with ``adapter_forward_flops``)."""
    config = adapter.config
    heads = config.num_attention_heads
    return Shape(config.hidden_size, heads, getattr(config, "num_key_value_heads", None) or heads,
                 config.intermediate_size, config.vocab_size, context)


# ---- how fast this machine multiplies: what every "fraction of peak" divides by ---------------------------------
PEAK_SIZES = (1024, 2048, 3072)


def matmul_peak_gflops(sizes=PEAK_SIZES, repeats: int = 5, dtype=torch.float32) -> float:
    """The best GFLOP/s of square matmuls of a few sizes, each timed ``repeats`` times after a warm-up (best of
    all): a ceiling no workload on this machine should beat. Probe it before and after a measurement and keep
    the larger (``PeakProbe``): a probe taken while the machine was busy would understate it."""
    best = 0.0
    for size in sizes:
        a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
        a @ b
        for _ in range(repeats):
            started = time.perf_counter()
            a @ b
            best = max(best, 2 * size ** 3 / (time.perf_counter() - started) / 1e9)
    return best


class PeakProbe:
    """The matmul peak probed before and after a measurement; ``fraction(gflops)`` divides by the larger and
    refuses a fraction above one (a peak that low was probed badly, and the figure would mislead)."""

    def __init__(self, **probe):
        self.probe = probe
        self.before = matmul_peak_gflops(**probe)
        self.after: float | None = None

    @property
    def gflops(self) -> float:
        if self.after is None:
            self.after = matmul_peak_gflops(**self.probe)
        return max(self.before, self.after)

    def fraction(self, achieved_gflops: float) -> float:
        fraction = achieved_gflops / self.gflops
        if fraction > 1:
            raise RuntimeError(f"{achieved_gflops:.1f} GFLOP/s is {fraction:.0%} of the probed matmul peak "
                               f"({self.before:.1f} before, {self.after:.1f} after): the peak probe is wrong")
        return fraction
