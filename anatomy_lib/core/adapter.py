"""One small adapter over the model families the book supports: Llama family (SmolLM2), Qwen2 and GPT-2.

Every diagnostic talks to a model through this class only: how many decoder layers there are, each layer's
weight tensors under one vocabulary, and how to run the residual stream from any layer to the logits.

Tensor vocabulary (a family exposes the subset it has)::

    q, k, v, o            attention projections, as (out_features, in_features) matrices
    gate, up, down        MLP projections (GPT-2 has no gate)
    attn_norm, mlp_norm   the two norms' gains
    <name>_bias           biases where the family has them (Qwen2's q/k/v, every GPT-2 linear and norm)

GPT-2's fused ``c_attn`` is split into q, k, v and its Conv1D weights are transposed; the tensors returned are
views, so an in-place edit of a view edits the model.
"""
from __future__ import annotations

import pandas as pd
import torch

MATRICES = ("q", "k", "v", "o", "gate", "up", "down")


# The tensors through which a block writes into the residual stream: zeroing them makes that block add nothing,
# scaling them by alpha scales its contribution by exactly alpha.
WRITERS = {"attn": ("o", "o_bias"), "mlp": ("down", "down_bias")}

WRITERS["block"] = WRITERS["attn"] + WRITERS["mlp"]

_LLAMA_LIKE = {"llama", "qwen2", "mistral"}

_LLAMA_PATHS = {
    "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight", "v": "self_attn.v_proj.weight",
    "o": "self_attn.o_proj.weight", "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
    "down": "mlp.down_proj.weight", "attn_norm": "input_layernorm.weight",
    "mlp_norm": "post_attention_layernorm.weight", "q_bias": "self_attn.q_proj.bias",
    "k_bias": "self_attn.k_proj.bias", "v_bias": "self_attn.v_proj.bias", "o_bias": "self_attn.o_proj.bias",
}


def _get(module: torch.nn.Module, dotted: str):
    for part in dotted.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


class ModelAdapter:
    """Layers, named weight tensors and a layer-range forward for one causal language model."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.config = model.config
        self.family = getattr(model.config, "model_type", "")
        if self.family in _LLAMA_LIKE:
            self.layers = model.model.layers
            self.final_norm = model.model.norm
            self._embed = model.model.embed_tokens
            self._rotary = model.model.rotary_emb
            layer_types = getattr(model.config, "layer_types", None) or []
            if any(t != "full_attention" for t in layer_types):
                raise NotImplementedError("sliding-window attention layers are not supported by this adapter")
        elif self.family == "gpt2":
            self.layers = model.transformer.h
            self.final_norm = model.transformer.ln_f
            self._embed = model.transformer.wte
            self._positions = model.transformer.wpe
        else:
            raise NotImplementedError(
                f"model type {self.family!r} is not supported; supported: {sorted(_LLAMA_LIKE | {'gpt2'})}")
        self.head = model.get_output_embeddings()
        self.n_layers = len(self.layers)
        self.hidden_size = model.config.hidden_size if self.family != "gpt2" else model.config.n_embd
        self.tensor_names = tuple(self.tensors(0))
        self.matrix_names = tuple(n for n in MATRICES if n in self.tensor_names)

    def writer_names(self, part: str = "block") -> tuple[str, ...]:
        """The tensors of this family through which ``part`` ('block', 'attn' or 'mlp') writes to the stream."""
        if part not in WRITERS:
            raise ValueError(f"unknown part {part!r}; choose one of {list(WRITERS)}")
        return tuple(n for n in WRITERS[part] if n in self.tensor_names)

    @property
    def active_edits(self) -> dict[int, int]:
        """Layers under an active weight edit (see surgery.py), kept on the model so every adapter sees them.

        The prefix cache reads it to know from which layer a forward pass must be recomputed.
        """
        if not hasattr(self.model, "_anatomy_active_edits"):
            self.model._anatomy_active_edits = {}
        return self.model._anatomy_active_edits

    # ---- weights ------------------------------------------------------------------------------------------
    def check_layer(self, layer: int) -> int:
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < self.n_layers:
            raise ValueError(f"layer {layer!r} is out of range; valid layers are 0..{self.n_layers - 1}")
        return layer

    def tensors(self, layer: int) -> dict[str, torch.Tensor]:
        """All named weight tensors of one layer, as live views (an in-place edit edits the model)."""
        block = self.layers[self.check_layer(layer)]
        if self.family != "gpt2":
            found = {name: _get(block, path) for name, path in _LLAMA_PATHS.items()}
            return {name: t.data for name, t in found.items() if t is not None}
        d = self.hidden_size
        w, b = block.attn.c_attn.weight.data, block.attn.c_attn.bias.data  # Conv1D: (in, out)
        return {
            "q": w[:, :d].T, "k": w[:, d:2 * d].T, "v": w[:, 2 * d:].T, "o": block.attn.c_proj.weight.data.T,
            "up": block.mlp.c_fc.weight.data.T, "down": block.mlp.c_proj.weight.data.T,
            "attn_norm": block.ln_1.weight.data, "mlp_norm": block.ln_2.weight.data,
            "q_bias": b[:d], "k_bias": b[d:2 * d], "v_bias": b[2 * d:], "o_bias": block.attn.c_proj.bias.data,
            "up_bias": block.mlp.c_fc.bias.data, "down_bias": block.mlp.c_proj.bias.data,
            "attn_norm_bias": block.ln_1.bias.data, "mlp_norm_bias": block.ln_2.bias.data,
        }

    def tensor(self, layer: int, name: str) -> torch.Tensor:
        tensors = self.tensors(layer)
        if name not in tensors:
            raise ValueError(f"unknown tensor {name!r} for a {self.family} model; valid names: {list(tensors)}")
        return tensors[name]

    def layer_parameters(self, layers) -> list[torch.nn.Parameter]:
        """Every parameter of the given decoder layers (what fine-tuning a layer trains)."""
        return [p for layer in layers for p in self.layers[self.check_layer(layer)].parameters()]

    def stacked(self, name: str, order=None) -> torch.Tensor:
        """(n_layers, n_elements) float32 stack of one tensor's weights across layers, in ``order`` (default:
        depth), on the CPU: the sample matrix of the weight-space chapters."""
        order = range(self.n_layers) if order is None else order
        return torch.stack([self.tensor(layer, name).detach().float().reshape(-1).cpu() for layer in order])

    def parameter_table(self):
        """Tidy table: one row per (layer, tensor) with its shape and parameter count."""
        rows = [{"layer": layer, "tensor": name, "shape": tuple(t.shape), "parameters": t.numel()}
                for layer in range(self.n_layers) for name, t in self.tensors(layer).items()]
        return pd.DataFrame(rows)

    # ---- the residual stream ------------------------------------------------------------------------------
    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The residual stream entering layer 0."""
        hidden = self._embed(input_ids)
        if self.family == "gpt2":
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            hidden = hidden + self._positions(positions)[None]
        return hidden

    def run_layers(self, hidden: torch.Tensor, start: int, stop: int | None = None,
                   capture: list | None = None) -> torch.Tensor:
        """Run layers ``start`` .. ``stop - 1`` on the residual stream ``hidden`` (full causal attention).

        With ``capture`` (a list), the stream entering each layer run is appended to it.
        """
        stop = self.n_layers if stop is None else stop
        if not 0 <= start <= stop <= self.n_layers:
            raise ValueError(f"layer range {start}..{stop} is invalid; valid layers are 0..{self.n_layers - 1}")
        seq_len = hidden.shape[1]
        kwargs: dict = {}
        if self.config._attn_implementation not in ("sdpa", "flash_attention_2"):
            # eager attention needs an explicit additive causal mask; sdpa uses is_causal when none is given
            mask = torch.full((seq_len, seq_len), torch.finfo(hidden.dtype).min, device=hidden.device)
            kwargs["attention_mask"] = torch.triu(mask, diagonal=1)[None, None].to(hidden.dtype)
        if self.family != "gpt2":
            position_ids = torch.arange(seq_len, device=hidden.device)[None]
            kwargs["position_ids"] = position_ids
            kwargs["position_embeddings"] = self._rotary(hidden, position_ids)
        for layer in self.layers[start:stop]:
            if capture is not None:
                capture.append(hidden)
            out = layer(hidden, **kwargs)
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits from the residual stream leaving the last layer."""
        return self.head(self.final_norm(hidden))


def as_adapter(model_or_adapter) -> ModelAdapter:
    """The adapter of a model, a ``Specimen`` or an adapter (returned as it is)."""
    if isinstance(model_or_adapter, ModelAdapter):
        return model_or_adapter
    if hasattr(model_or_adapter, "adapter") and hasattr(model_or_adapter, "model"):  # a Specimen
        return model_or_adapter.adapter
    return ModelAdapter(model_or_adapter)
