"""Web search providers: Tavily, or an offline encyclopedia when there is no key or no network.

Both return ``Document``s whose metadata carries ``id`` (``web:<n>`` / ``web:<title>``) and
``source`` (the URL). Failures raise ``WebSearchError`` (never an error string posing as a
result); the graph turns that into a warning and goes on with knowledge-base documents.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from functools import cache
from importlib import resources
from typing import Any, Protocol
from urllib.parse import quote

from langchain_core.documents import Document

from crag_core.errors import ConfigError, WebSearchError
from crag_core.settings import settings


class WebSearch(Protocol):
    """What the graph needs from a web-search provider."""

    name: str

    def search(self, query: str, k: int) -> list[Document]:
        """Return up to ``k`` results as documents."""
        ...


class TavilySearch:
    """Tavily's search API through the official ``tavily-python`` client, with a timeout."""

    name = "tavily"

    def __init__(self, api_key: str, *, timeout_s: float, api_base_url: str | None = None):
        from tavily import TavilyClient

        self._client = TavilyClient(api_key=api_key, api_base_url=api_base_url)
        self._timeout_s = timeout_s

    def search(self, query: str, k: int) -> list[Document]:
        """Search Tavily; raise ``WebSearchError`` on any failure."""
        try:
            response: Any = self._client.search(
                query, max_results=k, search_depth="basic", timeout=self._timeout_s
            )
        except Exception as exc:  # the client raises its own types plus requests' errors
            raise WebSearchError(f"Tavily search failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(response, dict) or "error" in response:
            raise WebSearchError(f"Tavily returned an error: {str(response)[:200]}")
        docs = []
        for i, item in enumerate(response.get("results") or [], start=1):
            content = str(item.get("content") or "").strip()
            if not content:
                continue
            url = str(item.get("url") or "")
            metadata = {"id": f"web:{i}", "source": url, "title": item.get("title", "")}
            docs.append(Document(id=metadata["id"], page_content=content, metadata=metadata))
        return docs[:k]


_ENCYCLOPEDIA = "wikipedia-vital-articles-en.jsonl.gz"


def article_id(title: str) -> str:
    """An encyclopedia article's document id: ``web:`` and its title's words ("Łódź", not "d")."""
    return "web:" + re.sub(r"\W+", "_", title).strip("_")


class EncyclopediaSearch:
    """Offline stand-in for web search: BM25 over 10,033 Wikipedia vital-article summaries.

    Built in memory on first use (about a second) with ``bm25s``; English stop words removed.
    """

    name = "encyclopedia"

    def __init__(self) -> None:
        import bm25s

        self._bm25s = bm25s
        path = resources.files("crag_core.clients") / "resources" / _ENCYCLOPEDIA
        with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
            self.articles = [json.loads(line) for line in lines if line.strip()]
        corpus = [f"{a['title']} {a.get('description', '')} {a['text']}" for a in self.articles]
        self._index = bm25s.BM25()
        self._index.index(
            bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
        )
        self._lock = threading.Lock()

    def search(self, query: str, k: int) -> list[Document]:
        """Top ``k`` articles for ``query`` by BM25 (articles with a zero score are dropped)."""
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        with self._lock:
            ids, scores = self._index.retrieve(
                tokens, k=min(k, len(self.articles)), show_progress=False
            )
        docs = []
        for idx, score in zip(ids[0], scores[0], strict=True):
            if score <= 0:
                continue
            article = self.articles[int(idx)]
            title = article["title"]
            url = "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"))
            metadata = {
                "id": article_id(title),
                "source": url,
                "title": title,
                "score": round(float(score), 3),
            }
            docs.append(
                Document(id=metadata["id"], page_content=article["text"], metadata=metadata)
            )
        return docs


@cache
def _encyclopedia() -> EncyclopediaSearch:
    return EncyclopediaSearch()


def build_web_search(provider: str, *, timeout_s: float) -> WebSearch | None:
    """The provider named by the context's ``web_search`` (``None`` when off)."""
    env = settings()
    if provider == "off":
        return None
    if provider == "tavily" or (provider == "auto" and env.tavily_api_key):
        if env.tavily_api_key is None:
            raise ConfigError("web_search='tavily' needs TAVILY_API_KEY in the environment.")
        return TavilySearch(
            env.tavily_api_key.get_secret_value(),
            timeout_s=timeout_s,
            api_base_url=env.tavily_api_base_url or None,
        )
    return _encyclopedia()
