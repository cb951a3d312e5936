"""Settings slices: every field a slice names is a field of the settings, and a part takes
any object with its slice's fields, not only the whole settings."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from pipeline.core import slices
from pipeline.core.settings import Settings
from pipeline.store.paging import text_identity

SLICES = [cls for _, cls in inspect.getmembers(slices, inspect.isclass)
          if cls.__module__ == slices.__name__]


def fields_of(protocol: type) -> set[str]:
    return {name for klass in protocol.__mro__ if klass.__module__ == slices.__name__
            for name, member in vars(klass).items() if isinstance(member, property)}


@pytest.mark.parametrize("protocol", SLICES, ids=lambda cls: cls.__name__)
def test_a_slice_names_fields_of_the_settings(protocol):
    named = fields_of(protocol)
    assert named and named <= set(Settings.model_fields)


def test_a_part_takes_its_slice_alone():
    settings = Settings(pdf_max_pages=7, render="auto")
    names = fields_of(slices.TextSettings)
    TextOnly = dataclasses.make_dataclass(
        "TextOnly", sorted(names), frozen=True)
    only = TextOnly(**{name: getattr(settings, name) for name in names})
    assert text_identity(only, ["native"]) == text_identity(settings, ["native"])
