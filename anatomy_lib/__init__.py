"""anatomy_lib: the library behind the Anatomy book, a replication of "Anatomical Heterogeneity in
Transformer Language Models" (arXiv 2603.19348) on SmolLM2-135M.

Modules, read in this order: ``runtime`` (device, profiles), ``specimens`` (loading), ``adapter`` (one view of
every model family), ``corpus`` (text and token blocks), ``surgery`` (reversible weight edits), ``engine``
(perplexity with a prefix cache), ``stats`` (bootstrap intervals), ``results`` (the store), ``lab`` (all of it
primed for one specimen and profile).
"""
__version__ = "0.1.0"

from .adapter import MATRICES, ModelAdapter  # noqa: E402
from .corpus import TokenBlocks, blocks_from_ids, load_corpus, token_blocks  # noqa: E402
from .engine import Evaluation, PerplexityEngine, plain_evaluation  # noqa: E402
from .lab import Lab, open_lab  # noqa: E402
from .results import ResultStore, load_or_compute  # noqa: E402
from .runtime import PROFILES, get_device, get_profile  # noqa: E402
from .specimens import OFFLINE_SPECIMEN, PAPER_SPECIMEN, Specimen, SpecimenError, load_specimen  # noqa: E402
from .surgery import surgery  # noqa: E402

__all__ = [
    "MATRICES", "ModelAdapter", "TokenBlocks", "blocks_from_ids", "load_corpus", "token_blocks", "Evaluation",
    "PerplexityEngine", "plain_evaluation", "Lab", "open_lab", "ResultStore", "load_or_compute", "PROFILES",
    "get_device", "get_profile", "OFFLINE_SPECIMEN", "PAPER_SPECIMEN", "Specimen", "SpecimenError",
    "load_specimen", "surgery",
]
