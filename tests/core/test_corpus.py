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
