"""Requirements derived from pyproject.toml, the one place they are declared.

    python .ci/requirements.py floors [EXTRA ...]   pins at every declared lower bound: what `make test-floor`
                                                    installs, so that every floor is a version the suite passes on
    python .ci/requirements.py colab                the dependencies without torch: what a chapter's Colab cell
                                                    installs, keeping the runtime's own torch (a CUDA build);
                                                    a requirement the runtime already satisfies is left out, so
                                                    that pip leaves Colab's own packages (its widgets) alone
"""
import re
import sys
from pathlib import Path

import tomllib

PROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]


def name_of(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0).lower()


def floors(extras: list[str]) -> list[str]:
    requirements = list(PROJECT["dependencies"])
    for extra in extras:
        requirements += PROJECT["optional-dependencies"][extra]
    pins = {}
    for requirement in requirements:
        floor = re.search(r"(?:>=|==)\s*([0-9][^,;\s]*)", requirement)
        if floor is None:
            sys.exit(f"{requirement!r} declares no lower bound: give it one (>=) so that the floor can be tested")
        pins[name_of(requirement)] = floor.group(1)
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def satisfied(requirement: str) -> bool:
    """Whether the running environment already has a version in range (False where it cannot tell: a bare
    environment without `packaging` installs everything, as pip would)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        from packaging.requirements import Requirement
    except ImportError:
        return False

    wanted = Requirement(requirement)
    try:
        return wanted.specifier.contains(version(wanted.name), prereleases=True)
    except PackageNotFoundError:
        return False


def colab(keep_satisfied: bool = True) -> list[str]:
    wanted = [r for r in PROJECT["dependencies"] if name_of(r) != "torch"]
    return [r for r in wanted if not (keep_satisfied and satisfied(r))]


if __name__ == "__main__":
    mode, *rest = sys.argv[1:] or ["floors"]
    if mode not in ("floors", "colab"):
        sys.exit(__doc__)
    print("\n".join(floors(rest) if mode == "floors" else colab(keep_satisfied="--all" not in rest)))
