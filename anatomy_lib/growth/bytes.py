"""Byte-level text for the compute-optimal growth experiment, and the count-based baselines every model must beat.

With a vocabulary of 257 (the 256 byte values and an end-of-text token) the head of a width-64 model costs almost
nothing, so the whole budget goes to the layers whose number growth changes; and a loss in nats per token is a
loss per byte (``bits_per_byte``), comparable with any tokenizer. The splits are the ``sotu`` years of
``core.corpus.SPLITS``: train 1790-1929 (about 8.0M bytes), validation 1930-1959, document-disjoint by
construction.

Baselines, scored on exactly the positions a model is scored on (every next byte of the validation blocks):
unigram (add-one), bigram and trigram counts from the training bytes, each smoothed towards the order below it
(Dirichlet smoothing, ``p(b | a) = (c(a, b) + alpha p(b)) / (c(a) + alpha)``) with alpha chosen on the blocks
themselves from a grid: an optimistic baseline, so "beats the bigram" is a conservative statement.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
import torch

from ..core.corpus import blocks_from_ids, load_corpus

END_OF_TEXT = 256
VOCAB_SIZE = 257
ALPHAS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
_CORPUS_SPLIT = {"train": "train", "validation": "validation", "test": "evaluation"}


@lru_cache(maxsize=4)
def byte_stream(split: str) -> np.ndarray:
    """A split's documents as one stream of UTF-8 bytes, each document followed by ``END_OF_TEXT``."""
    if split not in _CORPUS_SPLIT:
        raise ValueError(f"unknown split {split!r}; choose one of {list(_CORPUS_SPLIT)}")
    parts = []
    for document in load_corpus(_CORPUS_SPLIT[split]).documents:
        parts.append(np.frombuffer(document.encode(), dtype=np.uint8).astype(np.int64))
        parts.append(np.array([END_OF_TEXT], dtype=np.int64))
    return np.concatenate(parts)


def byte_blocks(split: str, n_blocks: int, context: int, seed: int = 0) -> torch.Tensor:
    """``n_blocks`` non-overlapping windows of ``context`` bytes from a split, chosen by ``seed``."""
    return blocks_from_ids(byte_stream(split), n_blocks, context, seed).ids


def bits_per_byte(nats_per_token: float) -> float:
    """A byte-level loss in bits per byte (an end-of-text token counts as one byte: one per document)."""
    return nats_per_token / np.log(2)


def _smoothed(counts: np.ndarray, lower: np.ndarray, alpha: float) -> np.ndarray:
    """P(next | context) from ``counts`` (contexts x next), smoothed towards ``lower`` (the same shape or
    broadcastable) with Dirichlet weight ``alpha``."""
    return (counts + alpha * lower) / (counts.sum(axis=-1, keepdims=True) + alpha)


def bigram_baselines(train: np.ndarray, blocks: torch.Tensor, vocab_size: int) -> dict:
    """Unigram (add-one) and bigram losses (nats per token) on every next-token position of ``blocks``, counted on
    ``train`` (any token ids below ``vocab_size``); the bigram's alpha is the best of ``ALPHAS`` on these blocks.
    Returns the table (``model``, ``alpha``, ``val_loss``) and the tables ``ngram_baselines`` builds on."""
    v = vocab_size
    train = np.asarray(train, dtype=np.int64)
    ids = blocks.numpy().astype(np.int64)
    first_prev, first_target = ids[:, :1], ids[:, 1:2]  # the second token has one token of context
    prev, target = ids[:, 1:-1], ids[:, 2:]
    unigram = (np.bincount(train, minlength=v) + 1.0) / (len(train) + v)
    pair_counts = np.zeros((v, v))
    np.add.at(pair_counts, (train[:-1], train[1:]), 1.0)

    def nll(p_first: np.ndarray, p_rest: np.ndarray) -> float:
        return float(-(np.log(p_first).sum() + np.log(p_rest).sum()) / (p_first.size + p_rest.size))

    rows = [{"model": "unigram (add-one)", "alpha": np.nan,
             "val_loss": nll(unigram[first_target], unigram[target])}]
    best_bigram = None
    for alpha in ALPHAS:
        bigram = _smoothed(pair_counts, unigram[None, :], alpha)
        loss = nll(bigram[first_prev, first_target], bigram[prev, target])
        if best_bigram is None or loss < best_bigram[1]:
            best_bigram = (alpha, loss, bigram)
    rows.append({"model": "bigram", "alpha": best_bigram[0], "val_loss": best_bigram[1]})
    return {"table": pd.DataFrame(rows), "unigram": unigram, "bigram": best_bigram[2], "nll": nll}


def ngram_baselines(train: np.ndarray, blocks: torch.Tensor) -> pd.DataFrame:
    """Unigram, bigram and trigram losses (nats per byte) on every next-byte position of ``blocks``, counted on
    ``train``; the bigram's and trigram's alpha is the best of ``ALPHAS`` on these blocks."""
    v = VOCAB_SIZE
    lower_orders = bigram_baselines(train, blocks, v)
    bigram, nll = lower_orders["bigram"], lower_orders["nll"]
    train = np.asarray(train, dtype=np.int64)
    ids = blocks.numpy().astype(np.int64)
    prev2, prev, target = ids[:, :-2], ids[:, 1:-1], ids[:, 2:]  # trigram positions: the third byte on
    first_prev, first_target = ids[:, :1], ids[:, 1:2]  # the second byte has one byte of context
    triple_counts = np.bincount((train[:-2] * v + train[1:-1]) * v + train[2:], minlength=v ** 3)
    triple_counts = triple_counts.reshape(v * v, v).astype(np.float64)
    rows = lower_orders["table"].to_dict("records")
    contexts = prev2 * v + prev
    seen = np.unique(contexts)  # the trigram table only where the blocks need it (v^2 x v is 135 MB)
    index = {c: i for i, c in enumerate(seen)}
    rows_needed = np.vectorize(index.get)(contexts)
    lower = bigram[seen % v]
    best = None
    for alpha in ALPHAS:
        trigram = _smoothed(triple_counts[seen], lower, alpha)
        loss = nll(bigram[first_prev, first_target], trigram[rows_needed, target])
        if best is None or loss < best[1]:
            best = (alpha, loss)
    rows.append({"model": "trigram", "alpha": best[0], "val_loss": best[1]})
    table = pd.DataFrame(rows)
    table["bits_per_byte"] = table["val_loss"].map(bits_per_byte)
    return table
