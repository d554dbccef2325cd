"""The adapter: one tensor vocabulary and a layer-range forward that equals each family's own forward."""
import pytest
import torch

from anatomy_lib.core.adapter import MATRICES, ModelAdapter


def test_vocabulary_and_orientation(tiny):
    adapter = tiny.adapter
    names = set(adapter.tensor_names)
    assert {"q", "k", "v", "o", "up", "down", "attn_norm", "mlp_norm"} <= names
    assert ("gate" in names) == (adapter.family != "gpt2")
    d = adapter.hidden_size
    for layer in range(adapter.n_layers):
        t = adapter.tensors(layer)
        assert t["q"].shape == (d, d) and t["o"].shape == (d, d)  # (out, in) like nn.Linear
        assert t["up"].shape[1] == d and t["down"].shape[0] == d
        assert t["attn_norm"].shape == (d,)


def test_views_are_live(tiny):
    adapter = tiny.adapter
    view = adapter.tensor(2, "k")
    before = adapter.tensor(2, "k").clone()
    view.mul_(2.0)
    assert torch.equal(adapter.tensor(2, "k"), before * 2.0)


@pytest.mark.parametrize("start", [0, 2])
def test_run_layers_matches_model_forward(tiny, start):
    adapter = tiny.adapter
    ids = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        reference = tiny.model(input_ids=ids).logits
        captured = []
        hidden = adapter.run_layers(adapter.embed(ids), 0, capture=captured)
        assert len(captured) == adapter.n_layers
        resumed = adapter.logits(adapter.run_layers(captured[start], start))
        direct = adapter.logits(hidden)
    torch.testing.assert_close(direct, reference, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(resumed, reference, rtol=1e-5, atol=1e-5)


def test_eager_attention_gets_a_causal_mask():
    from anatomy_lib.core.specimens import tiny_specimen

    spec = tiny_specimen("llama", n_layers=2)
    spec.model.config._attn_implementation = "eager"
    for layer in spec.model.model.layers:
        layer.self_attn.config._attn_implementation = "eager"
    adapter = ModelAdapter(spec.model)
    ids = torch.randint(0, 256, (1, 16))
    with torch.inference_mode():
        ours = adapter.logits(adapter.run_layers(adapter.embed(ids), 0))
        short = adapter.logits(adapter.run_layers(adapter.embed(ids[:, :8]), 0))
    # causality: the first 8 positions do not see the last 8
    torch.testing.assert_close(ours[:, :8], short, rtol=1e-5, atol=1e-5)


def test_bad_requests_name_valid_choices(tiny):
    adapter = tiny.adapter
    with pytest.raises(ValueError, match=r"valid layers are 0\.\.4"):
        adapter.tensors(5)
    with pytest.raises(ValueError, match="valid layers"):
        adapter.tensors(-1)
    with pytest.raises(ValueError, match="valid names"):
        adapter.tensor(0, "w_gate")
    assert set(adapter.matrix_names) <= set(MATRICES)


def test_parameter_table_counts_every_layer_parameter(tiny):
    table = tiny.adapter.parameter_table()
    layer_params = sum(p.numel() for p in tiny.adapter.layers.parameters())
    assert table["parameters"].sum() == layer_params
