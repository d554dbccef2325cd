"""pyproject.toml and environment.yml must list the same requirements."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _normal(req: str) -> str:
    return re.sub(r"\s+", "", req).lower().replace("_", "-")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normal(r) for r in project["dependencies"]}
    for extra in ("book", "test"):
        wanted |= {_normal(r) for r in project["optional-dependencies"][extra]}
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1]
    listed = {_normal(line.strip()[2:]) for line in pip_section.splitlines() if line.strip().startswith("- ")}
    assert listed == wanted, f"only in environment.yml: {listed - wanted}; only in pyproject: {wanted - listed}"
