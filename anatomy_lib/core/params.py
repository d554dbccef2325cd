"""The base of every diagnostic's parameters, and the one way a chapter's defaults follow the specimen.

A diagnostic's parameters are a frozen dataclass whose fields are every knob that determines its result: the
results store keys on them, the CLI builds its options from them, and a chapter's parameter cell fills them.
Four hooks every subclass shares:

- ``for_profile(profile, specimen=None)``: the defaults at a profile's sizes (``profiles.SIZES``, and
  ``profiles.SPECIMEN_SIZES`` for a specimen the profile sizes apart);
- ``resolved(lab)``: the parameters for one specimen. Layers a default names as on the paper's 30-layer model
  (``PaperLayers``) become the layers at the same relative depth of the specimen at hand; a subclass may fill in
  more (chapter 5 takes its connective layers from chapter 2);
- ``check(adapter)``: every layer field names layers the specimen has, before anything runs or is printed;
- ``work(profile)``: how much computation the parameters ask for, in a unit of the diagnostic's own, so that
  the estimate printed before a long computation scales a stored measurement by a ratio of two works.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import ClassVar

from .profiles import Profile, get_profile

PAPER_DEPTH = 30  # decoder layers of the paper's SmolLM2-135M


class PaperLayers(tuple):
    """Layers named as on the paper's 30-layer model: ``at_depth(n)`` maps each to the same relative depth of an
    ``n``-layer model (round(l * (n - 1) / 29), duplicates dropped), so a 30-layer model keeps them as they are."""

    def at_depth(self, n_layers: int) -> tuple[int, ...]:
        mapped = (round(layer * (n_layers - 1) / (PAPER_DEPTH - 1)) for layer in self)
        return tuple(dict.fromkeys(mapped))


def _resolve_layers(value, n_layers: int):
    if isinstance(value, PaperLayers):
        return value.at_depth(n_layers)
    if isinstance(value, tuple) and any(isinstance(v, PaperLayers) for v in value):
        return tuple(_resolve_layers(v, n_layers) for v in value)
    return value


def _paper_layers(value):
    """A profile's layers, named on the paper's 30: a tuple of layers, or a tuple of such tuples."""
    if value and isinstance(value[0], tuple):
        return tuple(PaperLayers(v) for v in value)
    return PaperLayers(value)


def _flat_layers(value) -> list:
    if isinstance(value, tuple):
        return [layer for v in value for layer in _flat_layers(v)]
    return [] if value is None else [value]


def _as_tuples(value):
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True)
class DiagnosticParams:
    """Base of every diagnostic's parameters (see the module docstring). ``DIAGNOSTIC`` names its folder in the
    store and ``VERSION`` is bumped whenever the computation changes, so results of an older algorithm are never
    served. A field whose metadata says ``"layers": True`` holds layers (a tuple, or a tuple of tuples)."""

    DIAGNOSTIC: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1

    def as_request(self) -> dict:
        return {"diagnostic": {"name": self.DIAGNOSTIC, "version": self.VERSION}, "params": asdict(self)}

    @classmethod
    def for_profile(cls, profile: str | Profile, specimen: str | None = None, **overrides):
        """The defaults at ``profile``'s sizes (on ``specimen``, where the profile sizes it apart:
        ``profiles.SPECIMEN_SIZES``), with ``overrides`` replaced."""
        sizes = get_profile(profile).sizes(cls.DIAGNOSTIC, specimen)
        layer_fields = {f.name for f in fields(cls) if f.metadata.get("layers")}
        sizes = {k: _paper_layers(v) if k in layer_fields else v for k, v in sizes.items()}
        return replace(cls(), **{**sizes, **overrides})

    @classmethod
    def from_request(cls, params: dict):
        """The parameters a stored request was made with (JSON lists become tuples again)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: _as_tuples(v) for k, v in params.items() if k in names})

    def layer_fields(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("layers")}

    def table(self):
        """Every parameter with its value and its meaning (the field's help), one row each: what a chapter shows
        of the choices it computes with."""
        import pandas as pd  # a table for the page; the parameters themselves need no pandas

        return pd.DataFrame([{"parameter": f.name, "value": str(getattr(self, f.name)),
                              "meaning": f.metadata.get("help", "")} for f in fields(self)])

    def resolved(self, lab):
        """These parameters for ``lab``'s specimen (see the module docstring); checked against it."""
        n_layers = lab.adapter.n_layers
        mapped = {name: _resolve_layers(value, n_layers) for name, value in self.layer_fields().items()}
        params = replace(self, **mapped)
        params.check(lab.adapter)
        return params

    def check(self, adapter) -> None:
        """Every layer field names layers of ``adapter``'s model (one line naming the valid range if not)."""
        for name, value in self.layer_fields().items():
            for layer in _flat_layers(value):
                if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < adapter.n_layers:
                    raise ValueError(f"{name}: layer {layer!r} is out of range; valid layers are "
                                     f"0..{adapter.n_layers - 1}")

    def work(self, profile: Profile) -> float:
        """Computation asked for, in the diagnostic's own unit (default: tokens of one evaluation pass)."""
        return float(profile.tokens)

