"""Handlers that misbehave on purpose, importable in worker processes as
``tests.support.faulty_handlers:<name>`` (the ``--handler`` / ``settings.handlers`` form)."""

from __future__ import annotations

import ctypes
import os
import time

from pipeline.core.models import Document


class _Faulty:
    def __init__(self, name: str, action) -> None:
        self.name = name
        self.media_types = (f"application/x-test-{name}",)
        self._action = action

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx) -> Document:
        self._action(body)
        return Document(content=body.decode())


def _raise(body: bytes) -> None:
    raise ValueError("handler bug")


def _sleep(body: bytes) -> None:
    time.sleep(float(body or b"60"))


def _memory(body: bytes) -> None:
    raise MemoryError


crash = _Faulty("crash", _raise)
hang = _Faulty("hang", _sleep)
die = _Faulty("die", lambda body: os._exit(3))
segfault = _Faulty("segfault", lambda body: ctypes.string_at(0))
memory = _Faulty("memory", _memory)
slow = _Faulty("slow", lambda body: time.sleep(0.3))  # then succeeds with the body as text

SPECS = tuple(f"tests.support.faulty_handlers:{n}"
              for n in ("crash", "hang", "die", "segfault", "memory", "slow", "echo",
                        "inline_echo", "kill_once"))


class Upper:
    """A well-behaved, picklable handler that no spec names (it travels pickled)."""

    name = "upper"
    media_types = ("application/x-test-upper",)

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx) -> Document:
        return Document(content=body.decode().upper())


upper = Upper()


class Echo:
    """Well-behaved: the body as text, with the id of the process that handled it."""

    name = "echo"
    media_types = ("application/x-test-echo",)

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx) -> Document:
        return Document(content=body.decode(), metadata={"pid": os.getpid()})


class InlineEcho(Echo):
    """An echo handled inline unless the body reads ``costly`` (its estimate raises on
    ``bad``)."""

    name = "inline_echo"
    media_types = ("application/x-test-inline-echo",)

    def inline(self, body: bytes, ctx) -> bool:
        if body == b"bad":
            raise ValueError("estimate bug")
        return body != b"costly"


class KillOnce(Echo):
    """Handled inline, so in the process that runs the batch (a shard's process, a Ray
    worker): the first time it sees a body naming a file that does not exist yet, it creates
    the file and kills that process, as a lost machine would."""

    name = "kill_once"
    media_types = ("application/x-test-kill-once",)

    def inline(self, body: bytes, ctx) -> bool:
        return True

    def handle(self, body: bytes, ctx) -> Document:
        marker = body.decode()
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return Document(content=f"survived {os.path.basename(marker)}")
        os._exit(9)


echo = Echo()
inline_echo = InlineEcho()
kill_once = KillOnce()


def __getattr__(name: str) -> object:
    """``parent_only``: loads in the main process, fails to load in a worker process."""
    if name == "parent_only":
        import multiprocessing

        if multiprocessing.parent_process() is not None:
            raise ImportError("parent_only cannot load in a worker")
        return Echo()
    raise AttributeError(name)


def slow_start() -> None:
    """A worker start-up (``ProcessRunner(warm_up=...)``) longer than the tests' time limits."""
    time.sleep(3)
