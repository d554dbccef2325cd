"""The numpy-only weight statistics the page "Dissect your own model" shares with chapters 3 and 4: the GGUF reader
(formats, the llama q/k permutation, one-line errors), the dissection, and that they equal the chapters' own
numbers. The browser's side is tests/browser/check_dissect.mjs (make test-dissect)."""
import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anatomy_lib import predictability, structure
from anatomy_lib.core import weightspace as ws
from anatomy_lib.core.dissection import DissectionParams, dissect
from anatomy_lib.core.gguf_weights import ARCHITECTURES, GGUFError, GGUFWeights

ROOT = Path(__file__).resolve().parents[2]
gguf = pytest.importorskip("gguf")


def _stack(n_layers=8, n=600, seed=3):
    rng = np.random.default_rng(seed)
    return (np.cumsum(rng.normal(0, 0.3, (n_layers, n)), axis=0) + rng.normal(0, 1, (n_layers, n))).astype(np.float32)


def test_the_projection_in_chunks_is_the_whole_map():
    weights = _stack(n=5000)
    whole = weights.astype(np.float64) @ ws.random_projection(5000, 16, 0)
    np.testing.assert_allclose(ws.project(weights, 16, 0, chunk=777), whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ws.random_projection(5000, 16, 0, 100, 300),
                                  ws.random_projection(5000, 16, 0)[100:300])


@pytest.mark.parametrize("shape", [(40, 3), (12, 50)], ids=["primal", "dual"])
def test_ridge_is_sklearns_estimator(shape):
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(1)
    x, y, new = rng.normal(size=shape), rng.normal(size=(shape[0], 4)), rng.normal(size=(2, shape[1]))
    np.testing.assert_allclose(ws.ridge_predict(x, y, new, 0.7), Ridge(alpha=0.7).fit(x, y).predict(new), rtol=1e-10)


def test_scores_from_the_gram_matrix_equal_scores_of_the_formed_predictions():
    weights = _stack()
    gram = ws.LayerGram(weights, chunk=97)
    predicted, mixtures = ws.predict_layers(weights), ws.ridge_mixtures(weights)
    for target, flat in predicted.items():
        np.testing.assert_allclose(gram.scores(target, *mixtures[target]), ws.r2_and_cosine(flat, weights[target]),
                                   rtol=1e-10)
    for baseline in ws.BASELINES:
        formed = ws.baseline_predictions(weights, baseline, range(1, 8))
        for target, (layers, coefficients) in ws.baseline_mixtures(8, baseline, range(1, 8)).items():
            np.testing.assert_allclose(gram.scores(target, layers, coefficients),
                                       ws.r2_and_cosine(formed[target], weights[target]), rtol=1e-10)


def test_delta_correlations_in_an_order_equal_those_of_the_reordered_stack():
    weights = _stack()
    order = ws.shuffled_orders(8, 1, 0)[0]
    assert ws.delta_correlation_rows(weights, order=order) == ws.delta_correlation_rows(weights[order])


def test_power_iteration_finds_the_top_singular_value():
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.normal(size=(60, 40)))
    v, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    spectrum = np.r_[5.0, np.linspace(3.0, 0.1, 29)]
    matrix = u[:, :30] @ np.diag(spectrum) @ v.T
    summary = ws.matrix_summary(matrix)
    assert summary["top_singular"] == pytest.approx(5.0, rel=1e-9)
    assert summary["stable_rank"] == pytest.approx(np.sum(spectrum ** 2) / 25.0, rel=1e-8)


def test_the_browser_modules_import_numpy_and_gguf_only():
    """Pyodide has numpy and the gguf wheel, no torch, pandas or scikit-learn: book/_ext/vendor_pyodide.py ships
    exactly these modules, and none may import anything else."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("vendor", ROOT / "book" / "_ext" / "vendor_pyodide.py")
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    allowed = {"__future__", "numpy", "gguf", "gguf.quants", "dataclasses", "time"}
    shipped = {Path(name).stem for name in vendor.LIBRARY}
    for name in vendor.LIBRARY:
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.Import):
                assert {a.name for a in node.names} <= allowed, (name, [a.name for a in node.names])
            elif isinstance(node, ast.ImportFrom):
                assert (node.module in allowed if not node.level else node.module in shipped), (name, node.module)


def test_the_dissection_uses_the_chapters_defaults():
    params, chapter3, chapter4 = DissectionParams(), predictability.Params(), structure.Params()
    assert (params.ridge_alpha, params.proj_dim, params.seed) == (chapter3.ridge_alpha, chapter3.proj_dim,
                                                                  chapter3.seed)
    assert chapter3.context == 1 and chapter3.formulation == "layerwise"
    assert (params.n_shuffles, params.seed) == (chapter4.n_shuffles, chapter4.seed)


# ---- GGUF files written here -----------------------------------------------------------------------------------

def _write_gguf(path, architecture="llama", n_layers=6, heads=4, kv_heads=2, width=32, mlp=64, qtype=None,
                seed=0):
    """A tiny GGUF with random matrices: q, k stored permuted as llama.cpp's converter does, the others as they
    are; returns the unpermuted matrices {component: [per layer (out, in)]}."""
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(n_layers)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_embedding_length(width)
    head_dim = width // heads
    shapes = {"q": (width, width), "k": (kv_heads * head_dim, width), "v": (kv_heads * head_dim, width),
              "o": (width, width), "gate": (mlp, width), "up": (mlp, width), "down": (width, mlp)}
    names = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output", "gate": "ffn_gate", "up": "ffn_up",
             "down": "ffn_down"}
    originals = {c: [] for c in shapes}
    for layer in range(n_layers):
        for component, shape in shapes.items():
            matrix = rng.normal(0, 0.1, shape).astype(np.float32)
            stored = matrix
            if architecture == "llama" and component in ("q", "k"):
                n = heads if component == "q" else kv_heads  # convert_hf_to_gguf's permute
                stored = matrix.reshape(n, 2, matrix.shape[0] // n // 2, *matrix.shape[1:]).swapaxes(1, 2)
                stored = np.ascontiguousarray(stored.reshape(matrix.shape))
            if qtype is None:
                writer.add_tensor(f"blk.{layer}.{names[component]}.weight", stored)
            else:
                data = gguf.quants.quantize(stored, qtype)
                writer.add_tensor(f"blk.{layer}.{names[component]}.weight", data, raw_dtype=qtype)
                matrix = gguf.quants.dequantize(gguf.quants.quantize(matrix, qtype), qtype).reshape(shape)
            originals[component].append(matrix)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return originals


@pytest.mark.parametrize("qtype", [None, "F16", "Q8_0"])
def test_a_written_gguf_reads_back_unpermuted_in_every_format(tmp_path, qtype):
    qtype = None if qtype is None else getattr(gguf.GGMLQuantizationType, qtype)
    originals = _write_gguf(tmp_path / "tiny.gguf", qtype=qtype)
    weights = GGUFWeights.open(tmp_path / "tiny.gguf")
    assert weights.components == ("q", "k", "v", "o", "gate", "up", "down") and weights.n_layers == 6
    for component, matrices in originals.items():
        np.testing.assert_array_equal(weights.stack(component), np.stack([m.reshape(-1) for m in matrices]))


def test_dissecting_a_written_gguf_gives_every_table(tmp_path):
    _write_gguf(tmp_path / "tiny.gguf")
    seen = []
    result = dissect(tmp_path / "tiny.gguf", on_progress=lambda done, total, label: seen.append((done, total)),
                     components=["q", "down"])
    assert seen[-1] == (8, 8) and [d for d, _ in seen] == list(range(1, 9))
    assert len(result["layers"]) == 2 * 6 and {r["predictor"] for r in result["ridge"]} == {"ridge", *ws.BASELINES}
    assert len(result["deltas"]) == 2 * (1 + DissectionParams().n_shuffles) * 4
    json.dumps(result)  # the worker sends it as JSON
    with pytest.raises(ValueError, match=r"unknown components \['mlp'\]"):
        dissect(tmp_path / "tiny.gguf", components=["mlp"])


def test_bad_files_get_one_line(tmp_path):
    (tmp_path / "notes.gguf").write_text("not weights\n" * 50)
    with pytest.raises(GGUFError, match="not a readable GGUF file") as raised:
        GGUFWeights.open(tmp_path / "notes.gguf")
    assert "\n" not in str(raised.value)
    _write_gguf(tmp_path / "tiny.gguf")
    (tmp_path / "cut.gguf").write_bytes((tmp_path / "tiny.gguf").read_bytes()[:2000])
    with pytest.raises(GGUFError, match="not a readable GGUF file"):
        GGUFWeights.open(tmp_path / "cut.gguf")
    _write_gguf(tmp_path / "bert.gguf", architecture="bert")
    with pytest.raises(GGUFError, match="architecture 'bert' is not supported; supported: " + ", ".join(ARCHITECTURES)):
        GGUFWeights.open(tmp_path / "bert.gguf")


# ---- the real specimen -----------------------------------------------------------------------------------------

def test_the_offline_gguf_reads_as_the_loaded_specimen_bit_for_bit(real_specimen):
    from anatomy_lib.core.adapter import ModelAdapter
    from anatomy_lib.core.specimens import offline_specimen_file

    weights, adapter = GGUFWeights.open(offline_specimen_file()), ModelAdapter(real_specimen.model)
    for component in adapter.matrix_names:
        np.testing.assert_array_equal(weights.stack(component), adapter.stacked(component).numpy(), err_msg=component)


def test_the_dissection_equals_chapters_3_and_4_stored_numbers(real_specimen):
    """What the page shows for the offline specimen is what chapters 3 and 4 stored (same code, same weights)."""
    from anatomy_lib.core.specimens import offline_specimen_file

    result = dissect(offline_specimen_file(), components=["k", "gate"])
    store = ROOT / "data" / "results" / real_specimen.name
    fits = pd.concat(pd.read_csv(p) for p in (store / "predictability").glob("*.fits.csv")
                     if json.loads(p.with_name(p.name.replace(".fits.csv", ".json")).read_text())
                     ["request"]["diagnostic"]["version"] == predictability.Params.VERSION)
    fits = fits.query("model == 'specimen' and fit == 'out-of-sample'")
    ridge = pd.DataFrame(result["ridge"]).merge(fits, on=["component", "layer", "predictor"])
    assert len(ridge) == len(result["ridge"]) and np.allclose(ridge["r2_x"], ridge["r2_y"], rtol=1e-9, atol=1e-12)
    weights = pd.concat(pd.read_csv(p) for p in (store / "structure").glob("*.weights.csv")).query("lag == 1")
    deltas = pd.DataFrame(result["deltas"]).merge(weights, on=["model", "component", "layer", "shuffle"])
    assert len(deltas) == len(result["deltas"]) and np.allclose(deltas["corr_x"], deltas["corr_y"], rtol=1e-9)
