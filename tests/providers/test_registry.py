"""Selection per capability: every rule of the order, warnings and config errors."""

import logging

import pytest

from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from pipeline.providers.fake import FakeExtractProvider, FakeSearchProvider
from pipeline.providers.registry import (
    BOTH,
    EXTRACT,
    SEARCH,
    ProviderSpec,
    Registry,
    default_registry,
)


def spec(name, caps, env_var=None):
    """A fake provider configured iff its env variable is set (or always, without one)."""
    def build(settings, env):
        configured = env_var is None or bool(env.get(env_var))
        if "search" in caps:
            return FakeSearchProvider(name=name, configured=configured)
        return FakeExtractProvider(name=name, configured=configured)
    return ProviderSpec(name, caps, build, env=(env_var,) if env_var else ())


@pytest.fixture
def registry():
    return Registry(
        [spec("free", SEARCH), spec("own", EXTRACT), spec("alpha", SEARCH, "ALPHA_KEY"),
         spec("beta", BOTH, "BETA_KEY"), spec("gamma", BOTH, "GAMMA_KEY")],
        defaults={"search": "free", "extract": "own"},
        auto_detect={"search": ("beta", "alpha"), "extract": ("gamma",)},
    )


ALL_KEYS = {"ALPHA_KEY": "a", "BETA_KEY": "b", "GAMMA_KEY": "g"}


@pytest.mark.parametrize("settings, env, capability, chain, reason", [
    # 1. the capability's own setting (a chain), configured entries only
    ({"search_backend": ["alpha", "free"]}, ALL_KEYS, "search", ["alpha", "free"],
     "search_backend setting"),
    ({"extract_backend": ["gamma"]}, ALL_KEYS, "extract", ["gamma"], "extract_backend setting"),
    ({"search_backend": ["alpha", "beta"]}, {"BETA_KEY": "b"}, "search", ["beta"],
     "search_backend setting"),
    # 2. the shared backend, when it supports the capability and is configured
    ({"backend": ["beta"]}, ALL_KEYS, "search", ["beta"], "backend setting"),
    ({"backend": ["beta"]}, ALL_KEYS, "extract", ["beta"], "backend setting"),
    ({"backend": ["alpha"]}, {}, "extract", ["own"], "zero-key default"),  # search-only: skipped
    ({"backend": ["alpha", "gamma"]}, ALL_KEYS, "extract", ["gamma"], "backend setting"),
    # 3. auto-detection in the documented order, default appended as the last resort
    ({}, ALL_KEYS, "search", ["beta", "alpha", "free"], "auto-detected from BETA_KEY, ALPHA_KEY"),
    ({}, {"ALPHA_KEY": "a"}, "search", ["alpha", "free"], "auto-detected from ALPHA_KEY"),
    ({}, {"GAMMA_KEY": "g"}, "extract", ["gamma", "own"], "auto-detected from GAMMA_KEY"),
    # 4. the zero-key default
    ({}, {}, "search", ["free"], "zero-key default"),
    ({}, {}, "extract", ["own"], "zero-key default"),
])
def test_selection_order(registry, settings, env, capability, chain, reason):
    resolution = registry.resolve(capability, Settings(**settings), env)
    assert resolution.chain == chain
    assert resolution.reason == reason


def test_a_chain_skips_its_unconfigured_links_with_a_warning(registry, caplog):
    caplog.set_level(logging.WARNING, logger="pipeline.providers")
    resolution = registry.resolve("search", Settings(search_backend=["alpha", "beta"]),
                                  {"BETA_KEY": "b"})
    assert resolution.chain == ["beta"]
    assert any("'alpha' but it is not configured" in w for w in resolution.warnings)
    assert "not configured" not in caplog.text  # a value, shown once by its surface


@pytest.mark.parametrize("settings, override, capability, named", [
    ({"search_backend": ["alpha"]}, None, "search", "'alpha'"),
    ({}, ["alpha"], "search", "'alpha'"),  # the caller's backend= (a flag, an argument)
    ({"search_backend": ["alpha"], "backend": ["beta"]}, None, "search", "'alpha'"),
    ({"backend": ["gamma"]}, None, "extract", "'gamma'"),
    ({"backend": ["gamma"]}, None, "search", "'gamma'"),  # not auto-detection instead
    ({"extract_backend": ["beta", "gamma"]}, None, "extract", "'beta', 'gamma'"),
])
def test_a_provider_named_but_not_configured_is_a_config_error(registry, settings, override,
                                                                capability, named):
    with pytest.raises(PipelineError) as info:
        registry.resolve(capability, Settings(**settings), {"BETA_KEY": ""},
                         override=override)
    assert info.value.kind == "config"
    message = info.value.message
    assert named in message and "not configured" in message
    configured = "free" if capability == "search" else "own"
    assert message.endswith(f"configured {capability} providers: {configured}"), message


def test_override_beats_settings(registry):
    resolution = registry.resolve("search", Settings(search_backend=["alpha"]), ALL_KEYS,
                                  override=["beta"])
    assert resolution.chain == ["beta"] and resolution.reason == "backend argument setting"


@pytest.mark.parametrize("settings", [
    {"search_backend": ["nope"]}, {"backend": ["nope"]}, {"search_backend": ["free", "nope"]}])
def test_unknown_name_lists_valid_names(registry, settings):
    with pytest.raises(PipelineError) as info:
        registry.resolve("search", Settings(**settings), {})
    assert info.value.kind == "config"
    assert "'nope'" in info.value.message and "free, own, alpha, beta, gamma" in info.value.message


def test_search_only_provider_named_for_extraction(registry):
    with pytest.raises(PipelineError) as info:
        registry.resolve("extract", Settings(extract_backend=["alpha"]), ALL_KEYS)
    assert info.value.kind == "config"
    assert "cannot extract" in info.value.message
    assert "own, beta, gamma" in info.value.message


def test_builtin_registry_names_and_defaults():
    reg = default_registry()
    assert set(reg.capable("search")) == {"duckduckgo", "searxng", "brave", "tavily", "exa",
                                          "firecrawl", "jina"}
    assert set(reg.capable("extract")) == {"native", "tavily", "exa", "firecrawl", "jina"}
    assert reg.resolve("search", Settings(), {}).chain == ["duckduckgo"]
    assert reg.resolve("extract", Settings(), {}).chain == ["native"]
    assert reg.resolve("extract", Settings(), {"TAVILY_API_KEY": "t"}).chain == ["tavily",
                                                                                 "native"]
    pinned = Settings(extract_backend=["native"])
    assert reg.resolve("extract", pinned, {"TAVILY_API_KEY": "t"}).chain == ["native"]
    detected = reg.resolve("search", Settings(), {"BRAVE_API_KEY": "b", "SEARXNG_URL": "http://l"})
    assert detected.chain == ["searxng", "brave", "duckduckgo"]


def test_register_adds_a_provider(registry):
    registry.register(spec("delta", SEARCH))
    assert registry.resolve("search", Settings(search_backend=["delta"]), {}).chain == ["delta"]


def test_config_file_provider_env_under_the_environment(registry, tmp_path):
    from pipeline.core.settings import load_settings

    config = tmp_path / "pipeline.toml"
    config.write_text('[pipeline.provider_env]\nALPHA_KEY = "from-file"\n')
    settings = load_settings(env={}, config_file=config)
    assert registry.resolve("search", settings, {}).chain == ["alpha", "free"]
    provider = registry.build("alpha", settings, {})
    assert provider.is_configured()
    assert default_registry().build("brave", Settings(provider_env={"BRAVE_API_KEY": "f"}),
                                    {"BRAVE_API_KEY": "e"}).key == "e"
