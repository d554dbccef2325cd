"""Corpora and token blocks: cleaning, year ranges, deterministic selection, clear errors."""
import re

import numpy as np
import pytest

from anatomy_lib.core.corpus import SPLITS, blocks_from_ids, clean_sotu, load_corpus, sotu_corpus, text_file_corpus


def test_sotu_cleaning_and_years():
    corpus = sotu_corpus((1960, None))
    assert corpus.description["first"].startswith("1960") and corpus.documents
    joined = "\n".join(corpus.documents)
    # editorial notes sit on one line; the few brackets left are text (asides that span paragraphs, OCR typos)
    assert not re.search(r"\[[^\]\n]*\]", joined)
    assert joined.count("[") < 5
    assert not any(d.startswith("The President.") for d in corpus.documents)
    assert clean_sotu("The President. Thank you. [Applause] Good night.\n\n[Laughter]\n") == "Thank you. Good night."


def test_splits_are_year_disjoint():
    names = {split: set(load_corpus(split).documents) for split in SPLITS}
    assert not names["train"] & names["evaluation"]
    assert not names["validation"] & names["evaluation"]
    with pytest.raises(ValueError, match="1790..2026"):
        sotu_corpus((3000, None))


def test_blocks_are_deterministic_and_disjoint():
    ids = np.arange(10_000)
    a = blocks_from_ids(ids, 8, 100, seed=3)
    b = blocks_from_ids(ids, 8, 100, seed=3)
    c = blocks_from_ids(ids, 8, 100, seed=4)
    assert a.starts == b.starts and a.starts != c.starts
    assert np.array_equal(a.ids.numpy(), b.ids.numpy())
    assert all(s % 100 == 0 for s in a.starts) and len(set(a.starts)) == 8
    assert a.description["starts"] == a.starts and a.description["seed"] == 3
    for start, row in zip(a.starts, a.ids.numpy()):
        assert np.array_equal(row, ids[start:start + 100])


def test_too_short_and_empty_text(tmp_path):
    with pytest.raises(ValueError, match="too short"):
        blocks_from_ids(np.arange(500), 8, 100)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n")
    with pytest.raises(ValueError, match="holds no text"):
        text_file_corpus(empty)
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("no-such-corpus")


def test_local_text_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("First document.\n\nSecond document,\nstill second.\n")
    corpus = load_corpus(str(path))
    assert corpus.documents == ("First document.", "Second document,\nstill second.")
    assert corpus.description["sha256"]


def test_wikitext_needs_the_hub():
    with pytest.raises(RuntimeError, match="sotu"):
        load_corpus("wikitext-2")


class _Tokenizer:
    """The two behaviours a family's tokenizer can have on plain text: put its BOS first, or not."""

    def __init__(self, adds_bos: bool):
        self.bos_token_id, self.adds_bos = 7, adds_bos

    def __call__(self, text, add_special_tokens=True):
        ids = [ord(c) for c in text]
        return {"input_ids": ([self.bos_token_id] if self.adds_bos and add_special_tokens else []) + ids}


def test_blocks_start_the_way_each_family_expects():
    from anatomy_lib.core.corpus import sequence_prefix

    # a family's rule, whatever its tokenizer does by default (SmolLM2's adds a BOS under transformers 4.x)
    assert sequence_prefix(_Tokenizer(adds_bos=False), "gemma3_text") == [7]
    assert sequence_prefix(_Tokenizer(adds_bos=True), "llama") == []
    assert sequence_prefix(_Tokenizer(adds_bos=True), "gpt2") == [] and sequence_prefix(None, "gemma3_text") == []
    ids = np.arange(1000, 3000)
    plain = blocks_from_ids(ids, n_blocks=3, block_len=50, seed=1)
    with_bos = blocks_from_ids(ids, n_blocks=3, block_len=50, seed=1, prefix=[7])
    assert "prefix" not in plain.description and with_bos.description["prefix"] == [7]
    assert with_bos.ids.shape == plain.ids.shape == (3, 50)
    assert (with_bos.ids[:, 0] == 7).all()
    for row, start in zip(with_bos.ids, with_bos.starts):  # the rest is contiguous text from its start
        assert row[1:].tolist() == list(range(1000 + start, 1000 + start + 49))
    with pytest.raises(ValueError, match="block_len >= 3"):
        blocks_from_ids(ids, n_blocks=1, block_len=2, prefix=[7])
