"""The Python floor pyproject.toml declares is the one the linter targets and the tests run on."""

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

PYPROJECT = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())


def floor() -> tuple[int, int]:
    (spec,) = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert spec.operator == ">=", "requires-python is a plain floor: >=X.Y"
    major, minor = spec.version.split(".")[:2]
    return int(major), int(minor)


def test_ruff_targets_the_declared_floor():
    major, minor = floor()
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py{major}{minor}"


def test_the_tests_run_on_a_supported_interpreter():
    assert sys.version_info[:2] >= floor()


def test_no_dependency_is_a_shim_for_pythons_below_the_floor():
    """A marker no supported Python satisfies (``python_version < '3.11'``) is dead weight."""
    major, minor = floor()
    supported = [f"{major}.{later}" for later in range(minor, minor + 20)]
    project = PYPROJECT["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines.extend(extra)
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or "python_version" not in str(requirement.marker):
            continue
        marker = requirement.marker
        assert any(marker.evaluate({"python_version": v}) for v in supported), line
