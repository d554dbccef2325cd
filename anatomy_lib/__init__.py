"""anatomy_lib: the library behind the Anatomy book, a replication of "Anatomical Heterogeneity in
Transformer Language Models" (arXiv 2603.19348) on SmolLM2-135M.

Modules, read in this order: ``runtime`` (device, profiles), ``specimens`` (loading), ``adapter`` (one view of
every model family), ``corpus`` (text and token blocks), ``surgery`` (reversible weight edits), ``engine``
(perplexity with a prefix cache), ``bootstrap`` (intervals over text blocks), ``results`` (the store and the
parameter base class), ``lab`` (a specimen at a profile, and ``Lab.measure``, the one way to measure an edit).
Then one module per chapter's diagnostic (``importance``, ``predictability``, ``structure``, ``manipulate``,
``recovery``) and the ``growth`` subpackage (chapter 7's training rooms), with ``generation`` (continuations
and their coherence), ``weight_stats``, ``verdicts``, ``plots`` and ``widgets`` for the book, ``cli`` and
``benchmark`` for the command line.
"""
from .version import __version__, check_transformers

check_transformers()  # one clear line, before any module touches transformers' internals

from .adapter import MATRICES, ModelAdapter  # noqa: E402
from .corpus import TokenBlocks, blocks_from_ids, load_corpus, token_blocks  # noqa: E402
from .engine import Evaluation, PerplexityEngine, plain_evaluation  # noqa: E402
from .lab import Lab, Measurement, open_lab  # noqa: E402
from .results import DiagnosticParams, ResultStore, load_or_compute  # noqa: E402
from .runtime import PROFILES, get_device, get_profile  # noqa: E402
from .specimens import OFFLINE_SPECIMEN, PAPER_SPECIMEN, Specimen, SpecimenError, load_specimen  # noqa: E402
from .surgery import surgery  # noqa: E402

__all__ = [
    "__version__", "MATRICES", "ModelAdapter", "TokenBlocks", "blocks_from_ids", "load_corpus", "token_blocks",
    "Evaluation", "PerplexityEngine", "plain_evaluation", "Lab", "Measurement", "open_lab", "DiagnosticParams",
    "ResultStore", "load_or_compute", "PROFILES", "get_device", "get_profile", "OFFLINE_SPECIMEN",
    "PAPER_SPECIMEN", "Specimen", "SpecimenError", "load_specimen", "surgery",
]
