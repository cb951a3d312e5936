import json
from typing import Literal

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field

from pipeline.tools import FLAVORS, arguments_for, parameters_schema, tool_definition


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
    assert not any(isinstance(n, dict) and "default" in n for n in walk(schema))
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
