"""Gemma 3's contract beyond the shared family tests: sliding-window and global layers with their own rotary
bases, the scaled embedding, post-norms (what "scale the writers" means there), gains stored as offsets from
one, and the logit soft-cap."""
import pytest
import torch

from anatomy_lib.core.adapter import GEMMA_SUPPORTED
from anatomy_lib.core.specimens import tiny_specimen
from anatomy_lib.core.surgery import surgery

pytestmark = pytest.mark.skipif(not GEMMA_SUPPORTED, reason="Gemma 3 needs transformers >= 5")

IDS = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(0))  # longer than the window (8)


@pytest.fixture
def gemma():
    return tiny_specimen("gemma3", n_layers=5, seed=3)


def _logits(spec):
    with torch.inference_mode():
        return spec.adapter.logits(spec.adapter.run_layers(spec.adapter.embed(IDS), 0))


def test_both_attention_types_and_rotary_bases_are_exercised(gemma):
    adapter = gemma.adapter
    assert set(adapter.layer_types) == {"sliding_attention", "full_attention"}
    bases = {kind: params["rope_theta"] for kind, params in gemma.model.config.rope_parameters.items()}
    assert bases["sliding_attention"] != bases["full_attention"]
    reference = _logits(gemma)
    gemma.model.config.sliding_window = 512  # the window now covers every position: the output must change
    widened = _logits(gemma)
    with torch.inference_mode():
        own = gemma.model(input_ids=IDS).logits
    torch.testing.assert_close(widened, own, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(widened, reference, atol=1e-4)


def test_embedding_is_scaled_by_the_square_root_of_the_width(gemma):
    adapter = gemma.adapter
    expected = gemma.model.model.embed_tokens.weight[IDS] * adapter.hidden_size ** 0.5
    torch.testing.assert_close(adapter.embed(IDS), expected)


def test_post_norm_makes_the_block_output_invariant_to_scaling_o_and_down(gemma):
    """Invariant up to the norm's epsilon, which a tiny random model's small outputs would feel: they are made
    large first (as a trained model's are)."""
    with surgery(gemma.adapter) as editor:
        editor.scale(2, ["o", "down"], 100.0)
        reference = _logits(gemma)
        editor.scale(2, ["o", "down"], 3.0)
        torch.testing.assert_close(_logits(gemma), reference, rtol=1e-4, atol=1e-4)


def test_scaling_the_writers_scales_the_contribution_exactly(gemma):
    adapter = gemma.adapter
    assert adapter.writer_names("attn") == ("attn_post_norm",) and adapter.writer_names() == (
        "attn_post_norm", "mlp_post_norm")
    hidden = adapter.embed(IDS)

    def attn_delta(alpha):
        with torch.inference_mode(), surgery(adapter) as editor:
            editor.skip(1, "mlp")
            editor.scale(1, adapter.writer_names("attn"), alpha)
            return adapter.run_layers(hidden, 1, 2) - hidden

    torch.testing.assert_close(attn_delta(0.4), 0.4 * attn_delta(1.0), rtol=1e-5, atol=1e-6)


def test_skip_is_exactly_the_identity(gemma):
    adapter = gemma.adapter
    hidden = adapter.embed(IDS)
    with torch.inference_mode(), surgery(adapter) as editor:
        editor.skip(3)
        assert torch.equal(adapter.run_layers(hidden, 3, 4), hidden)


def test_gains_are_scaled_as_one_plus_w_and_restored_bit_for_bit(gemma):
    adapter = gemma.adapter
    before = {name: t.clone() for name, t in adapter.tensors(2).items()}
    assert adapter.gain_offset("attn_norm") == 1.0 and adapter.gain_offset("q") == 0.0
    with pytest.raises(RuntimeError, match="interrupted"):
        with surgery(adapter) as editor:
            editor.scale(2, ["attn_norm", "q_norm", "mlp_post_norm"], 0.5)
            for name in ("attn_norm", "q_norm", "mlp_post_norm"):
                torch.testing.assert_close(adapter.gain(2, name), 0.5 * (before[name] + 1.0))
            raise RuntimeError("interrupted")
    assert all(torch.equal(adapter.tensor(2, name), t) for name, t in before.items())


def test_logit_soft_cap_is_applied_like_the_model():
    spec = tiny_specimen("gemma3", n_layers=3, seed=0)
    spec.model.config.final_logit_softcapping = 2.0
    with torch.inference_mode():
        own = spec.model(input_ids=IDS).logits
    assert own.abs().max() <= 2.0
    torch.testing.assert_close(_logits(spec), own, rtol=1e-5, atol=1e-5)
