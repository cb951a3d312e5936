"""Field values as schemas want them, and the check that a value is on the page.

Prices are read by ``price-parser`` (``"1.299,00 €"``, ``"$24.99"``, ``"30,000원~"``) into a
decimal string; currencies become ISO 4217 codes where the sign says one; availability
becomes a schema.org ``ItemAvailability`` name. :func:`on_page` says whether a value is
written in a text: a string after whitespace and case folding, a number in any common
formatting (``1299``, ``1,299.00``, ``1.299,00``, ``1 299``).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from pipeline.core.field_schemas import AVAILABILITY

_SPACE = re.compile(r"\s+")
# A number as pages write one: digits with thousands separators and a decimal part.
_NUMBER = re.compile(r"\d{1,3}(?:[ ,.\u00a0\u202f']\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?")
_ISO = re.compile(r"[A-Z]{3}")
# Signs that name one currency (a bare "$" or "kr" names many: no code from them).
_SIGNS = {"€": "EUR", "£": "GBP", "₹": "INR", "₽": "RUB", "₩": "KRW", "원": "KRW",
          "₪": "ILS", "zł": "PLN", "zl": "PLN", "R$": "BRL", "₺": "TRY", "₴": "UAH",
          "Kč": "CZK", "Ft": "HUF", "лв": "BGN", "₫": "VND", "฿": "THB", "₱": "PHP",
          "US$": "USD", "C$": "CAD", "A$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD",
          "руб": "RUB", "грн": "UAH", "lei": "RON", "Rs": "PKR", "₦": "NGN", "元": "CNY",
          "円": "JPY", "kn": "HRK", "Kn": "HRK", "€.": "EUR", "CHF": "CHF", "Fr.": "CHF",
          "SFr.": "CHF"}
_AVAILABILITY = {name.lower(): name for name in AVAILABILITY}
# Spellings feeds and shops use beside the schema.org names.
_AVAILABILITY.update({"in stock": "InStock", "in_stock": "InStock", "instock": "InStock",
                      "available": "InStock", "out of stock": "OutOfStock",
                      "out_of_stock": "OutOfStock", "sold out": "SoldOut",
                      "sold_out": "SoldOut", "preorder": "PreOrder", "pre-order": "PreOrder",
                      "pre_order": "PreOrder", "backorder": "BackOrder",
                      "limited availability": "LimitedAvailability",
                      "discontinued": "Discontinued", "unavailable": "OutOfStock",
                      "not available": "OutOfStock"})
# The same names written with other separators or none ("in-stock", "OUT_OF_STOCK").
_SEPARATORS = re.compile(r"[\s_-]+")
_JOINED = {_SEPARATORS.sub("", key): name for key, name in _AVAILABILITY.items()}


def squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def decimal_string(amount: Decimal) -> str:
    """``Decimal("24.990")`` → ``"24.99"``; ``Decimal("49.00")`` → ``"49"``."""
    text = format(amount.normalize(), "f")
    return text


_MACHINE_NUMBER = re.compile(r"\s*\d+(?:\.\d+)?\s*")


def parse_price(raw: Any, currency_hint: str | None = None, *,
                declared: bool = False) -> tuple[str | None, str | None]:
    """(decimal string, ISO 4217 code) of a price as written or declared; (None, None) when
    it holds no positive amount. ``declared``: a value in data (JSON-LD, a meta tag, JSON),
    where a plain ``24.990`` is the decimal it spells, not a thousands separator."""
    if isinstance(raw, bool) or raw is None:
        return None, None
    if declared and isinstance(raw, str) and _MACHINE_NUMBER.fullmatch(raw):
        raw = Decimal(raw.strip())
    if isinstance(raw, int | float | Decimal):
        try:
            amount = Decimal(str(raw))
        except InvalidOperation:
            return None, None
        return (decimal_string(amount) if amount > 0 else None), currency_code(currency_hint)
    if not isinstance(raw, str) or not raw.strip():
        return None, None
    from price_parser import Price  # only pages asked for fields need it

    price = Price.fromstring(raw[:200], currency_hint=currency_hint)
    if price.amount is None or price.amount <= 0:
        return None, None
    return decimal_string(price.amount), currency_code(
        price.currency or _written_sign(raw) or currency_hint)


def _written_sign(raw: str) -> str | None:
    """A sign of :data:`_SIGNS` written as a word beside the amount, for the signs
    price-parser does not know (``"270,00 Kn"``)."""
    words = re.findall(r"[^\W\d_]+", raw)
    return next((word for word in words if word in _SIGNS), None)


def currency_code(sign: str | None) -> str | None:
    """ISO 4217 code for a code or an unambiguous sign, else None."""
    if not sign:
        return None
    sign = sign.strip()
    if _ISO.fullmatch(sign.upper()) and sign.upper() not in ("RS.",):
        return sign.upper()
    return _SIGNS.get(sign) or _SIGNS.get(sign.rstrip("."))


def availability_name(raw: Any) -> str | None:
    """A schema.org availability name for ``https://schema.org/InStock``, ``"instock"``,
    ``"in stock"``, ``"OutOfStock"``, …; None for anything else."""
    if not isinstance(raw, str):
        return None
    tail = re.split(r"[/#:]", raw.strip().rstrip("/"))[-1]
    return _AVAILABILITY.get(squash(tail)) or _AVAILABILITY.get(squash(raw)) or \
        _JOINED.get(_SEPARATORS.sub("", tail.casefold()))


@lru_cache(maxsize=64)
def numbers_in(text: str) -> frozenset[Decimal]:
    """Every number ``text`` writes, read both ways when its separators are ambiguous."""
    found: set[Decimal] = set()
    for match in _NUMBER.finditer(text[:200_000]):
        for reading in _readings(match.group()):
            found.add(reading)
    return frozenset(found)


def _readings(raw: str) -> list[Decimal]:
    raw = raw.replace("\u00a0", " ").replace("\u202f", " ").replace("'", " ")
    digits = raw.replace(" ", "")
    readings = []
    for thousands, point in ((",", "."), (".", ",")):
        candidate = digits.replace(thousands, "").replace(point, ".")
        try:
            readings.append(Decimal(candidate))
        except InvalidOperation:
            continue
    return readings


def on_page(value: Any, *texts: str) -> bool:
    """Whether ``value`` is written in one of ``texts``: a string after whitespace and case
    folding, a number in any common formatting, a list when all its items are."""
    if value is None:
        return True
    if isinstance(value, list):
        return all(on_page(item, *texts) for item in value)
    if isinstance(value, bool):
        return True  # a yes/no is read from the page, never written as such
    if isinstance(value, int | float) or (
            isinstance(value, str) and re.fullmatch(r"\d+(?:\.\d+)?", value)):
        try:
            wanted = Decimal(str(value))
        except InvalidOperation:
            return False
        return any(wanted in numbers_in(text) for text in texts if text)
    wanted_text = squash(str(value))
    return bool(wanted_text) and any(wanted_text in _folded(text) for text in texts if text)


@lru_cache(maxsize=8)
def _folded(text: str) -> str:
    """:func:`squash` of a text many values are looked for in (the page's visible text)."""
    return squash(text)
