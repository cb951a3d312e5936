"""Tool definitions for function calling, generated from the pydantic argument models.

One source of truth: the argument models the kernel validates with (``SearchArgs``,
``ExtractArgs`` in :mod:`pipeline.agent.kernel`). This module turns any such model into a clean,
self-contained JSON schema (``$ref`` resolved, no titles) and wraps it in each vendor's shape,
as plain dicts — no SDK is imported:

- ``openai_chat``      ``{"type": "function", "function": {name, description, parameters, strict}}``
- ``openai_responses`` ``{"type": "function", name, description, parameters, strict}``
- ``anthropic``        ``{name, description, input_schema}``
- ``mcp``              ``{name, description, inputSchema}``

OpenAI treats a Responses function as strict unless told otherwise, so both OpenAI shapes
always carry ``strict`` explicitly. ``strict=True`` reshapes the schema to what strict mode
accepts: every property required (optional ones made nullable — pass null for the default),
``additionalProperties: false`` on every object, no keywords it refuses (``default``, string
lengths: a length limit moves into the description).
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from pipeline.agent.rendering import encodable, error_sentence, render
from pipeline.core.errors import PipelineError, describe_validation
from pipeline.core.models import CrawlResponse, ExtractResponse, MapResponse, SearchResponse
from pipeline.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from pipeline.agent.runtime import SharedRuntime
    from pipeline.providers.registry import Registry

Flavor = Literal["openai_chat", "openai_responses", "anthropic", "mcp"]
FLAVORS: tuple[Flavor, ...] = ("openai_chat", "openai_responses", "anthropic", "mcp")

# Keywords OpenAI strict mode refuses ("... is not permitted"); a dropped length limit is
# still enforced by our own validation, and told to the model in the description.
_STRICT_UNSUPPORTED = frozenset({
    "default", "minLength", "maxLength", "minProperties", "maxProperties",
    "patternProperties", "propertyNames", "unevaluatedProperties",
})
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not")


def parameters_schema(
    model: type[BaseModel], *, strict: bool = False, exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The JSON schema of ``model``'s fields for a tool's parameters: references inlined,
    titles dropped, extra properties refused; ``exclude`` hides fields the model must not set
    (they keep their defaults). See the module docstring for ``strict``."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    raw.pop("description", None)  # the model's docstring is for developers; the tool has its own
    schema: dict[str, Any] = _clean(raw, defs, strict, depth=0)
    hidden = set(exclude)
    schema["properties"] = {
        name: sub for name, sub in schema.get("properties", {}).items() if name not in hidden
    }
    schema["required"] = [name for name in schema.get("required", []) if name not in hidden]
    if strict:
        _make_strict(schema)
    return schema


def _clean(node: Any, defs: Mapping[str, Any], strict: bool, depth: int) -> Any:
    if depth > 50:
        raise ValueError("schema nests too deeply (a recursive model cannot be inlined)")
    if isinstance(node, list):
        return [_clean(item, defs, strict, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return _clean(target, defs, strict, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs") or (strict and key in _STRICT_UNSUPPORTED):
            continue
        if key == "properties":
            out[key] = {name: _clean(sub, defs, strict, depth + 1) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS or key in _SUBSCHEMA_ONE:
            out[key] = _clean(value, defs, strict, depth + 1)
        else:
            out[key] = value
    if strict and "maxLength" in node:
        limit = f"at most {node['maxLength']} characters"
        out["description"] = f"{out['description']} ({limit})" if "description" in out else limit
    if out.get("type") == "object" and "properties" in out:
        out["additionalProperties"] = False
        if strict:
            _make_strict(out)
    return out


def _make_strict(schema: dict[str, Any]) -> None:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    for name in properties:
        if name not in required:
            properties[name] = _nullable(properties[name])
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if any(option.get("type") == "null" for option in schema.get("anyOf", [])):
        return schema
    kind = schema.get("type")
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    described = {k: v for k, v in schema.items() if k != "description"}
    wrapped: dict[str, Any] = {"anyOf": [described, {"type": "null"}]}
    if "description" in schema:
        wrapped["description"] = schema["description"]
    return wrapped


def tool_definition(
    name: str,
    description: str,
    model: type[BaseModel],
    flavor: Flavor = "openai_chat",
    *,
    strict: bool = False,
    exclude: Iterable[str] = (),
) -> dict[str, Any]:
    """One tool in ``flavor``'s shape, its parameters generated from ``model``."""
    schema = parameters_schema(model, strict=strict, exclude=exclude)
    if flavor == "openai_chat":
        function = {"name": name, "description": description, "parameters": schema}
        return {"type": "function", "function": {**function, "strict": strict}}
    if flavor == "openai_responses":
        return {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": strict,
        }
    if flavor == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    if flavor == "mcp":
        return {"name": name, "description": description, "inputSchema": schema}
    raise ValueError(f"unknown tool flavor {flavor!r}; expected one of {', '.join(FLAVORS)}")


def arguments_for(model: type[BaseModel], arguments: Mapping[str, Any] | None) -> BaseModel:
    """Validate a model's tool-call arguments: nulls mean "use the default" (strict mode
    sends every key), so they are dropped before validation."""
    given = {key: value for key, value in (arguments or {}).items() if value is not None}
    return model.model_validate(given)


Response = SearchResponse | ExtractResponse | CrawlResponse | MapResponse
# What a model's tool call carries: a mapping (Anthropic's ``input``, MCP's ``arguments``) or
# a JSON object as text (OpenAI's ``function.arguments``); None means no arguments.
ToolArguments = Mapping[str, Any] | str | None


def decode_arguments(arguments: object) -> Mapping[str, Any]:
    """A tool call's arguments as a mapping; anything but a mapping, a JSON object's text or
    None raises ``PipelineError`` (``invalid_request``)."""
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return arguments
    if not isinstance(arguments, str):
        raise PipelineError(
            "invalid_request",
            f"arguments: expected a JSON object or a mapping, got {type(arguments).__name__}",
        )
    if not arguments.strip():  # some clients send "" for a call without arguments
        return {}
    try:
        decoded = json.loads(arguments)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise PipelineError("invalid_request", f"arguments: not valid JSON ({detail})") from exc
    except RecursionError as exc:
        raise PipelineError(
            "invalid_request", "arguments: not valid JSON (nested too deeply)"
        ) from exc
    if not isinstance(decoded, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(decoded), "a number")
        raise PipelineError("invalid_request", f"arguments: expected a JSON object, got {kind}")
    return decoded


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, what the model is told, the argument model, and how to run it."""

    name: str
    description: str
    args_model: type[BaseModel]
    run: Callable[[BaseModel, Settings | None], Awaitable[Response]]
    exclude: tuple[str, ...] = ()  # fields that stay at their defaults (operator's choice)

    def definition(self, flavor: Flavor = "openai_chat", *, strict: bool = False) -> dict[str, Any]:
        """This tool in ``flavor``'s shape (see :func:`tool_definition`)."""
        return tool_definition(
            self.name, self.description, self.args_model, flavor, strict=strict,
            exclude=self.exclude,
        )

    async def call(
        self, arguments: ToolArguments, settings: Settings | None = None
    ) -> Response:
        """Validate ``arguments`` (see :func:`decode_arguments`) and run the tool; bad
        arguments raise ``PipelineError`` (``invalid_request``) naming every problem."""
        decoded = decode_arguments(arguments)
        given = {k: v for k, v in decoded.items() if k not in self.exclude}
        try:
            args = arguments_for(self.args_model, given)
        except ValidationError as exc:
            problems = describe_validation(exc, self.args_model)
            raise PipelineError("invalid_request", problems) from exc
        return await self.run(args, settings)


SEARCH_DESCRIPTION = (
    "Search the web. Returns a numbered list of results, each with title, URL and snippet. "
    "Use it to find pages, then call web_extract on the most promising URLs to read them; "
    "snippets are short and may be stale."
)
EXTRACT_DESCRIPTION = (
    "Read web pages: fetch each URL and return its main content as clean markdown (menus, "
    "ads and boilerplate removed) with its title and source URL. Content is capped at "
    "max_chars characters per page; a page that was cut says so and gives an offset — call "
    "web_extract again with the same URL and that offset to read the next part (served "
    "from cache, not fetched again). Only public http(s) URLs; a page that fails gives a "
    "one-sentence reason instead of content."
)
CRAWL_DESCRIPTION = (
    "Read a site: start at a URL, follow its links within the same site (scheme, host and "
    "port) up to max_depth link hops, and return up to max_pages pages (at most 50) as clean "
    "markdown, each with where it was found; include/exclude globs on the URL path narrow it "
    "(e.g. '/docs/**'). All pages share one character budget, so a cut page says how to read "
    "it in full with web_extract; the answer ends with the URLs skipped, by reason. Use "
    "web_map first when you only need to know which pages exist."
)
MAP_DESCRIPTION = (
    "List a site's URLs without reading them: the same discovery as web_crawl (sitemaps and "
    "links, same site, include/exclude globs), up to limit URLs with their link depth. Cheap; "
    "then call web_extract on the URLs you need."
)
# Operator choices, set by settings/flags, not by the model.
_HIDDEN = ("backend", "settings", "compress", "instruction")


def web_tools(registry: Registry | None = None, *,
              runtime: SharedRuntime | None = None) -> list[ToolSpec]:
    """The ``web_search``, ``web_extract``, ``web_crawl`` and ``web_map`` tools, running the
    library's kernel with ``registry``'s providers (default: the runtime's, else the
    process-wide registry); a :class:`~pipeline.agent.runtime.SharedRuntime` shares one
    fetcher, cache and single flight among calls."""
    registry = registry if registry is not None or runtime is None else runtime.registry
    from pipeline.agent import (
        crawl as site,  # here, not at the top: keeps `import pipeline.agent.tools` light
    )
    from pipeline.agent import (
        kernel as web,
    )

    async def search(args: BaseModel, settings: Settings | None) -> Response:
        return await web.web_search(**_fields(args), settings=settings, registry=registry)

    async def extract(args: BaseModel, settings: Settings | None) -> Response:
        fields = _fields(args)
        ceiling = (settings or load_settings()).max_chars
        # The operator's budget is a ceiling: a model may ask for less, never for more.
        fields["max_chars"] = min(fields.get("max_chars") or ceiling, ceiling)
        return await web.web_extract(**fields, settings=settings, registry=registry,
                                     runtime=runtime)

    async def crawl(args: BaseModel, settings: Settings | None) -> Response:
        fields = _fields(args)
        ceiling = (settings or load_settings()).max_chars
        fields["max_chars"] = min(fields.get("max_chars") or ceiling, ceiling)
        return await site.web_crawl(**fields, settings=settings, registry=registry)

    async def map_site(args: BaseModel, settings: Settings | None) -> Response:
        return await site.web_map(**_fields(args), settings=settings, registry=registry)

    return [
        ToolSpec("web_search", SEARCH_DESCRIPTION, web.SearchArgs, search, _hidden(web.SearchArgs)),
        ToolSpec("web_extract", EXTRACT_DESCRIPTION, web.ExtractArgs, extract,
                 _hidden(web.ExtractArgs)),
        ToolSpec("web_crawl", CRAWL_DESCRIPTION, site.CrawlArgs, crawl),
        ToolSpec("web_map", MAP_DESCRIPTION, site.MapArgs, map_site),
    ]


def _hidden(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name in _HIDDEN if name in model.model_fields)


def _fields(args: BaseModel) -> dict[str, Any]:
    """The call's keyword arguments: each field by its alias when it has one (``schema``)."""
    return {info.alias or name: getattr(args, name)
            for name, info in type(args).model_fields.items()}


def tool_definitions(
    flavor: Flavor = "openai_chat", *, strict: bool = False
) -> list[dict[str, Any]]:
    """``web_search``, ``web_extract``, ``web_crawl`` and ``web_map`` as plain-dict tool
    definitions for ``flavor``."""
    return [spec.definition(flavor, strict=strict) for spec in web_tools()]


async def answer(
    spec: ToolSpec,
    arguments: ToolArguments,
    settings: Settings | None = None,
    *,
    untrusted: bool = True,
) -> tuple[str, bool]:
    """Run one tool call: (the text for the model, whether the call failed). Invalid
    arguments and request-level errors come back as one plain sentence, never raised."""
    try:
        response = await spec.call(arguments, settings)
    except PipelineError as exc:
        return encodable(error_sentence(exc.to_info(), f"The {spec.name} call")), True
    return encodable(render(response, untrusted=untrusted)), _failed(response)


def _failed(response: Response) -> bool:
    """A call failed when the response did, or when it read no page at all."""
    if isinstance(response, ExtractResponse):
        return not response.ok or not any(record.ok for record in response.records)
    if isinstance(response, CrawlResponse):
        return not response.ok or not any(page.error is None for page in response.pages)
    return not response.ok


def unknown_tool(name: str, known: Iterable[str]) -> str:
    """The answer to a call of a tool that does not exist, naming the ones that do."""
    return f"There is no tool named {name!r}; use one of: {', '.join(known)}."


async def run_tool(
    name: str,
    arguments: ToolArguments,
    *,
    settings: Settings | None = None,
    untrusted: bool = True,
) -> str:
    """Run a tool call the model made (``web_search``, ``web_extract``, ``web_crawl``,
    ``web_map``) and return the
    text to send back; never raises for a bad call. ``arguments`` is a mapping (Anthropic's
    ``block.input``) or the JSON text OpenAI sends (``tool_call.function.arguments``);
    anything else is answered as an invalid request."""
    specs = {spec.name: spec for spec in web_tools()}
    if name not in specs:
        return unknown_tool(name, specs)
    text, _ = await answer(specs[name], arguments, settings, untrusted=untrusted)
    return text


def agent_function(
    spec: ToolSpec, *, settings: Settings | None = None, untrusted: bool = True
) -> Callable[..., Awaitable[str]]:
    """``spec`` as a plain async function returning the text for the model, for agent
    frameworks that build tools from a function's signature and docstring (OpenAI Agents
    SDK, LangChain, PydanticAI): named after the tool, one keyword parameter per argument
    field — annotated with its type, constraints and description — and a Google-style
    docstring that repeats the descriptions."""
    fields = {n: f for n, f in spec.args_model.model_fields.items() if n not in spec.exclude}
    parameters, annotations, lines = [], {}, []
    for name, info in fields.items():
        # a type built at run time from the field: no static type to check it against
        hint = Annotated[(info.annotation, *info.metadata,  # type: ignore[name-defined]
                          Field(description=info.description))]
        default = (
            inspect.Parameter.empty if info.is_required()
            else info.get_default(call_default_factory=True)
        )
        parameters.append(inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=hint
        ))
        annotations[name] = hint
        if info.description:
            lines.append(f"    {name}: {info.description}")

    async def tool(*args: Any, **kwargs: Any) -> str:
        bound = signature.bind(*args, **kwargs)
        text, _ = await answer(spec, bound.arguments, settings, untrusted=untrusted)
        return text

    signature = inspect.Signature(parameters, return_annotation=str)
    # inspect reads __signature__ first; typeshed's FunctionType does not declare it
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {**annotations, "return": str}
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description + ("\n\nArgs:\n" + "\n".join(lines) if lines else "")
    return tool


def agent_tools(
    *, settings: Settings | None = None, untrusted: bool = True
) -> list[Callable[..., Awaitable[str]]]:
    """The web tools as plain async functions for agent frameworks
    (see :func:`agent_function`)."""
    return [agent_function(s, settings=settings, untrusted=untrusted) for s in web_tools()]
