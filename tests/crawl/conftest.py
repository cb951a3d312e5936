from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.crawl.site import Site


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    served = await Site().start()
    yield served
    await served.close()


@pytest.fixture
async def other_site() -> AsyncIterator[Site]:
    served = await Site().start()
    yield served
    await served.close()
