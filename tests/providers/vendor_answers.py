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

# Brave: an answer without results has no "web" key at all; errors are "ErrorResponse"s.
BRAVE_NO_RESULTS = {"type": "search",
                    "query": {"original": "zzqx", "more_results_available": False},
                    "mixed": {"type": "mixed", "main": [], "top": [], "side": []}}
BRAVE_RATE_LIMITED = {"type": "ErrorResponse", "error": {
    "id": "c6d2e3a1", "status": 429, "code": "RATE_LIMITED",
    "detail": "Request rate limit exceeded for plan.",
    "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2}}, "time": 1732300000}

# Tavily (docs.tavily.com/documentation/api-reference/endpoint/search, .../extract)
TAVILY_SEARCH = {
    "query": "who is Leo Messi?", "answer": None, "images": [], "follow_up_questions": None,
    "results": [
        {"title": "Lionel Messi - Wikipedia", "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
         "content": "Lionel Andrés Messi is an Argentine footballer.", "score": 0.81,
         "raw_content": None, "favicon": "https://en.wikipedia.org/favicon.ico"},
        {"title": "Messi news", "url": "https://news.example.com/messi",
         "content": "Latest.", "score": 0.5, "published_date": "Mon, 01 Jan 2024 10:00:00 GMT"},
    ],
    "response_time": "1.67", "request_id": "123e4567-e89b-12d3-a456-426614174111"}
TAVILY_EXTRACT = {
    "results": [{"url": "https://en.wikipedia.org/wiki/Artificial_intelligence",
                 "raw_content": "# Artificial intelligence\n\nAI is intelligence of machines.",
                 "images": [], "favicon": None}],
    "failed_results": [{"url": "https://unreachable.example/", "error": "Failed to fetch url"}],
    "response_time": 0.02, "request_id": "123e4567-e89b-12d3-a456-426614174111"}
TAVILY_UNAUTHORIZED = {"detail": {"error": "Unauthorized: missing or invalid API key."}}
TAVILY_PLAN_LIMIT = {"detail": {"error": "This request exceeds your plan's set usage limit. "
                                         "Please upgrade your plan or contact support@tavily.com"}}

# Exa (exa.ai/docs/reference/search, .../get-contents, changelog "contents endpoint status")
EXA_SEARCH = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95", "resolvedSearchType": "neural",
    "results": [{"title": "A Comprehensive Overview of Large Language Models",
                 "url": "https://arxiv.org/pdf/2307.06435.pdf",
                 "publishedDate": "2023-11-16T01:36:32.547Z", "author": "Humza Naveed",
                 "id": "https://arxiv.org/abs/2307.06435", "image": None, "favicon": None,
                 "score": 0.4421, "text": "Large Language Models (LLMs) have recently..."}],
    "searchType": "auto", "costDollars": {"total": 0.005}}
EXA_CONTENTS = {
    "requestId": "e492118ccdedcba5088bfc4357a8a125",
    "results": [{"id": "https://arxiv.org/abs/2307.06435", "url": "https://arxiv.org/abs/2307.06435",
                 "title": "A Comprehensive Overview of Large Language Models",
                 "author": "Humza Naveed", "publishedDate": "2023-11-16T01:36:32.547Z",
                 "text": "Abstract Large Language Models (LLMs) have recently demonstrated..."}],
    "statuses": [{"id": "https://arxiv.org/abs/2307.06435", "status": "success"},
                 {"id": "https://gone.example/", "status": "error",
                  "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}}],
    "costDollars": {"total": 0.001}}
EXA_NO_CREDITS = {"requestId": "r9", "error": "Account credits exhausted", "tag": "NO_MORE_CREDITS"}

# Firecrawl (docs.firecrawl.dev, api-reference v2-openapi.json: /search, /scrape)
FIRECRAWL_SEARCH_V2 = {"success": True, "data": {
    "web": [{"url": "https://www.firecrawl.dev/", "title": "Firecrawl", "position": 1,
             "description": "The web crawling, scraping, and search API for AI."}],
    "images": [{"title": "Quickstart", "imageUrl": "https://docs.firecrawl.dev/logo.png",
                "imageWidth": 5814, "imageHeight": 1200, "url": "https://docs.firecrawl.dev/",
                "position": 1}],
    "news": [{"title": "Firecrawl raises", "snippet": "News.", "url": "https://news.example/fc",
              "date": "2 days ago", "position": 1}]},
    "warning": None, "id": "search-1", "creditsUsed": 2}
FIRECRAWL_SEARCH_V1 = {"success": True, "data": [
    {"url": "https://www.firecrawl.dev/", "title": "Firecrawl",
     "description": "The web crawling, scraping, and search API for AI."}]}
FIRECRAWL_SCRAPE = {"success": True, "data": {
    "markdown": "# Example Domain\n\nThis domain is for use in documentation examples.",
    "metadata": {"title": ["Example Domain", "Example"], "description": "An example.",
                 "language": ["en"], "sourceURL": "https://example.com",
                 "url": "https://example.com/", "statusCode": 200,
                 "contentType": "text/html; charset=utf-8", "error": None}}}
FIRECRAWL_SCRAPE_404 = {"success": True, "data": {"markdown": "Not Found", "metadata": {
    "sourceURL": "https://example.com/missing", "statusCode": 404,
    "error": "Not Found"}}}
FIRECRAWL_FAILED = {"success": False, "code": "UNKNOWN_ERROR",
                    "error": "An unexpected error occurred on the server."}

# Jina (docs.jina.ai meta-prompt: r.jina.ai / s.jina.ai with Accept: application/json)
JINA_READ = {"code": 200, "status": 20000, "data": {
    "title": "Example Domain", "description": "", "url": "https://example.com/",
    "content": "This domain is for use in illustrative examples in documents.",
    "publishedTime": "2024-02-02T00:00:00Z", "usage": {"tokens": 42}},
    "meta": {"usage": {"tokens": 42}}}
JINA_SEARCH = {"code": 200, "status": 20000, "data": [
    {"title": "Jina AI - Search Foundation", "url": "https://jina.ai/",
     "description": "Best-in-class embeddings, rerankers, web reader.", "content": "",
     "usage": {"tokens": 1000}}], "meta": {"usage": {"tokens": 1000}}}
JINA_NO_RESULTS = {"data": None, "code": 422, "name": "AssertionFailureError", "status": 42206,
                   "message": "No search results available for query zzqx",
                   "readableMessage": "AssertionFailureError: No search results available"}
JINA_UNAUTHORIZED = {"data": None, "code": 401, "name": "AuthenticationFailedError",
                     "status": 40103, "message": "Invalid API key, please get a new one from "
                     "https://jina.ai", "readableMessage": "AuthenticationFailedError: Invalid key"}
JINA_READ_TEXT = {"code": 200, "status": 20000, "data": {  # X-Return-Format: text
    "title": "Example Domain", "description": "", "url": "https://example.com/",
    "text": "Example Domain\nThis domain is for use in illustrative examples.",
    "publishedTime": None, "usage": {"tokens": 20}}}
