"""Ingest is crash-safe and two ingests of one collection do not collide (real stores, MiniLM)."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import ROOT
from crag.ingest import content_hash, document_id, split_text
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.text.documents import chunk_id
from tests.system.conftest import BIN, base_env, crag

FILES = 24
SENTENCES = 300
"""Per file: ~23 chunks, so the corpus spans several ingest batches and a kill lands mid-way."""


def make_corpus(root: Path) -> Path:
    corpus = root / "corpus"
    corpus.mkdir()
    for i in range(FILES):
        sentences = [
            f"Document {i} sentence {j} talks about topic {i * 31 + j}." for j in range(SENTENCES)
        ]
        (corpus / f"doc{i:02d}.md").write_text(" ".join(sentences))
    return corpus


def assert_store_is_consistent(
    data: Path, corpus: Path, collection: str, server_url: str = ""
) -> None:
    """Every file fully present exactly once, in Chroma and the keyword index alike.

    With a Chroma server, the keyword index is the data dir's copy, synced first.
    """
    store = next((data / "chroma-shared").iterdir()) if server_url else data / "chroma"
    kb = KnowledgeBase(store, collection, lambda: None, server_url=server_url)  # type: ignore[arg-type,return-value]
    kb.sync()
    chroma_ids = kb.collection.get(include=[])["ids"]
    keyword_ids = kb.keywords.chunk_ids()
    assert len(chroma_ids) == len(set(chroma_ids)), "duplicate chunk ids in Chroma"
    assert sorted(chroma_ids) == sorted(keyword_ids), "Chroma and keyword index disagree"
    expected = []
    for path in sorted(corpus.iterdir()):
        text = path.read_text()
        doc = document_id(path)
        expected += [chunk_id(doc, i) for i in range(len(split_text(text)))]
        assert kb.stored_hash(doc) == content_hash(text.encode()), path
    assert sorted(chroma_ids) == sorted(expected)


def committed_documents(data: Path, collection: str) -> int:
    index = data / "chroma" / "keyword" / f"{collection}.sqlite3"
    if not index.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM documents").fetchone()[0])
    except sqlite3.Error:
        return 0


def kill_ingest_midway(
    corpus: Path, env: dict[str, str], collection: str, stored: Callable[[], int]
) -> int:
    """Start ``crag ingest``, SIGKILL it once ``stored()`` reaches 3; return ``stored()`` then."""
    proc = subprocess.Popen(
        [str(BIN / "crag"), "ingest", str(corpus), "--collection", collection],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while stored() < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "ingest made no progress"
        time.sleep(0.05)
    assert proc.poll() is None, "ingest finished before it could be killed; use more files"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    killed_at = stored()
    assert 3 <= killed_at < FILES
    return killed_at


def test_sigkill_mid_ingest_then_rerun_leaves_every_file_exactly_once(tmp_path):
    corpus = make_corpus(tmp_path)
    data = tmp_path / "data"
    env = base_env(data)
    killed_at = kill_ingest_midway(corpus, env, "crash", lambda: committed_documents(data, "crash"))

    rerun = crag("ingest", str(corpus), "--collection", "crash", env=env)
    assert rerun.returncode == 0, rerun.stderr
    # The file being written when killed counts as not stored, so it is written again in full.
    assert f"{FILES - killed_at} added, 0 replaced, {killed_at} unchanged" in rerun.stdout
    assert_store_is_consistent(data, corpus, "crash")


def test_two_ingests_of_one_collection_at_once(tmp_path):
    corpus = make_corpus(tmp_path)
    data = tmp_path / "data"
    env = base_env(data)
    procs = [
        subprocess.Popen(
            [str(BIN / "crag"), "ingest", str(corpus), "--collection", "shared"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr
    # Each file was written once: by whichever ingest took the lock for its batch first; the
    # other found it stored with the same content (they read with no lock held, and write in
    # turns, batch by batch).
    counts = [
        {kind: int(n) for n, kind in re.findall(r"(\d+) (added|replaced|unchanged)", out)}
        for out, _ in outputs
    ]
    assert sum(c["added"] for c in counts) == FILES, counts
    assert sum(c["unchanged"] for c in counts) == FILES, counts
    assert sum(c["replaced"] for c in counts) == 0, counts
    assert_store_is_consistent(data, corpus, "shared")
