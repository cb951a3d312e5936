"""Provider registry and per-capability selection.

Adding a vendor is one module and one :class:`ProviderSpec` line in :data:`BUILTIN_SPECS`.
Vendor modules are imported only when a provider is built, so ``import pipeline`` stays light.

Selection for a capability (``search``, ``extract`` or ``crawl``), first rule that yields a
provider:

1. the capability's own setting (``search_backend`` / ``extract_backend`` /
   ``crawl_backend``, or the caller's
   ``backend=`` override) — its configured entries, in order, form the failover chain;
2. the shared ``backend`` setting — its entries that support the capability and are configured;
3. auto-detection from environment variables, in :data:`AUTO_DETECT` order, followed by the
   zero-key default as the last link of the chain;
4. the zero-key default (:data:`DEFAULTS`).

What the user names (rules 1 and 2: a flag, an argument, a setting) is strict: when none of
the names is configured, that is a ``config`` error listing the configured providers, never a
silent switch to another vendor; in a chain of several, a link that is not configured is
skipped with a logged warning. An unknown name is a ``config`` error listing the valid names; a
provider named for a capability it lacks is a ``config`` error naming the providers that have
it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pipeline.core.errors import PipelineError
from pipeline.core.slices import ModelSettings, ProviderSettings

Capability = Literal["search", "extract", "crawl"]
CAPABILITIES: tuple[Capability, ...] = ("search", "extract", "crawl")
ProviderFactory = Callable[[ProviderSettings, Mapping[str, str]], Any]

SEARCH = frozenset({"search"})
EXTRACT = frozenset({"extract"})
BOTH = SEARCH | EXTRACT
CRAWL = frozenset({"crawl"})


@dataclass(frozen=True)
class ProviderSpec:
    """How to build one provider: ``factory`` is ``"module:callable"`` (imported lazily) or a
    callable, called as ``factory(settings, env)`` (``settings``: the providers' slice,
    :class:`~pipeline.core.slices.ProviderSettings`). ``env`` names the variables that make it
    auto-detectable; ``hint`` tells a user how to configure it. ``factories`` builds a
    capability with another factory (the native crawler is not the native extractor)."""

    name: str
    capabilities: frozenset[str]
    factory: str | ProviderFactory
    env: tuple[str, ...] = ()
    hint: str = ""
    factories: Mapping[str, str | ProviderFactory] = field(default_factory=dict)

    def build(self, settings: ProviderSettings, env: Mapping[str, str],
              capability: str | None = None) -> Any:
        factory = self.factories.get(capability or "", self.factory)
        if isinstance(factory, str):
            module_name, _, attr = factory.partition(":")
            try:
                factory = getattr(importlib.import_module(module_name), attr)
            except (ImportError, AttributeError) as exc:
                raise PipelineError("config", f"provider {self.name!r} is unavailable: {exc}")\
                    from exc
        return factory(settings, env)


def _native(settings: ProviderSettings, env: Mapping[str, str]) -> Any:
    try:
        from pipeline.extract.native import NativeExtractor  # the engine's pipeline; heavy, so lazy
    except ImportError as exc:
        raise PipelineError("config", f"provider 'native' is unavailable: {exc}") from exc
    return NativeExtractor(settings)


BUILTIN_SPECS: tuple[ProviderSpec, ...] = (
    ProviderSpec("duckduckgo", SEARCH, "pipeline.providers.duckduckgo:DuckDuckGoProvider",
                 hint="no key needed"),
    # the crawler sits above the agent layer: its adapter is imported by name, when built
    ProviderSpec("native", EXTRACT | CRAWL, _native, hint="no key needed (our own pipeline)",
                 factories={"crawl": "pipeline.crawl.provider:NativeCrawlProvider"}),
    ProviderSpec("searxng", SEARCH, "pipeline.providers.searxng:SearxngProvider",
                 env=("SEARXNG_URL",), hint="set SEARXNG_URL"),
    ProviderSpec("brave", SEARCH, "pipeline.providers.brave:BraveProvider",
                 env=("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"), hint="set BRAVE_API_KEY"),
    ProviderSpec("tavily", BOTH | CRAWL, "pipeline.providers.tavily:TavilyProvider",
                 env=("TAVILY_API_KEY",), hint="set TAVILY_API_KEY"),
    ProviderSpec("exa", BOTH, "pipeline.providers.exa:ExaProvider",
                 env=("EXA_API_KEY",), hint="set EXA_API_KEY"),
    ProviderSpec("firecrawl", BOTH | CRAWL, "pipeline.providers.firecrawl:FirecrawlProvider",
                 env=("FIRECRAWL_API_KEY",),
                 hint="set FIRECRAWL_API_KEY (or FIRECRAWL_API_URL for a self-hosted one)"),
    ProviderSpec("jina", BOTH, "pipeline.providers.jina:JinaProvider",
                 env=("JINA_API_KEY",),
                 hint="set JINA_API_KEY (the reader also works without one, rate-limited)"),
)

DEFAULTS: dict[str, str] = {"search": "duckduckgo", "extract": "native", "crawl": "native"}
# Both capabilities follow the keys present (DESIGN.md); the batch command says on stderr when
# a run's pages go to a vendor, since that may bill the user.
AUTO_DETECT: dict[str, tuple[str, ...]] = {
    "search": ("searxng", "brave", "tavily", "exa", "firecrawl", "jina"),
    "extract": ("firecrawl", "tavily", "exa", "jina"),
    # a crawl bills up to its page budget at once: a vendor only when named, never by a key
    "crawl": (),
}


def provider_env(settings: ModelSettings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Vendor variables: the config file's ``provider_env`` table under the environment."""
    return {**settings.provider_env, **(os.environ if env is None else env)}


@dataclass
class Resolution:
    """The providers to try for a capability, in order, and why."""

    capability: str
    chain: list[str]
    reason: str
    warnings: list[str] = field(default_factory=list)


class Registry:
    """Name → :class:`ProviderSpec`, plus selection."""

    def __init__(self, specs: Iterable[ProviderSpec] = BUILTIN_SPECS,
                 defaults: Mapping[str, str] | None = None,
                 auto_detect: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self._specs: dict[str, ProviderSpec] = {}
        self.defaults = dict(DEFAULTS if defaults is None else defaults)
        self.auto_detect = dict(AUTO_DETECT if auto_detect is None else auto_detect)
        for spec in specs:
            self.register(spec)

    def register(self, spec: ProviderSpec) -> None:
        """Add (or replace) a provider."""
        self._specs[spec.name] = spec

    def names(self) -> list[str]:
        """Every registered provider name, in registration order."""
        return list(self._specs)

    def specs(self) -> list[ProviderSpec]:
        """Every registered :class:`ProviderSpec`, in registration order."""
        return list(self._specs.values())

    def capable(self, capability: str) -> list[str]:
        """The names of the providers that offer ``capability``."""
        return [n for n, s in self._specs.items() if capability in s.capabilities]

    def spec(self, name: str) -> ProviderSpec:
        """The spec named ``name``; ``PipelineError('config')`` listing the valid names."""
        try:
            return self._specs[name]
        except KeyError:
            raise PipelineError(
                "config", f"unknown provider {name!r}; valid names: {', '.join(self._specs)}"
            ) from None

    def build(self, name: str, settings: ProviderSettings,
              env: Mapping[str, str] | None = None, capability: str | None = None) -> Any:
        """A new provider ``name`` (for ``capability``, when its spec builds that one
        otherwise), configured from ``settings`` and the vendor variables."""
        return self.spec(name).build(settings, provider_env(settings, env), capability)

    def is_configured(self, name: str, settings: ProviderSettings,
                      env: Mapping[str, str] | None = None,
                      capability: str | None = None) -> bool:
        """Cheap and offline; a provider that cannot even be built counts as unconfigured.
        Providers whose capabilities need different setup may answer per capability with
        an optional ``configured_for(capability)`` method."""
        try:
            provider = self.build(name, settings, env, capability)
        except PipelineError:
            return False
        per_capability = getattr(provider, "configured_for", None)
        if capability and callable(per_capability):
            return bool(per_capability(capability))
        return bool(provider.is_configured())

    def _check_capable(self, name: str, capability: str) -> None:
        if capability not in self.spec(name).capabilities:
            raise PipelineError(
                "config", f"provider {name!r} cannot {capability}; {capability}-capable "
                f"providers: {', '.join(self.capable(capability))}")

    def _not_configured(self, capability: str, names: list[str], source: str,
                        settings: ProviderSettings, env: Mapping[str, str]) -> str:
        if len(names) == 1:
            told = f"{names[0]!r}, which is not configured ({self.spec(names[0]).hint})"
        else:
            hints = "; ".join(f"{name}: {self.spec(name).hint}" for name in names)
            told = f"{', '.join(map(repr, names))}, which are not configured ({hints})"
        ready = [n for n in self.capable(capability)
                 if self.is_configured(n, settings, env, capability)]
        return (f"{source} names {told}; configured {capability} providers: "
                f"{', '.join(ready) or 'none'}")

    def resolve(self, capability: Capability, settings: ProviderSettings,
                env: Mapping[str, str] | None = None, *,
                override: Iterable[str] | None = None) -> Resolution:
        """The failover chain for ``capability`` (see the module docstring for the rules)."""
        env = provider_env(settings, env)
        warnings: list[str] = []

        def configured(names: list[str], source: str) -> list[str]:
            chosen = [n for n in names if self.is_configured(n, settings, env, capability)]
            missing = [n for n in names if n not in chosen]
            if not chosen:  # what the user named is strict: never another vendor instead
                raise PipelineError("config", self._not_configured(
                    capability, missing, source, settings, env))
            for name in missing:
                # a value, not a log line: each surface shows it once (response warnings,
                # the batch command's stderr unless --quiet)
                warnings.append(f"{source} names {name!r} but it is not configured "
                                f"({self.spec(name).hint}); skipped")
            return chosen

        own_source = "backend argument" if override is not None else f"{capability}_backend"
        own = list(override) if override is not None else \
            list(getattr(settings, f"{capability}_backend"))
        for name in own:
            self._check_capable(name, capability)
        if own:
            return Resolution(capability, configured(own, own_source), f"{own_source} setting",
                              warnings)

        shared = list(settings.backend)
        for name in shared:
            self.spec(name)  # unknown names are errors even when the capability is missing
        shared = [n for n in shared if capability in self._specs[n].capabilities]
        if shared:
            return Resolution(capability, configured(shared, "backend"), "backend setting",
                              warnings)

        default = self.defaults[capability]
        detected: list[tuple[str, str]] = []
        for name in self.auto_detect.get(capability, ()):
            spec = self._specs.get(name)
            variable = next((v for v in spec.env if (env.get(v) or "").strip()), None) \
                if spec else None
            if variable and self.is_configured(name, settings, env, capability):
                detected.append((name, variable))
        if detected:
            chain = [name for name, _ in detected]
            if default not in chain:
                chain.append(default)
            found = ", ".join(variable for _, variable in detected)
            return Resolution(capability, chain, f"auto-detected from {found}", warnings)
        return Resolution(capability, [default], "zero-key default", warnings)


_DEFAULT_REGISTRY: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry of built-in providers (register your own on it)."""
    global _DEFAULT_REGISTRY
    if _DEFAULT_REGISTRY is None:
        _DEFAULT_REGISTRY = Registry()
    return _DEFAULT_REGISTRY
