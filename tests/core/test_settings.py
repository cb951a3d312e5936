import pytest

from pipeline.cli import command as cli
from pipeline.core.errors import PipelineError
from pipeline.core.settings import load_settings


def test_precedence_flags_over_env_over_file(tmp_path):
    config = tmp_path / "pipeline.toml"
    config.write_text("max_chars = 1000\nrate = 2.0\nper_host = 3\n")
    env = {"PIPELINE_MAX_CHARS": "2000", "PIPELINE_RATE": "7"}
    settings = load_settings({"max_chars": 3000, "retries": None}, env=env, config_file=config)
    assert settings.max_chars == 3000  # flag
    assert settings.rate == 7.0  # environment
    assert settings.per_host == 3  # file
    assert settings.retries == 2  # default (a None flag is "not given")


def test_list_settings_split_on_commas():
    settings = load_settings(env={"PIPELINE_ALLOW_NET": "127.0.0.1/32, 10.0.0.0/8"})
    assert settings.allow_net == ["127.0.0.1/32", "10.0.0.0/8"]


def test_invalid_values_are_config_errors_naming_the_field():
    with pytest.raises(PipelineError) as caught:
        load_settings({"max_bytes": -1}, env={})
    assert caught.value.kind == "config"
    assert "max_bytes" in caught.value.message


def test_missing_config_file_is_config_error(tmp_path):
    with pytest.raises(PipelineError) as caught:
        load_settings(env={}, config_file=tmp_path / "nope.toml")
    assert caught.value.kind == "config"


def test_headers_from_flags_environment_and_file(tmp_path):
    flags = load_settings({"headers": ["X-A: 1", "x-a: 2", "Accept-Language: fr, en"]}, env={})
    assert flags.headers == {"x-a": "2", "Accept-Language": "fr, en"}
    env = load_settings(env={"PIPELINE_HEADERS": "X-A: 1\nX-B: two, three\n"})
    assert env.headers == {"X-A": "1", "X-B": "two, three"}
    config = tmp_path / "pipeline.toml"
    config.write_text('[pipeline.headers]\n"X-From-File" = "yes"\n')
    assert load_settings(env={}, config_file=config).headers == {"X-From-File": "yes"}


@pytest.mark.parametrize("header, problem", [
    ("no colon here", "Name: value"),
    ("Bad Name: x", "header 1: invalid name before the colon"),
    ("Host: example.com", "cannot be set"),
    ("Proxy-Authorization: Basic x", "cannot be set"),
    ("If-None-Match: x", "cannot be set"),
])
def test_bad_headers_are_config_errors(header, problem):
    with pytest.raises(PipelineError) as caught:
        load_settings({"headers": [header]}, env={})
    assert caught.value.kind == "config" and problem in caught.value.message


@pytest.mark.parametrize("header", [
    "Authorization Bearer SECRET-TOKEN",  # the colon forgotten
    "Authorization Bearer SECRET-TOKEN: x",  # a colon, but after the secret
    "Cookie\tSECRET-TOKEN",
])
def test_a_mistyped_credential_header_is_never_echoed(header, capsys):
    for given in ({"headers": ["X-Fine: 1", header]}, {"headers": {"X-Fine": "1", header: "v"}}):
        with pytest.raises(PipelineError) as caught:
            load_settings(given, env={})
        assert "SECRET" not in caught.value.message and "header 2" in caught.value.message
    with pytest.raises(PipelineError) as caught:
        load_settings(env={"PIPELINE_HEADERS": f"X-Fine: 1\n{header}\n"})
    assert "SECRET" not in caught.value.message
    assert cli.main(["--sitemap", "https://a.test/s.xml", "--header", header]) == 2
    assert "SECRET" not in capsys.readouterr().err


@pytest.mark.parametrize("separator", ["\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029",
                                       "\x0b", "\x0c"])
def test_the_environments_headers_split_at_newlines_only(separator):
    """str.splitlines() also breaks at these: a header nobody wrote reached the server."""
    with pytest.raises(PipelineError) as caught:
        load_settings(env={"PIPELINE_HEADERS": f"X-One: 1{separator}X-Two: 2"})
    assert "header X-One: control character or line break" in caught.value.message
    crlf = load_settings(env={"PIPELINE_HEADERS": "X-One: 1\r\nX-Two: 2\r\n"})
    assert crlf.headers == {"X-One": "1", "X-Two": "2"}


@pytest.mark.parametrize("proxy, problem", [
    ("ftp://proxy:21", "not supported"),
    ("http://:3128", "no host"),
    ("http://proxy:notaport", "not a URL"),
])
def test_bad_proxy_urls_are_config_errors_without_credentials(proxy, problem):
    with pytest.raises(PipelineError) as caught:
        load_settings({"proxy": proxy.replace("://", "://user:hunter2@")}, env={})
    assert caught.value.kind == "config" and problem in caught.value.message
    assert "hunter2" not in caught.value.message
