"""Weight surgery that always undoes itself.

``with surgery(model) as s:`` hands out an editor whose methods change layer tensors in place (replace,
scale, add noise, skip a block), or override what a layer hands on to the next (``override_output``, a forward
hook: the weights stay as they are). On leaving the block, also through an exception or a KeyboardInterrupt,
every touched tensor is copied back from a saved clone and every hook removed, so the model is bit-for-bit what
it was. Edited layers are registered on the model while the block is active, which lets the prefix cache of
``engine.py`` rerun only the layers at and after the first edit.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable

import torch

from .adapter import as_adapter
from .checks import finite_number, non_negative_number

SKIP_PARTS = ("block", "attn", "mlp")


class WeightSurgery:
    """Edits of one model's layer tensors, with the originals kept for an exact restore."""

    def __init__(self, model_or_adapter):
        self.adapter = as_adapter(model_or_adapter)
        self._saved: dict[tuple[int, str], torch.Tensor] = {}
        self._hooks: list = []
        self._layers: set[int] = set()

    def _register(self, layer: int) -> None:
        if layer not in self._layers:
            self._layers.add(layer)
            edits = self.adapter.active_edits
            edits[layer] = edits.get(layer, 0) + 1

    def _target(self, layer: int, name: str) -> torch.Tensor:
        tensor = self.adapter.tensor(self.adapter.check_layer(layer), name)
        if (layer, name) not in self._saved:
            self._saved[(layer, name)] = tensor.detach().clone()
            self._register(layer)
        return tensor

    def _names(self, names: str | Iterable[str] | None) -> list[str]:
        valid = self.adapter.tensor_names
        if names is None:
            return list(valid)
        names = [names] if isinstance(names, str) else list(names)
        for name in names:
            if name not in valid:
                raise ValueError(f"unknown tensor {name!r}; valid names: {list(valid)}")
        return names

    def original(self, layer: int, name: str) -> torch.Tensor:
        """The tensor as it was before this surgery touched it."""
        saved = self._saved.get((layer, name))
        return saved if saved is not None else self.adapter.tensor(layer, name).detach()

    def replace(self, layer: int, name: str, value: torch.Tensor) -> None:
        target = self.adapter.tensor(self.adapter.check_layer(layer), name)
        value = torch.as_tensor(value)
        if tuple(value.shape) != tuple(target.shape):
            raise ValueError(f"shape mismatch for layer {layer} {name!r}: expected {tuple(target.shape)}, "
                             f"got {tuple(value.shape)}")
        if not torch.isfinite(value).all():
            raise ValueError(f"replacement for layer {layer} {name!r} contains NaN or inf")
        self._target(layer, name).copy_(value.to(target.dtype))

    def scale(self, layer: int, names: str | Iterable[str] | None, factor: float) -> None:
        """Multiply tensors (default: all of the layer's) by ``factor``; a gain stored as an offset from one
        (Gemma's norms, see ``ModelAdapter.gain_offset``) has its effective value ``1 + w`` multiplied."""
        factor = finite_number(factor, "scale factor")
        for name in self._names(names):
            target, offset = self._target(layer, name), self.adapter.gain_offset(name)
            if offset:
                target.copy_(((target.double() + offset) * factor - offset).to(target.dtype))
            else:
                target.mul_(factor)

    def add_noise(self, layer: int, names: str | Iterable[str] | None, std: float,
                  generator: torch.Generator | None = None, relative: bool = True) -> None:
        """Add Gaussian noise; with ``relative`` its std is ``std`` times each tensor's own std."""
        std = non_negative_number(std, "noise std")
        for name in self._names(names):
            target = self._target(layer, name)
            sigma = std * (target.float().std().item() if relative and target.numel() > 1 else 1.0)
            noise = torch.randn(target.shape, generator=generator, dtype=torch.float32)
            target.add_((noise * sigma).to(device=target.device, dtype=target.dtype))

    def skip(self, layer: int, part: str = "block") -> None:
        """Make a layer (or only its attention or MLP block) the identity on the residual stream.

        A pre-norm block adds ``writer(f(norm(h)))`` to the stream, so zeroing its writers (o and down, and their
        biases where they exist) removes exactly that contribution. A post-norm block (Gemma 3) adds
        ``gain * normalise(f(norm(h)))``: setting the effective gain of its post-norm to zero removes it.
        """
        if part not in SKIP_PARTS:
            raise ValueError(f"unknown part {part!r}; choose one of {list(SKIP_PARTS)}")
        for name in self.adapter.writer_names(part):
            target, offset = self._target(layer, name), self.adapter.gain_offset(name)
            if offset:
                target.fill_(-offset)
            else:
                target.zero_()

    def override_output(self, layer: int, transform: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
        """Hand the next layer ``transform(entering, leaving)`` instead of what ``layer`` computes, where
        ``entering`` is the residual stream entering the layer and ``leaving`` the stream it would hand on (a
        decoder layer's output is the whole stream, not its own update), both (batch, positions, hidden). A
        forward hook on the layer, removed on restore; the layer's weights are not touched."""
        module = self.adapter.layers[self.adapter.check_layer(layer)]

        def hook(_module, args, kwargs, output):
            entering = args[0] if args else kwargs["hidden_states"]
            leaving = output[0] if isinstance(output, tuple) else output
            new = transform(entering, leaving).to(dtype=leaving.dtype, device=leaving.device).expand_as(leaving)
            return (new, *output[1:]) if isinstance(output, tuple) else new

        self._hooks.append(module.register_forward_hook(hook, with_kwargs=True))
        self._register(layer)

    def restore(self) -> None:
        """Remove every hook, copy every saved original back and unregister the edited layers."""
        for handle in reversed(self._hooks):
            handle.remove()
        self._hooks.clear()
        for (layer, name), original in reversed(list(self._saved.items())):
            self.adapter.tensor(layer, name).copy_(original)
        edits = self.adapter.active_edits
        for layer in self._layers:
            edits[layer] -= 1
            if edits[layer] <= 0:
                del edits[layer]
        self._saved.clear()
        self._layers.clear()


@contextmanager
def surgery(model_or_adapter):
    """Context manager yielding a ``WeightSurgery``; the model is restored exactly on exit."""
    editor = WeightSurgery(model_or_adapter)
    try:
        yield editor
    finally:
        editor.restore()
