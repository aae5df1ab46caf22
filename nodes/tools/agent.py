"""agent: the loop's planner — the model chooses the next tool, or answers.

One step per call. The model reads the question, the tools (``nodes.tools.toolbox``), the
collection's tables and every step so far (its own calls, what each tool returned), and
replies with one tool call or its answer. ``run_tools`` runs the call and comes back here;
an answer goes on to ``validate_citations`` and the same checks as every text answer.

Two ways to ask for a step, one loop:

- a model served by llama.cpp (the embedded one, ``takes_grammar``) replies with one JSON
  object under a JSON schema built from the tools' argument schemas (``step_schema``): a tool
  and its arguments, or ``answer``. Its server's native tool calls are not reliable (the 1.5B
  model writes its call as text the server does not parse; ``tool_choice: required`` gets no
  reply), a schema-constrained reply always parses. The steps so far are shown to it as text;
- any other model (OpenAI, an OpenAI-compatible server) gets the tools natively and replies
  with ``tool_calls``, or text for its answer.

Either way the step is an ``AIMessage`` with ``tool_calls`` (or none), so ``run_tools``, the
stream, LangSmith and Studio see tool calls.

The budget ends the loop: after ``max_tool_calls`` calls, ``loop_tokens`` of documents read,
when another round would end past ``loop_seconds`` from the first step, or when the model
repeats a call, it is asked for its answer with no tool offered; with no document read by
then, the loop ends with "I don't know" and no model call (``nothing_read``).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from crag_core.clients.llm import call_tools, complete, takes_grammar
from crag_core.clients.services import Services
from crag_core.errors import CragError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import LoopPlan, PassState, PassUpdate, Withheld, pass_reset
from crag_core.text.answer_text import NO_ANSWER, is_no_answer
from crag_core.text.documents import doc_id
from crag_core.text.sql import asked_matches
from nodes.shared.common import question_of, reports, seconds_spent
from nodes.shared.confidence import held_back
from nodes.shared.prompting import render
from nodes.tools.run_tools import repeats, rules_sql
from nodes.tools.table_keys import with_identifiers
from nodes.tools.toolbox import ANSWERS, observed_tokens, restates, toolbox

ANSWER = "answer"
"""The field of a step that ends the loop with the model's answer (the JSON-schema way)."""
ENOUGH = "enough"
"""The field a step starts with: whether what was read answers the question (yes / no)."""
MIN_READ_TOKENS = 100
"""Tokens left of ``loop_tokens`` under which the budget counts as spent: a step that could
read less is not worth its call."""
OWN_SQL = ("sql",)
"""query_table's argument a step must fill once the tables were asked the question."""
MIN_ARG_CHARS = len("SELECT 1")
"""A required SQL argument's length at least: never empty."""
MAX_ANSWER_CHARS = 400
"""An answer's length at most (the JSON-schema way)."""
MATCHED_TABLES = 3
"""Tables the hint after the question names at most (those its words name most)."""
LISTED_TABLES = 30
"""Tables the instructions list at most (``list_documents`` names every file)."""
RULES = "rules"
"""The name of a step the rules made (their query again), not the model: no round's pace."""
FINAL = 'Answer now from what the tools returned (with its keys), or say exactly "I don\'t know".'
"""What the model is told when the budget is spent."""
READ_FIRST = "No tool has returned a document to answer from yet: call a tool (or another one)."
"""What a model that answered before reading anything is told, once (native tool calls: the
JSON-schema way offers no answer before a document is read)."""


def describe(update: Mapping[str, Any]) -> str:
    """The tool the step calls with its arguments, or the answer."""
    step = (update.get("loop_messages") or [AIMessage(content="")])[-1]
    if getattr(step, "tool_calls", None):
        return tried([step])
    return f"answers {step.text!r}"


def _args(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


@reports(describe)
def agent(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """The loop's next step: a tool call (to ``run_tools``) or the answer (to the checks).

    The answer's documents are everything the loop read (``relevant_documents``, keyed S1…
    in the order read), so ``validate_citations`` checks its citations against them and a bad
    one comes back here as a correction, in the loop's own steps.
    """
    ctx = context_of(runtime)
    question = question_of(state)
    evidence = list(state.get("relevant_documents") or [])
    steps = list(state.get("loop_messages") or [])
    started = state.get("loop_started") or time.time()
    update: PassUpdate = {"loop_started": started}
    plan = state.get("plan")
    if plan is None or plan["tool"] != "loop":
        update["plan"] = LoopPlan(tool="loop", reason="the model chooses the tools")
    if plan is not None and plan["tool"] == "search":  # the text had no answer: a new pass
        update |= pass_reset() | {"answer": "", "sources": [], "confidence": None}  # type: ignore[typeddict-item]
        evidence = []
    if state.get("citation_feedback"):  # validate_citations sent the answer back
        correction = HumanMessage(content=str(state["citation_feedback"]))
        steps.append(correction)
        update |= {"loop_messages": [correction], "citation_feedback": ""}
    spent = out_of_budget(steps, evidence, started, ctx, question, seconds_spent(state))
    if table := settled(steps, evidence):
        return update | _table_answer(table, evidence, ctx.min_confidence)
    if not steps and (again := rules_query(state, question)):
        return update | {"loop_messages": [again]}
    if spent and not evidence:
        return nothing_read(update, ended(spent), steps)
    offered = toolbox(services, ctx, question, evidence)
    tools = [] if spent else offered
    prompt, versions = render(
        state,
        ctx,
        "agent",
        tools=tool_list(offered),
        tables=table_list(services),
        question=question,
        hint=table_hint(services, question),
    )
    update["prompt_versions"] = versions
    said: list[AnyMessage] = [*steps, *([HumanMessage(content=FINAL)] if spent else [])]
    if takes_grammar(ctx.model):
        shown = [*prompt.messages, *as_text(said)]
        schema = step_schema(
            tools, may_answer=bool(evidence), own_sql=asked_tables(steps, question)
        )
        reply = complete(services.llm, replace(prompt, messages=shown), json_schema=schema)
        step = parse_step(reply, call_id=f"call_{len(steps)}")
    else:
        step = call_tools(services.llm, replace(prompt, messages=[*prompt.messages, *said]), tools)
    step = step if step.tool_calls and not spent else AIMessage(content=step.text)
    update["loop_messages"] = [*update.get("loop_messages", []), step]
    if step.tool_calls:
        return update
    if not evidence and not spent:
        return unread_answer(update, steps)
    answer = step.text.strip() or NO_ANSWER
    warnings = [ended(spent)] if spent else []
    if is_no_answer(answer):
        warnings.append(f"The loop found no answer; it tried: {tried(steps)}.")
    return update | {"generation": answer, "relevant_documents": evidence, "warnings": warnings}


def ended(spent: str) -> str:
    """The warning of a loop its budget ended (``spent``: which budget, ``out_of_budget``)."""
    return f"The loop's budget ended it: {spent}."


def nothing_read(update: PassUpdate, why: str, steps: Sequence[AnyMessage]) -> PassUpdate:
    """The loop's end when no tool returned a document: "I don't know" (``why``: its warning).

    Its budget spent (``ended``), or the model answered twice before reading (``unread_answer``).

    No answer is asked for: there is nothing it could cite, so the model's reply could only
    come from its memory, which the checks refuse (a citation of no document goes back to the
    model once more, then a number no document holds fails the grounding check). On the
    loop's never-tuned set 7 of the eighth run's 24 questions under ``auto`` ended that way,
    two model calls each for no answer; over the ninth run's 111 this ended 27 auto loops
    (docs/benchmarks/loop).
    """
    step = AIMessage(content=NO_ANSWER)
    return update | {
        "loop_messages": [*update.get("loop_messages", []), step],
        "generation": NO_ANSWER,
        "relevant_documents": [],
        "warnings": [
            why,
            f"The loop read no document to answer from; it tried: {tried(steps)}.",
        ],
    }


def unread_answer(update: PassUpdate, steps: Sequence[AnyMessage]) -> PassUpdate:
    """A reply with no tool call before any tool returned a document (native tool calls).

    The first time, the model is told to call a tool (``READ_FIRST``) and asked again; the
    second time the loop ends as a spent one with nothing read does ("I don't know", no
    answer written from memory), so the native way ends where the JSON-schema way does.
    """
    if not any(isinstance(m, HumanMessage) and m.content == READ_FIRST for m in steps):
        nudge = HumanMessage(content=READ_FIRST)
        return update | {"loop_messages": [*update.get("loop_messages", []), nudge]}
    why = "The loop ended: the model answered twice without calling a tool to read first."
    return nothing_read(update, why, steps)


def rules_query(state: PassState, question: str) -> AIMessage | None:
    """The loop's first step after the rules' table plan did not answer (``planner`` ``auto``).

    Their query of the question, run again (``run_tools.rules_sql``: no SQL written anew), is
    the first tool call, made with no model call: the model's first step sees what the rules'
    query returned and why it was not an answer (asked to choose first, the model most often
    chose that very call, a round's model step spent on it). None when there is no such query.
    """
    if not rules_sql(state):
        return None
    call = {"name": "query_table", "args": {"question": question}, "id": "call_0"}
    return AIMessage(content="", name=RULES, tool_calls=[{**call, "type": "tool_call"}])


def settled(steps: Sequence[AnyMessage], evidence: Sequence[Document]) -> Document | None:
    """The last step's query result when it answers the whole question (None if none).

    A query of the user's question (or of one that names all it names) that passed every
    check of ``query_table`` is the rules' table answer: the loop ends there, without a model
    call to read it back (the 1.5B model went on calling tools with the answer in front of
    it), and the answer is given, or withheld under ``min_confidence``, exactly as the rules
    give it (``query_table.table_answer``).
    """
    replies = itertools.takewhile(lambda m: isinstance(m, ToolMessage), reversed(steps))
    read = {doc_id(d) for d in evidence}
    for reply in replies:
        for doc in reply.artifact or [] if isinstance(reply, ToolMessage) else []:
            if isinstance(doc, Document) and doc.metadata.get(ANSWERS) and doc_id(doc) in read:
                return doc
    return None


def _table_answer(doc: Document, evidence: Sequence[Document], min_confidence: float) -> PassUpdate:
    """The loop's end on a table's answer: its step (citing the result's key) and the answer."""
    table: PassUpdate = doc.metadata[ANSWERS]
    key = next(i for i, d in enumerate(evidence) if doc_id(d) == doc_id(doc)) + 1
    answer = table.get("answer") or NO_ANSWER
    step = AIMessage(content=f"{answer} [S{key}]" if "answer" in table else NO_ANSWER)
    update: PassUpdate = {**table, "loop_messages": [step], "relevant_documents": list(evidence)}
    if "answer" not in table:
        withheld = table.get("withheld") or Withheld(answer="", confidence=0.0)
        warning = held_back(withheld, min_confidence)
        update |= {"answer": NO_ANSWER, "confidence": None, "warnings": [warning]}
    return update


def asked_tables(steps: Sequence[AnyMessage], question: str) -> bool:
    """Whether ``query_table`` was asked the question (in other words or not) with no SQL.

    Asked again, the tool answers the same (``run_tools.repeats``): the 1.5B model did so
    after a check refused the query, a round spent for nothing and the tool use ended by the
    repeat. From then on its ``query_table`` call brings its own SQL, written knowing what
    the check found (``step_schema``'s ``own_sql``).
    """
    return any(
        c["name"] == "query_table"
        and not c["args"].get("sql")
        and restates(str(c["args"].get("question", "")), question)
        for m in steps
        if isinstance(m, AIMessage)
        for c in m.tool_calls
    )


def tried(steps: Sequence[AnyMessage]) -> str:
    """The tool calls a loop made, in order ("no tool" when none)."""
    calls = [c for m in steps if isinstance(m, AIMessage) for c in m.tool_calls]
    return "; ".join(f"{c['name']}({_args(c['args'])})" for c in calls) or "no tool"


def out_of_budget(
    steps: Sequence[AnyMessage],
    evidence: Sequence[Document],
    started: float,
    ctx: Context,
    question: str,
    since_asked: float = 0.0,
) -> str:
    """Which of the loop's budgets is spent ("" for none).

    Time is a deadline, not a start line: the next round is not begun when it would end past
    ``loop_seconds`` at the pace of the rounds so far (a round is a model step and its tool,
    often a query's SQL written and retried), nor past the question's ``answer_seconds``
    (``since_asked``: seconds since the turn began), which every part's loop of a question split
    in parts shares. A repeated call (``run_tools.repeats``) also ends the tool use: the
    model is asking again for what it has read.
    """
    calls = sum(isinstance(m, ToolMessage) for m in steps)
    if calls >= ctx.max_tool_calls:
        return f"{calls} tool calls of {ctx.max_tool_calls}"
    if observed_tokens(evidence) > ctx.loop_tokens - MIN_READ_TOKENS:
        return f"{observed_tokens(evidence)} tokens read of {ctx.loop_tokens}"
    elapsed = time.time() - started
    rounds = sum(isinstance(m, AIMessage) and bool(m.tool_calls) and m.name != RULES for m in steps)
    pace = elapsed / rounds if rounds else 0.0
    if elapsed + pace >= ctx.loop_seconds:
        return f"{ctx.loop_seconds:g} s (another round would pass it)"
    if since_asked and since_asked + pace >= ctx.answer_seconds:
        return f"the question's {ctx.answer_seconds:g} s (another round would pass them)"
    asked = [(i, m) for i, m in enumerate(steps) if isinstance(m, AIMessage) and m.tool_calls]
    last = asked[-1] if asked else None
    if last and any(repeats(c, steps[: last[0]], question) for c in last[1].tool_calls):
        return "it called a tool again with the same arguments"
    return ""


def tool_list(tools: Sequence[BaseTool]) -> str:
    """The tools as the instructions list them: name, arguments, what for."""
    lines = []
    for tool in tools:
        fields = _schema(tool).get("properties", {})
        args = ", ".join(f"{name}: {spec.get('type', 'string')}" for name, spec in fields.items())
        lines.append(f"- {tool.name}({args}): {tool.description}")
    return "\n".join(lines)


def table_list(services: Services) -> str:
    """The collection's tables, one line each: name, columns, rows, file."""
    if services.tables is None:
        return "(none)"
    try:
        catalog = services.tables.catalog()
    except CragError as exc:
        return f"(the tables could not be read: {exc})"
    lines = []
    for table in catalog[:LISTED_TABLES]:
        try:
            first = services.tables.sample(table.name, 1).rows
        except CragError:
            first = ()
        example = dict(
            zip([c.name for c in table.columns], first[0] if first else (), strict=False)
        )
        columns = ", ".join(_column(c.name, c.type, example.get(c.name)) for c in table.columns)
        where = f"{table.label}{' sheet ' + table.sheet if table.sheet else ''}"
        lines.append(f"{table.name}({columns}) -- {table.rows} rows, from {where}")
    more = len(catalog) - LISTED_TABLES
    return "\n".join(lines) + (f"\n(and {more} more)" if more > 0 else "") or "(none)"


def _column(name: str, kind: str, example: object) -> str:
    """A column as the listing shows it: a text column with its first row's value."""
    if kind == "TEXT" and isinstance(example, str) and example:
        return f"{name} TEXT e.g. {example[:30]!r}"
    return f"{name} {kind}"


def table_hint(services: Services, question: str) -> str:
    """The tables whose columns or values the question's words name (the rules' matching).

    After the question, so the instructions before it stay one prefix for every question.
    """
    if services.tables is None:
        return ""
    try:
        catalog = with_identifiers(question, services.tables.catalog(), services.tables)
        matches = asked_matches(question, catalog)[:MATCHED_TABLES]
    except CragError:
        return ""
    said = []
    for m in matches:
        named = [*m.columns, *(f"'{v}'" for v in m.values)]
        said.append(f"{m.table.name} ({', '.join(named)})" if named else m.table.name)
    return f"Tables its words name: {'; '.join(said)}\n" if said else ""


def step_schema(
    tools: Sequence[BaseTool], may_answer: bool = True, own_sql: bool = False
) -> dict[str, Any]:
    """The JSON schema of one step: ``enough`` first, then the answer or a tool and its arguments.

    The model says whether what it has read answers the question before anything else: a
    yes/no a small model gets right more often than picking "answer" among the tools' names.
    ``may_answer`` False (nothing read yet) leaves only the tools; no tools, only the answer.
    ``own_sql`` (the tables were asked the question already, ``asked_tables``): a
    ``query_table`` call carries the model's own SQL, so the step cannot be that query again.
    """
    choices: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                ENOUGH: {"const": "no"},
                "tool": {"const": tool.name},
                "args": _strict(tool, OWN_SQL if own_sql and tool.name == "query_table" else ()),
            },
            "required": [ENOUGH, "tool", "args"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    if may_answer or not tools:
        choices.insert(
            0,
            {
                "type": "object",
                "properties": {
                    ENOUGH: {"const": "yes"},
                    ANSWER: {"type": "string", "maxLength": MAX_ANSWER_CHARS},
                },
                "required": [ENOUGH, ANSWER],
                "additionalProperties": False,
            },
        )
    return {"anyOf": choices} if len(choices) > 1 else choices[0]


def _strict(tool: BaseTool, also: Sequence[str] = ()) -> dict[str, Any]:
    """A tool's required arguments as a closed schema: each of them, nothing else.

    Optional arguments (a search's file or type filter, a query's own SQL) are left to
    models that call tools natively: the 1.5B model filled them with guesses that emptied
    its searches. ``also``: optional ones required here, each of at least ``MIN_ARG_CHARS``.
    """
    schema = _schema(tool)
    required = {*schema.get("required", []), *also}
    properties = {
        name: {k: v for k, v in spec.items() if k in ("type", "maxLength", "description")}
        | ({"minLength": MIN_ARG_CHARS} if name in also else {})
        for name, spec in schema.get("properties", {}).items()
        if name in required
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _schema(tool: BaseTool) -> dict[str, Any]:
    """A tool's arguments as JSON schema."""
    return dict(tool.tool_call_schema.model_json_schema())  # type: ignore[union-attr]


def parse_step(reply: str, call_id: str) -> AIMessage:
    """A schema-constrained reply as a step: a tool call, or the answer's text."""
    try:
        step = json.loads(reply)
    except json.JSONDecodeError:
        return AIMessage(content=reply)  # cut at max_tokens: read as an answer, checked as one
    if not isinstance(step, dict):
        return AIMessage(content=reply)
    if ANSWER in step or not isinstance(step.get("args"), dict):
        return AIMessage(content=str(step.get(ANSWER) or ""))
    call = {"name": str(step.get("tool")), "args": step["args"], "id": call_id, "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


def as_text(steps: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The steps as plain messages, for a model that calls tools by writing JSON.

    Its own calls become the JSON it wrote, each tool's result a user message naming the
    tool: no chat template has to render tool messages.
    """
    shown: list[AnyMessage] = []
    for message in steps:
        if isinstance(message, AIMessage):
            calls = [
                {ENOUGH: "no", "tool": c["name"], "args": c["args"]} for c in message.tool_calls
            ]
            text = json.dumps(calls[0] if calls else {ENOUGH: "yes", ANSWER: message.text})
            shown.append(AIMessage(content=text))
        elif isinstance(message, ToolMessage):
            shown.append(HumanMessage(content=f"{message.name} returned:\n{message.text}"))
        else:
            shown.append(HumanMessage(content=message.text))
    return shown
