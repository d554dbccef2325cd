"""The quantisation null (chapters 3 and 4): one module per job, read in this order.

- ``compute``: retrain chapter 7's fp32 models, quantise them to each specimen's GGUF scheme, and measure chapters
  3 and 4's weight statistics on both
- ``analysis``: each statistic's change under each scheme, with an interval over layers
- ``report``: in sentences, for chapters 3 and 4 and the verdicts chapter
- ``figures``: the changes, per statistic and scheme
"""
from ..core.lazy import lazy_exports
from . import report
from .analysis import STATISTICS, deltas, error_summary, per_layer
from .compute import (
    FP32,
    NULL_ARMS,
    RANDOM_INIT,
    SCHEMES,
    QuantisationParams,
    quantisation_null,
    quantised_copy,
    run_null,
    tensor_format,
    use_more_bits,
    weight_statistics,
)
from .report import conclusion, findings

Params = QuantisationParams

__getattr__, __dir__ = lazy_exports(__name__, {"figures": ("deltas_figure",)})
