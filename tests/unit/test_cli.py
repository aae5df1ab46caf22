"""The command line: clear errors and exit codes, --json output, ingest reporting."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from crag.cli import app

runner = CliRunner()


def test_empty_question_is_refused():
    result = runner.invoke(app, ["ask", "   "])
    assert result.exit_code == 2 and "question is empty" in result.output


def test_huge_question_is_refused():
    result = runner.invoke(app, ["ask", "x" * 100_000])
    assert result.exit_code == 2 and "limit" in result.output


def test_nothing_ingested_is_a_clear_error(hash_kb, tmp_path):
    result = runner.invoke(app, ["ask", "Who won?", "--collection", "empty-one"])
    assert result.exit_code == 2 and "No collection 'empty-one'" in result.output
    (tmp_path / "a.md").write_text("Alpha.")
    runner.invoke(app, ["ingest", str(tmp_path), "--collection", "empty-one"])
    runner.invoke(
        app, ["kb", "remove", "--source", str(tmp_path), "--yes", "--collection", "empty-one"]
    )
    result = runner.invoke(app, ["ask", "Who won?", "--collection", "empty-one"])
    assert result.exit_code == 2 and "Nothing is ingested" in result.output


def test_version_and_short_help():
    from importlib.metadata import version

    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.output == f"crag {version('crag')}\n"
    for args in (["-h"], ["kb", "-h"], ["kb", "drop", "-h"], ["ask", "-h"], ["ingest", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage: " in result.output, args


def test_help_is_plain_text_with_flags_shown_as_flags():
    text = runner.invoke(app, ["ask", "-h"], env={"COLUMNS": "120"}).output
    assert "``" not in text and "[bold]" not in text and "╭" not in text
    assert "--json " in text and "<bool>" not in text
    assert "-q, --quiet" in text and "--collection <str>" in text


def ask_on_one_file(tmp_path, fake_services, *options: str):
    """``crag ask`` the Super Bowl question over one ingested file, with the fake model."""
    (tmp_path / "kb.md").write_text("The Denver Broncos won Super Bowl 50.")
    assert runner.invoke(app, ["ingest", str(tmp_path)]).exit_code == 0
    fake_services()
    result = runner.invoke(app, ["ask", "Which team won Super Bowl 50?", *options])
    assert result.exit_code == 0, result.output
    return result


def test_ask_quiet_prints_only_the_answer(hash_kb, fake_services, tmp_path):
    result = ask_on_one_file(tmp_path, fake_services, "-q")
    assert result.stdout.strip().splitlines() == ["The Denver Broncos won, 24–10."]


def test_bad_configuration_is_a_clear_error(hash_kb, fake_services):
    result = runner.invoke(app, ["ask", "Who won?", "--web-search", "bing"])
    assert result.exit_code == 2 and "web_search must be one of" in result.output


def test_ingest_reports_failures_and_exits_1(hash_kb, tmp_path):
    (tmp_path / "ok.md").write_text("Some text.")
    result = runner.invoke(app, ["ingest", str(tmp_path / "ok.md"), str(tmp_path / "nope.md")])
    assert result.exit_code == 1
    assert "1 added" in result.output and "no such file or directory" in result.output
    assert "Traceback" not in result.output


def test_ask_json_prints_one_object(hash_kb, fake_services, tmp_path):
    out = json.loads(ask_on_one_file(tmp_path, fake_services, "--json").stdout)
    assert set(out) >= {
        "answer",
        "sources",
        "path",
        "retries",
        "web_search_used",
        "warnings",
        "prompt_versions",
        "tool",
        "where",
        "plan",
    }
    assert out["path"][0] == "contextualize_question" and out["path"][-1] == "finalize"
    assert out["tool"] == "search" and out["where"] == ""
    assert out["plan"]["tool"] == "search" and out["plan"]["reason"]


def test_ask_streams_nodes_and_prints_answer(hash_kb, fake_services, tmp_path):
    (tmp_path / "kb.md").write_text("The Denver Broncos won Super Bowl 50.")
    runner.invoke(app, ["ingest", str(tmp_path)])
    fake_services()
    result = runner.invoke(app, ["ask", "Which team won Super Bowl 50?"])
    assert result.exit_code == 0, result.output
    for node in ("contextualize_question", "retrieve", "grade_documents", "generate", "finalize"):
        assert node in result.output
    assert "correct (model score 1.00)" in result.output  # the evaluator's decision and score
    assert "The Denver Broncos won, 24–10." in result.output


def test_ask_thread_resolves_a_follow_up(hash_kb, fake_services, tmp_path):
    from tests.fakes import make_llm
    from tests.unit.test_threads import FIRST, FOLLOW_UP, STANDALONE, thread_responder

    (tmp_path / "kb.md").write_text("The Denver Broncos won Super Bowl 50.")
    runner.invoke(app, ["ingest", str(tmp_path)])
    fake_services(llm=make_llm(thread_responder()))
    first = runner.invoke(app, ["ask", FIRST, "--thread", "cli-1", "--json"])
    second = runner.invoke(app, ["ask", FOLLOW_UP, "--thread", "cli-1", "--json"])
    assert first.exit_code == second.exit_code == 0, second.output
    out = json.loads(second.stdout)
    assert out["thread_id"] == "cli-1" and out["standalone_question"] == STANDALONE


def test_bad_thread_id_is_a_clear_error():
    result = runner.invoke(app, ["ask", "Who?", "--thread", "no spaces"])
    assert result.exit_code == 2 and "Invalid thread id" in result.output


def test_llm_failure_is_a_message_not_a_traceback(hash_kb, tmp_path, monkeypatch):
    (tmp_path / "kb.md").write_text("The Denver Broncos won Super Bowl 50.")
    runner.invoke(app, ["ingest", str(tmp_path)])
    # Nothing listens on port 9 (discard): connection refused, reported in one line. (The
    # document states the answer, so the light evaluator passes it on to the model.)
    result = runner.invoke(
        app,
        ["ask", "Which team won Super Bowl 50?", "--model", "openai-compatible:x"],
        env={"CRAG_BASE_URL": "http://127.0.0.1:9/v1", "CRAG_LLM_MAX_RETRIES": "0"},
    )
    assert result.exit_code == 3
    assert "Cannot reach the LLM endpoint" in result.output
    assert "Traceback" not in result.output
