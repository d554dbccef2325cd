"""Specimen-chapter helpers: weight statistics, generation, claims tables, figures and the explorer."""
import matplotlib
import numpy as np
import pytest
import torch

from anatomy_lib import specimen
from anatomy_lib.core.generation import generate
from anatomy_lib.specimen import explorers as specimen_explorers

matplotlib.use("Agg")


def test_weight_norms_and_spectra(tiny):
    norms = specimen.weight_norms(tiny.adapter)
    assert set(norms["layer"]) == set(range(tiny.adapter.n_layers))
    q = tiny.adapter.tensor(2, "q")
    row = norms.query("layer == 2 and tensor == 'q'").iloc[0]
    assert row.frobenius == pytest.approx(q.norm().item(), rel=1e-6)
    spectrum = specimen.singular_values(tiny.adapter, 2)
    sigma = spectrum.query("tensor == 'q'")["sigma"].to_numpy()
    np.testing.assert_allclose(sigma, torch.linalg.svdvals(q).numpy(), rtol=1e-5)
    ranks = specimen.effective_rank(spectrum)
    assert (ranks["effective_rank"] <= ranks["full_rank"] + 1e-6).all() and (ranks["effective_rank"] >= 1).all()
    fig = specimen.spectra_figure(spectrum, norms, "tiny")
    assert fig.axes[0].get_title() and fig.axes[0].get_xlabel()
    fig = specimen.weight_norms_figure(norms, "tiny")
    assert "tiny" in fig._suptitle.get_text()


def test_effective_rank_of_known_spectra():
    import pandas as pd

    flat = pd.DataFrame({"tensor": "a", "sigma": [1.0] * 8, "index": range(8)})
    spike = pd.DataFrame({"tensor": "b", "sigma": [1.0] + [0.0] * 7, "index": range(8)})
    ranks = specimen.effective_rank(pd.concat([flat, spike]))
    assert ranks["effective_rank"].tolist() == pytest.approx([8.0, 1.0])


def test_layer_explorer_redraws(tiny, monkeypatch):
    drawn = []
    real = specimen_explorers.spectra_figure
    monkeypatch.setattr(specimen_explorers, "spectra_figure",
                        lambda spectrum, *a: drawn.append(int(spectrum["layer"].iloc[0])) or real(spectrum, *a))
    box = specimen.layer_explorer(tiny, 1)
    slider, _ = box.children
    slider.value = 3
    assert drawn == [1, 3]
    layer_explorer = specimen.layer_explorer
    with pytest.raises(ValueError, match="valid layers"):
        layer_explorer(tiny, 99)


def test_generation_on_the_real_specimen(real_specimen):
    answer = generate(real_specimen, "What is the capital of France?", max_new_tokens=8)
    assert "Paris" in answer
    with pytest.raises(ValueError, match=">= 1"):
        generate(real_specimen, "hi", 0)
