"""The page at /ui/, in the system's headless Chromium, against ``make serve``.

Requests outside loopback are aborted and counted: the page must need none. The run uses the
scripted loopback model, chosen in the page's own settings form (the server's default is the
embedded model).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from langgraph_sdk import get_sync_client

from benchmarks.fixtures.browser import offline_page
from benchmarks.fixtures.serve import Server
from tests.fakes import KB_PATH
from tests.system.conftest import ANSWER

FIRST = "Which team won Super Bowl 50?"
FOLLOW_UP = "What was the final score?"


def steps_of(page: Any, turn: int) -> list[str]:
    nodes: list[str] = page.eval_on_selector_all(
        f".turn:nth-of-type({turn}) .step", "items => items.map(i => i.dataset.node)"
    )
    return nodes


def doc_ids(page: Any) -> list[str]:
    ids: list[str] = page.eval_on_selector_all(
        "#doc-list li", "items => items.map(i => i.dataset.doc)"
    )
    return ids


def use_scripted_model(page: Any, url: str) -> None:
    """Runs from the page use the scripted model at ``url``, with no answer cache."""
    page.click("#settings summary")
    page.fill("#field-model", "openai-compatible:scripted")
    page.fill("#field-base_url", url)
    page.uncheck("#field-answer_cache")
    page.click("#settings summary")


def ask(page: Any, question: str, turns: int) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")  # by keyboard
    page.wait_for_selector(f".turn:nth-of-type({turns})[data-status=done]", timeout=120_000)


def test_ask_watch_cite_and_continue_a_thread(server: Server, scripted_llm: str, tmp_path: Path):
    with offline_page() as view:
        page = view.page
        page.goto(f"{server.url}/ui/")
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        ready_ms = page.evaluate("window.cragPage.readyMs")

        # The settings form is built from the context schema: choose the scripted model there
        # (with no answer cache: an earlier test may have cached this question).
        use_scripted_model(page, scripted_llm)

        ask(page, FIRST, 1)
        assert steps_of(page, 1) == KB_PATH  # every node event, in order
        done = page.eval_on_selector_all(".node.done", "gs => gs.map(g => g.dataset.node)")
        assert set(done) == {*KB_PATH, "__end__"}
        assert page.inner_text(".turn .answer") == ANSWER
        # the answer's confidence is shown beside it, as the graph's output gives it
        badge = page.inner_text(".turn .confidence")
        assert badge.startswith("confidence 0.") or badge.startswith("confidence 1.")
        # and what it cost: the scripted model's two calls (generate, judge; the light
        # evaluator graded the chunk that states the answer without one)
        cost = page.inner_text(".turn .cost")
        assert cost.startswith("2 model calls · ") and "first token" in cost, cost
        [run] = page.evaluate("window.cragPage.runs")
        assert run["tokens"] > 3 and run["firstTokenMs"] < run["totalMs"]  # streamed, not at once
        thread_id = page.evaluate("window.cragPage.threadId")

        page.click(".turn:nth-of-type(1) .steps > summary")  # inspect a step
        page.click(".turn:nth-of-type(1) .step[data-node=retrieve] summary")
        update = json.loads(page.inner_text(".turn:nth-of-type(1) .step[data-node=retrieve] pre"))
        assert update["documents"][0]["id"].endswith("__c0000")

        page.focus(".turn .sources button")  # the citation preview, by keyboard
        page.keyboard.press("Enter")
        page.wait_for_selector("#preview[open]")
        assert ANSWER in page.inner_text("#preview-text")
        assert page.inner_text("#preview-source").endswith("sb50.md")
        page.keyboard.press("Escape")
        page.wait_for_selector("#preview", state="hidden")
        shot = tmp_path / "page.png"
        page.screenshot(path=str(shot), full_page=True)
        if os.environ.get("CRAG_UI_SCREENSHOT"):
            shutil.copy(shot, os.environ["CRAG_UI_SCREENSHOT"])

        page.set_viewport_size({"width": 390, "height": 844})  # phone width: nothing overflows
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.set_viewport_size({"width": 1400, "height": 900})

        # Leave the thread, open it again from the list: its turn is rebuilt from the history.
        page.click("#new-thread")
        page.wait_for_function("() => document.querySelectorAll('.turn').length === 0")
        page.click(f"[data-thread='{thread_id}']")
        page.wait_for_selector(".turn[data-status=done]")
        assert steps_of(page, 1) == KB_PATH
        assert page.inner_text(".turn .answer") == ANSWER
        assert page.inner_text(".turn .cost").startswith("2 model calls · ")  # from the history

        ask(page, FOLLOW_UP, 2)  # a follow-up on the opened thread
        assert steps_of(page, 2) == KB_PATH
        print(f"page ready {ready_ms:.0f} ms; first token {run['firstTokenMs']:.0f} ms")

        assert view.outside == [], view.outside
        assert view.errors == [], view.errors

    client: Any = get_sync_client(url=server.url)
    values = client.threads.get_state(thread_id)["values"]
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "human", "ai"]
    assert values["standalone_question"] == "What was the score of Super Bowl 50?"


def test_the_page_routes_refuse_what_is_not_there(server: Server):
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
        settings = http.get("/crag/settings").json()
        assert "crag" in settings["collections"] and settings["context"]["collection"] == "crag"
        missing = http.get("/crag/collections/nothing-here/chunks/x")
        assert missing.status_code == 404 and "nothing-here" in missing.json()["detail"]
        assert http.get("/crag/collections/crag/chunks/web:x").status_code == 404
        assert settings["collections"] == http.get("/crag/settings").json()["collections"]


def test_documents_are_added_asked_cited_and_removed_on_the_page(
    server: Server, scripted_llm: str, sb50_data_dir: Path, tmp_path: Path
):
    (tmp_path / "broncos.md").write_text(f"# Season\n\n## Final\n\n{ANSWER} They won 24–10.\n")
    (tmp_path / "levels.csv").write_text("gauge,level\nVelna bridge,4.2 m\n")
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00 ftypmp42")
    with offline_page() as view:
        page = view.page
        page.on("dialog", lambda d: d.accept("notes") if d.type == "prompt" else d.accept())
        page.goto(f"{server.url}/ui/")
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        assert page.input_value("#collection") == "crag"  # the default, holding documents
        assert page.input_value("#field-collection") == "crag"

        page.click("#new-collection")  # a prompt asks its name: "notes"
        page.wait_for_function("() => document.querySelector('#collection').value === 'notes'")
        page.wait_for_function(
            "() => document.querySelector('#collection-note').textContent.includes('empty')"
        )
        assert page.input_value("#field-collection") == "notes"  # runs ask it now

        files = [tmp_path / n for n in ("broncos.md", "levels.csv", "clip.mp4")]
        page.set_input_files("#files", [str(f) for f in files])  # several at once
        page.wait_for_selector("#uploads [data-file='clip.mp4'][data-status]")
        assert page.get_attribute("#uploads [data-file='broncos.md']", "data-status") == "added"
        assert page.get_attribute("#uploads [data-file='levels.csv']", "data-status") == "added"
        refused = page.inner_text("#uploads [data-file='clip.mp4'] .result")
        assert "unsupported file type '.mp4'" in refused
        page.wait_for_selector("#doc-list li:nth-child(2)")
        listed = page.inner_text("#doc-list")
        assert "Season" in listed and "markdown" in listed and "csv" in listed

        use_scripted_model(page, scripted_llm)
        ask(page, FIRST, 1)
        assert page.inner_text(".turn .answer") == ANSWER
        page.click(".turn .sources button")  # cited: the uploaded file
        page.wait_for_selector("#preview[open]")
        assert page.inner_text("#preview-source").endswith("broncos.md — Season > Final")
        assert page.inner_text("#preview-text mark") == ANSWER  # the sentence it stands on
        page.keyboard.press("Escape")

        page.click("#doc-list li[data-doc^='broncos'] button")  # confirm() is accepted
        page.wait_for_function(
            "() => document.querySelector('#doc-count').textContent.startsWith('1 ')"
        )
        assert [d.startswith("levels") for d in doc_ids(page)] == [True]

        assert view.outside == [], view.outside
        refusals = [e for e in view.errors if "422" in e]  # the browser logs the PNG's refusal
        assert len(refusals) == 1 and [e for e in view.errors if e not in refusals] == []

    kept = sb50_data_dir / "uploads" / "notes"
    assert sorted(p.name for p in kept.iterdir()) == ["levels.csv"]  # the removed upload went


def test_a_cited_scan_opens_as_its_page_with_the_cited_region_marked(
    server: Server, scripted_llm: str, tmp_path: Path
):
    from benchmarks.fixtures.sample_files import make_text_image

    filler = "The season's schedule, the stadium and the weather are described below. " * 4
    make_text_image(tmp_path / "final.png", [f"{ANSWER} They beat the Panthers 24-10.", filler])
    with offline_page() as view:
        page = view.page
        page.on("dialog", lambda d: d.accept("scans") if d.type == "prompt" else d.accept())
        page.goto(f"{server.url}/ui/")
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        page.click("#new-collection")
        page.wait_for_function("() => document.querySelector('#collection').value === 'scans'")
        page.set_input_files("#files", [str(tmp_path / "final.png")])
        page.wait_for_selector("#uploads [data-file='final.png'][data-status]", timeout=60_000)
        assert page.get_attribute("#uploads [data-file='final.png']", "data-status") == "added"
        use_scripted_model(page, scripted_llm)
        ask(page, FIRST, 1)
        page.click(".turn .sources button")  # cited: the photographed page
        page.wait_for_selector("#preview[open]")
        assert page.inner_text("#preview-source").endswith("final.png")
        page.wait_for_function(
            "() => { const i = document.querySelector('#preview-page'); "
            "return i.complete && i.naturalWidth > 0; }"
        )
        assert page.is_visible("#preview-mark")
        image = page.locator("#preview-page").bounding_box()
        mark = page.locator("#preview-mark").bounding_box()
        assert image and mark
        # the quoted sentence's line: inside the page, at its top-left margin, not the chunk
        assert image["x"] <= mark["x"] < image["x"] + 0.2 * image["width"]
        assert image["y"] <= mark["y"] < image["y"] + 0.2 * image["height"]
        assert mark["x"] + mark["width"] <= image["x"] + image["width"] + 2
        assert mark["height"] < 0.04 * image["height"]  # one line of 12 pt on A4 (the chunk: 6)
        assert view.outside == [] and view.errors == []


def test_a_question_in_parts_streams_each_parts_steps_and_tokens(server: Server, scripted_llm: str):
    with offline_page() as view:
        page = view.page
        page.goto(f"{server.url}/ui/")
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        use_scripted_model(page, scripted_llm)
        ask(page, "Which team won Super Bowl 50, and what was the final score?", 1)
        steps = steps_of(page, 1)
        assert {"part 1/generate", "part 2/generate", "part 1/retrieve"} <= set(steps)
        assert steps[0] == "contextualize_question" and steps[-1] == "finalize"
        # what it cost: each part's two calls (generate, judge), counted once (a part's steps
        # and its answer_part update both carry them)
        cost = page.inner_text(".turn .cost")
        assert cost.startswith("4 model calls · ") and "first token" in cost, cost
        [run] = page.evaluate("window.cragPage.runs")
        assert run["tokens"] > 3  # each part's answer streamed as it was written
        assert len(page.inner_text(".turn .answer").splitlines()) == 2  # one line a part
        assert view.outside == [] and view.errors == []
