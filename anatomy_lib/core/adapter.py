"""One small adapter over the model families the book supports: Llama family (SmolLM2), Qwen2, Gemma 3 and
GPT-2.

Every diagnostic talks to a model through this class only: how many decoder layers there are, each layer's
weight tensors under one vocabulary, and how to run the residual stream from any layer to the logits.

Tensor vocabulary (a family exposes the subset it has)::

    q, k, v, o                    attention projections, as (out_features, in_features) matrices
    gate, up, down                MLP projections (GPT-2 has no gate)
    attn_norm, mlp_norm           the gains of the norms before attention and before the MLP
    attn_post_norm, mlp_post_norm Gemma 3: the gains of the norms applied to each block's output before it is
                                  added to the stream
    q_norm, k_norm                Gemma 3: per-head gains of the norms on queries and keys
    <name>_bias                   biases where the family has them (Qwen2's q/k/v, every GPT-2 linear and norm)

GPT-2's fused ``c_attn`` is split into q, k, v and its Conv1D weights are transposed; the tensors returned are
views, so an in-place edit of a view edits the model.

Gemma 3 stores every norm gain as an offset from one (the norm multiplies by ``1 + w``): ``gain_offset(name)``
says so, and weight surgery scales the effective gain ``1 + w``, not ``w``. Because a post-norm rescales a block's
output to unit RMS before its gain, scaling o or down changes nothing there: the tensors through which a Gemma
block writes into the stream, and whose scaling by alpha scales its contribution by exactly alpha, are the
post-norm gains.
"""
from __future__ import annotations

import pandas as pd
import torch
import transformers
from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask

MATRICES = ("q", "k", "v", "o", "gate", "up", "down")


# The tensors through which a block writes into the residual stream: zeroing their (effective) gain makes that
# block add nothing, scaling it by alpha scales the block's contribution by exactly alpha.
WRITERS = {"attn": ("o", "o_bias"), "mlp": ("down", "down_bias")}
POST_NORM_WRITERS = {"attn": ("attn_post_norm",), "mlp": ("mlp_post_norm",)}
for _writers in (WRITERS, POST_NORM_WRITERS):
    _writers["block"] = _writers["attn"] + _writers["mlp"]

_LLAMA_LIKE = {"llama", "qwen2", "mistral"}
_GEMMA = {"gemma3_text"}
SUPPORTED_FAMILIES = tuple(sorted(_LLAMA_LIKE | _GEMMA | {"gpt2"}))
# transformers 5 gave Gemma 3's decoder layers one rotary input chosen by layer type, which run_layers passes;
# 4.x takes a global and a local one (tested with 5.24)
GEMMA_SUPPORTED = int(transformers.__version__.split(".")[0]) >= 5

_LLAMA_PATHS = {
    "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight", "v": "self_attn.v_proj.weight",
    "o": "self_attn.o_proj.weight", "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
    "down": "mlp.down_proj.weight", "attn_norm": "input_layernorm.weight",
    "mlp_norm": "post_attention_layernorm.weight", "q_bias": "self_attn.q_proj.bias",
    "k_bias": "self_attn.k_proj.bias", "v_bias": "self_attn.v_proj.bias", "o_bias": "self_attn.o_proj.bias",
}

# Gemma 3's post_attention_layernorm acts on the attention output (Llama's is the norm before the MLP)
_GEMMA_PATHS = {
    **{k: v for k, v in _LLAMA_PATHS.items() if not k.endswith(("_bias", "norm"))},
    "q_norm": "self_attn.q_norm.weight", "k_norm": "self_attn.k_norm.weight",
    "attn_norm": "input_layernorm.weight", "attn_post_norm": "post_attention_layernorm.weight",
    "mlp_norm": "pre_feedforward_layernorm.weight", "mlp_post_norm": "post_feedforward_layernorm.weight",
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
        self.layer_types = tuple(getattr(model.config, "layer_types", None) or ())
        if self.family in _GEMMA and not GEMMA_SUPPORTED:
            raise NotImplementedError(f"Gemma 3 needs transformers >= 5 (found {transformers.__version__}); "
                                      f"pip install 'transformers>=5,<6'")
        if self.family in _LLAMA_LIKE | _GEMMA:
            self.layers = model.model.layers
            self.final_norm = model.model.norm
            self._embed = model.model.embed_tokens  # Gemma's scales by sqrt(width) itself
            self._rotary = model.model.rotary_emb
            if self.family in _LLAMA_LIKE and any(t != "full_attention" for t in self.layer_types):
                raise NotImplementedError(f"sliding-window attention layers are supported for Gemma 3 only, not "
                                          f"for a {self.family} model")
        elif self.family == "gpt2":
            self.layers = model.transformer.h
            self.final_norm = model.transformer.ln_f
            self._embed = model.transformer.wte
            self._positions = model.transformer.wpe
        else:
            raise NotImplementedError(
                f"model type {self.family!r} is not supported; supported: {list(SUPPORTED_FAMILIES)}")
        self.head = model.get_output_embeddings()
        self.n_layers = len(self.layers)
        self.hidden_size = model.config.hidden_size if self.family != "gpt2" else model.config.n_embd
        self.tensor_names = tuple(self.tensors(0))
        self.matrix_names = tuple(n for n in MATRICES if n in self.tensor_names)

    def writer_names(self, part: str = "block") -> tuple[str, ...]:
        """The tensors of this family through which ``part`` ('block', 'attn' or 'mlp') writes to the stream."""
        if part not in WRITERS:
            raise ValueError(f"unknown part {part!r}; choose one of {list(WRITERS)}")
        writers = POST_NORM_WRITERS if self.has_post_norms else WRITERS
        return tuple(n for n in writers[part] if n in self.tensor_names)

    @property
    def has_post_norms(self) -> bool:
        """Whether each block normalises its own output before adding it to the stream (Gemma 3)."""
        return self.family in _GEMMA

    def gain_offset(self, name: str) -> float:
        """What the stored tensor ``name`` is offset from: 1.0 for Gemma's norm gains (the norm multiplies by
        ``1 + w``), 0.0 for everything else. Scaling "a gain" means scaling ``offset + w``."""
        return 1.0 if self.family in _GEMMA and name.endswith("norm") else 0.0

    def gain(self, layer: int, name: str) -> torch.Tensor:
        """The effective value of tensor ``name``: what the model multiplies by (``1 + w`` for Gemma's gains)."""
        return self.tensor(layer, name) + self.gain_offset(name)

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
            paths = _GEMMA_PATHS if self.family in _GEMMA else _LLAMA_PATHS
            found = {name: _get(block, path) for name, path in paths.items()}
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

    def _layer_inputs(self, hidden: torch.Tensor) -> list[dict]:
        """Per layer, the keyword arguments its forward needs besides the stream: positions, rotary angles and
        attention masks (Gemma's differ between its sliding-window and global layers)."""
        seq_len = hidden.shape[1]
        common: dict = {}
        if self.config._attn_implementation not in ("sdpa", "flash_attention_2") and self.family not in _GEMMA:
            # eager attention needs an explicit additive causal mask; sdpa uses is_causal when none is given
            mask = torch.full((seq_len, seq_len), torch.finfo(hidden.dtype).min, device=hidden.device)
            common["attention_mask"] = torch.triu(mask, diagonal=1)[None, None].to(hidden.dtype)
        if self.family == "gpt2":
            return [common] * self.n_layers
        position_ids = torch.arange(seq_len, device=hidden.device)[None]
        common["position_ids"] = position_ids
        if self.family not in _GEMMA:
            return [{**common, "position_embeddings": self._rotary(hidden, position_ids)}] * self.n_layers
        # the same mask builders and rotary tables the model's own forward uses, keyed by layer type
        mask_args = {"config": self.config, "inputs_embeds": hidden, "attention_mask": None, "cache": None,
                     "position_ids": position_ids}
        masks = {"full_attention": create_causal_mask(**mask_args),
                 "sliding_attention": create_sliding_window_causal_mask(**mask_args)}
        rotary = {kind: self._rotary(hidden, position_ids, kind) for kind in set(self.layer_types)}
        return [{**common, "attention_mask": masks[kind], "position_embeddings": rotary[kind]}
                for kind in self.layer_types]

    def run_layers(self, hidden: torch.Tensor, start: int, stop: int | None = None,
                   capture: list | None = None) -> torch.Tensor:
        """Run layers ``start`` .. ``stop - 1`` on the residual stream ``hidden`` (causal attention, within its
        window for a sliding-window layer).

        With ``capture`` (a list), the stream entering each layer run is appended to it.
        """
        stop = self.n_layers if stop is None else stop
        if not 0 <= start <= stop <= self.n_layers:
            raise ValueError(f"layer range {start}..{stop} is invalid; valid layers are 0..{self.n_layers - 1}")
        inputs = self._layer_inputs(hidden)
        for index in range(start, stop):
            if capture is not None:
                capture.append(hidden)
            out = self.layers[index](hidden, **inputs[index])
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def head_logits(self, normed: torch.Tensor) -> torch.Tensor:
        """Logits from the final-normed stream: the unembedding, then the family's logit soft-cap if it has one."""
        logits = self.head(normed)
        cap = getattr(self.config, "final_logit_softcapping", None)
        return torch.tanh(logits / cap) * cap if cap else logits

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits from the residual stream leaving the last layer."""
        return self.head_logits(self.final_norm(hidden))


def as_adapter(model_or_adapter) -> ModelAdapter:
    """The adapter of a model, a ``Specimen`` or an adapter (returned as it is)."""
    if isinstance(model_or_adapter, ModelAdapter):
        return model_or_adapter
    if hasattr(model_or_adapter, "adapter") and hasattr(model_or_adapter, "model"):  # a Specimen
        return model_or_adapter.adapter
    return ModelAdapter(model_or_adapter)
