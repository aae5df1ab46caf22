"""One set of input limits for every door that writes a graph's state (``crag.limits``)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from crag.limits import (
    MAX_DOC_CHARS,
    MAX_URLS_PER_RUN,
    check_index,
    check_writes,
    run_writes,
    state_writes,
)
from crag.policy import Refusal

URLS = [f"https://example.org/{n}" for n in range(MAX_URLS_PER_RUN + 5)]


def _refused(writes, chars=4000) -> str:
    with pytest.raises(Refusal) as refused:
        check_writes(writes, chars)
    assert refused.value.status == 413
    return refused.value.message


@pytest.mark.parametrize(
    "kwargs",
    [
        {"input": {"urls": URLS}},
        {"command": {"update": {"urls": URLS}}},
        {"command": {"update": [["urls", URLS[:15]], ["urls", URLS[15:]]]}},  # pairs, gathered
        {"command": {"goto": [{"node": "index", "input": {"urls": URLS}}]}},
        {"input": {"urls": URLS[:15]}, "command": {"update": {"urls": URLS[15:]}}},  # together
    ],
)
def test_a_runs_addresses_are_counted_whatever_carries_them(kwargs):
    assert "25 web pages in one run" in _refused(run_writes(kwargs))


def test_the_questions_and_conversations_limits_hold_in_a_command_too():
    long = {"question": "why " * 2000}
    assert "characters long" in _refused(run_writes({"command": {"update": long}}))
    chat = {"messages": [{"role": "user", "content": "hi"}] * 201}
    assert "200 messages" in _refused(run_writes({"command": {"goto": {"input": chat}}}))
    check_writes(run_writes({"input": {"question": "Who won?"}, "command": {"resume": 1}}), 4000)


def test_inline_documents_are_held_to_an_uploads_characters_per_document_and_per_run():
    one = {"page_content": "a" * (MAX_DOC_CHARS + 1)}
    assert "a document" in _refused(run_writes({"input": {"docs": [one]}}))
    half = {"page_content": "b" * (MAX_DOC_CHARS // 2 + 1)}
    halves = {"docs": [half, Document(page_content=half["page_content"])]}
    assert "characters and 20 MiB a run" in _refused(run_writes({"command": {"update": halves}}))
    check_index([{"page_content": "é" * 1_000_000}], URLS[:MAX_URLS_PER_RUN])  # 1 MB: taken


def test_the_thread_routes_that_write_state_are_read_for_their_values():
    values = {"docs": [{"page_content": "a" * (MAX_DOC_CHARS + 1)}]}
    assert state_writes("/threads/abc/state", {"values": values}) == [values]
    made = {"supersteps": [{"updates": [{"values": values, "as_node": "index"}]}]}
    assert state_writes("/threads", made) == [values]
    assert state_writes("/threads/abc/state", {"values": [["urls", URLS]]}) == [{"urls": URLS}]
    assert state_writes("/threads/abc/copy", {"values": values}) == []
    assert state_writes("/threads", "junk") == []
    assert "a document" in _refused(state_writes("/threads", made))
