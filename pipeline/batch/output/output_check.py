"""Where a run's records go, judged before anything is opened.

The output is never the input (the same file under any name or link, or stdin/stdout
redirected to it), and an earlier run's records are never replaced unasked: a non-empty
output needs ``--resume`` (finish it) or ``--overwrite`` (replace it). This holds for every
kind of output: stdout, a file of any format, a sharded run's directory.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.batch.output.output_dir import OutputDir, holds_a_run
from pipeline.batch.output.parquet_sink import is_parquet, journals_in, parts_in
from pipeline.core.errors import UsageError

FileId = tuple[int, int]  # (device, inode)


@dataclass(frozen=True)
class OutputTarget:
    """Where records go: ``path`` None is stdout; ``directory`` is a sharded run's folder, of
    which this run writes shard K of N when ``shard`` is (K, N), else every shard."""

    path: str | None
    directory: bool = False
    shard: tuple[int, int] | None = None


def _file_id(where: str | int) -> FileId | None:
    """The identity of a regular file named by a path or open as a descriptor (terminals,
    pipes and devices have none: reading and writing the same one destroys nothing)."""
    try:
        found = os.fstat(where) if isinstance(where, int) else os.stat(where)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def _stream_id(stream: object) -> FileId | None:
    try:
        return _file_id(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # replaced by an in-memory stream
        return None


def input_id(path: str | None) -> FileId | None:
    """The file the input is read from (``-``: whatever stdin is; None: no file)."""
    if path is None:
        return None
    return _stream_id(sys.stdin) if path == "-" else _file_id(path)


def check_output(target: OutputTarget, *, input_path: str | None, resume: bool = False,
                 overwrite: bool = False) -> None:
    """Refuse (``UsageError``) an output that is the input, or that holds records and the
    user said neither ``--resume`` nor ``--overwrite``."""
    if resume and overwrite:
        raise UsageError("--resume continues the output and --overwrite replaces it: choose one")
    if target.directory:
        _check_directory(target, resume=resume, overwrite=overwrite)
        return
    where = target.path or "stdout"
    found = _stream_id(sys.stdout) if target.path is None else _file_id(target.path)
    if found is not None and found == input_id(input_path):
        raise UsageError(f"the output {where} is the input {input_path}: writing it would "
                         "destroy the URL list; choose another -o")
    if target.path is not None and is_parquet(target.path):
        _check_parquet(target.path, resume=resume, overwrite=overwrite)
    elif target.path is not None:
        _check_file(target.path, resume=resume, overwrite=overwrite)


def check_merge_output(path: str | None, directory: Path, *, overwrite: bool = False) -> None:
    """Refuse (``UsageError``) a merge target (``path``; None: stdout) that is one of the
    run's files under any name or link, or inside the run ``directory`` (a file its next
    ``--resume`` would find), or that holds records without ``overwrite``."""
    if path is not None:
        run = directory.resolve()
        target = Path(path).resolve()
        if target == run or run in target.parents:
            raise UsageError(f"the output {path} is inside the run directory {directory}: "
                             "choose a path outside it")
    found = _stream_id(sys.stdout) if path is None else _file_id(path)
    if found is not None and directory.is_dir() and any(
            _file_id(str(part)) == found for part in directory.iterdir()):
        raise UsageError(f"the output {path or 'stdout'} is a file of the run {directory} it "
                         "merges: choose another -o")
    if path is None:
        return
    hint = "--overwrite replaces it"
    if is_parquet(path):
        _check_parquet(path, resume=False, overwrite=overwrite, hint=hint)
        # the merge replaces the whole directory (merge._merge_to_parquet), not only its parts
        folder = Path(path)
        parts = set(parts_in(folder)) if folder.is_dir() else set()
        others = sorted(entry.name for entry in folder.iterdir()
                        if entry not in parts) if folder.is_dir() else []
        if others:
            shown = ", ".join(others[:5]) + (", …" if len(others) > 5 else "")
            raise UsageError(f"{path} holds files that are not Parquet parts ({shown}): "
                             "choose another -o")
    else:
        _check_file(path, resume=False, overwrite=overwrite, hint=hint)


_HINT = "--resume finishes that run, --overwrite replaces it"


def _check_parquet(path: str, *, resume: bool, overwrite: bool, hint: str = _HINT) -> None:
    """A Parquet output is a directory of parts (:mod:`pipeline.batch.output.parquet_sink`)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{path} is a file; Parquet output is a directory of parts (remove "
                         "it or choose another name)")
    if not folder.exists() and not folder.absolute().parent.is_dir():
        raise UsageError(f"cannot write {path}: no such directory {folder.absolute().parent}")
    if folder.is_dir() and (parts_in(folder) or journals_in(folder)) and not (
            resume or overwrite):
        raise UsageError(f"{path} already holds records: {hint}")


def _check_file(path: str, *, resume: bool, overwrite: bool, hint: str = _HINT) -> None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"cannot write {path}: no such directory {folder}") from None
        return
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from exc
    if stat.S_ISDIR(found.st_mode):
        what = "cannot resume" if resume else "cannot write"
        raise UsageError(f"{what} {path}: it is a directory (a sharded run writes one: "
                         "--processes N)")
    if stat.S_ISREG(found.st_mode) and found.st_size and not (resume or overwrite):
        raise UsageError(f"{path} already holds records: {hint}")


def _check_directory(target: OutputTarget, *, resume: bool, overwrite: bool) -> None:
    assert target.path is not None  # a sharded run without -o is refused before
    path = Path(target.path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is a file; a sharded run writes a directory (-o OUT_DIR)")
    if resume or overwrite or not path.is_dir():
        return
    if target.shard is not None:
        shard, shards = target.shard
        held = OutputDir(path, shards).holds(shard)
        what = f"shard {shard} of {shards} of an earlier run"
    else:
        held = holds_a_run(path)
        what = "an earlier sharded run"
    if held:
        raise UsageError(f"{path} holds {what}: --resume finishes it, --overwrite replaces it")
