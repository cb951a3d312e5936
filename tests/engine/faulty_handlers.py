"""Handlers that misbehave on purpose, importable in worker processes as
``tests.engine.faulty_handlers:<name>`` (the ``--handler`` / ``settings.handlers`` form)."""

from __future__ import annotations

import ctypes
import os
import time

from pipeline.models import Document


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

SPECS = tuple(f"tests.engine.faulty_handlers:{n}"
              for n in ("crash", "hang", "die", "segfault", "memory", "slow", "echo",
                        "cheap_echo", "slow_light"))


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


class CheapEcho(Echo):
    """An echo that says a body is cheap unless it reads ``costly`` (or raises on ``bad``)."""

    name = "cheap_echo"
    media_types = ("application/x-test-cheap-echo",)

    def cheap(self, body: bytes, ctx) -> bool:
        if body == b"bad":
            raise ValueError("estimate bug")
        return body != b"costly"


class SlowLight(Echo):
    """Light by its own word, yet each body takes ~30 ms: the rent runs out after a few."""

    name = "slow_light"
    media_types = ("application/x-test-slow-light",)

    def light(self, body: bytes, ctx) -> bool:
        return True

    def handle(self, body: bytes, ctx) -> Document:
        deadline = time.perf_counter() + 0.03
        while time.perf_counter() < deadline:
            pass
        return super().handle(body, ctx)


echo = Echo()
cheap_echo = CheapEcho()
slow_light = SlowLight()


def __getattr__(name: str) -> object:
    """``parent_only``: loads in the main process, fails to load in a worker process."""
    if name == "parent_only":
        import multiprocessing

        if multiprocessing.parent_process() is not None:
            raise ImportError("parent_only cannot load in a worker")
        return Echo()
    raise AttributeError(name)
