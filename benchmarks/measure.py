"""Run a command and measure its whole process tree: wall time, CPU seconds, peak memory.

CPU comes from ``getrusage(RUSAGE_CHILDREN)`` (exact for every descendant that was reaped),
cross-checked with psutil samples of the live tree. On Linux this process is made a child
subreaper, so a descendant its parent never reaps (the multiprocessing forkserver, which
outlives the command for a moment and reaps the handler workers it forked) becomes our
child when orphaned and is reaped here, its CPU and its children's included. Peak
memory is the largest sum of RSS over the process and all its descendants, sampled every
``interval`` seconds. Summed RSS counts pages shared by forked workers more than once, so it
is an upper bound on the real footprint.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True)
class Measurement:
    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    root_cpu_s: float  # the command's own process (last sample), without its descendants
    stdout: str
    stderr: str
    first_line_s: float | None = None  # when the first line reached stdout (None: never)


PR_SET_CHILD_SUBREAPER = 36
ORPHAN_WAIT_S = 10.0  # how long an orphaned descendant may take to exit after the command


def _become_subreaper() -> bool:
    """Make orphaned descendants our children (Linux); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans(pids: set[int]) -> None:
    """Wait for ``pids`` (our children) to exit, killing those that linger."""
    deadline = time.monotonic() + ORPHAN_WAIT_S
    waiting = set(pids)
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not our child (reaped by its parent, or never ours)
                waiting.discard(pid)
                continue
            if done:
                waiting.discard(pid)
        if waiting and time.monotonic() > deadline:
            for pid in waiting:
                os.kill(pid, 9)
            deadline = float("inf")  # the next round reaps them
        if waiting:
            time.sleep(0.01)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _TreeSampler(threading.Thread):
    """Samples RSS and CPU of a process tree until told to stop.

    Finding the descendants scans every process of the machine, so the tree is refreshed
    only every ``refresh_every`` samples; the processes already known are sampled each time.
    """

    def __init__(self, pid: int, interval: float, refresh_every: int = 5) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.interval = interval
        self.refresh_every = refresh_every
        self.tree: list[psutil.Process] = [self.root]
        self.peak_rss = 0
        self.cpu_by_pid: dict[int, float] = {}
        self.halt = threading.Event()

    def sample(self) -> None:
        rss = 0
        for proc in self.tree:
            try:
                with proc.oneshot():
                    rss += proc.memory_info().rss
                    times = proc.cpu_times()
                    self.cpu_by_pid[proc.pid] = times.user + times.system
            except psutil.NoSuchProcess:
                continue
        self.peak_rss = max(self.peak_rss, rss)

    def run(self) -> None:
        ticks = 0
        while not self.halt.wait(self.interval):
            if ticks % self.refresh_every == 0:
                try:
                    self.tree = [self.root, *self.root.children(recursive=True)]
                except psutil.NoSuchProcess:
                    return
            ticks += 1
            self.sample()


class _Output:
    """Reads a process's stdout and stderr on threads, noting when stdout's first line came."""

    def __init__(self, proc: subprocess.Popen[str], started: float) -> None:
        self.first_line_s: float | None = None
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [threading.Thread(target=self._read_stdout, args=(proc, started)),
                         threading.Thread(target=self._read_stderr, args=(proc,))]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self, proc: subprocess.Popen[str], started: float) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if self.first_line_s is None:
                self.first_line_s = time.perf_counter() - started
            self.stdout.append(line)

    def _read_stderr(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.stderr.append(proc.stderr.read())

    def collect(self) -> tuple[str, str]:
        """Both streams whole (each ends when every process holding it has closed it)."""
        for reader in self._readers:
            reader.join()
        return "".join(self.stdout), "".join(self.stderr)


def run_measured(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
    timeout: float | None = None, interval: float = 0.05,
) -> Measurement:
    """Run ``command`` to completion (killed after ``timeout`` s) and measure its tree."""
    reaper = _become_subreaper()
    ours_before = {child.pid for child in psutil.Process().children()}
    cpu_before = _children_cpu()
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    sampler = _TreeSampler(proc.pid, interval)
    sampler.start()
    output = _Output(proc, started)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        output.stderr.append(f"\n[killed after {timeout} s]")
    stdout, stderr = output.collect()
    wall = time.perf_counter() - started
    sampler.halt.set()
    sampler.join()
    if reaper:  # descendants orphaned by the command are ours now
        _reap_orphans({child.pid for child in psutil.Process().children()} - ours_before)
    cpu = max(_children_cpu() - cpu_before, sum(sampler.cpu_by_pid.values()))
    root_cpu = sampler.cpu_by_pid.get(proc.pid, 0.0)
    return Measurement(proc.returncode, wall, cpu, sampler.peak_rss, root_cpu, stdout, stderr,
                       output.first_line_s)
