"""Chapter 1's exercises: a decoder layer's parameter count from the config, and a perplexity interval over
text blocks."""
from __future__ import annotations

import numpy as np
from transformers import AutoModelForCausalLM

from ..core.adapter import GEMMA_SUPPORTED
from ..core.bootstrap import perplexity_interval as library_perplexity_interval
from ..core.specimens import Specimen, tiny_specimen, weights_hash
from ..specimen.compute import parameter_budget
from .checking import Case, Exercise, differs

# ---- a decoder layer's parameters -----------------------------------------------------------------------------
LAYER_STUB = '''def layer_parameters(config) -> int:
    """Parameters of one decoder layer of a Llama- or Gemma-3-family model, from its config alone
    (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads, head_dim if the config has one)."""
    raise NotImplementedError  # your code here
'''


def layer_parameters(config) -> int:
    """The library's answer: chapter 1's budget table counts the tensors of layer 0 of a model built from the
    config (here a tiny one of that config's shape)."""
    model = AutoModelForCausalLM.from_config(config)
    return int(sum(p.numel() for p in model.model.layers[0].parameters()))


def _layer_cases() -> tuple[Case, ...]:
    def case(arch: str, kv_heads: int | None = None):
        specimen = tiny_specimen(arch, n_layers=2, hidden=64, vocab=128)
        if kv_heads is not None:  # a second Llama shape: every head its own keys and values
            config = specimen.model.config
            config.num_key_value_heads = kv_heads
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
    return cases + (Case("Gemma 3 (head_dim set in the config, q/k norms, four block norms)",
                         "Gemma 3 reads head_dim from its config, normalises q and k (a gain of head_dim each) and "
                         "has a norm before and after each block (four gains of hidden_size)", case("gemma3")),)


def _wrap(config):
    model = AutoModelForCausalLM.from_config(config)
    return Specimen(model=model, tokenizer=None, name="tiny", source="random config", weights_hash=weights_hash(model),
                    dtype="float32", device="cpu")


def _layer_matrices_only(config) -> int:
    head_dim = config.hidden_size // config.num_attention_heads
    kv = config.num_key_value_heads * head_dim
    h, m = config.hidden_size, config.intermediate_size
    return h * h * 2 + 2 * h * kv + 3 * h * m


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

    return (Case("the perplexity of all tokens", "perplexity is exp of the mean NLL over all tokens, not the mean "
                 "of per-block perplexities", point),
            Case("the interval, against the library's (width within 20%)", "resample whole blocks (rows): the "
                 "tokens of one block share a topic and a speaker, so resampling tokens makes the interval "
                 "several times too narrow", interval))


def _mean_of_block_perplexities(token_nll, n_boot=2000, seed=0):
    per_block = np.exp(np.asarray(token_nll).mean(axis=1))
    draws = per_block[np.random.default_rng(seed).integers(0, len(per_block), (n_boot, len(per_block)))].mean(1)
    return float(per_block.mean()), *np.percentile(draws, [2.5, 97.5])


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
                           _layer_ignores_gqa, "Llama with grouped-query attention")},
             shows=(parameter_budget,)),
    Exercise("perplexity-interval", 1, "A perplexity interval over text blocks",
             "Compute a perplexity and its bootstrap interval from per-token losses, resampling the right unit.",
             INTERVAL_STUB, perplexity_interval, _interval_cases,
             mistakes={"the mean of per-block perplexities": (_mean_of_block_perplexities, "the perplexity of all"),
                       "resampling tokens instead of blocks": (_resamples_tokens, "the interval")},
             shows=(library_perplexity_interval,)),
)
