"""The hostile-server zoo, one per test module (each module's run sees fresh counts)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hostile.zoo import Zoo


@pytest.fixture(scope="module")
def zoo() -> Iterator[Zoo]:
    zoo = Zoo().start()
    yield zoo
    zoo.stop()
