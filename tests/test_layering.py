"""The library's layering, checked on every import statement (inside functions too): a core that never names a
chapter, chapters that import only the core and the chapters they build on, chapter 9 (``verdicts``) over the
chapters, the atlas over chapter 9, compute kept apart from presentation, the top floor alone importing
everything, and no import circle anywhere. Every package of the library has its floor here (tested)."""
import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "anatomy_lib"
CHAPTERS = {"specimen", "importance", "predictability", "structure", "manipulation", "recovery", "growth",
            "quantisation"}
# floors above the chapters, in order: chapter 9 judges every chapter's claims; the atlas sets them side by side
# per specimen, with chapter 9's verdicts
ABOVE_CHAPTERS = {"verdicts": CHAPTERS, "atlas": CHAPTERS | {"verdicts"},
                  "own_model": {"predictability", "structure"}}  # the page "Dissect your own model"
TOP = {"seminar", "exercises", "paper_run", "cli", "benchmark", "__main__", "__init__"}
BUILDS_ON = {"manipulation": {"importance"}, "recovery": {"importance"}, "growth": {"importance"},
             "quantisation": {"growth", "importance", "predictability", "structure"}, **ABOVE_CHAPTERS}
PRESENTATION = {"matplotlib", "seaborn", "ipywidgets"}
PRESENTATION_MODULES = {"figures", "explorers", "style", "widgets", "__init__"}
MAX_FUNCTION_IMPORTS = 15


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield "anatomy_lib." + ".".join(parts), path


def _imports(name: str, path: Path):
    """(imported module, line, inside a function) for every import statement of a module."""
    tree = ast.parse(path.read_text())
    package = name.rsplit(".", 1)[0] if not path.name == "__init__.py" else name
    functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        inside = id(node) in functions
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, inside
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if node.module is None or target == package:  # from . import x: the submodules themselves
                for alias in node.names:
                    yield f"{target}.{alias.name}", node.lineno, inside
            else:
                yield target, node.lineno, inside


def _floor(module: str) -> str:
    """'core', a chapter's name, or 'top'."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] == "core":
        return "core"
    if len(parts) > 1 and parts[1] in CHAPTERS | set(ABOVE_CHAPTERS):
        return parts[1]
    return "top"


def test_every_package_and_module_has_its_floor():
    """A package added without a floor here would be 'top' by default, free to import anything."""
    named = {"core"} | CHAPTERS | set(ABOVE_CHAPTERS) | TOP
    found = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in PACKAGE.glob("*")
             if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").is_file())}
    assert found == named, f"not in the layering: {sorted(found - named)}; gone: {sorted(named - found)}"


GRAPH = {name: list(_imports(name, path)) for name, path in _modules()}
INTERNAL = {name: [(t, line, inside) for t, line, inside in imports if t.startswith("anatomy_lib")]
            for name, imports in GRAPH.items()}


def test_every_import_runs_downward():
    upward = []
    for module, imports in INTERNAL.items():
        floor = _floor(module)
        for target, line, _ in imports:
            to = _floor(target)
            if floor == "top" or to == floor:
                continue
            allowed = {"core"} | BUILDS_ON.get(floor, set()) if floor != "core" else set()
            if to not in allowed:
                upward.append(f"{module}:{line} imports {target}")
    assert not upward, "\n".join(upward)


def test_compute_never_draws():
    drawing = [f"{module}:{line} imports {target}" for module, imports in GRAPH.items()
               for target, line, _ in imports if target.split(".")[0] in PRESENTATION
               and module.rsplit(".", 1)[-1] not in PRESENTATION_MODULES]
    assert not drawing, "\n".join(drawing)


def test_no_import_circle():
    edges = defaultdict(set)
    for module, imports in INTERNAL.items():
        for target, _, _ in imports:
            # a name imported from a package may be a submodule or a name of its __init__
            edges[module].add(target if target in INTERNAL else target.rsplit(".", 1)[0] if target.rsplit(".", 1)[0]
                              in INTERNAL else f"{target}.__init__")
    packages = {m.rsplit(".", 1)[0] for m in INTERNAL if m.endswith(".__init__")}
    edges = {m: {f"{t}.__init__" if t in packages else t for t in ts} for m, ts in edges.items()}
    state, circles = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            nxt = nxt if nxt in INTERNAL else nxt.rsplit(".", 1)[0] + ".__init__"
            if nxt not in INTERNAL or nxt == node:
                continue
            if state.get(nxt) == "open":
                circles.append(" -> ".join(path[path.index(nxt):] + [nxt]) if nxt in path else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    renamed = {(f"{m}" if not m.endswith(".__init__") else m): m for m in INTERNAL}
    for module in sorted(renamed):
        if module not in state:
            visit(module, [module])
    assert not circles, "\n".join(circles)


def test_imports_inside_functions_are_few_and_explained():
    found = []
    for module, path in _modules():
        lines = path.read_text().splitlines()
        for target, line, inside in GRAPH[module]:
            if inside:
                said = lines[line - 1] + (lines[line - 2] if line > 1 else "")
                found.append((module, line, target, "#" in said))
    assert len(found) <= MAX_FUNCTION_IMPORTS, found
    unexplained = [f"{m}:{line} {t}" for m, line, t, why in found if not why]
    assert not unexplained, "an import inside a function needs a comment saying why: " + ", ".join(unexplained)


def test_computing_loads_no_plotting_or_widgets():
    """Importing the compute side (every chapter's compute modules, the CLI, chapter 9) loads neither matplotlib
    nor ipywidgets: a chapter package names its figures and explorers lazily (``core.lazy``)."""
    import subprocess
    import sys

    modules = ["anatomy_lib.cli", "anatomy_lib.verdicts", "anatomy_lib.seminar", "anatomy_lib.growth.trainer"] + [
        m for m in GRAPH if _floor(m) in CHAPTERS and m.rsplit(".", 1)[-1] not in PRESENTATION_MODULES]
    code = (f"import sys\nfor m in {modules!r}: __import__(m)\n"
            "loaded = sorted({'matplotlib', 'ipywidgets', 'seaborn'} & set(sys.modules))\nprint(loaded)\n"
            "from anatomy_lib import importance\nassert importance.anatomy_strip.__module__.endswith('figures')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
