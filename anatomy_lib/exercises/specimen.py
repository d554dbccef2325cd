"""Chapter 1's exercises: a decoder layer's parameter count from the config, and a perplexity interval over
text blocks."""
from __future__ import annotations

import numpy as np
from transformers import AutoModelForCausalLM

from ..core.adapter import GEMMA_SUPPORTED
from ..core.bootstrap import perplexity_interval as library_perplexity_interval
from ..core.specimens import Specimen, tiny_specimen, weights_hash
from ..specimen.compute import parameter_budget
from .checking import Case, Exercise, differs, interval_level_differs

# ---- a decoder layer's parameters -----------------------------------------------------------------------------
LAYER_STUB = '''def layer_parameters(config) -> int:
    """Parameters of one decoder layer of a Llama- or Gemma-3-family model, from its config alone
    (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads, head_dim if the config has one)."""
    raise NotImplementedError  # your code here
'''


def layer_parameters(config) -> int:
    """The library's answer, as a formula (the cases hold it to chapter 1's budget table, which counts the
    tensors of a model built from the config). Attention: q and o are hidden x (heads x head_dim), k and v
    hidden x (key/value heads x head_dim), with grouped-query attention fewer than q's; head_dim is the config's
    own where it sets one (Gemma-3-270M: 256, not 640 / 4 = 160). The SwiGLU MLP: gate, up and down, hidden x
    intermediate each. Norm gains: a vector of hidden_size before attention and before the MLP; Gemma 3 adds
    one after each block and a gain of head_dim on q and on k."""
    h, m = config.hidden_size, config.intermediate_size
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or h // heads
    attention = 2 * h * heads * head_dim + 2 * h * kv_heads * head_dim
    mlp = 3 * h * m
    gemma3 = config.model_type.startswith("gemma3")
    norms = 4 * h + 2 * head_dim if gemma3 else 2 * h
    return attention + mlp + norms


def _counted(config) -> int:
    """Layer 0's parameters of a model built from ``config``, counted: what the formula must equal."""
    model = AutoModelForCausalLM.from_config(config)
    return int(sum(p.numel() for p in model.model.layers[0].parameters()))


def _layer_cases() -> tuple[Case, ...]:
    def case(arch: str, kv_heads: int | None = None, head_dim: int | None = None):
        specimen = tiny_specimen(arch, n_layers=2, hidden=64, vocab=128)
        if kv_heads is not None or head_dim is not None:
            config = specimen.model.config
            if kv_heads is not None:  # a second Llama shape: every head its own keys and values
                config.num_key_value_heads = kv_heads
            if head_dim is not None:  # Gemma-3-270M's kind of shape: heads x head_dim is not hidden_size
                config.head_dim = head_dim
            specimen = _wrap(config)
        budget = parameter_budget(specimen)
        expected = int(budget.loc[budget["part"] == "one decoder layer", "parameters"].iloc[0])
        return lambda fn: differs(fn(specimen.model.config), expected, rtol=0, what="parameter count")

    cases = (Case("Llama, 4 query heads sharing 4 key/value heads", "one layer holds q, k, v, o, gate, up, down "
                  "and two norm gains (a vector of hidden_size each)", case("llama", kv_heads=4)),
             Case("Llama with grouped-query attention (4 query heads, 2 key/value heads)",
                  "k and v have num_key_value_heads x head_dim rows, not hidden_size (head_dim = hidden_size / "
                  "num_attention_heads)", case("llama")))
    if not GEMMA_SUPPORTED:  # transformers 4.x cannot run Gemma 3 through the adapter: the Llama cases alone
        return cases
    return cases + (Case("Gemma 3 (q/k norms, four block norms)",
                         "Gemma 3 normalises q and k (a gain of head_dim each) and has a norm before and after "
                         "each block (four gains of hidden_size)", case("gemma3")),
                    Case("Gemma 3 with head_dim 32 where hidden_size / heads is 16 (as Gemma-3-270M: 256 vs 160)",
                         "read head_dim from the config where it has one: q, k, v and o are sized by heads x "
                         "head_dim, which need not equal hidden_size", case("gemma3", head_dim=32)))


def _wrap(config):
    model = AutoModelForCausalLM.from_config(config)
    return Specimen(model=model, tokenizer=None, name="tiny", source="random config", weights_hash=weights_hash(model),
                    dtype="float32", device="cpu")


def _layer_matrices_only(config) -> int:
    head_dim = config.hidden_size // config.num_attention_heads
    kv = config.num_key_value_heads * head_dim
    h, m = config.hidden_size, config.intermediate_size
    return h * h * 2 + 2 * h * kv + 3 * h * m


def _layer_head_dim_from_hidden(config) -> int:
    """Right on Llama and on a Gemma whose head_dim happens to be hidden / heads; wrong on Gemma-3-270M."""
    h, m = config.hidden_size, config.intermediate_size
    head_dim = h // config.num_attention_heads
    kv = config.num_key_value_heads * head_dim
    gemma3 = config.model_type.startswith("gemma3")
    return 2 * h * h + 2 * h * kv + 3 * h * m + (4 * h + 2 * head_dim if gemma3 else 2 * h)


def _layer_ignores_gqa(config) -> int:
    h, m = config.hidden_size, config.intermediate_size
    return 4 * h * h + 3 * h * m + 2 * h


# ---- a perplexity interval over blocks --------------------------------------------------------------------------
INTERVAL_STUB = '''def perplexity_interval(token_nll, n_boot=2000, seed=0):
    """(perplexity, low, high) from token_nll, an array (blocks, tokens) of every token's negative
    log-likelihood: the perplexity of all tokens and a 95% percentile bootstrap interval."""
    raise NotImplementedError  # your code here
'''


def perplexity_interval(token_nll, n_boot: int = 2000, seed: int = 0):
    """The library's answer: blocks are the unit (``core.bootstrap.perplexity_interval`` of the block means)."""
    return library_perplexity_interval(np.asarray(token_nll).mean(axis=1), n_boot, seed)


def _block_losses(n_blocks: int = 24, n_tokens: int = 64, seed: int = 0) -> np.ndarray:
    """Token losses whose blocks differ in difficulty (a topic, a speaker): tokens of a block are correlated."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(3.0, 0.5, size=(n_blocks, 1))
    return np.clip(difficulty + rng.normal(0.0, 1.5, size=(n_blocks, n_tokens)), 0.01, None)


def _interval_cases() -> tuple[Case, ...]:
    nll = _block_losses()

    def point(fn):
        return differs(fn(nll, 200, 0)[0], float(np.exp(nll.mean())), what="perplexity")

    def interval(fn):
        _, low, high = fn(nll, 2000, 1)
        _, ref_low, ref_high = perplexity_interval(nll, 4000, 0)
        width, ref_width = high - low, ref_high - ref_low
        if not low <= np.exp(nll.mean()) <= high:
            return f"the interval [{low:.3g}, {high:.3g}] does not contain the perplexity {np.exp(nll.mean()):.3g}"
        if abs(width / ref_width - 1) > 0.2:
            return f"interval width {width:.3g}; resampling blocks gives about {ref_width:.3g}"
        return None

    def level(fn):
        return interval_level_differs(fn(nll, 8000, 1)[1:], perplexity_interval(nll, 20000, 0)[1:])

    return (Case("the perplexity of all tokens", "perplexity is exp of the mean NLL over all tokens, not the mean "
                 "of per-block perplexities", point),
            Case("the interval, against the library's (width within 20%)", "resample whole blocks (rows): the "
                 "tokens of one block share a topic and a speaker, so resampling tokens makes the interval "
                 "several times too narrow", interval),
            Case("the interval's level (95%, each end within 4% of the interval's width)", "a 95% percentile "
                 "interval runs from the 2.5th to the 97.5th percentile of the resampled perplexities; "
                 "the 5th and 95th give a 90% interval, about a sixth narrower", level))


def _mean_of_block_perplexities(token_nll, n_boot=2000, seed=0):
    per_block = np.exp(np.asarray(token_nll).mean(axis=1))
    draws = per_block[np.random.default_rng(seed).integers(0, len(per_block), (n_boot, len(per_block)))].mean(1)
    return float(per_block.mean()), *np.percentile(draws, [2.5, 97.5])


def _ninety_percent(token_nll, n_boot=2000, seed=0):
    means = np.asarray(token_nll).mean(axis=1)
    draws = means[np.random.default_rng(seed).integers(0, len(means), (n_boot, len(means)))].mean(axis=1)
    return float(np.exp(np.asarray(token_nll).mean())), *np.exp(np.percentile(draws, [5, 95]))


def _resamples_tokens(token_nll, n_boot=2000, seed=0):
    flat = np.asarray(token_nll).ravel()
    draws = flat[np.random.default_rng(seed).integers(0, len(flat), (n_boot, len(flat)))].mean(axis=1)
    return float(np.exp(flat.mean())), *np.exp(np.percentile(draws, [2.5, 97.5]))


EXERCISES = (
    Exercise("layer-parameters", 1, "A decoder layer's parameters from the config",
             "Count one decoder layer's parameters from the config alone, for Llama (grouped-query attention "
             "included) and Gemma-3.", LAYER_STUB, layer_parameters, _layer_cases,
             mistakes={"matrices only (forgets the norm gains)": (_layer_matrices_only, "Llama, 4 query heads"),
                       "k and v as wide as q (ignores grouped-query attention)": (
                           _layer_ignores_gqa, "Llama with grouped-query attention"),
                       # listed on every install (the catalogue is the same everywhere); where transformers 4.x
                       # cannot build Gemma 3 its case is left out and the test of this mistake skips
                       "head_dim taken as hidden_size / heads": (_layer_head_dim_from_hidden,
                                                                 "Gemma 3 with head_dim 32")},
             shows=(parameter_budget,)),
    Exercise("perplexity-interval", 1, "A perplexity interval over text blocks",
             "Compute a perplexity and its bootstrap interval from per-token losses, resampling the right unit.",
             INTERVAL_STUB, perplexity_interval, _interval_cases,
             mistakes={"the mean of per-block perplexities": (_mean_of_block_perplexities, "the perplexity of all"),
                       "resampling tokens instead of blocks": (_resamples_tokens, "the interval,"),
                       "a 90% interval (the 5th and 95th percentiles)": (_ninety_percent, "the interval's level")},
             shows=(library_perplexity_interval,)),
)
