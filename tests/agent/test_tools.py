import json
from typing import Literal

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field

from pipeline.agent.tools import FLAVORS, arguments_for, parameters_schema, tool_definition


class Window(BaseModel):
    start: int = Field(0, ge=0, description="first character")
    title: str | None = Field(None, description="a property literally named title")


class StandIn(BaseModel):
    """A stand-in for the kernel's argument models."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="what to look for", min_length=1)
    limit: int = Field(5, ge=1, le=20, description="rows, 1-20")
    period: Literal["day", "week"] | None = Field(None, description="recency filter")
    sites: list[str] = Field(default_factory=list, description="domains to keep")
    window: Window | None = Field(None, description="a nested model")
    secret: str = Field("x", description="not for models")


def walk(node):
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def objects(schema):
    return [n for n in walk(schema) if isinstance(n, dict) and n.get("type") == "object"]


def test_schema_is_self_contained_and_described():
    schema = parameters_schema(StandIn, exclude=["secret"])
    assert "description" not in schema  # the docstring is for developers, not the model
    text = json.dumps(schema)
    assert not any(isinstance(n, dict) and ("$ref" in n or "$defs" in n) for n in walk(schema))
    assert "\"$ref\"" not in text
    assert "secret" not in schema["properties"]
    assert schema["required"] == ["query"]
    assert schema["properties"]["limit"] == {
        "type": "integer", "minimum": 1, "maximum": 20, "default": 5, "description": "rows, 1-20",
    }
    assert all(obj["additionalProperties"] is False for obj in objects(schema))
    # only the schema keyword "title" goes; a property named title stays
    window = schema["properties"]["window"]["anyOf"][0]
    assert "title" in window["properties"] and "title" not in window
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"query": "x", "window": {"start": 3}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x", "bogus": 1}, schema)


def test_strict_schema_follows_openai_rules():
    schema = parameters_schema(StandIn, strict=True, exclude=["secret"])
    for obj in objects(schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    refused = {"default", "minLength", "maxLength"}
    assert not any(isinstance(n, dict) and refused & set(n) for n in walk(schema))
    # every optional field accepts null, meaning "use the default"
    nulls = dict.fromkeys(["limit", "period", "sites", "window"])
    jsonschema.validate({"query": "x", **nulls}, schema)
    args = arguments_for(StandIn, {"query": "x", **nulls})
    assert args.limit == 5 and args.sites == [] and args.secret == "x"


def test_vendor_shapes():
    shapes = {f: tool_definition("find", "Find things.", StandIn, f) for f in FLAVORS}
    chat = shapes["openai_chat"]
    assert chat["type"] == "function" and set(chat["function"]) == {
        "name", "description", "parameters", "strict",
    }
    assert chat["function"]["strict"] is False
    responses = shapes["openai_responses"]
    assert set(responses) == {"type", "name", "description", "parameters", "strict"}
    assert responses["strict"] is False  # Responses defaults to strict when the key is absent
    assert set(shapes["anthropic"]) == {"name", "description", "input_schema"}
    assert set(shapes["mcp"]) == {"name", "description", "inputSchema"}
    schemas = [
        chat["function"]["parameters"], responses["parameters"],
        shapes["anthropic"]["input_schema"], shapes["mcp"]["inputSchema"],
    ]
    assert all(s == schemas[0] for s in schemas)
    json.dumps(shapes)  # plain data, no SDK objects
    with pytest.raises(ValueError, match="unknown tool flavor"):
        tool_definition("find", "Find things.", StandIn, "gemini")  # type: ignore[arg-type]


def test_arguments_for_rejects_bad_arguments():
    with pytest.raises(ValueError):
        arguments_for(StandIn, {"query": "x", "limit": 500})
    with pytest.raises(ValueError):
        arguments_for(StandIn, {"query": "x", "unknown": 1})


async def run_stand_in(args, settings):
    from pipeline.core.models import SearchResponse, SearchResult

    rows = [SearchResult(title=args.query, url="https://r.test/", position=1)]
    return SearchResponse(ok=True, query=args.query, provider=str(settings.max_chars), results=rows)


def stand_in_function():
    from pipeline.agent.tools import ToolSpec, agent_function
    from pipeline.core.settings import Settings

    spec = ToolSpec("find", "Find things.", StandIn, run_stand_in, exclude=("secret",))
    return agent_function(spec, settings=Settings(max_chars=777), untrusted=False)


def test_agent_function_signature_is_what_frameworks_read():
    import inspect
    import typing

    from pydantic import create_model

    fn = stand_in_function()
    assert fn.__name__ == "find" and inspect.iscoroutinefunction(fn)
    assert fn.__doc__.startswith("Find things.") and "    limit: rows, 1-20" in fn.__doc__
    signature = inspect.signature(fn)
    assert list(signature.parameters) == ["query", "limit", "period", "sites", "window"]
    assert signature.parameters["limit"].default == 5
    assert signature.parameters["query"].default is inspect.Parameter.empty
    # what OpenAI Agents SDK / PydanticAI / LangChain do: a pydantic model from the signature
    hints = typing.get_type_hints(fn, include_extras=True)
    fields = {
        name: (hints[name], ... if p.default is p.empty else p.default)
        for name, p in signature.parameters.items()
    }
    schema = create_model("FindArgs", **fields).model_json_schema()
    assert schema["required"] == ["query"]
    limit = schema["properties"]["limit"]
    assert (limit["maximum"], limit["minimum"], limit["description"]) == (20, 1, "rows, 1-20")
    assert schema["properties"]["query"]["minLength"] == 1


async def test_agent_function_runs_and_never_raises_for_bad_arguments():
    fn = stand_in_function()
    text = await fn("herons", limit=2)
    assert text.startswith('Results for "herons" (via 777):')  # settings reached the tool
    bad = await fn(query="x", limit=99)
    assert bad == "The find call failed: the request was invalid (limit must be at most 20)."


async def test_tool_arguments_may_be_a_json_string_as_openai_sends_them():
    fn_spec = stand_in_spec()
    from pipeline.agent.tools import answer

    as_mapping = await answer(fn_spec, {"query": "herons", "limit": 2}, untrusted=False)
    as_json = await answer(fn_spec, '{"query": "herons", "limit": 2}', untrusted=False)
    assert as_json == as_mapping and as_json[1] is False


@pytest.mark.parametrize("arguments, problem", [
    (42, "arguments: expected a JSON object or a mapping, got int"),
    (["query", "x"], "arguments: expected a JSON object or a mapping, got list"),
    (b'{"query": "x"}', "arguments: expected a JSON object or a mapping, got bytes"),
    ("[1, 2]", "arguments: expected a JSON object, got an array"),
    ("null", "arguments: expected a JSON object, got null"),
    ('{"query": ', "arguments: not valid JSON (Expecting value at line 1 column 11)"),
    ("[" * 100_000, "arguments: not valid JSON (nested too deeply)"),
])
async def test_run_tool_answers_any_other_arguments_with_invalid_request(arguments, problem):
    from pipeline.agent.tools import run_tool

    for name in ("web_search", "web_extract"):  # rejected before anything is fetched
        text = await run_tool(name, arguments)
        assert text == f"The {name} call failed: the request was invalid ({problem})."


def stand_in_spec():
    from pipeline.agent.tools import ToolSpec

    return ToolSpec("find", "Find things.", StandIn, run_stand_in_default)


async def run_stand_in_default(args, settings):
    from pipeline.core.settings import Settings

    return await run_stand_in(args, settings or Settings(max_chars=50))
