"""Find GGUF models and LoRA adapters on disk: the user's folders, LM Studio, the HF hub cache.

Only headers are read (gguf_header), so scanning dozens of multi-gigabyte files takes a
fraction of a second. A file that cannot be read is listed with the reason instead of
stopping the scan. The folder list is an argument, so nothing here knows about the
user's home unless `standard_folders` is asked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.errors import ModelFileError, ScriptoriumError
from .gguf_file import check_model_header
from .gguf_header import GGUFHeader, quantization_name, read_gguf_header

SOURCE_CONFIG = "config"
SOURCE_MODELS_DIR = "models folder"
SOURCE_LM_STUDIO = "LM Studio"
SOURCE_HUGGING_FACE = "Hugging Face"
SOURCE_DEMO = "demo"

KIND_MODEL = "model"
KIND_LORA = "LoRA"
KIND_PROJECTOR = "projector"
"""Vision projectors (mmproj-*.gguf) sit next to models in LM Studio folders; not loadable alone."""
KIND_UNREADABLE = "unreadable"

LAYOUT_FLAT = "flat"
LAYOUT_HF_CACHE = "hf-cache"

MAX_DEPTH = 4
"""How deep a flat folder is walked: LM Studio needs 2 (publisher/repo/file.gguf)."""

_SHARD = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ModelFolder:
    """A folder to scan and what to call the models found there."""

    path: Path
    source: str
    layout: str = LAYOUT_FLAT
    """LAYOUT_FLAT: *.gguf anywhere below (up to MAX_DEPTH); LAYOUT_HF_CACHE: models--org--name/snapshots/<rev>/."""
    required: bool = False
    """A missing required folder (one the user configured) is reported; others are skipped quietly."""


@dataclass(frozen=True, slots=True)
class FoundModel:
    """One GGUF file (or one split model) found by discovery."""

    path: Path
    """The file to hand to llama.cpp: the first shard of a split model."""
    source: str
    kind: str
    """KIND_MODEL, KIND_LORA, KIND_PROJECTOR or KIND_UNREADABLE."""
    name: str
    """general.name, else the file name without .gguf."""
    architecture: str | None = None
    """For a LoRA adapter, the architecture of the models it fits."""
    quantization: str | None = None
    size_bytes: int = 0
    """All shards together."""
    parameters: int | None = None
    context_length: int | None = None
    repo: str | None = None
    """'publisher/repo' for LM Studio and Hugging Face files."""
    shards: int = 1
    problem: str | None = None
    """One line when the file cannot be used (unreadable, missing shard, truncated)."""
    note: str | None = None
    """Something to show beside the name, e.g. that the demo is assembled on first use."""

    @property
    def usable(self) -> bool:
        return self.problem is None and self.kind in (KIND_MODEL, KIND_LORA)

    @property
    def kind_label(self) -> str:
        if self.kind == KIND_LORA:
            return f"LoRA for {self.architecture}" if self.architecture else "LoRA"
        return self.kind

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["path"] = str(self.path)
        data["usable"] = self.usable
        return data


@dataclass(frozen=True, slots=True)
class Discovery:
    models: tuple[FoundModel, ...]
    """In scan order: the extra entries, then folder by folder, path by path."""
    problems: tuple[str, ...] = field(default=())
    """Folder-level trouble (a configured folder that is missing or unreadable)."""

    def usable(self, kind: str = KIND_MODEL) -> list[FoundModel]:
        return [m for m in self.models if m.usable and m.kind == kind]

    def adapters_for(self, architecture: str) -> list[FoundModel]:
        return [m for m in self.usable(KIND_LORA) if m.architecture == architecture]


def hugging_face_cache(home: Path, environ: Mapping[str, str]) -> Path:
    """The hub cache as huggingface_hub resolves it."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if environ.get(variable):
            return Path(environ[variable]).expanduser()
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"]).expanduser() / "hub"
    cache = Path(environ["XDG_CACHE_HOME"]).expanduser() if environ.get("XDG_CACHE_HOME") else home / ".cache"
    return cache / "huggingface" / "hub"


def standard_folders(home: Path | None = None, environ: Mapping[str, str] | None = None) -> list[ModelFolder]:
    """LM Studio's model folders (current and legacy) and the Hugging Face hub cache."""
    home = Path.home() if home is None else home
    environ = os.environ if environ is None else environ
    return [
        ModelFolder(home / ".lmstudio" / "models", SOURCE_LM_STUDIO),
        ModelFolder(home / ".cache" / "lm-studio" / "models", SOURCE_LM_STUDIO),
        ModelFolder(hugging_face_cache(home, environ), SOURCE_HUGGING_FACE, LAYOUT_HF_CACHE),
    ]


def _gguf_files(root: Path, depth: int = MAX_DEPTH, walked: set[str] | None = None) -> Iterator[Path]:
    # Each folder once: a symlink back up the tree (a loop) was walked to the depth limit,
    # and its files listed under paths like sub/loop/sub/loop/model.gguf.
    walked = set() if walked is None else walked
    real = os.path.realpath(root)
    if real in walked:
        return
    walked.add(real)
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # temp files of interrupted writes and downloads
        try:
            if entry.is_dir():
                if depth > 0:
                    yield from _gguf_files(Path(entry.path), depth - 1, walked)
            elif entry.name.lower().endswith(".gguf") and entry.is_file():
                yield Path(entry.path)
        except OSError:
            continue


def _hf_cache_files(root: Path) -> Iterator[tuple[Path, str]]:
    """(file, 'org/name') for each GGUF in every snapshot of every cached model repo."""
    try:
        repos = sorted(p for p in root.iterdir() if p.name.startswith("models--"))
    except OSError:
        return
    for repo_dir in repos:
        repo = repo_dir.name.removeprefix("models--").replace("--", "/")
        snapshots = repo_dir / "snapshots"
        try:
            revisions = sorted(snapshots.iterdir())
        except OSError:
            continue
        for revision in revisions:
            for path in _gguf_files(revision):
                yield path, repo


def _files_of(folder: ModelFolder) -> Iterator[tuple[Path, str | None]]:
    if folder.layout == LAYOUT_HF_CACHE:
        yield from _hf_cache_files(folder.path)
        return
    for path in _gguf_files(folder.path):
        relative = path.relative_to(folder.path).parts
        # LM Studio keeps publisher/repo/file.gguf; name the repo like the app does.
        repo = "/".join(relative[:2]) if folder.source == SOURCE_LM_STUDIO and len(relative) == 3 else None
        yield path, repo


def _kind(header: GGUFHeader) -> str:
    general_type = header.get("general.type", "model")
    if general_type == "adapter":
        return KIND_LORA if header.get("adapter.type", "lora") == "lora" else KIND_UNREADABLE
    if general_type == "mmproj" or header.get("general.architecture") == "clip":
        return KIND_PROJECTOR
    return KIND_MODEL


def describe_file(path: Path, source: str, repo: str | None = None, shard_paths: Sequence[Path] = ()) -> FoundModel:
    """Read one file's (or split model's) header into a FoundModel; never raises for a bad file.

    `shard_paths` are the other present shards of a split model whose first shard is `path`.
    """

    def unreadable(reason: str, size: int = 0) -> FoundModel:
        return FoundModel(path, source, KIND_UNREADABLE, path.name, size_bytes=size, repo=repo, problem=reason)

    try:
        header = read_gguf_header(path)
    except ModelFileError as error:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        return unreadable(str(error), size)
    kind = _kind(header)
    arch = header.get("general.architecture")
    problem = _header_problem(header)
    if kind == KIND_UNREADABLE:
        problem = f"{path} is a '{header.get('adapter.type')}' adapter, not a LoRA"
    elif kind == KIND_MODEL and not arch:
        kind, problem = KIND_UNREADABLE, f"{path} has no general.architecture: not a llama.cpp model"
    elif kind == KIND_MODEL and problem is None:
        problem = _model_problem(path, header)
    size = header.file_size
    parameters = sum(t.n_elements for t in header.tensors)
    for shard in shard_paths:
        try:
            shard_header = read_gguf_header(shard)
        except ModelFileError as error:
            problem = problem or str(error)
            continue
        size += shard_header.file_size
        parameters += sum(t.n_elements for t in shard_header.tensors)
        problem = problem or _header_problem(shard_header)
    split_count = header.get("split.count")
    expected_shards = split_count if isinstance(split_count, int) and split_count > 1 else 1
    present = 1 + len(shard_paths)
    if expected_shards > present and problem is None:
        problem = f"{path} is split in {expected_shards} files but only {present} are here"
    context = header.get(f"{arch}.context_length") if arch else None
    return FoundModel(
        path=path,
        source=source,
        kind=kind,
        name=str(header.get("general.name") or _display_stem(path)),
        architecture=str(arch) if arch else None,
        quantization=quantization_name(header),
        size_bytes=size,
        parameters=parameters,
        context_length=context if isinstance(context, int) else None,
        repo=repo,
        shards=max(expected_shards, present),
        problem=problem,
    )


def _model_problem(path: Path, header: GGUFHeader) -> str | None:
    """What `info` and a load would refuse the model for: listed as unusable here too."""
    try:
        check_model_header(path, header)
    except ScriptoriumError as error:
        return str(error)
    return None


def _header_problem(header: GGUFHeader) -> str | None:
    truncated = header.first_truncated_tensor()
    if truncated is None:
        return None
    return f"{header.path} is truncated: tensor {truncated.name} ends past the end of the file"


def _display_stem(path: Path) -> str:
    match = _SHARD.match(path.name)
    if match:
        return match["stem"]
    return path.name[: -len(".gguf")] if path.name.lower().endswith(".gguf") else path.name


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: Path
    """The file to read: the lowest-numbered shard present of a split model."""
    repo: str | None
    other_shards: tuple[Path, ...] = ()
    split: re.Match[str] | None = None

    @property
    def first_shard_missing(self) -> bool:
        return self.split is not None and int(self.split["index"]) != 1


def _group_shards(files: Iterable[tuple[Path, str | None]]) -> Iterator[_Candidate]:
    """Fold split models (-00001-of-00003.gguf) into one candidate each, in first-seen order."""
    groups: dict[tuple[Path, str, str], list[tuple[int, Path, str | None]]] = {}
    order: list[_Candidate | tuple[Path, str, str]] = []
    for path, repo in files:
        match = _SHARD.match(path.name)
        if not match:
            order.append(_Candidate(path, repo))
            continue
        key = (path.parent, match["stem"], match["count"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((int(match["index"]), path, repo))
    for item in order:
        if isinstance(item, _Candidate):
            yield item
            continue
        shards = sorted(groups[item])
        _, first, repo = shards[0]
        yield _Candidate(first, repo, tuple(path for _, path, _ in shards[1:]), _SHARD.match(first.name))


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return path


def discover_models(folders: Sequence[ModelFolder], extra: Sequence[FoundModel] = ()) -> Discovery:
    """Scan `folders` in order; `extra` entries (the demo model) come first.

    Models are listed in scan order: folder by folder, then by path. The same file
    reached twice (a folder listed twice, HF snapshots sharing a blob, a symlink into
    another folder) is listed once, under the first folder that found it.
    """
    found: list[FoundModel] = list(extra)
    seen: set[Path] = {_real(m.path) for m in extra}
    problems: list[str] = []
    for folder in folders:
        if not folder.path.is_dir():
            if folder.required:
                what = "is not a folder" if folder.path.exists() else "does not exist"
                problems.append(f"model folder {folder.path} {what}")
            continue
        if not os.access(folder.path, os.R_OK | os.X_OK):
            problems.append(f"model folder {folder.path} cannot be read")
            continue
        for candidate in _group_shards(_files_of(folder)):
            real = _real(candidate.path)
            if real in seen:
                continue
            seen.add(real)
            found.append(_describe_candidate(candidate, folder.source))
    return Discovery(tuple(found), tuple(problems))


def _describe_candidate(candidate: _Candidate, source: str) -> FoundModel:
    split = candidate.split
    if split is not None and candidate.first_shard_missing:
        # Only the first shard carries the metadata: nothing to read, nothing to load.
        return FoundModel(
            candidate.path,
            source,
            KIND_UNREADABLE,
            split["stem"],
            repo=candidate.repo,
            shards=int(split["count"]),
            problem=f"{candidate.path.parent / split['stem']} is a split model whose first file (-00001-of-{split['count']}) is missing",
        )
    return describe_file(candidate.path, source, candidate.repo, candidate.other_shards)
