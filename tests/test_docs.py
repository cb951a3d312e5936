"""README and docs/ name only flags that exist, extras that exist, and the test command CI runs.

A flag removed or renamed in the code fails here until the documentation follows."""

import os
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS = ("", "search", "backends", "mcp", "merge", "crawl", "map")  # "": the batch command
FLAG = re.compile(r"(?<![\w/-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
COMMAND_LINE = re.compile(r"python -m pipeline\b(?P<rest>.*)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
EXTRA = re.compile(r"\[(?P<extras>[a-z,]+)\]'")  # '.[pdf,mcp]'


@cache
def help_flags(command: str) -> frozenset[str]:
    """The flags ``python -m pipeline [command] --help`` lists (run as a user would)."""
    argv = [sys.executable, "-m", "pipeline", *([command] if command else []), "--help"]
    env = {**os.environ, "COLUMNS": "1000"}  # unwrapped: no flag split at a line's end
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return frozenset(FLAG.findall(done.stdout))


def doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", DOCS, ids=doc_id)
def test_every_flag_a_page_names_is_in_some_commands_help(path):
    known = frozenset().union(*(help_flags(command) for command in COMMANDS))
    unknown = sorted(set(FLAG.findall(path.read_text(encoding="utf-8"))) - known)
    assert not unknown, f"{doc_id(path)} names flags no command has: {unknown}"


@pytest.mark.parametrize("path", DOCS, ids=doc_id)
def test_command_lines_in_code_blocks_use_their_commands_flags(path):
    problems = []
    for block in FENCE.findall(path.read_text(encoding="utf-8")):
        for line in block.splitlines():
            found = COMMAND_LINE.search(line.split("#", 1)[0])
            if found is None:
                continue
            words = found["rest"].split()
            command = words[0] if words and words[0] in COMMANDS else ""
            wrong = set(FLAG.findall(found["rest"])) - help_flags(command)
            if wrong:
                problems.append(f"{line.strip()!r}: {sorted(wrong)} not in its --help")
    assert not problems, "\n".join(problems)


def test_every_flag_is_documented():
    """The batch command's full table is docs/batch.md; the other commands' flags are named
    somewhere in README or docs/."""
    def named(paths):
        return {flag for path in paths for flag in FLAG.findall(path.read_text(encoding="utf-8"))}

    missing = {"batch (docs/batch.md)": help_flags("") - named([ROOT / "docs" / "batch.md"])}
    missing.update({command: help_flags(command) - named(DOCS) for command in COMMANDS[1:]})
    missing = {command: sorted(flags - {"--help"}) for command, flags in missing.items()}
    assert not any(missing.values()), f"flags no page documents: {missing}"


def test_every_extra_the_docs_name_exists():
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                   ["optional-dependencies"])
    named = {extra for path in DOCS for found in EXTRA.finditer(path.read_text(encoding="utf-8"))
             for extra in found["extras"].split(",")}
    assert named, "no pip install line with extras found"
    assert named <= declared, f"unknown extras: {sorted(named - declared)}"


def test_readme_opens_with_the_test_command_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "python -m pytest" in [line.strip() for line in ci]
    first_block = FENCE.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert first_block is not None
    commands = [line.split("#", 1)[0].strip() for line in first_block[1].splitlines()]
    assert "python -m pytest" in commands
    assert any(c.startswith("python -m pipeline ") for c in commands)


PIP_INSTALL = re.compile(r"^\s*(?:python -m )?pip install (?P<args>[^#\n]*)", re.M)


def test_ci_installs_exactly_the_readmes_install_line():
    """CI installs what the README's first install line does, nothing more (a wider install
    in CI hid a test that needed a package the README's line lacks); the line makes a venv
    first, as a new user must."""
    first_block = FENCE.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert first_block is not None
    readme = [found["args"].split() for found in PIP_INSTALL.finditer(first_block[1])]
    assert len(readme) == 1, "the README's first block: one install line"
    assert "python3 -m venv .venv" in first_block[1]
    ci = [[word for word in found["args"].split() if word != "--quiet"]
          for found in PIP_INSTALL.finditer((ROOT / ".ci" / "run").read_text())]
    assert ci == readme, f".ci/run installs {ci}, the README {readme}"


def test_where_the_readme_shows_parquet_output_it_says_it_is_a_directory():
    """``-o x.parquet`` writes a directory of part files (tests/batch/output check it): a
    reader of the README must not expect one file."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    shown = [n for n, line in enumerate(lines) if re.search(r"\.parquet\b", line, re.I)]
    assert shown
    silent = [lines[n] for n in shown if "directory" not in " ".join(lines[n:n + 2])]
    assert not silent, silent


LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces '-'."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            for title in HEADING.findall(text)}


@pytest.mark.parametrize("path", [*DOCS, ROOT / "benchmarks" / "README.md"], ids=doc_id)
def test_local_links_reach_a_file_and_heading(path):
    broken = []
    for found in LINK.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        target = found["target"]
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists() or (
            anchor and linked.suffix == ".md" and anchor not in anchors(linked)
        ):
            broken.append(target)
    assert not broken, f"{doc_id(path)}: broken links {broken}"


CODE_PATH = re.compile(r"`(?P<path>(?:pipeline|handlers|benchmarks|tests)/[\w/.]*)`")
DOTTED = re.compile(r"`(?P<name>(?:pipeline|handlers)(?:\.\w+)+)")
# Dotted names that are not Python objects: TOML tables and the handlers' entry-point group.
NOT_OBJECTS = {"pipeline.provider_env", "pipeline.headers", "pipeline.handlers"}


def resolves(name: str) -> bool:
    """``name`` is a module, or an attribute reached from the longest importable module."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("path", [*DOCS, ROOT / "benchmarks" / "README.md"], ids=doc_id)
def test_code_the_docs_name_exists(path):
    """Every ``pipeline/…`` path and ``pipeline.…`` name a page gives in backticks is there."""
    text = path.read_text(encoding="utf-8")
    missing = [found["path"] for found in CODE_PATH.finditer(text)
               if not (ROOT / found["path"]).exists()]
    missing += [found["name"] for found in DOTTED.finditer(text)
                if found["name"] not in NOT_OBJECTS and not resolves(found["name"])]
    assert not missing, f"{doc_id(path)} names code that does not exist: {sorted(set(missing))}"


def test_architecture_maps_every_package_folder():
    """docs/architecture.md's folder table names each package folder, and only those."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    mapped = set(re.findall(r"^\| `((?:pipeline|handlers)[\w/]*/)` \|", text, re.M))
    folders = {f"{init.parent.relative_to(ROOT)}/"
               for base in ("pipeline", "handlers") for init in (ROOT / base).glob("*/__init__.py")}
    folders.add("handlers/")
    assert mapped == folders, (
        f"not mapped: {sorted(folders - mapped)}; gone: {sorted(mapped - folders)}")


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    following = re.search(r"^#{1,3} ", text[start + len(title) + 2:], re.M)
    return text[start:start + len(title) + 2 + following.start()] if following else text[start:]


def test_readmes_install_section_agrees_with_its_top():
    """The top installs `[test]`; the Install section another set: it says how they relate,
    and the top's extra gives everything the section's does."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    top = EXTRA.findall(FENCE.search((ROOT / "README.md").read_text(encoding="utf-8"))[1])
    section = _readme_section("## Install")
    assert top == ["test"] and "'.[test]'" in section
    for extra in {e for found in EXTRA.findall(section) for e in found.split(",")}:
        assert set(extras[extra]) <= set(extras["test"]), extra


def test_the_mcp_client_configuration_names_the_venvs_interpreter():
    import json

    section = _readme_section("### MCP server")
    [config] = [json.loads(block) for block in FENCE.findall(section)]
    command = config["mcpServers"]["web"]["command"]
    assert command.startswith("/") and command.endswith("/.venv/bin/python")
    assert "print(sys.executable)" in section  # how to find it


def test_the_library_limits_are_documented_as_the_code_has_them():
    from pipeline.agent.kernel import MAX_EXTRACT_URLS
    from pipeline.core.settings import MIN_MAX_CHARS

    library = " ".join((ROOT / "docs" / "library.md").read_text(encoding="utf-8").split())
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for text in (library, readme):
        assert f"at most {MAX_EXTRACT_URLS} URLs" in text
        assert f"`max_chars` is at least {MIN_MAX_CHARS}" in text
