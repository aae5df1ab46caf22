"""The knowledge base on a Chroma server (``chroma run`` on loopback) shared by two processes.

Each process keeps its keyword index as a local copy synced from the server by change token and
per-document hash; these tests check that copies agree with the server after every kind of write
made through the other process, and that the CLI works across two data dirs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.fixtures.shared_services import Process, chroma_server
from crag_core.clients.chroma import NewDocument, collection_names
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.formats.table_rows import table_from_rows
from tests.fakes import HashEmbeddings
from tests.system.conftest import base_env, crag
from tests.system.test_durability import (
    FILES,
    assert_store_is_consistent,
    kill_ingest_midway,
    make_corpus,
)


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    with chroma_server(tmp_path_factory.mktemp("chroma")) as server:
        yield server


def shared_kb(store: Path, url: str, collection: str) -> KnowledgeBase:
    return KnowledgeBase(store, collection, HashEmbeddings(), server_url=url, timeout_s=10)


def doc(doc_id: str, content_hash: str, *chunks: str) -> NewDocument:
    return NewDocument(doc_id, f"/{doc_id}.md", content_hash, list(chunks))


def test_a_write_through_one_process_is_found_by_keyword_through_another(chroma, tmp_path):
    a = shared_kb(tmp_path / "a", chroma.url, "sync-basic")
    b = shared_kb(tmp_path / "b", chroma.url, "sync-basic")
    a.replace_documents([doc("zeta", "h1", "The zeppelin Hindenburg burned at Lakehurst.")])
    hits = b.search("Hindenburg Lakehurst", 3, "keyword")
    assert [h.id for h in hits] == ["zeta__c0000"]
    assert b.keywords.hashes() == {"zeta": "h1"}
    version = b.version()
    assert b.sync() == 0  # the token has not moved: nothing re-read

    a.replace_documents([doc("zeta", "h2", "Only the airship Graf Zeppelin remains here.")])
    assert b.search("Hindenburg", 3, "keyword") == []
    assert [h.id for h in b.search("airship Graf", 3, "keyword")] == ["zeta__c0000"]
    assert b.version() > version  # b's answer cache sees the change

    version = b.version()
    a.remove_document("zeta")
    assert b.search("airship Graf", 3, "keyword") == []
    assert b.version() > version
    assert b.keywords.doc_ids() == []


def test_an_incomplete_document_on_the_server_is_not_indexed_until_complete(chroma, tmp_path):
    a = shared_kb(tmp_path / "a", chroma.url, "sync-partial")
    b = shared_kb(tmp_path / "b", chroma.url, "sync-partial")
    a.replace_documents([doc("two", "h1", "Lighthouse keepers of Alexandria.", "Pharos tower.")])
    # A writer cut short: one chunk of a two-chunk document left, then a token stamp.
    a.collection.delete(ids=["two__c0001"])
    assert a.copy is not None
    a.copy.mark_changed()
    assert b.search("Pharos Alexandria", 3, "keyword") == []
    assert b.stored_hashes() == {}
    a.replace_documents([doc("two", "h1", "Lighthouse keepers of Alexandria.", "Pharos tower.")])
    assert {h.id for h in b.search("Pharos Alexandria", 3, "keyword")} == {
        "two__c0000",
        "two__c0001",
    }


def test_a_process_started_later_catches_up_with_everything(chroma, tmp_path):
    a = shared_kb(tmp_path / "a", chroma.url, "sync-late")
    a.replace_documents(
        [doc(f"d{i}", f"h{i}", f"Entry {i} about the unusual word quokka{i}.") for i in range(450)]
    )
    late = shared_kb(tmp_path / "late", chroma.url, "sync-late")
    assert late.sync() == 450  # three batches of SYNC_BATCH documents
    assert [h.id for h in late.search("quokka321", 1, "keyword")] == ["d321__c0000"]
    assert sorted(late.keywords.chunk_ids()) == sorted(a.collection.get(include=[])["ids"])


def table_doc(doc_id: str, content_hash: str, rows: list[list[object]]) -> NewDocument:
    table = table_from_rows(doc_id, "", rows)
    assert table is not None
    return NewDocument(
        doc_id, f"/{doc_id}.csv", content_hash, [str(rows)], label=f"{doc_id}.csv", tables=[table]
    )


def test_tables_written_through_one_process_are_queried_through_another(chroma, tmp_path):
    a = shared_kb(tmp_path / "a", chroma.url, "sync-tables")
    b = shared_kb(tmp_path / "b", chroma.url, "sync-tables")
    assert b.tables.catalog() == []
    a.replace_documents(
        [table_doc("birds", "h1", [["species", "count"], ["Gull", 3], ["Tern", 5]])]
    )
    (info,) = b.tables.catalog()  # the catalog read brings b's copy up to date
    assert (info.name, info.label, info.rows) == ("birds", "birds.csv", 2)
    assert b.tables.query("SELECT SUM(count) FROM birds").rows == ((8,),)

    a.replace_documents([table_doc("birds", "h2", [["species", "count"], ["Gull", 30]])])
    assert [t.rows for t in b.tables.catalog()] == [1]
    assert b.tables.query("SELECT SUM(count) FROM birds").rows == ((30,),)

    a.replace_documents([doc("birds", "h3", "No table any more, only prose about gulls.")])
    assert b.tables.catalog() == []  # a document that lost its table loses it everywhere
    a.replace_documents([table_doc("fish", "h4", [["name", "kg"], ["Cod", 1.5]])])
    late = shared_kb(tmp_path / "late", chroma.url, "sync-tables")
    assert [t.name for t in late.tables.catalog()] == ["fish"]  # a process started later
    a.remove_document("fish")
    assert b.tables.catalog() == [] and late.tables.catalog() == []

    a.replace_documents([table_doc("fish", "h5", [["name", "kg"], ["Cod", 1.5]])])
    assert [t.name for t in b.tables.catalog()] == ["fish"]
    assert "sync-tables" in collection_names(chroma.url)
    assert not [n for n in collection_names(chroma.url) if "tables." in n]  # the tables' own
    a.drop()
    assert (
        a.copy is not None and a.copy.shared_tables(create=False) is None
    )  # dropped with the collection
    assert shared_kb(tmp_path / "new", chroma.url, "sync-tables").tables.catalog() == []


def test_two_cli_processes_with_their_own_data_dirs_share_one_collection(chroma, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "okapi.md").write_text(
        "# Okapi\n\nThe okapi is a giraffid artiodactyl mammal native to the Ituri Rainforest "
        "in the Democratic Republic of the Congo."
    )
    (corpus / "tides.md").write_text(
        "# Tides\n\nTides are the rise and fall of sea levels caused by the gravitational "
        "forces of the Moon and the Sun acting on the Earth's oceans."
    )
    env_a = base_env(tmp_path / "data-a", CRAG_CHROMA_URL=chroma.url)
    env_b = base_env(tmp_path / "data-b", CRAG_CHROMA_URL=chroma.url)
    ingested = crag("ingest", str(corpus), "--collection", "shared-cli", env=env_a)
    assert ingested.returncode == 0, ingested.stderr
    assert "2 added" in ingested.stdout

    listed = crag("kb", "list", env=env_b)
    assert listed.returncode == 0, listed.stderr
    assert "shared-cli" in listed.stdout and "2 documents" in listed.stdout
    for mode, query, expected in [
        ("keyword", "Ituri artiodactyl", "okapi"),  # only B's synced keyword copy finds this
        ("dense", "What makes the sea rise and fall?", "tides"),
    ]:
        found = crag(
            "kb",
            "search",
            query,
            "--collection",
            "shared-cli",
            "--mode",
            mode,
            "-k",
            "1",
            env=env_b,
        )
        assert found.returncode == 0, found.stderr
        assert expected in found.stdout, (mode, found.stdout)
    assert not (tmp_path / "data-b" / "chroma").exists(), "B must not create a local store"


def test_sigkill_mid_ingest_into_the_server_then_rerun_stores_every_file_once(chroma, tmp_path):
    corpus = make_corpus(tmp_path)
    data = tmp_path / "data"
    env = base_env(data, CRAG_CHROMA_URL=chroma.url)
    watcher = KnowledgeBase(
        tmp_path / "watch", "crash-shared", HashEmbeddings(), server_url=chroma.url
    )
    stored = kill_ingest_midway(corpus, env, "crash-shared", lambda: len(watcher.stored_hashes()))

    rerun = crag("ingest", str(corpus), "--collection", "crash-shared", env=env)
    assert rerun.returncode == 0, rerun.stderr
    # Whatever was cut short on the server (a batch's upsert, its stale-chunk deletion) is
    # incomplete there, so written again in full; complete documents are left alone.
    assert f"{FILES - stored} added, 0 replaced, {stored} unchanged" in rerun.stdout
    assert_store_is_consistent(data, corpus, "crash-shared", server_url=chroma.url)


def test_a_chroma_server_that_is_down_is_a_clear_error(tmp_path):
    from benchmarks.fixtures.serve import free_port

    env = base_env(
        tmp_path, CRAG_CHROMA_URL=f"http://127.0.0.1:{free_port()}", CRAG_SERVICE_TIMEOUT_S="3"
    )
    done = crag("kb", "list", env=env, timeout=60)
    assert done.returncode == 3
    assert "Cannot reach the Chroma server at http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


CHROMA_TOKEN = "tok-chroma-5e8a1f"


def test_the_chroma_server_behind_its_token_refuses_a_client_without_it(chroma, tmp_path):
    from benchmarks.fixtures.shared_services import chroma_proxy
    from crag_core.errors import KnowledgeBaseError

    with chroma_proxy(tmp_path / "proxy", chroma.url, CHROMA_TOKEN) as proxy:
        for token, said in [("", "needs CRAG_CHROMA_TOKEN"), ("tok-wrong", "refused the token")]:
            kb = KnowledgeBase(tmp_path / token, "guarded", HashEmbeddings(), server_url=proxy.url)
            kb._token = token
            with pytest.raises(KnowledgeBaseError, match=said) as refused:
                kb.count()
            assert "tok-" not in str(refused.value)  # the token is never in a message

        env = base_env(tmp_path / "data", CRAG_CHROMA_URL=proxy.url, CRAG_CHROMA_TOKEN=CHROMA_TOKEN)
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "gauge.md").write_text("# Gauge\n\nThe Velna gauge reads 4.2 m.")
        done = crag("ingest", str(tmp_path / "docs"), "--collection", "guarded", env=env)
        assert done.returncode == 0, done.stderr
        found = crag("kb", "search", "Velna gauge", "--collection", "guarded", env=env)
        assert "4.2 m" in found.stdout, found.stderr
        without = crag("kb", "list", env={**env, "CRAG_CHROMA_TOKEN": ""})
        assert without.returncode != 0 and "needs CRAG_CHROMA_TOKEN" in without.stderr
        for text in (done.stdout + done.stderr, found.stdout, without.stderr, proxy.log()):
            assert CHROMA_TOKEN not in text
