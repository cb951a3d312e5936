"""The processes of one browser, found through ``/proc`` (Linux): to measure their memory
and to make sure none of them outlives the browser.

Playwright starts Chromium as the leader of a new process group, and Chromium's helpers
(zygotes, renderers, GPU and network processes) stay in it; its crash handlers leave the
group but carry the browser's private directory on their command line. So a browser's
processes are those of its group plus those naming its directory (``marker``). Elsewhere
than Linux nothing is found and nothing is killed: the browser's own shutdown is all there is.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")
PAGE_KIB = 4  # /proc/PID/statm counts pages; PSS comes from smaps_rollup in KiB


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of ``pid``, or None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the name may hold spaces and ')'
    if fields[0] == "Z":
        return None  # a zombie holds no memory and runs nothing
    return int(fields[1]), int(fields[2])


def _mentions(pid: int, marker: bytes) -> bool:
    for name in ("cmdline", "environ"):
        with contextlib.suppress(OSError):
            if marker in (PROC / str(pid) / name).read_bytes():
                return True
    return False


def find_leader(variable: str, marker: str) -> int | None:
    """The browser process: the process group leader whose environment sets ``variable``
    to ``marker`` (the browser is started with it; other processes may mention ``marker``)."""
    entry = f"{variable}={marker}".encode()
    for pid in _pids():
        stat = _stat(pid)
        if stat is None or stat[1] != pid:
            continue
        with contextlib.suppress(OSError):
            if entry in (PROC / str(pid) / "environ").read_bytes().split(b"\0"):
                return pid
    return None


def alive(pid: int) -> bool:
    return _stat(pid) is not None


def browser_processes(leader: int | None, marker: str) -> list[int]:
    """Live processes of the browser whose group is ``leader`` or which name ``marker``."""
    found = []
    needle = marker.encode()
    for pid in _pids():
        stat = _stat(pid)
        if stat is None:
            continue
        if (leader is not None and stat[1] == leader) or _mentions(pid, needle):
            found.append(pid)
    return found


def kill_browser(leader: int | None, marker: str) -> int:
    """SIGKILL every process of the browser (see :func:`browser_processes`); returns how
    many were signalled."""
    victims = browser_processes(leader, marker)
    for pid in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(victims)


def memory_kib(pids: list[int]) -> int:
    """Proportional set size of ``pids`` together (KiB): shared pages counted once across
    the tree, which resident size would count in every process."""
    total = 0
    for pid in pids:
        try:
            for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except (OSError, ValueError, IndexError):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int((PROC / str(pid) / "statm").read_text().split()[1]) * PAGE_KIB
    return total


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        return []
