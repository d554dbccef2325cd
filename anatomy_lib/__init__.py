"""anatomy_lib: the library behind the Anatomy book, a replication of "Anatomical Heterogeneity in
Transformer Language Models" (arXiv 2603.19348) on SmolLM2-135M.

Packages, dependencies strictly downward: ``core`` (everything chapters share; it imports no chapter), one
package per chapter named like it (``specimen``, ``importance``, ``predictability``, ``structure``,
``manipulation``, ``recovery``, ``growth``; manipulation, recovery and growth build on importance) and
``quantisation`` (chapters 3, 4 and 7's statistics on quantised copies, over those chapters); above them
``verdicts`` (chapter 9: every claim judged) and ``own_model`` (the page "Dissect your own model", over
chapters 3 and 4), then ``atlas`` (chapter 8: the specimens side by side, with chapter
9's verdicts); on top ``exercises`` (the self-checking exercises), ``seminar`` (the seminar guide),
``paper_run`` (every chapter at one profile in one process), ``cli`` and ``benchmark``.
``tests/test_layering.py`` checks these rules on every import.
"""
from .core.version import __version__, check_transformers

check_transformers()  # one clear line, before any module touches transformers' internals

from .core.adapter import MATRICES, ModelAdapter
from .core.corpus import TokenBlocks, blocks_from_ids, load_corpus, token_blocks
from .core.engine import Evaluation, PerplexityEngine, plain_evaluation
from .core.lab import Lab, Measurement, open_lab
from .core.params import DiagnosticParams
from .core.profiles import PROFILES, get_profile
from .core.results import ResultStore, load_or_compute
from .core.runtime import get_device
from .core.specimens import OFFLINE_SPECIMEN, PAPER_SPECIMEN, Specimen, SpecimenError, load_specimen
from .core.surgery import surgery

__all__ = [
    "__version__", "MATRICES", "ModelAdapter", "TokenBlocks", "blocks_from_ids", "load_corpus", "token_blocks",
    "Evaluation", "PerplexityEngine", "plain_evaluation", "Lab", "Measurement", "open_lab", "DiagnosticParams",
    "ResultStore", "load_or_compute", "PROFILES", "get_device", "get_profile", "OFFLINE_SPECIMEN",
    "PAPER_SPECIMEN", "Specimen", "SpecimenError", "load_specimen", "surgery",
]
