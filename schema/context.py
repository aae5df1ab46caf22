"""Runtime configuration of the CRAG graph: LangGraph's ``context_schema``.

Every field has a description (LangGraph Studio renders them as a form), a default that runs
offline, and an environment-variable fallback ``CRAG_<FIELD>`` that applies when the field is
left at its default. Pass a ``Context`` (or a dict of its fields) as ``context=`` to
``graph.invoke`` / ``graph.stream``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from langgraph.runtime import Runtime

from adapters.errors import ConfigError
from adapters.knowledge_base import RetrievalMode

WebSearchProvider = Literal["auto", "tavily", "encyclopedia", "off"]

MAX_RETRIES_LIMIT = 10
"""The largest ``max_retries`` accepted: each retry costs several LLM calls."""
MAX_CITATION_CORRECTIONS_LIMIT = 3
"""The largest ``max_citation_corrections`` accepted."""


@dataclass(kw_only=True)
class Context:
    """How one run of the CRAG graph is configured."""

    model: str = field(
        default="local",
        metadata={
            "description": (
                "Chat model as 'provider:model'. 'local' (embedded Qwen2.5-Coder-1.5B, offline), "
                "'local:qwen2.5-0.5b' (faster, smaller), 'openai:<model>' (needs OPENAI_API_KEY), "
                "or 'openai-compatible:<model>' with base_url (Ollama, vLLM, llama.cpp server)."
            )
        },
    )
    base_url: str = field(
        default="",
        metadata={
            "description": "Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1."
        },
    )
    temperature: float = field(
        default=0.0, metadata={"description": "Sampling temperature of every LLM call."}
    )
    max_tokens: int = field(
        default=384, metadata={"description": "Upper bound on tokens generated per LLM call."}
    )
    llm_timeout_s: float = field(
        default=120.0, metadata={"description": "Timeout in seconds of one LLM HTTP request."}
    )
    llm_max_retries: int = field(
        default=2,
        metadata={
            "description": "Retries (with backoff) of a failed LLM request: 5xx, 429, timeout."
        },
    )
    collection: str = field(
        default="crag", metadata={"description": "Knowledge-base (Chroma) collection to search."}
    )
    retrieval_mode: RetrievalMode = field(
        default="hybrid",
        metadata={
            "description": (
                "How the knowledge base is searched: 'dense' (MiniLM + Chroma), 'keyword' "
                "(BM25, SQLite FTS5) or 'hybrid' (both, fused by reciprocal rank, k=60)."
            )
        },
    )
    top_k: int = field(
        default=4, metadata={"description": "Documents retrieved from the knowledge base."}
    )
    min_similarity: float = field(
        default=0.3,
        metadata={
            "description": (
                "Cosine similarity below which a retrieved chunk is dropped before grading "
                "(CRAG's lower threshold: nothing above it means the retrieval was incorrect)."
            )
        },
    )
    keyword_min_similarity: float = field(
        default=0.2,
        metadata={
            "description": (
                "The floor for each query's top BM25 hit (never stricter than min_similarity): "
                "a chunk sharing the question's rarest words is kept down to this cosine "
                "similarity (0.2 to 0.3 is where keyword search finds answers the embedding "
                "scores low; see docs/benchmarks/floor.md)."
            )
        },
    )
    correct_threshold: float = field(
        default=0.5,
        metadata={
            "description": (
                "CRAG's upper threshold: the retrieval evaluator's score (P(yes) that the "
                "documents state the answer) at or above which the retrieval is 'correct' "
                "(knowledge base only). Calibrated for the embedded model in "
                "docs/benchmarks/mixed/calibration.md."
            )
        },
    )
    incorrect_threshold: float = field(
        default=0.5,
        metadata={
            "description": (
                "CRAG's lower threshold: below this score the retrieval is 'incorrect' (web "
                "only); between the two it is 'ambiguous' (knowledge base plus web). Web "
                "results, or both together, must also reach it to be answered from."
            )
        },
    )
    answer_threshold: float = field(
        default=0.0,
        metadata={
            "description": (
                "The answer check's score (P(yes) that the documents state the answer as the "
                "answer to this question) an answer needs; below it the answer is rejected. "
                "0 turns the check off (no call): with the embedded model it did not separate "
                "right from wrong answers on the calibration split (docs/benchmarks/mixed)."
            )
        },
    )
    refine: bool = field(
        default=True,
        metadata={
            "description": (
                "Knowledge refinement: split each kept document into sentences (strips), keep "
                "the ones closest to the question, and recompose them in order."
            )
        },
    )
    refine_top_strips: int = field(
        default=3,
        metadata={
            "description": (
                "Strips kept per document when refining (by cosine similarity to the question)."
            )
        },
    )
    web_search: WebSearchProvider = field(
        default="auto",
        metadata={
            "description": (
                "Web-search fallback: 'tavily' (needs TAVILY_API_KEY), 'encyclopedia' (offline, "
                "10,033 Wikipedia summaries), 'auto' (tavily if a key is set, else encyclopedia), "
                "or 'off'."
            )
        },
    )
    web_results: int = field(
        default=3, metadata={"description": "Web results added when the graph searches the web."}
    )
    web_timeout_s: float = field(
        default=15.0, metadata={"description": "Timeout in seconds of one web-search request."}
    )
    max_retries: int = field(
        default=2,
        metadata={
            "description": (
                "Retries after a failed hallucination or relevance check. When reached, the run "
                "ends with its best answer and a warning."
            )
        },
    )
    max_citation_corrections: int = field(
        default=1,
        metadata={
            "description": (
                "Times per pass the generator is sent back when its citations name no "
                "document of the run (0: unknown citations are dropped with a warning)."
            )
        },
    )
    prompt_versions: dict[str, str] = field(
        default_factory=dict,
        metadata={
            "description": (
                "Prompt version per prompt name, e.g. {'generate': 'v1'}; unnamed prompts use "
                "their latest version. Env: CRAG_PROMPT_VERSIONS='generate=v1,rewrite_query=v1'."
            )
        },
    )

    def __post_init__(self) -> None:
        """Apply ``CRAG_<FIELD>`` env fallbacks to fields left at their default, then validate."""
        for f in fields(self):
            env = os.environ.get(f"CRAG_{f.name.upper()}")
            if env is None or getattr(self, f.name) != _default(f):
                continue
            setattr(self, f.name, _parse_env(f.name, env, _default(f)))
        self._validate()

    def _validate(self) -> None:
        for name in (
            "top_k",
            "max_tokens",
            "web_results",
            "refine_top_strips",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}.")
        for name in ("min_similarity", "keyword_min_similarity"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [-1, 1], got {getattr(self, name)}.")
        for name in ("correct_threshold", "incorrect_threshold", "answer_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}.")
        if self.correct_threshold < self.incorrect_threshold:
            raise ConfigError(
                f"correct_threshold ({self.correct_threshold}) must not be below "
                f"incorrect_threshold ({self.incorrect_threshold})."
            )
        for name in ("max_retries", "llm_max_retries", "max_citation_corrections"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative, got {getattr(self, name)}.")
        for name in ("llm_timeout_s", "web_timeout_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}.")
        if self.retrieval_mode not in get_args(RetrievalMode):
            choices = ", ".join(get_args(RetrievalMode))
            raise ConfigError(
                f"retrieval_mode must be one of {choices}; got {self.retrieval_mode!r}."
            )
        if self.web_search not in get_args(WebSearchProvider):
            choices = ", ".join(get_args(WebSearchProvider))
            raise ConfigError(f"web_search must be one of {choices}; got {self.web_search!r}.")
        if self.max_citation_corrections > MAX_CITATION_CORRECTIONS_LIMIT:
            raise ConfigError(
                f"max_citation_corrections above {MAX_CITATION_CORRECTIONS_LIMIT} is refused."
            )
        if self.max_retries > MAX_RETRIES_LIMIT:
            raise ConfigError(
                f"max_retries above {MAX_RETRIES_LIMIT} is refused: each retry costs several "
                "LLM calls."
            )

    def trace_metadata(self) -> dict[str, Any]:
        """What a trace should record about this configuration (no secrets)."""
        from adapters.local_model import DEFAULT_MODEL

        provider, _, name = self.model.partition(":")
        return {
            "provider": provider,
            "model": name or (DEFAULT_MODEL if provider == "local" else "default"),
            "collection": self.collection,
            "web_search": self.web_search,
            "max_retries": self.max_retries,
        }

    def prompt_version(self, name: str) -> str | None:
        """Return the configured version of prompt ``name`` (``None``: its latest)."""
        return self.prompt_versions.get(name)


def _default(f: Any) -> Any:
    return f.default_factory() if callable(f.default_factory) else f.default


def _parse_env(name: str, raw: str, default: Any) -> Any:
    try:
        if isinstance(default, bool):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if isinstance(default, dict):
            pairs = (item.split("=", 1) for item in raw.split(",") if item.strip())
            return {k.strip(): v.strip() for k, v in pairs}
    except ValueError as exc:
        raise ConfigError(f"CRAG_{name.upper()}={raw!r} is not valid: {exc}") from exc
    return raw.strip()


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context (defaults when the caller passed none)."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return Context()
    return ctx if isinstance(ctx, Context) else Context(**ctx)
