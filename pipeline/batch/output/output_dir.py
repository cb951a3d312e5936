"""The output directory of a sharded run: its parts, their .done markers and its manifest.

The directory::

    manifest.json                    the run: N, the input's fingerprint, settings that
                                     change records
    part-00003-of-00008.jsonl.partial   shard 3 while it runs (a resumed or retried shard
                                     appends to it)
    part-00003-of-00008.jsonl        shard 3 once complete (renamed)
    part-00003-of-00008.done         then its summary (JSON): the shard is done
    _SUCCESS                         every shard is done
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.errors import UsageError
from pipeline.core.settings import Settings

MANIFEST_FORMAT = "extract-pipeline/shards"
# Settings whose value changes what a record says: a resumed run must keep them.
OUTPUT_SETTINGS = ("format", "max_chars", "max_bytes", "include_comments", "pdf_max_pages",
                   "pdf_time_limit", "handlers", "extract_backend", "backend", "compress",
                   "instruction", "compress_floor", "detect_lang", "languages", "dedup")


def _write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary name in the same directory, then rename over ``path``."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def fingerprint(path: str | None) -> dict[str, Any] | None:
    """Size and SHA-256 of a regular input file; None for stdin, pipes and no file (not
    checked)."""
    if path is None or path == "-" or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": digest.hexdigest()}


def manifest(shards: int, input_path: str | None, settings: Settings) -> dict[str, Any]:
    return {"format": MANIFEST_FORMAT, "version": 1, "shards": shards,
            "input": fingerprint(input_path),
            "settings": settings.model_dump(mode="json", include=set(OUTPUT_SETTINGS))}


@dataclass(frozen=True)
class OutputDir:
    """The files of a sharded run of ``shards`` shards under ``path``."""

    path: Path
    shards: int

    def _stem(self, shard: int) -> str:
        return f"part-{shard:05d}-of-{self.shards:05d}"

    def part(self, shard: int) -> Path:
        return self.path / f"{self._stem(shard)}.jsonl"

    def partial(self, shard: int) -> Path:
        return self.path / f"{self._stem(shard)}.jsonl.partial"

    def marker(self, shard: int) -> Path:
        return self.path / f"{self._stem(shard)}.done"

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def success(self) -> Path:
        return self.path / "_SUCCESS"

    def is_done(self, shard: int) -> bool:
        return self.marker(shard).exists()

    def holds(self, shard: int) -> bool:
        """Whether shard ``shard`` wrote anything here (a part, partial or not, or a marker)."""
        return any(path.exists() for path in (self.part(shard), self.partial(shard),
                                              self.marker(shard)))

    def pending(self) -> list[int]:
        return [shard for shard in range(self.shards) if not self.is_done(shard)]

    def read_marker(self, shard: int) -> dict[str, Any]:
        marker: dict[str, Any] = json.loads(self.marker(shard).read_bytes())
        return marker

    def done_records(self) -> int:
        """Records of the shards already done."""
        return sum(self.read_marker(shard)["records"] for shard in range(self.shards)
                   if self.is_done(shard))

    def clear(self, shard: int) -> None:
        """Forget shard ``shard``'s earlier output (a run without ``--resume``)."""
        for path in (self.marker(shard), self.part(shard), self.partial(shard), self.success):
            path.unlink(missing_ok=True)

    def resumable_part(self, shard: int) -> Path:
        """The file a shard run appends to: its partial part (a complete part whose marker
        was never written is taken back, so the run ends by writing the marker)."""
        partial = self.partial(shard)
        if not partial.exists() and self.part(shard).exists():
            os.replace(self.part(shard), partial)
        return partial

    def complete(self, shard: int, summary: dict[str, Any]) -> None:
        """Shard ``shard`` is finished: rename its part, write its marker, and ``_SUCCESS``
        once every shard is done."""
        os.replace(self.partial(shard), self.part(shard))
        _write_atomically(self.marker(shard), json.dumps(summary).encode() + b"\n")
        if not self.pending():
            self.success.touch()


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of the sharded run in ``path``, if there is one."""
    try:
        data = json.loads((path / "manifest.json").read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path / 'manifest.json'}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise UsageError(f"{path} does not hold a sharded run (its manifest.json is not ours)")
    return data


def holds_a_run(path: Path) -> bool:
    """Whether the directory ``path`` holds a sharded run's files (its manifest or parts)."""
    return (path / "manifest.json").exists() or any(path.glob("part-*"))


def open_output_dir(path: str, wanted: dict[str, Any], *, resume: bool) -> OutputDir:
    """Create (or check, with ``--resume``) the output directory of a sharded run and write
    its manifest. A resumed run must have the same N, input and output settings."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{path} is a file; a sharded run writes a directory (-o OUT_DIR)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {path}: {exc.strerror}") from exc
    found = read_manifest(directory) if resume else None
    if found is not None:
        changed = [key for key in ("shards", "input", "settings") if found.get(key) != wanted[key]]
        if changed:
            raise UsageError(f"cannot resume {path}: its run had other {', '.join(changed)} "
                             "(resume with the same input, shard count and output settings)")
    try:
        _write_atomically(directory / "manifest.json",
                          json.dumps(wanted, indent=1).encode() + b"\n")
    except OSError as exc:
        raise UsageError(f"cannot write in {path}: {exc.strerror}") from exc
    # absolute: a Ray worker's working directory need not be this process's
    return OutputDir(directory.absolute(), wanted["shards"])
