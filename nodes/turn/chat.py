"""LangGraph's chat convention: a turn asked as ``messages``, answered with an AI message.

Studio's chat view, agent-chat-ui and most LangGraph clients send ``{"messages": [...]}`` and
show the AI messages that come back. The graph accepts that beside ``{"question": ...}``: the
newest message, when it is the user's, is the question, and the earlier pairs are the history
of a caller that keeps the conversation itself (no thread). Every turn, however asked, ends
with the question and its answer in ``messages``, so a chat client shows CLI turns too.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from crag_core.schema.state import RAGState, Source, Turn


def asked(state: RAGState) -> tuple[str, bool]:
    """This turn's question and whether it came as a message (else as ``question``).

    A turn's messages are added when it ends, so a user message at the end of ``messages``
    is one not answered yet: it is the question. Otherwise ``question`` is.
    """
    messages = state.get("messages") or []
    if messages and messages[-1].type == "human":
        return messages[-1].text, True
    return state.get("question") or "", False


def earlier_turns(messages: list[AnyMessage]) -> list[Turn]:
    """The question-and-answer pairs of a conversation, oldest first."""
    turns: list[Turn] = []
    question: str | None = None
    for message in messages:
        if message.type == "human":
            question = message.text
        elif message.type == "ai" and question is not None and message.text.strip():
            sources = message.additional_kwargs.get("sources") or []
            answer = message.text.split("\n\nSources:\n", 1)[0]  # as ``reply`` wrote it
            given = message.additional_kwargs.get("confidence")
            turns.append(
                Turn(
                    question=question,
                    standalone_question=question,
                    answer=answer,
                    sources=[_source(s) for s in sources if isinstance(s, dict) and "id" in s],
                    confidence=float(given) if isinstance(given, int | float) else None,
                )
            )
            question = None
    return turns


def _source(raw: dict[str, str]) -> Source:
    source = Source(id=raw["id"], source=raw.get("source", ""))
    if raw.get("location"):
        source["location"] = raw["location"]
    if raw.get("quote"):
        source["quote"] = raw["quote"]
    return source


def reply(answer: str, sources: list[Source], confidence: float | None = None) -> AIMessage:
    """The AI message of an answer: its text with the sources listed under it.

    The sources are also in ``additional_kwargs["sources"]`` (id, source, location), for
    clients that render citations themselves, and the answer's confidence in
    ``additional_kwargs["confidence"]`` (None for "I don't know" and small talk).
    """
    lines = [answer]
    if sources:
        lines += ["", "Sources:"]
        for n, s in enumerate(sources, 1):
            where = f" ({s['location']})" if s.get("location") else ""
            lines.append(f"[{n}] {s['source']}{where}")
    kwargs = {"sources": [dict(s) for s in sources], "confidence": confidence}
    return AIMessage("\n".join(lines), additional_kwargs=kwargs)


def turn_messages(
    state: RAGState, answer: str, sources: list[Source], confidence: float | None = None
) -> list[AnyMessage]:
    """What a finished turn adds to ``messages``: its question and answer.

    The question only when it came as ``question``: a message is already there.
    """
    _, as_message = asked(state)
    question = [] if as_message else [HumanMessage(state.get("question") or "")]
    return [*question, reply(answer, sources, confidence)]
