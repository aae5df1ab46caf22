"""Web search: the real Tavily client against a loopback Tavily, and the offline encyclopedia."""

from __future__ import annotations

import time

import pytest

from crag_core.clients.web_providers import EncyclopediaSearch, TavilySearch, build_web_search
from crag_core.errors import ConfigError, WebSearchError
from tests.loopback import loopback

RESULTS = {
    "query": "q",
    "results": [
        {
            "title": "Mona Lisa",
            "url": "https://example.org/mona",
            "content": "By Leonardo.",
            "score": 0.9,
        },
        {"title": "Empty", "url": "https://example.org/empty", "content": "", "score": 0.1},
    ],
}


def test_tavily_results_become_documents_with_sources():
    with loopback(lambda m, p, b: (200, RESULTS)) as (url, requests):
        docs = TavilySearch("tvly-test", timeout_s=5, api_base_url=url).search("mona lisa", 3)
    assert [d.metadata["source"] for d in docs] == ["https://example.org/mona"]
    assert docs[0].page_content == "By Leonardo." and docs[0].metadata["id"] == "web:1"
    assert requests[0]["path"] == "/search" and requests[0]["body"]["max_results"] == 3


@pytest.mark.parametrize("status", [401, 429, 500])
def test_tavily_http_errors_raise_websearcherror(status):
    with loopback(lambda m, p, b: (status, {"detail": {"error": "nope"}})) as (url, _):
        with pytest.raises(WebSearchError):
            TavilySearch("tvly-test", timeout_s=5, api_base_url=url).search("q", 3)


def test_tavily_timeout_is_bounded():
    def slow(m, p, b):
        time.sleep(3)
        return 200, RESULTS

    with loopback(slow) as (url, _):
        started = time.monotonic()
        with pytest.raises(WebSearchError):
            TavilySearch("tvly-test", timeout_s=0.5, api_base_url=url).search("q", 3)
        assert time.monotonic() - started < 2.5


def test_provider_choice(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    assert build_web_search("off", timeout_s=1) is None
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        build_web_search("tavily", timeout_s=1)
    auto = build_web_search("auto", timeout_s=1)
    assert auto is not None and auto.name == "encyclopedia"
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    auto = build_web_search("auto", timeout_s=1)
    assert auto is not None and auto.name == "tavily"


def test_encyclopedia_finds_the_article_with_its_url():
    enc = EncyclopediaSearch()
    assert len(enc.articles) == 10033
    docs = enc.search("Who painted the Mona Lisa?", 3)
    assert docs[0].metadata["title"] == "Mona Lisa"
    assert docs[0].metadata["source"] == "https://en.wikipedia.org/wiki/Mona_Lisa"
    assert "Leonardo" in docs[0].page_content
    assert enc.search("the of and", 3) == []  # only stop words: nothing, not an error
    lodz = enc.search("Łódź city Poland textile industry", 3)
    assert "web:Łódź" in [d.metadata["id"] for d in lodz]  # ids keep letters of any script
