"""Every limit and default in one model, loaded as flags > environment > TOML file > defaults.

Environment variables are ``PIPELINE_<FIELD>`` (``PIPELINE_MAX_CHARS=5000``); list fields take
a comma-separated value. Vendor keys and endpoints keep their vendors' own names and are read
by the providers, not here.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pipeline.core.errors import PipelineError, describe_validation
from pipeline.core.models import OutputFormat
from pipeline.core.request_options import check_proxy_url, parse_headers

ENV_PREFIX = "PIPELINE_"
MIB = 1024 * 1024
MIN_MAX_CHARS = 50  # a content budget holds the truncation marker and some text
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")  # ISO 639-1; the detector's 639-3 for a few
# Defaults shared with the handler options (``handlers.HandlerOptions``): a handler called
# without options reads a page as the batch command does.
HTML_EXTRACTOR: Final = "builtin"
INCLUDE_COMMENTS: Final = False
STRUCTURED_RAW: Final = False
PDF_MAX_PAGES: Final = 200
PDF_TIME_LIMIT: Final = 20.0


class Settings(BaseModel):
    """All limits and switches, with their documented defaults."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # --- batch engine
    concurrency: int = Field(64, ge=1, le=10_000, description="URLs in flight at once")
    ordered: bool = Field(False, description="write records in input order")
    workers: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=1, le=256,
        description="handler process-pool size",
    )
    handler_timeout: float = Field(30.0, gt=0, description="seconds one document may take to parse")
    processes: int = Field(1, ge=1, le=256, description="shards run at once, one process each")
    quiet: bool = Field(False, description="no progress bar, no summary")
    handlers: list[str] = Field(
        default_factory=list,
        description="extra handlers as module:attribute, tried before the built-ins",
    )

    # --- fetching
    per_host: int = Field(4, ge=1, le=1000, description="connections in flight per host")
    rate: float = Field(5.0, gt=0, description="requests per second per host")
    max_bytes: int = Field(10 * MIB, ge=1, description="byte cap per response, after decompression")
    timeout: float = Field(30.0, gt=0, description="seconds per URL, every attempt included")
    connect_timeout: float = Field(10.0, gt=0, description="seconds to connect")
    read_timeout: float = Field(10.0, gt=0, description="seconds allowed between two reads")
    retries: int = Field(2, ge=0, le=10, description="retries after the first attempt")
    retry_after_cap: float = Field(
        30.0, ge=0, description="longest Retry-After we honour (s), and the most a URL's "
        "deadline stands still while its host is paused")
    max_redirects: int = Field(10, ge=0, le=50)
    head: bool = Field(True, description="send a HEAD first to refuse oversized/binary URLs")
    head_trust: int = Field(
        8, ge=0, description="after this many clean HEADs in a row a host's URLs get GET alone "
        "(headers still checked before the body); 0 = HEAD every URL",
    )
    user_agent: str = "extract-pipeline/0.1 (+batch text extraction)"
    allow_net: list[str] = Field(default_factory=list, description="CIDRs opened to fetching")
    allow_private: bool = Field(False, description="open RFC 1918/4193 ranges and loopback")
    robots: bool = Field(False, description="honour robots.txt and Crawl-delay")
    crawl_delay_cap: float = Field(30.0, ge=0, description="the longest robots.txt "
                                   "Crawl-delay honoured, in seconds")
    links: bool = Field(False, description="list each HTML page's out-links (a crawl)")
    proxy: str | None = Field(
        None, description="send every request through this proxy: http://, https:// or "
        "socks5:// (extra [socks]); credentials as user:password@")
    trust_env: bool = Field(False, description="use HTTP_PROXY/HTTPS_PROXY/NO_PROXY from the "
                            "environment (when no proxy is set)")
    allow_proxy_net: list[str] = Field(
        default_factory=list, description="CIDRs a proxy's own address may lie in (targets "
        "are still judged by the policy)")
    headers: dict[str, str] = Field(
        default_factory=dict, description="extra request headers, 'Name: value' (env: one "
        "per line); Authorization and Cookie never follow a redirect to another host")
    cookie_file: str | None = Field(
        None, description="cookies.txt (Netscape format) sent to their domains only")
    credential_hosts: list[str] = Field(
        default_factory=list, description="hosts (HOST or HOST:PORT) that also get the "
        "credentials when a sitemap or feed names their URLs (they always go to the list's "
        "and the --sitemap/--feed URLs' own origins); the MCP server's only ones")
    credential_headers: list[str] = Field(
        default_factory=list, description="more header names that carry credentials (as "
        "Authorization and Cookie do): sent only where credentials may go")

    # --- rendering in a headless browser (see pipeline.browser, extra [browser])
    render: Literal["never", "auto", "always"] = Field(
        "never", description="render pages in headless Chromium: never, auto (app shells "
        "and data islands only) or always (every HTML page)")
    render_concurrency: int = Field(4, ge=1, le=64, description="pages rendered at once "
                                    "(one browser per process)")
    browser_path: str | None = Field(
        None, description="the Chromium executable (default: Playwright's own browser, then "
        "the distribution's chromium)")
    render_wait: float = Field(
        8.0, gt=0, description="longest wait (s) for a rendered page to settle; the page is "
        "then read as it is (--timeout still bounds fetch + render)")
    render_max_bytes: int = Field(
        20 * MIB, ge=1, description="byte cap across everything one rendered page downloads")
    render_restart_pages: int = Field(
        500, ge=1, description="pages one browser renders before it is replaced")
    render_max_memory_mb: int = Field(
        2048, ge=64, description="memory (MiB, the browser's processes together) above which "
        "the browser is killed, even during a page (its pages fail) and replaced")

    # --- content
    max_chars: int = Field(100_000, ge=MIN_MAX_CHARS,
                           description="content budget per URL, marker included")
    format: OutputFormat = "markdown"
    pdf_max_pages: int = Field(PDF_MAX_PAGES, ge=1, description="PDF pages read per document")
    pdf_time_limit: float = Field(PDF_TIME_LIMIT, gt=0,
                                  description="seconds of PDF text extraction")
    include_comments: bool = Field(INCLUDE_COMMENTS, description="append a page's comment threads")
    structured_raw: bool = Field(
        STRUCTURED_RAW, description="keep a page's JSON-LD and microdata as declared, bounded "
        "(metadata.structured_raw)")
    fields_schema: str | None = Field(
        None, description="fill each record's fields by this schema: product, article, "
        "recipe, event, job or a JSON Schema file (docs/fields.md)")
    fields_model: bool = Field(
        False, description="fill the fields the page's own readers left null with a model "
        "(the compressor's endpoint variables; needs fields_schema)")
    html_extractor: Literal["builtin", "readability"] = Field(
        HTML_EXTRACTOR, description="main-content algorithm for HTML: builtin or readability "
        "(readability-lxml, extra [readability])")

    # --- corpus building: duplicates and language (docs/dedup-and-language.md)
    detect_lang: bool = Field(True, description="metadata.detected_lang(_score): the "
                              "extracted text's language")
    languages: list[str] = Field(
        default_factory=list, description="keep only records in these detected languages "
        "(ISO 639-1); the others become 'filtered' records")
    dedup: Literal["off", "exact", "near"] = Field(
        "off", description="mark records whose text an earlier record has (duplicate_of): "
        "exact (whitespace normalised) or near (MinHash, Jaccard >= 0.8; extra [dedup])")
    drop_duplicates: bool = Field(False, description="with dedup: a duplicate becomes a "
                                  "'filtered' record without content")

    # --- providers and compressor (see pipeline.providers, pipeline.store.compress)
    backend: list[str] = Field(default_factory=list, description="shared provider chain")
    search_backend: list[str] = Field(default_factory=list)
    extract_backend: list[str] = Field(default_factory=list)
    crawl_backend: list[str] = Field(default_factory=list, description="crawl provider(s) "
                                     "of web_crawl / web_map (default: the native crawler)")
    crawl_deadline: float = Field(120.0, gt=0, le=3_600, description="seconds one web_crawl "
                                  "or web_map call may take in all; past it, the pages read")
    compress: bool = False
    compress_floor: int = Field(5_000, ge=0, description="compress only content this long")
    compress_deadline: float = Field(
        300.0, gt=0, description="seconds the compressor may take per URL in all (waiting "
        "for a model slot, every call and retry)")
    instruction: str | None = None
    provider_env: dict[str, str] = Field(
        default_factory=dict,
        description="vendor keys/endpoints (BRAVE_API_KEY, SEARXNG_URL...) from the config "
        "file; the environment wins")

    markdown_dir: str | None = Field(
        None, description="also write each page's markdown to a file under DIR whose path "
        "mirrors its URL, with a short front matter (url, title, depth)")
    # --- WARC archive of a batch run (see pipeline.batch.output.warc_out)
    warc_out: str | None = Field(
        None, description="directory for WARC files of every response the run receives "
        "(extra [warc])")
    warc_max_bytes: int = Field(1_000_000_000, ge=1,
                                description="start the next WARC file once one holds this many "
                                "bytes")

    # --- full-text cache (see pipeline.store.cache)
    cache: bool = Field(True, description="library/MCP: keep full texts in the on-disk cache")
    cache_dir: str | None = Field(None, description="cache directory (batch: only if set)")
    cache_ttl: float = Field(86_400.0, ge=0, description="seconds a cached page stays fresh")
    cache_max_mb: int = Field(512, ge=0, description="cache size cap in MiB, oldest evicted first")

    @field_validator("allow_net", "handlers", "backend", "search_backend", "extract_backend",
                     "crawl_backend",
                     "allow_proxy_net", "credential_hosts", "credential_headers", "languages",
                     mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("languages")
    @classmethod
    def _check_languages(cls, value: list[str]) -> list[str]:
        codes = [code.strip().lower() for code in value]
        if wrong := [code for code in codes if not _LANGUAGE_CODE.fullmatch(code)]:
            raise ValueError(f"not a language code (ISO 639-1, e.g. en,de): {', '.join(wrong)}")
        return list(dict.fromkeys(codes))

    @field_validator("headers", mode="before")
    @classmethod
    def _parse_headers(cls, value: Any) -> Any:
        return parse_headers(value)

    @field_validator("fields_schema")
    @classmethod
    def _check_schema(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from pipeline.core.field_schemas import schema_text

        try:
            schema_text(value)
        except PipelineError as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("proxy")
    @classmethod
    def _check_proxy(cls, value: str | None) -> str | None:
        return check_proxy_url(value) if value else None


def defaults() -> Settings:
    """The documented defaults alone (no environment, no file): a part made without
    settings."""
    return Settings()


def _from_environment(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            values[name] = raw
    return values


def _from_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        with Path(path).open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise PipelineError("config", f"config file not found: {path}") from exc
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PipelineError("config", f"cannot read config file {path}: {exc}") from exc
    # Accept either top-level keys or a [pipeline] table.
    table = data.get("pipeline", data)
    return {key.replace("-", "_"): value for key, value in table.items()}


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_file: str | os.PathLike[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> Settings:
    """Build settings from flags (``overrides``; None values ignored) > environment > file.

    The config file may also be named by ``PIPELINE_CONFIG``. Raises ``PipelineError('config')``
    naming every invalid value where it was given: by ``names`` for an override (the command
    line passes its flags: ``--max-chars``), by its variable for the environment, with the
    file's path for the config file.
    """
    env = os.environ if env is None else env
    config_file = config_file or env.get(ENV_PREFIX + "CONFIG") or None
    merged: dict[str, Any] = {}
    where: dict[str, str] = {}  # field -> how the user named the value that won
    if config_file:
        merged.update(found := _from_file(config_file))
        where.update({key: f"{key} in {config_file}" for key in found})
    merged.update(found := _from_environment(env))
    where.update({key: ENV_PREFIX + key.upper() for key in found})
    found = {k: v for k, v in (overrides or {}).items() if v is not None}
    merged.update(found)
    where.update({key: (names or {}).get(key, key) for key in found})
    try:
        return Settings(**merged)
    except ValidationError as exc:
        raise PipelineError("config", describe_validation(exc, Settings, "settings",
                                                          where)) from exc
