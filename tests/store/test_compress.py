"""The compressor stage against a fake OpenAI-compatible server on 127.0.0.1."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from pipeline.agent.kernel import web_extract
from pipeline.core.errors import PipelineError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.providers.compressor import CompressorConfig, OpenAICompressor, split_text
from pipeline.providers.fake import FakeExtractProvider
from pipeline.store.compress import FakeCompressor, compress_record
from tests.fetch.conftest import serve_app
from tests.support.scripted_server import ScriptedServer, reply_json

SETTINGS = Settings(retries=1, timeout=5)
PATH = "/v1/chat/completions"


def completion(text):
    return {"id": "c1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture
async def llm():
    server = await ScriptedServer().start()

    async def summarise():
        # answers before any await: the last request seen is this one
        body = server.requests[-1].json()
        return web.json_response(completion(f"summary of {len(body['messages'][1]['content'])}"))

    server.route("POST", PATH, summarise)
    yield server
    await server.close()


class Sleeps:
    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


def compressor(server, sleeps=None, **config):
    cfg = CompressorConfig(model="m", base_url=server.url + "/v1", api_key="sk-test", **config)
    return OpenAICompressor(cfg, SETTINGS, sleep=sleeps or Sleeps())


def record(content):
    return Record(url="https://a.example/", ok=True, content=content, chars=len(content))


async def test_below_floor_is_untouched(llm):
    async with compressor(llm) as c:
        out = await compress_record(record("short"), c, floor=5000, instruction=None,
                                    max_chars=1000)
    assert out.content == "short" and not out.compressed and llm.requests == []


async def test_compresses_and_tells_the_model_the_target(llm):
    text = "Fact. " * 1000
    async with compressor(llm, target_chars=500, token_param="max_completion_tokens") as c:
        out = await compress_record(record(text), c, floor=5000, instruction="prices only",
                                    max_chars=1000)
    assert out.ok and out.compressed and out.content == f"summary of {len(text)}"
    assert out.metadata["original_chars"] == len(text) and out.chars == len(out.content)
    sent = llm.requests[0]
    body = sent.json()
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "m" and "max_completion_tokens" in body and "max_tokens" not in body
    assert "at most 500 characters" in body["messages"][0]["content"]
    assert "prices only" in body["messages"][0]["content"]


async def test_long_content_is_chunked_on_paragraphs_then_combined(llm):
    paragraphs = [f"Paragraph {i}. " + "word " * 80 for i in range(10)]  # ~420 chars each
    text = "\n\n".join(paragraphs)
    async with compressor(llm, input_chars=1000, target_chars=300) as c:
        summary = await c.compress(text)
    pieces = [r.json()["messages"][1]["content"] for r in llm.requests[:-1]]
    assert len(pieces) >= 4 and all(len(p) <= 1000 for p in pieces)
    assert all(p.startswith("Paragraph") for p in pieces)  # cut on paragraph boundaries
    combine = llm.requests[-1].json()
    assert "Merge" in combine["messages"][0]["content"]
    assert summary.startswith("summary of")


def test_split_text_respects_budget_and_loses_nothing():
    text = "\n\n".join(f"Sentence {i} is here. And another one." for i in range(200))
    pieces = split_text(text, 700)
    assert all(len(p) <= 700 for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == \
        text.replace("\n", "").replace(" ", "")


async def test_failure_is_a_compress_error_fail_closed():
    server = await ScriptedServer().start()
    server.route("POST", PATH, reply_json({"error": {"message": "overloaded"}}, status=503))
    try:
        async with compressor(server) as c:
            out = await compress_record(record("x" * 6000), c, floor=5000, instruction=None,
                                        max_chars=10_000)
    finally:
        await server.close()
    assert not out.ok and out.content is None
    assert out.error.kind == "compress" and "overloaded" in out.error.message
    assert out.error.retryable


async def test_retry_after_is_honoured():
    server = await ScriptedServer().start()
    server.route("POST", PATH, reply_json({}, status=429, headers={"Retry-After": "3"}),
                 reply_json(completion("ok")))
    sleeps = Sleeps()
    try:
        async with compressor(server, sleeps) as c:
            assert await c.compress("text") == "ok"
    finally:
        await server.close()
    assert sleeps.waits == [3.0]


@pytest.mark.parametrize("answer", [{"choices": []}, {"choices": [{"message": {}}]}, [1]])
async def test_empty_or_malformed_answer_fails(answer):
    server = await ScriptedServer().start()
    server.route("POST", PATH, reply_json(answer))
    try:
        async with compressor(server) as c:
            with pytest.raises(PipelineError) as info:
                await c.compress("text")
    finally:
        await server.close()
    assert info.value.kind == "compress"


async def test_concurrency_cap():
    server = await ScriptedServer().start()
    state = {"now": 0, "peak": 0}

    async def slow():
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.02)
        state["now"] -= 1
        return web.json_response(completion("s"))

    server.route("POST", PATH, slow)
    try:
        async with compressor(server, concurrency=2) as c:
            await asyncio.gather(*(c.compress(f"text {i}") for i in range(6)))
    finally:
        await server.close()
    assert len(server.requests) == 6 and state["peak"] <= 2


def test_config_from_env():
    assert CompressorConfig.from_env({}) is None
    cfg = CompressorConfig.from_env({"PIPELINE_COMPRESS_MODEL": "gpt-x",
                                     "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                     "OPENAI_API_KEY": "k",
                                     "PIPELINE_COMPRESS_TOKEN_PARAM": "max_completion_tokens",
                                     "PIPELINE_COMPRESS_TARGET_CHARS": "900"})
    assert (cfg.model, cfg.base_url, cfg.api_key, cfg.token_param, cfg.target_chars) == \
        ("gpt-x", "http://127.0.0.1:9/v1", "k", "max_completion_tokens", 900)
    with pytest.raises(PipelineError) as info:
        CompressorConfig.from_env({"PIPELINE_COMPRESS_MODEL": "m",
                                   "PIPELINE_COMPRESS_TOKEN_PARAM": "tokens"})
    assert info.value.kind == "config"


# --------------------------------------------------------------------------- in the kernel

LONG = "Long page sentence. " * 400  # 8,000 chars


async def test_kernel_compresses_only_above_the_floor():
    pages = {"https://a.example/": LONG, "https://b.example/": "tiny"}
    fake = FakeCompressor(reply="short summary")
    response = await web_extract([*pages, "https://a.example/"], compress=True,
                                 backend=FakeExtractProvider(pages), compressor=fake,
                                 settings=Settings(), instruction="focus")
    a, b, again = response.records
    assert again.compressed and again.content == "short summary"
    assert a.compressed and a.content == "short summary"
    assert a.metadata["original_chars"] == len(LONG)
    assert not b.compressed and b.content == "tiny"
    assert fake.calls == [(LONG, "focus")]


async def test_kernel_compress_failure_is_per_url():
    fake = FakeCompressor(error=PipelineError("compress", "compressor: HTTP 500"))
    response = await web_extract(["https://a.example/"], compress=True, compressor=fake,
                                 backend=FakeExtractProvider({"https://a.example/": LONG}),
                                 settings=Settings())
    assert response.ok and response.records[0].error.kind == "compress"
    assert response.records[0].content is None


async def test_kernel_compress_without_compressor_warns(monkeypatch):
    monkeypatch.delenv("PIPELINE_COMPRESS_MODEL", raising=False)
    response = await web_extract(["https://a.example/"], compress=True,
                                 backend=FakeExtractProvider({"https://a.example/": LONG}),
                                 settings=Settings())
    assert response.ok and not response.records[0].compressed
    assert any("no compressor is configured" in w for w in response.warnings)


def test_compressor_from_config_file_table():
    from pipeline.providers.compressor import compressor_from_env

    settings = Settings(provider_env={"PIPELINE_COMPRESS_MODEL": "local-model",
                                      "PIPELINE_COMPRESS_BASE_URL": "http://127.0.0.1:9/v1"})
    made = compressor_from_env(settings, env={})
    assert made is not None and made.config.model == "local-model"
    assert compressor_from_env(Settings(), env={}) is None


async def test_a_model_ignoring_the_target_cannot_loop_forever():
    server = await ScriptedServer().start()
    server.route("POST", PATH, reply_json(completion("verbose " * 200)))  # 1,600 chars always
    try:
        async with compressor(server, input_chars=1000, target_chars=100) as c:
            summary = await c.compress("Sentence here. " * 400)
    finally:
        await server.close()
    assert summary.startswith("verbose")
    assert len(server.requests) < 60  # bounded rounds, then one combining call
    combine = server.requests[-1].json()["messages"][1]["content"]
    assert len(combine) <= 1000


async def test_the_compress_stage_summarises_with_the_settings_instruction():
    from pipeline.read.stages import StageContext, build_stages

    settings = Settings(compress_floor=100, instruction="names")
    compressor = FakeCompressor(reply="gist")
    [stage] = build_stages(StageContext(settings, foreign=False, max_chars=1000, compress=True,
                                        instruction=settings.instruction,
                                        compressor=compressor))
    record = await stage.apply(Record(url="https://a.example/", ok=True, content=LONG,
                                      chars=len(LONG)))
    assert record.compressed and record.content == "gist"
    assert compressor.calls == [(LONG, "names")]
    assert record.metadata["original_chars"] == len(LONG)


# --------------------------------------------------------------------------- the stage deadline

@asynccontextmanager
async def dripping_model(every: float = 0.05) -> AsyncIterator[tuple[str, list[str]]]:
    """An OpenAI-compatible endpoint that answers 200, then one byte every ``every`` seconds
    for ever: no read timeout ever fires. Yields (base URL, the paths it was asked)."""
    asked: list[str] = []

    async def drip(request: web.Request) -> web.StreamResponse:
        asked.append(request.path)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        while True:
            await response.write(b" ")
            await asyncio.sleep(every)

    app = web.Application()
    app.router.add_post(PATH, drip)
    async with serve_app(app) as base:
        yield base + "/v1", asked


async def test_a_dripping_model_gets_the_stage_deadline_and_its_time_is_counted():
    async with dripping_model() as (base, asked):
        cfg = CompressorConfig(model="m", base_url=base, timeout=60)
        async with OpenAICompressor(cfg, Settings(retries=2)) as c:
            page = record("x" * 6000).model_copy(update={"elapsed_ms": 40})
            out = await asyncio.wait_for(
                compress_record(page, c, floor=5000, instruction=None, max_chars=10_000,
                                deadline=0.3), 30)
    assert not out.ok and out.content is None and len(asked) == 1
    assert out.error.kind == "compress" and out.error.retryable
    assert out.error.message == "compressor: no summary within 0.3 s"
    assert out.elapsed_ms >= 40 + 300  # fetching's time and the stage's, together


class Stalled:
    """A compressor that never answers."""

    async def compress(self, text: str, instruction: str | None = None) -> str:
        await asyncio.sleep(3600)
        return text


async def test_the_kernel_holds_each_url_to_the_compress_deadline():
    pages = {"https://a.example/": LONG, "https://b.example/": "tiny"}
    response = await asyncio.wait_for(web_extract(
        list(pages), compress=True, compressor=Stalled(), backend=FakeExtractProvider(pages),
        settings=Settings(compress_deadline=0.2, cache=False)), 30)
    a, b = response.records
    assert response.ok and a.error.kind == "compress" and "within 0.2 s" in a.error.message
    assert b.ok and b.content == "tiny"


class Answers:
    """A custom compressor that returns ``reply``, whatever it is."""

    def __init__(self, reply: object) -> None:
        self.reply = reply

    async def compress(self, text: str, instruction: str | None = None) -> object:
        return self.reply


@pytest.mark.parametrize(("reply", "named"), [(None, "NoneType"), (7, "int"),
                                              ({"summary": "s"}, "dict"), (["s"], "list"),
                                              ("  ", "empty")])
async def test_a_compressor_answer_that_is_not_a_text_is_a_compress_error_for_that_url(
        reply, named):
    pages = {"https://a.example/": LONG, "https://b.example/": "tiny"}
    response = await web_extract(list(pages), compress=True, compressor=Answers(reply),
                                 backend=FakeExtractProvider(pages),
                                 settings=Settings(cache=False))
    assert response.ok and response.error is None
    a, b = response.records
    assert not a.ok and a.content is None and not a.compressed
    assert a.error.kind == "compress" and named in a.error.message
    assert b.ok and b.content == "tiny"
