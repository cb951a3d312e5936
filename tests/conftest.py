"""Every test gets its own empty full-text cache (nothing is written to the user's cache
directory, and no test sees another's pages); aioresponses is fitted to this aiohttp."""

from pathlib import Path

import pytest

from tests.support.aioresponses_compat import fit_aioresponses_to_aiohttp
from tests.support.scripted_server import ScriptedServer


def pytest_configure(config: pytest.Config) -> None:
    fit_aioresponses_to_aiohttp()
    config.addinivalue_line(
        "markers", "patient: the test counts requests or outcomes and tests no deadline, so "
        "its fetch settings get deadlines any machine load meets (tests/fetch/conftest.py)")


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
async def server():
    """A scripted HTTP server on 127.0.0.1 (vendor APIs, model endpoints)."""
    srv = await ScriptedServer().start()
    yield srv
    await srv.close()


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of 2 CPUs for a module's tests (skipped without Ray: not in the test extra,
    it is large); its workers import this checkout's tests too."""
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (not in the test extra: it is large): "
        "pip install -e '.[test,ray]' runs this test")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}})
    yield ray
    ray.shutdown()
