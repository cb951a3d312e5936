import pytest

from pipeline.core.settings import Settings


@pytest.fixture
def settings():
    return Settings(retries=1, timeout=5, connect_timeout=2, read_timeout=2)


class Sleeps:
    """An injectable sleep that records the waits instead of waiting."""

    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()
