"""pyproject.toml and environment.yml must list the same requirements."""
import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _normal(req: str) -> str:
    return re.sub(r"\s+", "", req).lower().replace("_", "-")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normal(r) for r in project["dependencies"]}
    for extra in ("book", "test", "specimens"):
        wanted |= {_normal(r) for r in project["optional-dependencies"][extra]}
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1]
    lines = [line.strip()[2:] for line in pip_section.splitlines() if line.strip().startswith("- ")]
    listed = {_normal(line) for line in lines if not line.startswith("--")}
    # Binder has no GPU: torch comes from PyTorch's CPU index, not as PyPI's CUDA build
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert listed == wanted, f"only in environment.yml: {listed - wanted}; only in pyproject: {wanted - listed}"


def test_the_import_check_names_the_tested_transformers_range():
    from anatomy_lib.core.version import TRANSFORMERS_SUPPORTED, UnsupportedTransformers, check_transformers

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = next(r for r in project["dependencies"] if r.startswith("transformers"))
    assert _normal(declared) == "transformers" + TRANSFORMERS_SUPPORTED
    assert check_transformers() and check_transformers("5.24.0") == "5.24.0"
    for outside in ("4.48.0", "4.52.4", "6.0.0"):
        with pytest.raises(UnsupportedTransformers) as caught:
            check_transformers(outside)
        message = str(caught.value)
        assert "\n" not in message and TRANSFORMERS_SUPPORTED in message and outside in message


def test_every_dependency_declares_a_tested_floor():
    import subprocess
    import sys

    script = str(ROOT / ".ci" / "requirements.py")
    floors = subprocess.run([sys.executable, script, "floors", "book", "test"], capture_output=True, text=True,
                            check=True).stdout.split()
    colab = subprocess.run([sys.executable, script, "colab", "--all"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert not any(r.startswith("torch") for r in colab) and any(r.startswith("transformers") for r in colab)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert len(floors) >= len(project["dependencies"]) and all("==" in pin for pin in floors)
