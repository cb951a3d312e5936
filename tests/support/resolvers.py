"""A DNS resolver answering from a table, for tests that need names on loopback."""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver


class FakeResolver(AbstractResolver):
    """Answers from a table ``{name: [address, ...]}``; unknown names fail like NXDOMAIN.
    A name mapped to a list of lists answers each call with the next list (the last one
    again once they run out): a name that rebinds. ``asked`` logs every lookup."""

    def __init__(self, table: dict[str, list[str] | list[list[str]]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(self, host, port=0, family=socket.AF_INET):
        calls = self.asked.count(host)
        self.asked.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answers = self.table[host]
        if answers and isinstance(answers[0], list):
            answers = answers[min(calls, len(answers) - 1)]
        return [{"hostname": host, "host": address, "port": port,
                 "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                 "proto": 0, "flags": 0} for address in answers]

    async def close(self) -> None:
        return None
