"""Models for the growth experiment: transformers' Llama architecture at any depth, tied embeddings.

The dissection chapters' adapter and engine already handle Llama models, so a grown model can be dissected
with chapter 2's importance map like any specimen. A growth operator edits ``model.model.layers`` (see
``operators``); ``renumber`` keeps the config and each attention's ``layer_idx`` in step with the new depth.
"""
from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM

from ..core.flops import Shape


def build_model(shape: Shape, n_layers: int, seed: int, attention: str = "sdpa") -> torch.nn.Module:
    """A randomly initialised model of ``n_layers`` layers; ``seed`` fixes the initialisation."""
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(shape.config(n_layers, attention), dtype=torch.float32)


def renumber(model) -> None:
    """After layers were added, removed or reordered: the config's depth and every layer's index follow."""
    layers = model.model.layers
    model.config.num_hidden_layers = len(layers)
    if getattr(model.config, "layer_types", None) is not None:
        model.config.layer_types = [model.config.layer_types[0]] * len(layers)
    for index, layer in enumerate(layers):
        layer.self_attn.layer_idx = index


def parameter_counts(shape: Shape, n_layers: int) -> dict:
    """Parameters of the body (decoder layers and final norm), the tied embedding, and in all."""
    head_dim = shape.width // shape.heads
    attention = 2 * shape.width * shape.width + 2 * shape.width * shape.kv_heads * head_dim
    layer = attention + 3 * shape.width * shape.mlp_width + 2 * shape.width
    body = n_layers * layer + shape.width
    embedding = shape.vocab_size * shape.width
    return {"per_layer": layer, "body": body, "embedding": embedding, "total": body + embedding}
