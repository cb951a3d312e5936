"""A shared-memory buffer between the batch process and one handler worker.

Sending a 200 KB body through a pipe costs the event loop several blocking writes and
context switches (the pipe holds 64 KB); copying it into memory the worker also maps costs a
memcpy. One arena serves one job at a time in both directions: the parent writes the body,
the worker reads it, then writes its reply over it, and the parent reads that before the
next job. What does not fit goes through the pipe as before.

The arena is a file in ``/dev/shm`` (RAM-backed; the system temp dir elsewhere), mapped by
both processes and unlinked once the worker has mapped it, so nothing is left behind even if
both die. Its space is reserved when it is created (``posix_fallocate``): writing into a
mapping of a full tmpfs would kill the process with SIGBUS, so a full ``/dev/shm`` (64 MiB
in a default Docker container) must fail here instead, and the worker then uses the pipe.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from pathlib import Path

ARENA_BYTES = 8 * 1024 * 1024  # bigger bodies and replies travel through the pipe
_SHM_DIR = Path("/dev/shm")


class Arena:
    """A fixed-size shared buffer; :meth:`create` in the parent, :meth:`attach` in a worker."""

    def __init__(self, path: str, buffer: mmap.mmap) -> None:
        self.path = path
        self._buffer = buffer
        self.size = len(buffer)

    @classmethod
    def create(cls, size: int = ARENA_BYTES) -> Arena:
        directory = str(_SHM_DIR) if _SHM_DIR.is_dir() and os.access(_SHM_DIR, os.W_OK) else None
        fd, path = tempfile.mkstemp(prefix="pipeline-arena-", dir=directory)
        try:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fd, 0, size)  # ENOSPC now rather than SIGBUS later
            else:
                os.ftruncate(fd, size)
            return cls(path, mmap.mmap(fd, size))
        except BaseException:
            os.unlink(path)
            raise
        finally:
            os.close(fd)

    @classmethod
    def attach(cls, path: str) -> Arena:
        fd = os.open(path, os.O_RDWR)
        try:
            return cls(path, mmap.mmap(fd, os.fstat(fd).st_size))
        finally:
            os.close(fd)

    def unlink(self) -> None:
        """Remove the file (both mappings stay valid)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def fits(self, size: int) -> bool:
        return size <= self.size

    def put(self, data: bytes) -> int:
        """Copy ``data`` in at offset 0; return its length."""
        self._buffer[: len(data)] = data
        return len(data)

    def take(self, size: int) -> bytes:
        """A copy of the first ``size`` bytes."""
        return self._buffer[:size]

    def close(self) -> None:
        self._buffer.close()
