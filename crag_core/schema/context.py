"""Runtime configuration of the CRAG graph: LangGraph's ``context_schema``.

Every field has a description (LangGraph Studio renders them as a form), a default that runs
offline, and an environment-variable fallback ``CRAG_<FIELD>`` that applies when the field is
left at its default. Pass a ``Context`` (or a dict of its fields) as ``context=`` to
``graph.invoke`` / ``graph.stream``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Annotated, Any, Literal, get_type_hints

from langgraph.runtime import Runtime
from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, ValidationError

import prompts
from crag_core.errors import ConfigError
from crag_core.text.documents import RetrievalMode
from crag_core.text.filters import parse_where

WebSearchProvider = Literal["auto", "tavily", "encyclopedia", "off"]
Planner = Literal["rules", "loop", "auto"]
LightGrey = Literal["model", "ambiguous"]

MAX_RETRIES_LIMIT = 10
"""The largest ``max_retries`` accepted: each retry costs several LLM calls."""
MAX_CITATION_CORRECTIONS_LIMIT = 3
"""The largest ``max_citation_corrections`` accepted."""
MAX_TOOL_CALLS_LIMIT = 8
"""The largest ``max_tool_calls`` accepted: each call is a model step."""
MAX_SUBQUESTIONS_LIMIT = 5
"""The largest ``max_subquestions`` accepted: each part costs a pass."""

AtLeastOne = Annotated[int, Field(ge=1)]
NonNegative = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Similarity = Annotated[float, Field(ge=-1.0, le=1.0)]


def _readable_filter(value: str) -> str:
    """``value`` if it parses as a metadata filter (the error names what is wrong)."""
    try:
        parse_where(value)
    except ConfigError as exc:
        raise ValueError(str(exc)) from exc
    return value


def _known_prompts(value: dict[str, str]) -> dict[str, str]:
    """``value`` if every name is a prompt and every version one of its versions."""
    if not value:
        return value  # nothing to look up (and no file to read)
    known = prompts.names()
    for name, version in value.items():
        if name not in known:
            raise ValueError(f"no prompt named {name!r}; known: {', '.join(known)}")
        if version not in (have := prompts.versions(name)):
            raise ValueError(
                f"prompt {name!r} has no version {version!r}; versions: {', '.join(have)}"
            )
    return value


def _pairs(value: Any) -> Any:
    """``"generate=v1, rewrite_query=v1"`` (the env form) as a dict; anything else unchanged."""
    if isinstance(value, str):
        pairs = (item.split("=", 1) for item in value.split(",") if item.strip())
        return {k.strip(): v.strip() for k, v in pairs}
    return value


@dataclass(frozen=True)
class Caller:
    """What an API caller may do with a setting (the operator, on the CLI or in Python, sets any).

    Every field of ``Context`` declares one in its metadata (``caller``); a field that declares
    none is the operator's alone, so a new setting is closed to callers until it says otherwise
    (``crag.policy`` applies them when an API run is created).
    """

    may_set: bool = False
    """Whether a caller may choose the field's value; when not, it may only send the server's."""
    why: str = "it is the server operator's to choose"
    """Why a caller may not (the refusal names it)."""
    at_most: int | None = None
    """The most a caller may ask (or the server's own value, if higher); None: no bound."""
    not_below_server: bool = False
    """Whether the caller may raise the value above the server's but not lower it."""


def operator_only(why: str) -> Caller:
    """A setting only the server's operator chooses, and why."""
    return Caller(why=why)


def caller_up_to(bound: int) -> Caller:
    """A setting an API caller may set up to ``bound`` (or the server's value, if higher)."""
    return Caller(may_set=True, at_most=bound)


CALLER = Caller(may_set=True)
"""A setting an API caller may set to any value it validates to."""
CALLER_RAISES = Caller(may_set=True, not_below_server=True)
"""A setting an API caller may raise above the server's value, not lower (``cache_threshold``:
a low one would serve another question's stored answer)."""


@dataclass(kw_only=True)
class Context:
    """How one run of the CRAG graph is configured."""

    model: str = field(
        default="local",
        metadata={
            "caller": operator_only(
                "it chooses where questions and documents are sent, with which key"
            ),
            "description": (
                "Chat model as 'provider:model'. 'local' (embedded Qwen2.5-Coder-1.5B, offline), "
                "'local:qwen2.5-0.5b' (faster, smaller), 'openai:<model>' (needs OPENAI_API_KEY), "
                "or 'openai-compatible:<model>' with base_url (Ollama, vLLM, llama.cpp server)."
            ),
        },
    )
    grader_model: str = field(
        default="",
        metadata={
            "caller": operator_only(
                "it chooses where questions and documents are sent, with which key"
            ),
            "description": (
                "Model of the graders and checks (retrieval evaluator, grounding and answer "
                "checks), written like model; empty: the same model as everything else. The "
                "thresholds below were calibrated for the embedded 1.5B grading "
                "(docs/benchmarks/tiering/README.md measures the 0.5B as grader)."
            ),
        },
    )
    base_url: str = field(
        default="",
        metadata={
            "caller": operator_only("it chooses which server the model's calls go to"),
            "description": (
                "Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1; several, "
                "comma-separated, are one pool (calls spread by prompt prefix, a dead server "
                "skipped). With model 'local': the embedded model served by `crag model-server`."
            ),
        },
    )
    temperature: float = field(
        default=0.0,
        metadata={"caller": CALLER, "description": "Sampling temperature of every LLM call."},
    )
    max_tokens: AtLeastOne = field(
        default=384,
        metadata={
            "caller": caller_up_to(1024),
            "description": "Upper bound on tokens generated per LLM call.",
        },
    )
    llm_timeout_s: Positive = field(
        default=120.0,
        metadata={
            "caller": operator_only("it sets how long one call may hold a worker"),
            "description": "Timeout in seconds of one LLM HTTP request.",
        },
    )
    llm_max_retries: NonNegative = field(
        default=2,
        metadata={
            "caller": operator_only("it sets how often a failed call is repeated"),
            "description": "Retries (with backoff) of a failed LLM request: 5xx, 429, timeout.",
        },
    )
    collection: str = field(
        default="crag",
        metadata={"caller": CALLER, "description": "Knowledge-base (Chroma) collection to search."},
    )
    retrieval_mode: RetrievalMode = field(
        default="hybrid",
        metadata={
            "caller": CALLER,
            "description": (
                "How the knowledge base is searched: 'dense' (MiniLM + Chroma), 'keyword' "
                "(BM25, SQLite FTS5) or 'hybrid' (both, fused by reciprocal rank, k=60)."
            ),
        },
    )
    where: Annotated[str, AfterValidator(_readable_filter)] = field(
        default="",
        metadata={
            "caller": CALLER,
            "description": (
                "Search only chunks whose metadata match, e.g. 'type=pdf' or "
                "'source=/docs/a.pdf,modified>=2026-01-01' (keys: source, type, title, doc_id, "
                "heading, page, modified, ingested). A filter that matches nothing is an error."
            ),
        },
    )
    top_k: AtLeastOne = field(
        default=4,
        metadata={
            "caller": caller_up_to(20),
            "description": "Documents retrieved from the knowledge base.",
        },
    )
    tools: bool = field(
        default=True,
        metadata={
            "caller": CALLER,
            "description": (
                "Answer questions about the collection from its catalog and table questions by "
                "SQL over its tables (choose_tool); off: every question searches the text."
            ),
        },
    )
    planner: Planner = field(
        default="rules",
        metadata={
            "caller": CALLER,
            "description": (
                "Who chooses what a question reads. rules: choose_tool's rules pick one tool "
                "(catalog, table, whole document or text search) before anything is read. "
                "loop: the model picks a tool, sees what it returned and goes on (search, "
                "read_around, read_document, list_documents, query_table, column_values, "
                "web_search) until it answers or a budget ends it. auto: the rules, and the "
                "loop for a table question no query of theirs answered, or one naming a "
                "table's rows the text did not answer (a described question's steps first)."
            ),
        },
    )
    max_tool_calls: Annotated[int, Field(ge=1, le=MAX_TOOL_CALLS_LIMIT)] = field(
        default=4,
        metadata={
            "caller": caller_up_to(6),
            "description": (
                "Tool calls the loop makes at most before it must answer from what it read."
            ),
        },
    )
    loop_tokens: Annotated[int, Field(ge=200)] = field(
        default=3000,
        metadata={
            "caller": caller_up_to(6000),
            "description": (
                "Tokens of documents and results the loop reads at most (characters / 4); "
                "past it the loop must answer. Leaves room in the embedded model's 8,192 "
                "tokens for the instructions, the steps and the answer."
            ),
        },
    )
    loop_seconds: Positive = field(
        default=90.0,
        metadata={
            "caller": caller_up_to(120),
            "description": (
                "Seconds the loop may take from its first step: no round (a model step and "
                "its tool) begins that would end past it at the pace of the rounds so far; "
                "then it must answer."
            ),
        },
    )
    read_around: bool = field(
        default=False,
        metadata={
            "caller": CALLER,
            "description": (
                "Complete a retrieved chunk's sentence cut at its end or start from the "
                "neighbouring chunk of its document (only that sentence is added). Off by "
                "default: on SQuAD-100 it gained nothing (F1 47.3 on vs 49.8 off) for 5% more "
                "prompt tokens."
            ),
        },
    )
    context_tokens: Annotated[int, Field(ge=200)] = field(
        default=6000,
        metadata={
            "caller": caller_up_to(6000),
            "description": (
                "Token budget of the documents in any one prompt (estimated as characters / 4): "
                "documents are kept best first while they fit, the next one is cut at a "
                "sentence. The default leaves room in the embedded model's 8,192-token window "
                "for the instructions, question and answer."
            ),
        },
    )
    min_similarity: Similarity = field(
        default=0.3,
        metadata={
            "caller": CALLER,
            "description": (
                "Cosine similarity below which a retrieved chunk is dropped before grading "
                "(CRAG's lower threshold: nothing above it means the retrieval was incorrect)."
            ),
        },
    )
    keyword_min_similarity: Similarity = field(
        default=0.2,
        metadata={
            "caller": CALLER,
            "description": (
                "The floor for each query's top BM25 hit (never stricter than min_similarity): "
                "a chunk sharing the question's rarest words is kept down to this cosine "
                "similarity (0.2 to 0.3 is where keyword search finds answers the embedding "
                "scores low; see docs/benchmarks/floor.md)."
            ),
        },
    )
    correct_threshold: Probability = field(
        default=0.6,
        metadata={
            "caller": CALLER,
            "description": (
                "CRAG's upper threshold: the retrieval evaluator's score (P(yes) that the "
                "documents state the answer) at or above which the retrieval is 'correct' "
                "(knowledge base only). The three thresholds were calibrated together for the "
                "embedded model: docs/benchmarks/mixed/README.md."
            ),
        },
    )
    incorrect_threshold: Probability = field(
        default=0.4,
        metadata={
            "caller": CALLER,
            "description": (
                "CRAG's lower threshold: below this score the retrieval is 'incorrect' (the "
                "knowledge-base documents are dropped and the web alone is searched); between "
                "the two it is 'ambiguous' (knowledge base plus web)."
            ),
        },
    )
    evidence_threshold: Probability = field(
        default=0.45,
        metadata={
            "caller": CALLER,
            "description": (
                "After a web search, the score the evidence (web results, plus the knowledge-"
                "base documents when ambiguous) needs to be answered from; below it the reply "
                "is 'I don't know' without asking the generator."
            ),
        },
    )
    kb_fallback: bool = field(
        default=True,
        metadata={
            "caller": CALLER,
            "description": (
                "When the evidence of an ambiguous retrieval (knowledge base plus web) scores "
                "under evidence_threshold and under the knowledge base's own score, answer from "
                "the knowledge-base documents alone instead of saying 'I don't know'."
            ),
        },
    )
    light_correct: Probability = field(
        default=0.6,
        metadata={
            "caller": CALLER,
            "description": (
                "The light retrieval evaluator's score (P(a chunk states the answer), from the "
                "encoder and the question's words, no model call) at or above which the "
                "documents state the answer without the model grading them; under "
                "light_incorrect they do not; in between the model grades as before (its "
                "thresholds above). Chosen on the calibration split: "
                "docs/benchmarks/light-evaluator. light_correct 1.0 with light_incorrect 0.0 "
                "has the model grade everything."
            ),
        },
    )
    light_incorrect: Probability = field(
        default=0.05,
        metadata={
            "caller": CALLER,
            "description": (
                "The light retrieval evaluator's score under which the documents do not state "
                "the answer (knowledge base: 'incorrect', the web is searched; evidence with "
                "web results: not answered from) without a model call."
            ),
        },
    )
    light_grey: LightGrey = field(
        default="model",
        metadata={
            "caller": CALLER,
            "description": (
                "What a light score between light_incorrect and light_correct leads to. "
                "model: the model grades the documents (one call reading them; its "
                "thresholds above decide). ambiguous: no model call, as the CRAG paper's "
                "evaluator: the knowledge base's documents are ambiguous (kept, and the web "
                "searched), and evidence with web results is answered from."
            ),
        },
    )
    answer_threshold: Probability = field(
        default=0.0,
        metadata={
            "caller": CALLER,
            "description": (
                "The answer check's score (P(yes) that the documents state the answer as the "
                "answer to this question) an answer needs; below it the answer is rejected. "
                "0 (the default) turns the check off (no call): on the calibration split "
                "(docs/benchmarks/mixed) it refused more knowledge-base answers than "
                "unanswerable ones once the split held 140 knowledge-base questions."
            ),
        },
    )
    min_confidence: Probability = field(
        default=0.4,
        metadata={
            "caller": CALLER,
            "description": (
                "An answer whose confidence (P(right), fitted on the calibration split: "
                "docs/benchmarks/confidence) is below this is not given: the reply is 'I don't "
                "know' and a warning keeps the guess. 0.4 was chosen on the calibration split "
                "by a rule fixed before any test run (best truthfulness); 0 gives every answer "
                "that passed its checks. Tables', catalogs' and summaries' answers carry their "
                "own, fitted leaving a source out (a table answer's on the judge's verdict of "
                "its query: on 98 never-tuned table answers at 0.4, 10 of 97 given wrong, AUC "
                "0.79, docs/benchmarks/sql-judge; on two never-tuned folders at 0.4, before "
                "that refit: 10 of 118 answers given wrong, 6 of 80 table answers, 2 of 20 text "
                "answers, 2 of 6 summaries, 0 of 12 catalog answers; on the catalog's own "
                "never-tuned folders 4 of 41; docs/benchmarks/heldout, docs/benchmarks/catalog)."
            ),
        },
    )
    refine: bool = field(
        default=True,
        metadata={
            "caller": CALLER,
            "description": (
                "Knowledge refinement of web results: split each into sentences (strips), keep "
                "the ones closest to the question, and recompose them in order. "
                "Knowledge-base chunks stay whole."
            ),
        },
    )
    refine_top_strips: AtLeastOne = field(
        default=3,
        metadata={
            "caller": caller_up_to(10),
            "description": (
                "Strips kept per web result when refining (by cosine similarity to the question)."
            ),
        },
    )
    web_search: WebSearchProvider = field(
        default="auto",
        metadata={
            "caller": operator_only("it chooses the search provider and the key it is called with"),
            "description": (
                "Web-search fallback: 'tavily' (needs TAVILY_API_KEY), 'encyclopedia' (offline, "
                "10,033 Wikipedia summaries), 'auto' (tavily if a key is set, else encyclopedia), "
                "or 'off'."
            ),
        },
    )
    web_results: AtLeastOne = field(
        default=3,
        metadata={
            "caller": caller_up_to(10),
            "description": "Web results added when the graph searches the web.",
        },
    )
    web_timeout_s: Positive = field(
        default=15.0,
        metadata={
            "caller": operator_only("it sets how long one search may hold a worker"),
            "description": "Timeout in seconds of one web-search request.",
        },
    )
    max_retries: Annotated[int, Field(ge=0, le=MAX_RETRIES_LIMIT)] = field(
        default=1,
        metadata={
            "caller": caller_up_to(3),
            "description": (
                "Retries after a failed hallucination or relevance check. When reached, the run "
                "ends with its best answer and a warning. 1: on the calibration split every run "
                "that took a second retry ended 'I don't know' after 9-13 calls."
            ),
        },
    )
    max_citation_corrections: Annotated[int, Field(ge=0, le=MAX_CITATION_CORRECTIONS_LIMIT)] = (
        field(
            default=1,
            metadata={
                "caller": caller_up_to(2),
                "description": (
                    "Times per pass the generator is sent back when its citations name no "
                    "document of the run (0: unknown citations are dropped with a warning)."
                ),
            },
        )
    )
    answer_seconds: Positive = field(
        default=180.0,
        metadata={
            "caller": caller_up_to(300),
            "description": (
                "Seconds a question may take from its first step: no model call outlasts "
                "them (a reply they cut is lost, and a warning names the step); no retry (of "
                "a pass, or of a table's query), no asking of a described question in its "
                "steps and no next step of a chain begins that would end past them at the "
                "pace so far, and no answer is "
                "sent back for its citations past them; the best checked answer so far is "
                "given. 180: over the 243 mixed calibration questions the slowest took 138 s."
            ),
        },
    )
    max_subquestions: Annotated[int, Field(ge=1, le=MAX_SUBQUESTIONS_LIMIT)] = field(
        default=3,
        metadata={
            "caller": caller_up_to(3),
            "description": (
                "Most parts a question with several is split into, each answered by its own "
                "pass (independent parts in parallel, dependent ones in order, as are the two "
                "look-ups of a nested question); a question with more is answered as one. 1: "
                "never split."
            ),
        },
    )
    history_threshold: Probability = field(
        default=1.0,
        metadata={
            "caller": CALLER,
            "description": (
                "P(yes) the judge must give that an earlier turn's answer already answers a "
                "follow-up on its topic for it to be answered from the thread, with no "
                "retrieval. 1 (the default): no judge call, only a follow-up that repeats an "
                "earlier question is answered from the thread (the embedded 1.5B's judge scored "
                "about 0.5 whatever the follow-up: docs/benchmarks/routing.md); try 0.5-0.7 "
                "with a stronger model."
            ),
        },
    )
    answer_cache: bool = field(
        default=True,
        metadata={
            "caller": CALLER,
            "description": (
                "Reuse the stored answer of an equal or nearly equal question asked before on "
                "the same collection version with the same settings (no LLM call)."
            ),
        },
    )
    cache_threshold: Probability = field(
        default=0.95,
        metadata={
            "caller": CALLER_RAISES,
            "description": (
                "Cosine similarity (MiniLM) a question needs to a stored one to reuse its "
                "answer; measured in docs/benchmarks/cache.md."
            ),
        },
    )
    prompt_versions: Annotated[
        dict[str, str], BeforeValidator(_pairs), AfterValidator(_known_prompts)
    ] = field(
        default_factory=dict,
        metadata={
            "caller": operator_only("it chooses which prompt files the server reads"),
            "description": (
                "Prompt version per prompt name, e.g. {'generate': 'v4'}; unnamed prompts use "
                "their latest version. Env: CRAG_PROMPT_VERSIONS='generate=v4,rewrite_query=v1'."
            ),
        },
    )

    def __post_init__(self) -> None:
        """Apply ``CRAG_<FIELD>`` env fallbacks to fields left at their default, then validate.

        Each field's type carries its constraints; pydantic checks (and coerces) every value.
        """
        for f in fields(self):
            value, source = getattr(self, f.name), f.name
            env = os.environ.get(f"CRAG_{f.name.upper()}")
            if env is not None and value == _default(f):
                value, source = env.strip(), f"CRAG_{f.name.upper()}"
            try:
                setattr(self, f.name, _adapter(f.name).validate_python(value))
            except ValidationError as exc:
                raise ConfigError(_message(source, value, exc)) from exc
        if self.light_correct < self.light_incorrect:
            raise ConfigError(
                f"light_correct ({self.light_correct}) must not be below "
                f"light_incorrect ({self.light_incorrect})."
            )
        if self.correct_threshold < self.incorrect_threshold:
            raise ConfigError(
                f"correct_threshold ({self.correct_threshold}) must not be below "
                f"incorrect_threshold ({self.incorrect_threshold})."
            )

    def trace_metadata(self) -> dict[str, Any]:
        """What a trace should record about this configuration (no secrets)."""
        from crag_core.runtime.local_model import DEFAULT_MODEL

        provider, _, name = self.model.partition(":")
        return {
            "provider": provider,
            "model": name or (DEFAULT_MODEL if provider == "local" else "default"),
            "grader_model": self.grader_model or self.model,
            "collection": self.collection,
            "web_search": self.web_search,
            "max_retries": self.max_retries,
        }

    def answer_key(self) -> str:
        """A short hash of what an answer depends on besides the question and collection.

        The settings that shape it and the version of every prompt.
        """
        ignored = {"collection", "answer_cache", "cache_threshold", "prompt_versions"}
        ignored |= {"max_subquestions"}  # a part's answer is a single question's
        ignored |= {"llm_timeout_s", "llm_max_retries", "web_timeout_s"}
        settings = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ignored}
        versions = {n: prompts.load(n, self.prompt_version(n)).version for n in prompts.names()}
        blob = json.dumps([settings, versions], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def prompt_version(self, name: str) -> str | None:
        """Return the configured version of prompt ``name`` (``None``: its latest)."""
        return self.prompt_versions.get(name)


def validated(name: str, value: Any) -> Any:
    """``value`` as field ``name`` takes it (coerced), else ``ConfigError`` naming the field."""
    try:
        return _adapter(name).validate_python(value)
    except ValidationError as exc:
        raise ConfigError(_message(name, value, exc)) from exc


FIELD_NAMES = frozenset(f.name for f in fields(Context))
"""The context's fields."""


def caller_rule(name: str) -> Caller:
    """What an API caller may do with field ``name``: its declaration, else operator-only."""
    (found,) = [f for f in fields(Context) if f.name == name]
    rule = found.metadata.get("caller")
    return rule if isinstance(rule, Caller) else Caller()


def _default(f: Any) -> Any:
    return f.default_factory() if callable(f.default_factory) else f.default


def _message(source: str, value: Any, exc: ValidationError) -> str:
    """One line naming the setting, what it must be, and what it got."""
    error = exc.errors()[0]
    if error["type"] == "literal_error":
        return f"{source} must be one of {error['ctx']['expected']}; got {value!r}."
    if error["type"] == "value_error":  # our own validator's words
        return f"{source}={value!r} is not valid: {str(error['ctx']['error']).rstrip('.')}."
    return f"{source}={value!r} is not valid: {error['msg'].lower()}."


@cache
def _adapter(name: str) -> TypeAdapter[Any]:
    """The validator of field ``name``: its annotated type."""
    return TypeAdapter(get_type_hints(Context, include_extras=True)[name])


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context: the defaults when the caller passed none.

    LangGraph itself turns a ``context={...}`` dict into a ``Context`` before nodes run.
    """
    ctx = getattr(runtime, "context", None)
    return ctx if isinstance(ctx, Context) else Context()
