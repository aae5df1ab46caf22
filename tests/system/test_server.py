"""The `langgraph dev` API server, driven with langgraph-sdk as Studio and apps drive it.

One server for the package (conftest's ``server``) on a free loopback port, with the package's
knowledge base; runs choose their model through the run context (the scripted loopback model,
or the embedded one).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from benchmarks.fixtures.serve import Server
from tests.fakes import KB_PATH
from tests.system.conftest import ANSWER

FIRST = "Which team won Super Bowl 50?"
FOLLOW_UP = "What was the final score?"


def stream_updates(
    client: Any, thread_id: str, question: str, context: dict[str, Any]
) -> list[tuple[str, list[str]]]:
    """Stream one run with ``stream_mode="updates"`` and its subgraphs: each event's name
    ("updates", "updates|answer_question:<id>"…) and the nodes it names, in arrival order."""
    events = []
    for part in client.runs.stream(
        thread_id,
        "crag",
        input={"question": question},
        context=context,
        stream_mode="updates",
        stream_subgraphs=True,
    ):
        assert part.event != "error", part.data
        events.append((part.event, list(part.data or {})))
    return events


def stream_nodes(client: Any, thread_id: str, question: str, context: dict[str, Any]) -> list[str]:
    """The node names of one run in arrival order, a question's pass's as the turn's own."""
    nodes = []
    for event, names in stream_updates(client, thread_id, question, context):
        if event == "updates":
            nodes += [n for n in names if n != "answer_question"]
        elif event.startswith("updates|answer_question:"):
            nodes += names
    return nodes


def test_the_graph_is_served_with_its_schemas(server: Server):
    client: Any = get_sync_client(url=server.url)
    [assistant] = client.assistants.search(graph_id="crag")
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert set(schemas["input_schema"]["properties"]) == {"question", "messages"}
    assert "answer" in schemas["output_schema"]["properties"]
    context_fields = schemas["context_schema"]["properties"]
    assert all(f.get("description") for f in context_fields.values())


def test_streamed_runs_and_a_follow_up_on_one_thread(server: Server, scripted_llm: str):
    client: Any = get_sync_client(url=server.url)
    thread_id = client.threads.create()["thread_id"]
    context = {"model": "openai-compatible:scripted", "base_url": scripted_llm}

    assert stream_nodes(client, thread_id, FIRST, context) == KB_PATH
    values = client.threads.get_state(thread_id)["values"]
    assert values["answer"] == ANSWER and values["retry_count"] == 0

    assert stream_nodes(client, thread_id, FOLLOW_UP, context) == KB_PATH
    values = client.threads.get_state(thread_id)["values"]
    assert values["standalone_question"] == "What was the score of Super Bowl 50?"
    assert [t["question"] for t in values["history"]] == [FIRST, FOLLOW_UP]

    history = client.threads.get_history(thread_id, limit=100)
    # a checkpoint per step of both turns (a question's pass checkpoints in its own namespace)
    turn = ["contextualize_question", "analyze_query", "answer_question", "finalize"]
    assert len(history) >= 2 * len(turn)
    assert {h["values"].get("question") for h in history} >= {FIRST, FOLLOW_UP}


def test_a_chat_turn_streams_the_answer_token_by_token(server: Server, scripted_llm: str):
    """Studio's chat view and agent-chat-ui: messages in, the answer's tokens streamed out."""
    client: Any = get_sync_client(url=server.url)
    thread_id = client.threads.create()["thread_id"]
    # Cache off: an earlier test asked the same question, and a cached answer streams nothing.
    context = {
        "model": "openai-compatible:scripted",
        "base_url": scripted_llm,
        "answer_cache": False,
    }
    tokens: dict[str, list[str]] = {}
    for part in client.runs.stream(
        thread_id,
        "crag",
        input={"messages": [{"role": "user", "content": FIRST}]},
        context=context,
        stream_mode="messages-tuple",
        stream_subgraphs=True,  # as agent-chat-ui asks: the answer is written in a subgraph
    ):
        assert part.event != "error", part.data
        if part.event.split("|")[0] == "messages":
            chunk, metadata = part.data
            tokens.setdefault(metadata["langgraph_node"], []).append(chunk["content"])
    assert len(tokens["generate"]) > 3  # word by word, as the model sent them
    assert "".join(tokens["generate"]) == f"{ANSWER} [S1]"
    assert set(tokens) <= {"generate", "finalize"}  # no verdict, no rewritten question
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai"]
    assert messages[1]["content"].startswith(ANSWER) and "Sources:" in messages[1]["content"]
    assert messages[1]["additional_kwargs"]["sources"][0]["id"].endswith("__c0000")


def test_eight_runs_at_once_on_eight_threads_stay_apart(server: Server, scripted_llm: str):
    from concurrent.futures import ThreadPoolExecutor

    client: Any = get_sync_client(url=server.url)
    context = {
        "model": "openai-compatible:scripted",
        "base_url": scripted_llm,
        "answer_cache": False,
    }
    questions = [f"Which team won Super Bowl 50? (asked by user {i})" for i in range(8)]
    threads = [client.threads.create()["thread_id"] for _ in questions]

    def ask(i: int) -> list[str]:
        return stream_nodes(client, threads[i], questions[i], context)

    with ThreadPoolExecutor(max_workers=8) as pool:
        paths = list(pool.map(ask, range(8)))
    assert paths == [KB_PATH] * 8
    for thread_id, question in zip(threads, questions, strict=True):
        values = client.threads.get_state(thread_id)["values"]
        assert values["question"] == question and values["standalone_question"] == question
        assert [t["question"] for t in values["history"]] == [question]
        assert values["answer"] == ANSWER


def test_a_question_with_two_parts_fans_out_visibly_in_the_stream(
    server: Server, scripted_llm: str
):
    """Studio's view of a fan-out: each part's pass streams under its own namespace."""
    client: Any = get_sync_client(url=server.url)
    thread_id = client.threads.create()["thread_id"]
    context = {"model": "openai-compatible:scripted", "base_url": scripted_llm}
    question = "Which team won Super Bowl 50, and where was the game played?"
    events = stream_updates(client, thread_id, question, context)
    top = [nodes for event, nodes in events if event == "updates"]
    nested = {event for event, _ in events if event.startswith("updates|answer_part")}
    assert ["analyze_query"] in top and top.count(["answer_part"]) == 2
    assert len(nested) == 2  # one namespace per part
    assert any("generate" in nodes for event, nodes in events if event in nested)
    values = client.threads.get_state(thread_id)["values"]
    assert values["route"] == "multi_part" and len(values["parts"]) == 2
    assert values["answer"].count(ANSWER) == 2


def test_the_server_listens_on_loopback_only(server: Server):
    import socket

    port = int(server.url.rsplit(":", 1)[1])
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))  # picks the outward interface; sends nothing
        address = probe.getsockname()[0]
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    if address.startswith("127."):
        pytest.skip("this machine has no non-loopback interface to probe")
    with pytest.raises(OSError):
        socket.create_connection((address, port), timeout=2).close()


@pytest.mark.integration
def test_embedded_model_runs_a_thread_through_the_server(server: Server):
    client: Any = get_sync_client(url=server.url, timeout=600)
    thread_id = client.threads.create()["thread_id"]
    started = time.perf_counter()
    nodes = stream_nodes(client, thread_id, FIRST, {})  # default context: the embedded model
    first_seconds = time.perf_counter() - started
    values = client.threads.get_state(thread_id)["values"]
    assert nodes[0] == "contextualize_question" and nodes[-1] == "finalize"
    assert "Broncos" in values["answer"], values
    print(f"embedded run over the server: {first_seconds:.1f}s, path {nodes}")

    stream_nodes(client, thread_id, FOLLOW_UP, {})
    values = client.threads.get_state(thread_id)["values"]
    assert "Super Bowl" in values["standalone_question"], values["standalone_question"]
    assert "24" in values["answer"], values


def test_documents_go_in_and_out_through_the_indexer_graph(server: Server):
    import httpx

    client: Any = get_sync_client(url=server.url)
    assert client.assistants.search(graph_id="indexer")  # served beside the question graph
    context = {"collection": "apidocs"}
    doc = {
        "page_content": "The Velna bridge gauge reads 4.2 m in spring.",
        "metadata": {"source": "notes://velna", "title": "Velna gauges"},
    }
    report = client.runs.wait(None, "indexer", input={"docs": [doc]}, context=context)["report"]
    assert report["added"] == ["notes://velna"] and report["chunks_stored"] == 1
    again = client.runs.wait(None, "indexer", input={"docs": [doc]}, context=context)["report"]
    assert again["unchanged"] == ["notes://velna"] and again["chunks_written"] == 0

    listed = httpx.get(f"{server.url}/crag/collections/apidocs/documents", timeout=30).json()
    [stored] = listed["documents"]
    assert stored["title"] == "Velna gauges" and stored["source"] == "notes://velna"

    refused = client.runs.wait(None, "indexer", input={"urls": ["/etc/passwd"]}, context=context)
    assert refused["report"]["failed"][0]["path"] == "/etc/passwd"
    removed = client.runs.wait(
        None, "indexer", input={"remove": [stored["doc_id"]]}, context=context
    )["report"]
    assert removed["removed"] == [stored["doc_id"]] and removed["chunks_stored"] == 0


def test_the_servers_threads_are_kept_in_its_own_folder(server: Server):
    client: Any = get_sync_client(url=server.url)
    client.threads.create(metadata={"purpose": "where is it kept"})
    deadline = time.monotonic() + 30
    kept = server.log_path.parent / ".langgraph_api"
    while not kept.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert kept.is_dir()  # the test's folder, not the project's `.langgraph_api/`
