"""The output directory of a sharded run: its parts, their .done markers and its manifest.

The directory::

    manifest.json                    the run: N, the input's fingerprint, how its items
                                     are made, settings that change records (and, with
                                     --warc-out, the WARC files written so far)
    part-00003-of-00008.jsonl.partial   shard 3 while it runs (a resumed or retried shard
                                     appends to it)
    part-00003-of-00008.jsonl        shard 3 once complete (renamed)
    part-00003-of-00008.done         then its summary (JSON): the shard is done
    .part-00003-of-00008.lock        locked (flock) by the process writing shard 3 (removed
                                     once it is done)
    _SUCCESS                         every shard is done
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.errors import UsageError
from pipeline.core.settings import defaults
from pipeline.core.slices import RecordSettings, fields_of

MANIFEST_FORMAT = "extract-pipeline/shards"
# The settings whose value changes what a record says: a resumed run must keep them.
OUTPUT_SETTINGS = fields_of(RecordSettings)
_FLAGS = {"handlers": "handler", "languages": "lang",  # a setting whose flag has another name
          "detect_lang": "detect-lang (off: --no-detect-lang)"}
# The manifest's "items" (RunInput.identity): each field's flag and its value for a plain
# list (4: run_input.DEFAULT_DEPTH, not imported: merge must not load the fetcher).
_ITEM_FLAGS: dict[str, tuple[str, Any]] = {
    "format": ("--input-format", "lines"), "url_column": ("--url-column", None),
    "urls": ("URL arguments", None),
    "sitemaps": ("--sitemap", []), "feeds": ("--feed", []), "max_urls": ("--max-urls", None),
    "max_depth": ("--sitemap-depth", 4), "include": ("--include", []),
    "exclude": ("--exclude", []), "same_host": ("--same-host", False),
    "warc_inputs": ("WARC inputs", None), "warc_captures": ("--warc-captures", "last")}


def _write_atomically(path: Path, data: bytes, *, replace: bool = True) -> bool:
    """Write through a temporary name in the same directory, then rename it over ``path``
    — or, without ``replace``, link it there only if ``path`` does not exist yet (False if it
    did: another process wrote it first)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):  # gone already once renamed
            os.unlink(temporary)
    return True


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


def record_settings(settings: RecordSettings) -> dict[str, Any]:
    """The values of the settings that change records, as the manifest keeps them (JSON
    values already: text, numbers, booleans, lists of text)."""
    values = {name: getattr(settings, name) for name in OUTPUT_SETTINGS}
    return {name: list(value) if isinstance(value, list) else value
            for name, value in values.items()}


def manifest(shards: int, input_path: str | None, settings: RecordSettings,
             items: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run's manifest: N, its input's fingerprint, how its items are made from the input
    (``items``: the table format, the sitemaps and feeds and their bounds; None for a plain
    list) and the settings that change records."""
    return {"format": MANIFEST_FORMAT, "version": 1, "shards": shards,
            "input": fingerprint(input_path), "items": items,
            "settings": record_settings(settings)}


def part_stem(shard: int, shards: int) -> str:
    """The name shard ``shard`` of ``shards`` gives its files (a plain run is part 0 of 1)."""
    return f"part-{shard:05d}-of-{shards:05d}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def differences(found: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """What differs between the run a manifest describes (``found``) and this one, as the
    user knows it: ``--max-chars 5000 there, 100000 here``. A setting an older manifest
    lacks counts as its default."""
    named = []
    if found.get("shards") != wanted["shards"]:
        named.append(f"N {found.get('shards')} there, {wanted['shards']} here")
    if found.get("input") != wanted["input"]:
        named.append("another input file (or other content)")
    there_items, here_items = found.get("items") or {}, wanted["items"] or {}
    for name, (flag, default) in _ITEM_FLAGS.items():
        there, here = there_items.get(name, default), here_items.get(name, default)
        if there != here:
            named.append(f"{flag} {_shown(there)} there, {_shown(here)} here")
    settings = found.get("settings") or {}
    default = record_settings(defaults())
    for name in OUTPUT_SETTINGS:
        there, here = settings.get(name, default[name]), wanted["settings"][name]
        if there != here:
            flag = "--" + _FLAGS.get(name, name).replace("_", "-")
            named.append(f"{flag} {_shown(there)} there, {_shown(here)} here")
    return named


@dataclass(frozen=True)
class OutputDir:
    """The files of a sharded run of ``shards`` shards under ``path``."""

    path: Path
    shards: int

    def _stem(self, shard: int) -> str:
        return part_stem(shard, self.shards)

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

    def lock_path(self, shard: int) -> Path:
        return self.path / f".{self._stem(shard)}.lock"  # hidden: not one of the parts

    @contextlib.contextmanager
    def writing(self, shard: int) -> Iterator[None]:
        """Hold shard ``shard``'s lock while writing it: a ``UsageError`` when another
        process holds it (a writer of an earlier run still running). The kernel lets go of
        it when the holder dies, however it dies."""
        with open(self.lock_path(shard), "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UsageError(
                    f"{self.path}: shard {shard} of {self.shards} is still being written by "
                    "another process (an earlier run's): let it end, then --resume") from None
            yield

    def check_idle(self, shards: Iterable[int]) -> None:
        """A ``UsageError`` when another process is writing one of ``shards``."""
        for shard in shards:
            with self.writing(shard):
                pass

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
        self.lock_path(shard).unlink(missing_ok=True)  # done: no writer will come back
        if not self.pending():
            self.success.touch()


def list_warc_files(output: OutputDir, directory: str) -> list[str]:
    """Write into the run's manifest the WARC files its shards wrote so far (``--warc-out
    directory``: ``"warc": {"directory", "files"}``); returns their names. Each shard's
    ``.done`` marker lists its own."""
    from pipeline.batch.output.warc_out import warc_files

    names = [path.name for shard in range(output.shards)
             for path in warc_files(directory, part_stem(shard, output.shards))]
    found = read_manifest(output.path) or {}
    found["warc"] = {"directory": os.path.abspath(directory), "files": names}
    _write_atomically(output.manifest_path, json.dumps(found, indent=1).encode() + b"\n")
    return names


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


def open_output_dir(path: str, wanted: dict[str, Any], *, resume: bool,
                    replacing: bool = False, shard: int | None = None) -> OutputDir:
    """Create (or check) the output directory of a sharded run and write its manifest.

    A directory whose manifest describes another run (another N, input, item options or
    output settings) is refused in one line naming what differs — when resuming it, and
    when writing shard ``shard`` beside the other run's shards — unless this run replaces
    the directory's shards (``replacing``: a whole run with ``--overwrite``, whose old parts
    of any N are removed) or it holds nothing but the manifest. The manifest is created
    with a hard link, so of two runs starting at once only one writes it, and the other
    compares against it.
    """
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{path} is a file; a sharded run writes a directory (-o OUT_DIR)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {path}: {exc.strerror}") from exc
    output = OutputDir(directory.absolute(), wanted["shards"])  # absolute: for Ray workers
    data = json.dumps(wanted, indent=1).encode() + b"\n"
    try:
        found = read_manifest(directory)
        if found is None and _write_atomically(directory / "manifest.json", data,
                                               replace=False):
            return output
        found = found or read_manifest(directory)  # another run created it meanwhile
        if found is not None and (changed := differences(found, wanted)):
            _refuse_other_run(path, changed, resume=resume, shard=shard,
                              others=not replacing and _holds_parts(directory))
            if replacing:
                for left in directory.glob("part-*"):
                    left.unlink()
                output.success.unlink(missing_ok=True)
        if found is not None and "warc" in found and not replacing:
            wanted = {**wanted, "warc": found["warc"]}  # the files so far: list_warc_files
        if found != wanted:
            _write_atomically(directory / "manifest.json",
                              json.dumps(wanted, indent=1).encode() + b"\n")
    except OSError as exc:
        raise UsageError(f"cannot write in {path}: {exc.strerror}") from exc
    return output


def _refuse_other_run(path: str, changed: list[str], *, resume: bool, shard: int | None,
                      others: bool) -> None:
    what = "; ".join(changed)
    if resume:
        raise UsageError(f"cannot resume {path}: it holds another run ({what}); resume "
                         "with the same input, shard count and settings")
    if others:
        whose = f"shard {shard}" if shard is not None else "this run"
        raise UsageError(f"cannot write {whose} into {path}: it holds the shards of another "
                         f"run ({what}); give the same input, shard count and settings, or "
                         "use another directory")


def _holds_parts(directory: Path) -> bool:
    return any(directory.glob("part-*"))
