"""The loop's tools: each retrieval capability as a LangChain tool, typed and described.

``toolbox(services, ctx, evidence)`` builds them for one step of a question's loop over the
clients of its run. Each tool says what it is for and what it is not for (the model reads the
description), takes typed arguments (pydantic), and returns its observation text and the
documents it read (``response_format="content_and_artifact"``): the loop numbers those
documents ``S1``, ``S2``… as it goes, and its answer may cite only them.

Every tool runs the same code as the rules' plan: ``search`` the knowledge base's hybrid
search and floor (``nodes.correction`` reads it the same way, through ``Retriever.search``),
``query_table`` a SELECT through the table store's authorizer, row limit and time budget and
through ``table_query.run_query``'s checks (whose findings come back as the observation, so
the model can act on them), ``list_documents`` the catalog the catalog plan reads,
``read_document`` the chunks the document plan reads, ``web_search`` the configured provider.
A tool's failure is an observation ("no table named …"), never an exception out of the loop.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.documents import Document
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from crag_core.clients.services import Services
from crag_core.errors import CragError, TableQueryError
from crag_core.schema.context import Context
from crag_core.text.documents import above_floor, body, doc_id, doc_source
from crag_core.text.read_around import estimate_tokens, neighbour, within_budget
from crag_core.text.sources import document_name
from crag_core.text.sql import format_cell
from crag_core.text.table_checks import refused_for_good
from crag_core.text.table_shapes import QueryResult, TableInfo
from crag_core.text.whole_document import joined
from crag_core.text.words import content_words, normalize, stem, words_of
from nodes.shared.answers import FINDINGS
from nodes.tools.query_table import table_answer
from nodes.tools.table_graph import ask_tables, judged, measured
from nodes.tools.table_keys import keys_returned, tables_asked
from nodes.tools.table_query import Attempted, run_query

Observation = tuple[str, list[Document]]
"""What a tool returns: the text the model reads, and the documents it may cite."""

SHOWN_ROWS = 20
"""Rows of a query's result the model sees (the count of all of them is said)."""
SHOWN_VALUES = 40
"""Distinct values ``column_values`` lists at most."""
DOCUMENT_TOKENS = 1500
"""Tokens of a document ``read_document`` returns (from its start)."""
LISTED_DOCUMENTS = 40
"""Documents ``list_documents`` names at most."""
ANSWERS = "answers"
"""A query result's metadata: the table's answer to the user's whole question, when it
passed (``query_table.table_answer``'s update)."""


class SearchArgs(BaseModel):
    """search's arguments."""

    query: str = Field(description="What to look for, in words the text would use.", max_length=300)
    file: str = Field(
        default="",
        description="Only this file (its name as list_documents gives it).",
        max_length=200,
    )
    kind: str = Field(
        default="", description="Only files of this type, e.g. pdf, md, html.", max_length=20
    )


class AroundArgs(BaseModel):
    """read_around's arguments."""

    key: str = Field(description="The key of a passage already read, e.g. S2.", max_length=8)


class DocumentArgs(BaseModel):
    """read_document's arguments."""

    file: str = Field(description="The file's name as list_documents gives it.", max_length=200)


class TableArgs(BaseModel):
    """query_table's arguments."""

    question: str = Field(
        description="What to compute from the tables, as a question naming columns and values.",
        max_length=300,
    )
    sql: str = Field(
        default="",
        description="Optional: one SQLite SELECT over the listed tables to run as written.",
        max_length=2000,
    )


class ValuesArgs(BaseModel):
    """column_values's arguments."""

    table: str = Field(description="A table's name.", max_length=120)
    column: str = Field(description="One of its columns.", max_length=120)


class ListArgs(BaseModel):
    """list_documents's arguments."""

    kind: str = Field(
        default="", description="Only files of this type, e.g. csv, pdf.", max_length=20
    )


class WebArgs(BaseModel):
    """web_search's arguments."""

    query: str = Field(description="What to look up on the web.", max_length=300)


@dataclass
class Toolbox:
    """The tools of one loop step over one run's clients, and what they have read so far."""

    services: Services
    ctx: Context
    question: str
    evidence: Sequence[Document]
    """The documents the loop has read, in the order of their keys (S1 first)."""
    rules_sql: str = ""
    """The last query the rules' table plan wrote for this question in this pass (``planner``
    ``auto``, after it did not answer): the loop's query of the same question runs it again
    (no model call) instead of writing the same SQL from the same prompt anew."""
    deadline: float | None = None
    """When the question's time ends (``common.deadline``): a query's retry is not begun
    that would end past it (``table_graph.Asked.deadline``)."""

    def search(self, query: str, file: str = "", kind: str = "") -> Observation:
        """Search the collection's text (hybrid: meaning and keywords) for passages.

        For facts stated in prose: who, what, when, why. Optional: only one file, or one type
        of file. Example: search(query='<the thing asked about> <what is asked of it>'). Not for
        computing over table rows (query_table) nor for which files exist (list_documents).
        """
        where: dict[str, object] = {}
        if file:
            found = self._document(file)
            if found is None:
                return self._unknown_file(file), []
            where = {"doc_id": str(found["doc_id"])}
        if kind:
            kinds: dict[str, object] = {"type": kind.lower().lstrip(".")}
            where = {"$and": [where, kinds]} if where else kinds
        hits = self.services.retriever.search(query, self.ctx.top_k, where or None)
        read = self._read_ids()
        fresh = above_floor(
            [hits], self.ctx.min_similarity, self.ctx.keyword_min_similarity, read
        )  # the retrieve node's floor: one rule for the rules' search and the loop's
        if not hits:
            return "Nothing found.", []
        if not fresh:
            new = any(doc_id(d) not in read for d in hits)
            why = "none close enough to the query" if new else "only passages already read"
            return f"Nothing new found ({why}).", []
        return f"{len(fresh)} passages found.", within_budget(fresh, self.ctx.context_tokens // 3)

    def read_around(self, key: str) -> Observation:
        """Read the passages just before and after a passage already read, by its key.

        For a hit whose sentence is cut or whose answer is nearby. Example:
        read_around(key='S<n>'). Not for new searches.
        """
        index = _key_index(key, len(self.evidence))
        if index is None:
            return f"No passage has the key {key!r}; the keys are S1 to S{len(self.evidence)}.", []
        doc = self.evidence[index]
        chunk, owner = doc.metadata.get("chunk"), doc.metadata.get("doc_id")
        if not isinstance(chunk, int) or not owner:
            return f"{key.upper()} is not a passage of a file (nothing is beside it).", []
        ids = [n for step in (-1, 1) if (n := neighbour(doc, step))]
        beside = [
            d for d in self.services.retriever.chunks(ids) if doc_id(d) not in self._read_ids()
        ]
        if not beside:
            return f"Nothing new is beside {key.upper()}.", []
        return f"The passages before and after {key.upper()}.", beside

    def read_document(self, file: str) -> Observation:
        """Read one file from its beginning (up to about 1,500 tokens).

        For a summary of a file or what a short note says. Example:
        read_document(file='<file name>'). Not for finding a fact across files (search).
        """
        found = self._document(file)
        if found is None or self.services.document_chunks is None:
            return self._unknown_file(file), []
        chunks = self.services.document_chunks(str(found["doc_id"]))
        if not chunks:
            return f"{file} has no text.", []
        text = joined([body(c) for c in chunks])
        whole = Document(
            page_content=text,
            id=str(found["doc_id"]),
            metadata={**chunks[0].metadata, "id": str(found["doc_id"]), "chunk": None},
        )
        (read,) = within_budget([whole], DOCUMENT_TOKENS)
        said = "all of it" if len(read.page_content) >= len(text) else "its beginning"
        return f"{document_name(found)}: {said}.", [read]

    def list_documents(self, kind: str = "") -> Observation:
        """List the collection's files: name, type, date modified.

        For which files exist, how many, of which type, changed when. Not for what they say.
        """
        docs = self.services.documents() if self.services.documents else []
        if kind:
            docs = [d for d in docs if str(d.get("type", "")).lower() == kind.lower().lstrip(".")]
        if not docs:
            return "No document" + (f" of type {kind}." if kind else "s in the collection."), []
        lines = [
            f"{document_name(d)} (type {d.get('type') or '?'}, "
            f"modified {str(d.get('modified'))[:10]})"
            for d in sorted(docs, key=document_name)[:LISTED_DOCUMENTS]
        ]
        more = len(docs) - LISTED_DOCUMENTS
        text = "\n".join(lines) + (f"\n(and {more} more)" if more > 0 else "")
        listing = Document(
            page_content=f"The collection holds {len(docs)} documents:\n{text}",
            id="catalog",
            metadata={"id": "catalog", "source": "the collection's catalog"},
        )
        return f"{len(docs)} documents.", [listing]

    def query_table(self, question: str, sql: str = "") -> Observation:
        """Answer a question from the collection's tables (listed in the instructions).

        SQL is written for it, run and checked, and you see the rows. For counts, sums,
        averages, rankings, lists of rows, values in a row. Ask in the tables' words, one thing
        at a time. Example: query_table(question='<the question, or the part of it the tables
        answer>'). A problem the checks find comes back to you. Not for prose.
        """
        store = self.services.tables
        if store is None:
            return "The collection has no tables.", []
        asked = self.question if restates(question, self.question) else question
        if not sql and asked == self.question and self.rules_sql:
            sql = self.rules_sql  # the rules wrote it for this very question, told why
        tried: Attempted | None
        whole = self._answers_all(question)  # only the whole question's answer is judged
        try:
            catalog = store.catalog()
            tables = catalog if sql else tables_asked(asked, catalog, store)
            if sql:
                ran = run_query(store, sql, catalog, catalog, asked)
                tried = Attempted(1, *ran, {})  # the model's
                if whole:
                    tried = judged(self.services, self.ctx, asked, tried, catalog)
            else:
                tried = self._ask_tables(asked, tables, catalog, judge=whole)
        except CragError as exc:
            return f"The tables could not be read: {exc}", []
        if tried is None:
            return _NO_TABLE, []
        if tried.result is None:
            why = f"{tried.reason}{_holders(tried.reason, tried.sql, catalog)}"
            return FAILED.format(sql=tried.sql, why=why), []
        read = [t for t in catalog if t.name in tried.result.tables]
        try:  # a key returned as the answer is refused for good, as the rules refuse it
            keyed = keys_returned(store, tried.sql, read, catalog)
        except CragError:
            keyed = {}
        said = f"False premise: {tried.answer}" if tried.premise else _rows(tried.result)
        if tried.answer and not tried.premise:
            said += f"\nThe rows answer: {tried.answer}"
        whole = whole and tried.passed
        given = table_answer(self.ctx, self.question, tried, tables, catalog) if whole else {}
        if (
            tried.answer
            and not tried.premise
            and all(  # the user's words count too: "artist 1", asked as "artist one"
                refused_for_good(q, tried.sql, tried.result, catalog, keyed)
                for q in {asked, self.question}
            )
        ):
            return REFUSED.format(sql=tried.sql, why=tried.reason, rows=said), []
        faults = tried.reason if asked == self.question else ""  # the user's, not a step's
        found = [_result_document(tried.sql, said, read, dict(given), faults)]
        if tried.reason:  # feedback, not a veto: the model asks again or answers knowing it
            return (
                f"The query ran, but a check found: {tried.reason}. Write the SQL yourself "
                "(query_table's sql), fixed as the check says (column_values lists what a "
                "column holds), or use another tool.",
                found,
            )
        return "The query's result:", found

    def _ask_tables(
        self, question: str, tables: list[TableInfo], catalog: list[TableInfo], judge: bool
    ) -> Attempted | None:
        """The tables' answer to ``question``: the first query that passes, else the last.

        ``judge``: whether a query that passed is judged (the answer to the whole question).
        """
        store = self.services.tables
        assert store is not None
        if not tables:
            return None
        ranges, schema = measured(store, tables, question)
        tried = ask_tables(
            self.services,
            self.ctx,
            {},
            question,
            tables,
            catalog,
            ranges,
            schema,
            judge,
            self.deadline,
        )
        return tried[-1]

    def column_values(self, table: str, column: str) -> Observation:
        """List the values a table's column holds (most frequent first).

        For spelling a value as the table does before filtering on it. Example:
        column_values(table='<table>', column='<column>'). Not an answer by itself.
        """
        store = self.services.tables
        if store is None:
            return "The collection has no tables.", []
        try:
            info = next((t for t in store.catalog() if t.name == table.lower()), None)
            named = info and next(
                (c for c in info.columns if column.lower() in (c.name, c.original.lower())), None
            )
            if info is None or named is None:
                return f"No column {column!r} in a table {table!r}.", []
            result = store.query(
                f'SELECT "{named.name}", COUNT(*) FROM "{info.name}" GROUP BY 1 '
                f"ORDER BY 2 DESC, 1 LIMIT {SHOWN_VALUES + 1}",
                max_rows=SHOWN_VALUES + 1,
            )
        except (CragError, TableQueryError) as exc:
            return f"The values could not be read: {exc}", []
        values = [format_cell(row[0]) for row in result.rows[:SHOWN_VALUES]]
        more = " (and more)" if len(result.rows) > SHOWN_VALUES else ""
        return f"{info.name}.{named.name} holds: " + "; ".join(values) + more, []

    def web_search(self, query: str) -> Observation:
        """Search the web.

        Only for what the collection does not hold, after searching it. Not for the
        collection's own files.
        """
        if self.services.web_search is None:
            return "Web search is off.", []
        try:
            found = self.services.web_search.search(query, self.ctx.web_results)
        except CragError as exc:
            return f"The web search failed: {exc}", []
        return f"{len(found)} web results.", within_budget(found, self.ctx.context_tokens // 3)

    def _answers_all(self, asked: str) -> bool:
        """Whether a query of ``asked`` answers the user's whole question.

        ``asked`` must name all the question names (a narrower rewording, or a first step of
        two, does not), and what it names besides must come from what the loop has read (a
        name found in the text), not be a condition the model added.
        """
        if not covers(asked, self.question):
            return False
        said = {stem(w) for w in content_words(self.question)}
        read = {stem(w) for d in self.evidence for w in content_words(d.page_content)}
        return all(stem(w) in said or stem(w) in read for w in content_words(asked))

    def _read_ids(self) -> set[str]:
        return {doc_id(d) for d in self.evidence}

    def _document(self, file: str) -> dict[str, object] | None:
        wanted = normalize(file)
        docs = self.services.documents() if self.services.documents else []
        return next((d for d in docs if normalize(document_name(d)) == wanted), None) or next(
            (d for d in docs if wanted and wanted in normalize(document_name(d))), None
        )

    def _unknown_file(self, file: str) -> str:
        return f"No document is called {file!r}; list_documents names them."


FAILED = "The query {sql!r} failed: {why}."
"""query_table's reply to a query that did not run (``failed_sql`` reads its query back)."""
REFUSED = (
    "The query {sql!r} read these rows, but a check refused its answer for good: {why}.\n"
    "{rows}\nWrite the SQL yourself (query_table's sql), fixed as the check says, or use "
    "another tool."
)
"""query_table's reply to a query whose answer a ``FOR_GOOD`` check refused: its rows are
seen, not given as a document an answer could cite (``failed_sql`` reads its query back)."""
_FAILED = re.compile(r"The query ('.*'|\".*\") (?:failed: |read these rows, but )", re.DOTALL)


def failed_sql(reply: str) -> str | None:
    """The query a ``FAILED`` or ``REFUSED`` reply names (None: the reply is neither)."""
    found = _FAILED.match(reply)
    if not found:
        return None
    try:
        return str(ast.literal_eval(found.group(1)))
    except (ValueError, SyntaxError):
        return None


_NO_TABLE = (
    "No table's columns or values match the question's words: ask naming a table's column "
    "(the tables are listed in the instructions), or search the text."
)


def _holders(error: str, sql: str, catalog: Sequence[TableInfo]) -> str:
    """What to say of an unknown column ("" for any other error).

    The columns of the tables the query reads, and which tables have a column of that name.
    """
    found = re.search(r"no such column: (?:\w+\.)?(\w+)", error)
    if not found:
        return ""
    name = found.group(1).lower()
    words = set(words_of(sql, underscores=True))
    read = [t for t in catalog if t.name in words]
    said = [f"; {t.name} has the columns {', '.join(c.name for c in t.columns)}" for t in read]
    holders = [t.name for t in catalog if t.column(name)]
    if holders and "the tables with a column" not in error:  # did_you_mean said it
        said.append(f"; the tables with a column {name}: {', '.join(holders)}")
    return "".join(said)


def _key_index(key: str, count: int) -> int | None:
    text = key.strip().strip("[]").upper()
    if not text.startswith("S") or not text[1:].isdigit():
        return None
    index = int(text[1:]) - 1
    return index if 0 <= index < count else None


def _rows(result: QueryResult) -> str:
    lines = [" | ".join(result.columns)]
    lines += [" | ".join(format_cell(c) for c in row) for row in result.rows[:SHOWN_ROWS]]
    more = len(result.rows) - SHOWN_ROWS
    count = f"({len(result.rows)} rows{', cut' if result.truncated else ''})"
    return "\n".join(lines) + (f"\n… {more} more rows" if more > 0 else "") + f"\n{count}"


def _result_document(
    sql: str, shown: str, read: list[TableInfo], answer: dict[str, object], findings: str = ""
) -> Document:
    """A query's result as a document the answer can cite (its id: the SQL's tables).

    ``answer``: the table's answer to the user's whole question when the query passed every
    check (``query_table.table_answer``: the answer and its confidence, or what was withheld;
    empty when it did not pass, or answers a part): the loop ends on it (``agent.settled``).
    ``findings``: what the checks found wrong with it (an answer citing only such results is
    not given: ``answers.faulted_tables``).
    """
    names = ",".join(t.name for t in read) or "tables"
    key = f"table:{names}:{hashlib.sha256(sql.encode()).hexdigest()[:10]}"
    label = ", ".join(t.label for t in read) or "the collection's tables"
    return Document(
        page_content=f"SQL: {sql}\nResult:\n{shown}",
        id=key,
        metadata={"id": key, "source": label, "sql": sql, ANSWERS: answer, FINDINGS: findings},
    )


ARGS: dict[str, type[BaseModel]] = {
    "search": SearchArgs,
    "read_around": AroundArgs,
    "read_document": DocumentArgs,
    "list_documents": ListArgs,
    "query_table": TableArgs,
    "column_values": ValuesArgs,
    "web_search": WebArgs,
}


def has_tables(services: Services) -> bool:
    """Whether the collection holds a table (one that cannot be read counts as none)."""
    if services.tables is None:
        return False
    try:
        return bool(services.tables.catalog())
    except CragError:
        return False


def available(services: Services, ctx: Context) -> list[str]:
    """The names of the tools this run offers (tables, documents and the web only when present)."""
    names = ["search", "read_around"]
    if services.documents is not None:
        names.append("list_documents")
        if services.document_chunks is not None:
            names.append("read_document")
    if has_tables(services):
        names += ["query_table", "column_values"]
    if services.web_search is not None and ctx.web_search != "off":
        names.append("web_search")
    return names


def toolbox(
    services: Services,
    ctx: Context,
    question: str,
    evidence: Sequence[Document],
    rules_sql: str = "",
    deadline: float | None = None,
) -> list[BaseTool]:
    """The tools this run offers, as LangChain tools bound to its clients and evidence.

    A tool's description is its method's docstring (what it is for, an example, what it is
    not for): the model chooses by it. ``rules_sql`` and ``deadline``: ``Toolbox``'s.
    """
    box = Toolbox(services, ctx, question, evidence, rules_sql, deadline)
    tools: list[BaseTool] = []
    for name in available(services, ctx):
        method: Callable[..., Observation] = getattr(box, name)
        tools.append(
            StructuredTool.from_function(
                func=method,
                name=name,
                description=" ".join((method.__doc__ or name).split()),
                args_schema=ARGS[name],
                response_format="content_and_artifact",
                handle_validation_error=True,
            )
        )
    return tools


def restates(asked: str, question: str) -> bool:
    """Whether ``asked`` names nothing ``question`` does not: a rewording, or a narrower one.

    The 1.5B model hands ``query_table`` the user's question in fewer words ("Which car has
    the highest hp?" as "What is the highest hp?"), losing what the checks read; a part that
    adds a word of its own (a name found in the text) is a step of its own and is asked as is.
    """
    said = {stem(w) for w in content_words(question)}
    return all(stem(w) in said for w in content_words(asked))


def covers(asked: str, question: str) -> bool:
    """Whether ``asked`` names everything ``question`` does (so its answer answers it)."""
    return restates(question, asked)


def observed_tokens(docs: Sequence[Document]) -> int:
    """The tokens of documents the loop has read (characters / 4), for its budget."""
    return sum(estimate_tokens(d.page_content) for d in docs)


def shown(docs: Sequence[Document], first_key: int) -> str:
    """Documents as the model reads them in an observation: key, source, text."""
    return "\n".join(
        f"[S{first_key + i}] ({doc_source(d)}) {d.page_content.strip()}" for i, d in enumerate(docs)
    )
