"""The run plan: a batch run as typed, frozen values, built by the command line from its
flags (:func:`pipeline.cli.command.plan_from_args`), checked by
:func:`pipeline.batch.run_check.check_run` and carried out by the runner of its mode. Nothing
under :mod:`pipeline.batch` sees the command line's parsed flags."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.batch.input.run_input import RunInput
from pipeline.core.settings import Settings

RunMode = Literal["plain", "shard", "processes", "ray"]
RUN_MODES: tuple[RunMode, ...] = ("plain", "shard", "processes", "ray")


@dataclass(frozen=True)
class RunPlan:
    """What one batch run does: its ``mode`` (this process; one shard, ``--shard K/N``;
    ``--processes N``; ``--engine ray``), what it reads, its settings and where it writes
    (``output``: a file, a sharded run's directory, or None for stdout), whether it goes on
    from what ``output`` holds (``resume``) or replaces it (``overwrite``)."""

    mode: RunMode
    input: RunInput
    settings: Settings
    output: str | None = None
    resume: bool = False
    overwrite: bool = False
    shard: tuple[int, int] | None = None  # mode "shard": (K, N)
    shards: int | None = None  # mode "ray": how many shards (None: from the CPUs or manifest)
    address: str | None = None  # mode "ray": the cluster (None: a local Ray)

    @property
    def sharded(self) -> bool:
        """The run writes a directory of parts rather than one output."""
        return self.mode != "plain"
