"""The native extract provider (our own pipeline) behind the registry and the kernel."""

from pipeline.agent.kernel import web_extract
from pipeline.core.models import ExtractOptions
from pipeline.core.settings import Settings
from pipeline.providers.chain import open_extractor
from pipeline.providers.registry import default_registry
from tests.support.scripted_server import reply_text

PAGE = """<!DOCTYPE html><html><head><title>Native page</title></head><body>
<nav>Home | About</nav><article><h1>Native page</h1>
<p>The native extractor reads this paragraph, which is long enough to count as the main
content of the page and to survive the boilerplate filters of the HTML handler.</p>
<p>A second paragraph makes the article look like an article rather than a stub.</p>
</article></body></html>"""

LOCAL = Settings(allow_private=True, retries=0, timeout=5)  # the test server is on loopback


def test_native_is_registered_and_ready():
    registry = default_registry()
    assert registry.is_configured("native", Settings(), {}, "extract")
    assert registry.resolve("extract", Settings(), {}).chain == ["native"]


async def test_kernel_default_extraction_is_native(server):
    server.route("GET", "/article", reply_text(PAGE))
    url = server.url + "/article"
    response = await web_extract([url, server.url + "/missing"], settings=LOCAL)
    assert response.ok and response.provider == "native"
    page, missing = response.records
    assert page.ok and "native extractor reads this paragraph" in page.content
    assert page.title == "Native page"
    assert missing.error.kind == "http_status"


async def test_native_refuses_loopback_without_allow_private(server):
    server.route("GET", "/article", reply_text(PAGE))
    response = await web_extract([server.url + "/article"], settings=Settings(retries=0))
    assert response.records[0].error.kind == "blocked"
    assert server.requests == []


async def test_batch_extractor_serves_native(server):
    server.route("GET", "/a", reply_text(PAGE))
    async with open_extractor(LOCAL) as extractor:
        records = await extractor.extract([server.url + "/a"],
                                          ExtractOptions(format="text", max_chars=120))
    assert extractor.served_by == "native"
    assert records[0].ok and len(records[0].content) <= 120 and records[0].format == "text"

