"""Shims over Python versions."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from asyncio import timeout as time_limit
else:  # aiohttp itself depends on async-timeout before 3.11
    from async_timeout import timeout as time_limit

__all__ = ["time_limit"]
