"""A lab bench: one specimen, one profile, its evaluation blocks and a primed perplexity engine.

Chapters, the CLI and the benchmark all start from ``open_lab(...)`` so that the same names produce the same
blocks, the same baseline and the same results-store requests.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .corpus import TokenBlocks, load_corpus, token_blocks
from .engine import PerplexityEngine
from .runtime import Profile, get_profile
from .specimens import Specimen, load_specimen


@dataclass
class Lab:
    specimen: Specimen
    profile: Profile
    blocks: TokenBlocks
    corpus_name: str = "sotu"
    progress: bool = True

    @cached_property
    def engine(self) -> PerplexityEngine:
        """The primed prefix-cache engine, built on first use (a chapter that only reads stored results
        never pays for it)."""
        return PerplexityEngine(self.specimen.model, self.blocks, batch_size=self.profile.batch_size,
                                progress=self.progress)

    @property
    def adapter(self):
        return self.specimen.adapter

    def baseline(self, recompute: bool = False):
        """Per-block NLL of the intact model (a tidy table), through the results store."""
        import pandas as pd

        from .results import load_or_compute

        def compute():
            nll = self.engine.baseline.block_nll
            return {"blocks": pd.DataFrame({"block": range(len(nll)), "start": self.blocks.starts, "nll": nll})}

        tables, _ = load_or_compute("baseline", self.request({}), compute, device=self.specimen.device,
                                    recompute=recompute)
        return tables["blocks"]

    def request(self, params: dict) -> dict:
        """Everything that determines a diagnostic's result, for the results store."""
        return {"specimen": self.specimen.identity, "blocks": self.blocks.description,
                "profile": self.profile.as_dict(), "params": params}


_SPECIMENS: dict[str, Specimen] = {}


def cached_specimen(name: str, **kwargs) -> Specimen:
    """Load a specimen once per process (chapters and widgets ask for the same one many times)."""
    key = f"{name}|{sorted(kwargs.items())}"
    if key not in _SPECIMENS:
        _SPECIMENS[key] = load_specimen(name, **kwargs)
    return _SPECIMENS[key]


def open_lab(specimen: str | Specimen = "default", profile: str | Profile = "quick", corpus: str = "sotu",
             years: tuple | None = None, seed: int = 0, progress: bool = True) -> Lab:
    """Load (or reuse) a specimen and pick the profile's evaluation blocks; the engine comes on first use."""
    spec = specimen if isinstance(specimen, Specimen) else cached_specimen(specimen)
    prof = get_profile(profile)
    if spec.tokenizer is None:
        raise ValueError(f"specimen {spec.name} has no tokenizer; build blocks with corpus.blocks_from_ids")
    blocks = token_blocks(load_corpus(corpus, years), spec.tokenizer, prof.n_blocks, prof.block_len, seed)
    return Lab(spec, prof, blocks, corpus, progress)
