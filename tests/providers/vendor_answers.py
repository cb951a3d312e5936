"""Vendor answers shaped like the documented ones, shared by the provider tests."""

DDG_PAGE = """<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a"
      href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;u3=x">Buy now</a></h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?x">Sponsored</a>
  </div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a"
      href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fx%3D1%26y%3D2&amp;rut=abc"
      >Example <b>A</b></a></h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="//duckduckgo.com/l/?uddg=x">example.com/a</a></div></div>
    <a class="result__snippet" href="#">First <b>result</b> snippet.</a>
  </div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a"
      href="https://docs.example.org/b">Direct B</a></h2>
    <a class="result__snippet" href="#">Second.</a>
  </div></div>
</div></body></html>"""

DDG_EMPTY = """<html><body><div id="links" class="results">
<div class="no-results">No results found for <b>zzqx</b>.</div></div></body></html>"""


BRAVE_ANSWER = {
    "type": "search",
    "query": {"original": "rust async"},
    "web": {"type": "search", "results": [
        {"title": "Async in Rust", "url": "https://rust-lang.org/async",
         "description": "The <strong>async</strong> book.", "age": "2 days ago",
         "page_age": "2024-05-01T10:00:00", "type": "search_result"},
        {"title": "Tokio", "url": "https://tokio.rs/", "description": "Runtime."},
    ]},
}

SEARX_ANSWER = {
    "query": "open source", "number_of_results": 0,
    "results": [
        {"url": "https://opensource.org/", "title": "Open Source Initiative",
         "content": "The steward of the OSD.", "engine": "duckduckgo",
         "engines": ["duckduckgo", "brave"], "score": 4.0, "category": "general",
         "publishedDate": None},
        {"url": "https://en.wikipedia.org/wiki/Open_source", "title": "Open source",
         "content": "Wikipedia article.", "engine": "wikipedia", "score": 1.5,
         "publishedDate": "2024-01-02T00:00:00"},
    ],
    "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
    "unresponsive_engines": [],
}
