"""FLOP accounting that stays exact while depth and the trainable set change.

Counted as ``torch.utils.flop_counter.FlopCounterMode`` counts them: 2 FLOPs per multiply-add of every matrix
product, attention as the full T x T score and value products (what eager attention computes; no causal
halving), nothing for element-wise work (norms, activations, softmax, the loss). Per training step:

- forward: every layer's matrices, its attention, and the tied head;
- weight gradients: once more the forward cost of every matrix whose weight trains;
- input gradients: once more the forward cost of a matrix wherever something below it trains (gradients have
  to pass through it), and inside every trainable layer (its norm gains sit before its matrices);
- attention backward: twice its forward cost wherever gradients pass through it.

Every arm of the experiment is charged with ``step_flops`` for every step it takes, and with ``forward_flops``
for every measurement it makes to decide how to grow (the developmental arm's importance maps).
"""
from __future__ import annotations

from .models import Shape


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
