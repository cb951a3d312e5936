"""Handler options: a typed frozen object with the settings' defaults; a dict is still taken
where a context is built (unknown names refused), and dict-style reads still work."""

import dataclasses
import pickle

import pytest

from handlers import HandlerContext, HandlerOptions
from pipeline.core.settings import Settings


def test_defaults_are_the_settings_defaults():
    options = HandlerOptions()
    settings = Settings()
    assert options.max_chars is None
    assert (options.html_extractor, options.include_comments, options.pdf_max_pages,
            options.pdf_time_limit) == (settings.html_extractor, settings.include_comments,
                                        settings.pdf_max_pages, settings.pdf_time_limit)


def test_options_are_frozen_and_survive_pickling():
    options = HandlerOptions(max_chars=500, html_extractor="readability")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_chars = 1
    ctx = HandlerContext(url="https://a.test/", options=options)
    assert pickle.loads(pickle.dumps(ctx)) == ctx


def test_a_dict_is_converted_where_the_context_is_built():
    ctx = HandlerContext(url="u", options={"include_comments": True, "max_chars": 80})
    assert ctx.options == HandlerOptions(include_comments=True, max_chars=80)
    assert dataclasses.replace(ctx, options={"pdf_max_pages": 3}).options.pdf_max_pages == 3


@pytest.mark.parametrize("build", [
    lambda given: HandlerOptions.from_mapping(given),
    lambda given: HandlerContext(url="u", options=given),
], ids=["from_mapping", "context"])
def test_an_unknown_option_is_a_clear_error(build):
    with pytest.raises(TypeError, match=r"unknown handler option\(s\): 'include_coments' "
                                        r"\(known: .*include_comments.*\)"):
        build({"include_coments": True})


def test_dict_style_reads_keep_old_handlers_working():
    options = HandlerOptions(pdf_max_pages=7)
    assert options.get("pdf_max_pages", 200) == 7 and options["pdf_max_pages"] == 7
    assert options.get("html_extractor") == "builtin"
    assert options.get("a_plugin_option", "fallback") == "fallback"
    with pytest.raises(KeyError):
        options["a_plugin_option"]


def test_the_options_are_a_read_only_mapping_as_the_old_dict_was():
    options = HandlerOptions(max_chars=80)
    # membership, copies and unpacking, as a plugin written for the dict does them
    assert "include_comments" in options and "a_plugin_option" not in options
    names = [field.name for field in dataclasses.fields(HandlerOptions)]
    assert dict(options) == {name: getattr(options, name) for name in names}
    assert dict(options)["max_chars"] == 80
    ctx = HandlerContext(url="u", options=options)
    narrower = dataclasses.replace(ctx, options={**ctx.options, "max_chars": 10})
    assert narrower.options == HandlerOptions(max_chars=10)
    assert len(options) == len(names) and list(options.keys()) == names
