"""A GGUF file's weight matrices as per-component stacks, in numpy and the pure-Python ``gguf`` package alone (no
torch, no transformers), so the same reader serves the library and the in-browser page "Dissect your own model".

Each matrix comes out as transformers would load it: dequantised to float32 by ``gguf``, shaped (out, in), and
for the ``llama`` architecture with the rotary permutation of q and k that llama.cpp's converter applies undone
(transformers undoes it too), so a stack read here equals ``ModelAdapter.stacked`` of the loaded specimen bit for
bit. Every failure is a ``GGUFError`` whose message is one line a reader can act on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# the book's component names (core.adapter.MATRICES) and the llama.cpp tensor each one is stored as
COMPONENT_TENSORS = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
                     "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}
# architectures with separate q, k, v and a gated MLP, as the chapters expect; llama's q and k are stored permuted
ARCHITECTURES = ("llama", "qwen2", "qwen3", "gemma", "gemma2", "gemma3")
PERMUTED_QK = ("llama",)


class GGUFError(ValueError):
    """A file this reader cannot take apart, said in one line."""


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    if field is None or not field.data:
        return default
    value = field.parts[field.data[0]]
    if field.types and field.types[0].name == "STRING":
        return bytes(value).decode("utf-8", errors="replace")
    return value.tolist()[0] if len(value) == 1 else value.tolist()


def _unpermute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's rotary permutation of q or k rows (the inverse of convert_hf_to_gguf's ``permute``)."""
    dim = weights.shape[0] // n_head // 2
    return weights.reshape(n_head, dim, 2, *weights.shape[1:]).swapaxes(2, 1).reshape(weights.shape)


@dataclass
class GGUFWeights:
    """The weight matrices of one GGUF file. ``stack(component)`` reads and dequantises one component of every
    layer on demand, so a browser tab holds one component at a time."""

    path: str
    reader: object
    architecture: str
    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    components: tuple[str, ...]
    tensor_types: dict[str, str]  # component -> quantisation format(s) of its layers, e.g. "Q4_1" or "Q4_K/Q6_K"
    shapes: dict[str, tuple[int, int]]  # component -> (out, in) of layer 0's matrix

    @classmethod
    def open(cls, path) -> GGUFWeights:
        try:  # gguf is optional for the library (the browser page installs its own): imported where needed
            from gguf import GGUFReader
        except ImportError as error:  # the library's optional dependency; the browser page installs it itself
            raise GGUFError("reading a GGUF file needs the gguf package: pip install gguf") from error
        try:
            reader = GGUFReader(str(path))
        except Exception as error:  # a truncated or foreign file fails anywhere in the header's parse
            raise GGUFError(f"not a readable GGUF file ({type(error).__name__}: {str(error)[:120]})") from None
        architecture = _field(reader, "general.architecture")
        if architecture not in ARCHITECTURES:
            raise GGUFError(f"architecture {architecture!r} is not supported; supported: {', '.join(ARCHITECTURES)} "
                            "(separate q, k, v and a gated MLP)")
        n_layers = _field(reader, f"{architecture}.block_count")
        n_heads = _field(reader, f"{architecture}.attention.head_count")
        n_kv_heads = _field(reader, f"{architecture}.attention.head_count_kv", n_heads)
        tensors = {t.name: t for t in reader.tensors}
        components, types, shapes = [], {}, {}
        for component, stored in COMPONENT_TENSORS.items():
            names = [f"blk.{layer}.{stored}.weight" for layer in range(n_layers)]
            if all(n in tensors for n in names):
                components.append(component)
                types[component] = "/".join(sorted({tensors[n].tensor_type.name for n in names}))
                shapes[component] = tuple(int(d) for d in reversed(tensors[names[0]].shape))
        if n_layers is None or n_layers < 4 or not components:
            raise GGUFError(f"found {n_layers} layers and components {components}: the chapters need at least 4 "
                            f"layers and the tensors {', '.join(COMPONENT_TENSORS.values())}")
        return cls(str(path), reader, architecture, _field(reader, "general.name", "unnamed"), n_layers, n_heads,
                   n_kv_heads, tuple(components), types, shapes)

    def matrix(self, layer: int, component: str) -> np.ndarray:
        """One layer's matrix, float32, (out, in) as transformers holds it."""
        from gguf.quants import dequantize  # optional, as in open()

        tensor = next(t for t in self.reader.tensors if t.name == f"blk.{layer}.{COMPONENT_TENSORS[component]}.weight")
        try:
            weights = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        except NotImplementedError:
            raise GGUFError(f"{tensor.name} is stored as {tensor.tensor_type.name}, which the gguf package cannot "
                            "dequantise; supported include F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the "
                            "K-quants Q2_K-Q6_K") from None
        rows = int(np.prod(tensor.shape[1:])) if len(tensor.shape) > 1 else 1
        weights = weights.reshape(rows, int(tensor.shape[0]))
        if self.architecture in PERMUTED_QK and component in ("q", "k"):
            weights = _unpermute(weights, self.n_heads if component == "q" else self.n_kv_heads)
        return weights

    def stack(self, component: str) -> np.ndarray:
        """(layers, elements) float32 stack of one component: the sample matrix of chapters 3 and 4."""
        if component not in self.components:
            raise GGUFError(f"unknown component {component!r}; this file has {list(self.components)}")
        shape = self.shapes[component]
        stack = np.empty((self.n_layers, shape[0] * shape[1]), dtype=np.float32)  # filled in place: one copy
        for layer in range(self.n_layers):
            matrix = self.matrix(layer, component)
            if matrix.shape != shape:
                raise GGUFError(f"{component} is {shape} in layer 0 but {matrix.shape} in layer {layer}: a layer "
                                "cannot be predicted from, or subtracted from, another of another shape")
            stack[layer] = matrix.reshape(-1)
        return stack
