"""run_tools: run the tool calls of the loop's last step; what they return is the next step's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.documents import doc_id
from crag_core.text.read_around import within_budget
from nodes.shared.common import deadline, question_of, reports
from nodes.tools.toolbox import failed_sql, observed_tokens, restates, shown, toolbox

NEXT = "If this answers the question, answer now citing its key ({keys}); if not, go on."
"""What an observation with documents ends with: a small model otherwise reads on after the
answer is in front of it."""
REPEATED = "You made this very call before; its result is above. Answer from what you have read."
"""The reply to a call the loop made before (same tool, same arguments). It ends the loop's
tool use (``agent.out_of_budget``): a model that asks again for what it has read is done
reading, and another tool round would only spend the budget."""


def describe(update: Mapping[str, Any]) -> str:
    """Each tool's first line of what it returned."""
    lines = [str(m.text).splitlines()[0] for m in update.get("loop_messages") or [] if m.text]
    return "; ".join(line[:100] for line in lines) or "nothing returned"


def rules_sql(state: PassState) -> str:
    """The rules' last query of the question, when ``planner`` ``auto`` tried them and none passed.

    "" for none: an answer withheld under ``min_confidence`` passed its checks, and its query
    asked again would only come back as a first query.
    """
    return "" if state.get("withheld") else state.get("sql", "")


def repeats(call: ToolCall, earlier: Sequence[AnyMessage], question: str) -> bool:
    """Whether the loop made ``call`` in one of ``earlier`` steps: the same tool and arguments.

    Arguments are compared as the tool reads them: text without case or extra spaces, and a
    ``query_table`` question that restates the user's ``question`` as that question (the tool
    asks it so: ``toolbox.restates``), so "How many songs are on Tangents? " repeats it; a
    ``query_table`` call whose SQL the loop already ran (``ran``) repeats that query.
    """
    made = (c for m in earlier if isinstance(m, AIMessage) for c in m.tool_calls)
    key = _as_read(call, question)
    if any(c["name"] == call["name"] and _as_read(c, question) == key for c in made):
        return True
    sql = call["args"].get("sql") if call["name"] == "query_table" else None
    return isinstance(sql, str) and _as_sql(sql) in ran(earlier)


def ran(earlier: Sequence[AnyMessage]) -> set[str]:
    """Every query ``query_table`` ran in ``earlier`` steps, as ``_as_sql`` reads it.

    A query that read rows is its result document's ``sql``; one that failed is named in the
    tool's reply (``toolbox.FAILED``). The 1.5B model, asked for its own SQL, copied the
    query a check had refused: the tool would run it the same, so the call repeats that one.
    """
    queries: set[str] = set()
    for message in earlier:
        if not isinstance(message, ToolMessage) or message.name != "query_table":
            continue
        docs = [d for d in message.artifact or [] if isinstance(d, Document)]
        queries |= {_as_sql(str(d.metadata["sql"])) for d in docs if d.metadata.get("sql")}
        if (failed := failed_sql(message.text)) is not None:
            queries.add(_as_sql(failed))
    return queries


def _as_sql(sql: str) -> str:
    return " ".join(sql.strip().rstrip(";").split()).casefold()


def _as_read(call: ToolCall, question: str) -> dict[str, Any]:
    args = {
        name: " ".join(value.split()).casefold() if isinstance(value, str) else value
        for name, value in call["args"].items()
    }
    asked = call["args"].get("question")
    if call["name"] == "query_table" and isinstance(asked, str) and restates(asked, question):
        args["question"] = " ".join(question.split()).casefold()
    return args


@reports(describe)
def run_tools(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Run each tool call of the last step (LangGraph's ``ToolNode``, on this run's clients).

    Every call gets a ``ToolMessage``: what the tool returned, with the documents it read
    keyed S1, S2… after the loop's earlier ones (a document already read is not shown twice);
    an unknown tool or bad arguments get a message saying so, for the model to correct; a
    call the loop made before (same tool, same arguments) is not run again (``REPEATED``). The
    documents join the loop's evidence (``relevant_documents``), cut to what is left of
    ``loop_tokens``.
    """
    ctx = context_of(runtime)
    steps = state.get("loop_messages") or []
    last = steps[-1] if steps else None
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ValueError(
            "run_tools runs the tool calls of the loop's last step, and there are none"
        )
    evidence = list(state.get("relevant_documents") or [])
    offered = toolbox(
        services, ctx, question_of(state), evidence, rules_sql(state), deadline(state, ctx)
    )
    tools = {t.name: t for t in offered}
    replies: list[AnyMessage] = []
    for call in last.tool_calls:
        tool = tools.get(call["name"])
        if repeats(call, steps[:-1], question_of(state)):
            replies.append(
                ToolMessage(
                    REPEATED, tool_call_id=call["id"] or "", name=call["name"], status="error"
                )
            )
            continue
        if tool is None:
            known = ", ".join(tools)
            text = f"There is no tool {call['name']!r} here; the tools are: {known}."
            replies.append(
                ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")
            )
            continue
        message = tool.invoke({**call, "type": "tool_call"})
        assert isinstance(message, ToolMessage)
        found = _new(message.artifact, evidence)
        found = (
            within_budget(found, max(ctx.loop_tokens - observed_tokens(evidence), 0))
            if found
            else []
        )
        if found:
            keys = f"S{len(evidence) + 1}" + (
                f"-S{len(evidence) + len(found)}" if len(found) > 1 else ""
            )
            message.content = (
                f"{message.text}\n{shown(found, len(evidence) + 1)}\n{NEXT.format(keys=keys)}"
            )
        evidence += found
        replies.append(message)
    return {"loop_messages": replies, "relevant_documents": evidence}


def _new(artifact: Any, evidence: list[Document]) -> list[Document]:
    """The documents a tool returned that the loop has not read yet."""
    read = {doc_id(d) for d in evidence}
    return [d for d in artifact or [] if isinstance(d, Document) and doc_id(d) not in read]
