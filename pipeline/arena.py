"""A shared-memory buffer between the batch process and one handler worker.

Sending a 200 KB body through a pipe costs the event loop several blocking writes and
context switches (the pipe holds 64 KB); copying it into memory the worker also maps costs a
memcpy. The arena is cut into equal slots, one per job a worker holds at a time; a slot
serves its job in both directions: the parent writes the body, the worker reads it, then
writes its reply over it, and the parent reads that before the slot takes another job. What
does not fit goes through the pipe as before.

The arena is a file in ``/dev/shm`` (RAM-backed; the system temp dir elsewhere), unlinked as
soon as it is made: the worker gets the open file descriptor (:class:`ArenaHandle`, passed
like the pipe itself), so nothing is ever left behind, whatever kills either process. Its
space is reserved at creation (``posix_fallocate``): writing into a mapping of a full tmpfs
would kill the process with SIGBUS, so a full ``/dev/shm`` (64 MiB in a default Docker
container) fails here instead, and the worker then uses the pipe.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from multiprocessing import reduction
from pathlib import Path
from typing import Any

ARENA_BYTES = 8 * 1024 * 1024  # bigger bodies and replies travel through the pipe
_SHM_DIR = Path("/dev/shm")


class ArenaHandle:
    """An arena's open file descriptor, picklable into a process being started (the fd is
    passed along the way multiprocessing passes a pipe's)."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild_handle, (reduction.DupFd(self.fd), self.size)


def _rebuild_handle(dup: Any, size: int) -> ArenaHandle:
    return ArenaHandle(dup.detach(), size)


class Arena:
    """A fixed-size shared buffer; :meth:`create` in the parent, :meth:`attach` in a worker
    (from :meth:`handle`)."""

    def __init__(self, buffer: mmap.mmap, fd: int | None = None) -> None:
        self._buffer = buffer
        self._fd = fd  # kept open by the creator, to hand to a worker
        self.size = len(buffer)

    @classmethod
    def create(cls, size: int = ARENA_BYTES) -> Arena:
        directory = str(_SHM_DIR) if _SHM_DIR.is_dir() and os.access(_SHM_DIR, os.W_OK) else None
        fd, path = tempfile.mkstemp(prefix="pipeline-arena-", dir=directory)
        os.unlink(path)  # from here on only open descriptors keep it
        try:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fd, 0, size)  # ENOSPC now rather than SIGBUS later
            else:
                os.ftruncate(fd, size)
            return cls(mmap.mmap(fd, size), fd)
        except BaseException:
            os.close(fd)
            raise

    def handle(self) -> ArenaHandle:
        assert self._fd is not None, "only the creator hands an arena out"
        return ArenaHandle(self._fd, self.size)

    @classmethod
    def attach(cls, handle: ArenaHandle) -> Arena:
        try:
            return cls(mmap.mmap(handle.fd, handle.size))
        finally:
            os.close(handle.fd)

    def put(self, data: bytes, offset: int = 0) -> int:
        """Copy ``data`` in at ``offset``; return its length."""
        self._buffer[offset: offset + len(data)] = data
        return len(data)

    def take(self, size: int, offset: int = 0) -> bytes:
        """A copy of the ``size`` bytes at ``offset``."""
        return self._buffer[offset: offset + size]

    def close(self) -> None:
        self._buffer.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
