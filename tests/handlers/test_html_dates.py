"""``published`` / ``modified`` in ISO 8601 from every source a page uses."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.html import HTML_HANDLER
from handlers.html_dates import iso_date
from handlers.registry import HandlerContext

PARA = ("The harbour board met on Tuesday and agreed, after a long debate, to repair the old "
        "pier before the summer season, at a cost shared with the town council. ")


def metadata(head: str = "", body: str = "") -> dict:
    html = (f"<!doctype html><html><head><title>Pier repairs agreed</title>{head}</head>"
            f"<body>{body}<p>{PARA}</p><p>{PARA}</p></body></html>")
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.test/a",
                                                             format="text")).metadata


@pytest.mark.parametrize(("head", "body", "published"), [
    ('<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Pier", '
     '"datePublished": "2024-09-05T10:00:00+0200"}</script>', "", "2024-09-05T10:00:00+02:00"),
    ('<meta property="article:published_time" content="2024-09-05 08:00:00 +0000">', "",
     "2024-09-05T08:00:00+00:00"),
    ('<meta name="date" content="Sep 5, 2024">', "", "2024-09-05"),
    ("", '<time datetime="2024-09-05T10:00:00.123Z">5 September</time>',
     "2024-09-05T10:00:00+00:00"),
    ("", "<h1>Pier repairs agreed</h1><p class='byline'>By Ana Lima · Published 5 September "
     "2024</p>", "2024-09-05"),
    ("", "<p class='kicker'>Updated: Sep. 5th, 2024</p><h1>Pier repairs agreed</h1>",
     "2024-09-05"),
    ("", "<h1>Pier repairs agreed</h1><div><span>05.09.2024</span></div>", "2024-09-05"),
    ("", "<h1>Pier repairs agreed</h1><div>Posted 9/25/2024</div>", "2024-09-25"),
    ("", "<h1>Pier repairs agreed</h1><div>Posted 2024-09-25 14:00</div>", "2024-09-25"),
    ("", "<h1>Pier repairs agreed</h1><div>Publicado em 5 de setembro de 2024</div>",
     "2024-09-05"),
])
def test_published_in_each_source_form(head, body, published):
    assert metadata(head, body)["published"] == published


def test_modified_is_normalised_and_unreadable_dates_are_left_out():
    meta = metadata('<meta property="article:modified_time" content="2024-09-06T07:30Z">'
                    '<meta property="article:published_time" content="last week">')
    assert meta["modified"] == "2024-09-06T07:30:00+00:00"
    assert "published" not in meta


def test_an_ambiguous_or_far_away_date_is_not_a_dateline():
    assert "published" not in metadata(body="<h1>Pier repairs agreed</h1><p>Meeting 05/09/2024"
                                            "</p>")  # day or month first: unknown
    far = f"<h1>Pier repairs agreed</h1><p>{PARA * 5}</p><p>Next meeting Oct 1, 2024</p>"
    assert "published" not in metadata(body=far)


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31)),
       st.sampled_from(["%Y-%m-%d", "%B %d, %Y", "%b %d %Y", "%d %B %Y", "%d.%m.%Y",
                        "%Y/%m/%d"]))
def test_any_written_date_reads_back_as_the_same_day(day, form):
    assert iso_date(f"Published {day.strftime(form)} by the desk") == day.isoformat()
    assert iso_date(day.strftime(form)) == day.isoformat()


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 1, 1)),
       st.integers(min_value=-12, max_value=14))
def test_timestamps_keep_their_offset(moment, hours):
    stamp = moment.replace(microsecond=0, tzinfo=timezone(timedelta(hours=hours)))
    assert iso_date(stamp.isoformat()) == stamp.isoformat()
    assert iso_date(stamp.strftime("%Y-%m-%dT%H:%M:%S%z")) == stamp.isoformat()
