"""Keyword (SQLite FTS5 BM25), dense (Chroma) and hybrid (RRF) retrieval on real stores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crag_core.clients.keyword_index import KeywordIndex, match_expression
from crag_core.clients.knowledge_base import KnowledgeBase, ModeRetriever
from crag_core.text.documents import RetrievalMode
from tests.fakes import HashEmbeddings

DOCS = {
    "broncos": "The Denver Broncos defeated the Carolina Panthers to win Super Bowl 50.",
    "ctenophora": "Ctenophora are marine invertebrates that swim using bands of cilia.",
    "packets": "Packet switching groups data into packets transmitted over a digital network.",
    "louvre": "The Louvre in Paris is the world's most visited museum.",
}


@pytest.fixture
def kb(tmp_path):
    kb = KnowledgeBase(tmp_path / "chroma", "retrieval", HashEmbeddings())
    for doc_id, text in DOCS.items():
        kb.replace_document(doc_id, f"/kb/{doc_id}.md", f"hash-{doc_id}", [text])
    return kb


def ids(docs):
    return [d.metadata["id"] for d in docs]


def test_match_expression_quotes_words_and_drops_stopwords():
    assert match_expression("Who won the Super Bowl?") == '"won" OR "super" OR "bowl"'
    assert match_expression("the of and") == ""
    # FTS5 operators and syntax in user text are just words.
    assert match_expression('NEAR(a b) AND "x" OR y*') == '"near" OR "b" OR "x" OR "y"'


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_query_text_is_a_valid_fts5_query(tmp_path_factory, text):
    index = KeywordIndex(tmp_path_factory.mktemp("fts") / "k.sqlite3", "c")
    index.replace_document("d", "h", ["d__c0000"], ["some text about anything"])
    assert isinstance(index.search(text, 5), list)


def test_keyword_ranks_the_rare_term_first(kb):
    assert ids(kb.search("cilia invertebrates", 4, "keyword"))[0] == "ctenophora__c0000"


def test_every_hit_carries_its_cosine_score(kb):
    modes: tuple[RetrievalMode, ...] = ("dense", "keyword", "hybrid")
    for mode in modes:
        docs = kb.search("Super Bowl Broncos", 4, mode)
        assert docs and all(-1.0 <= d.metadata["score"] <= 1.0 for d in docs)
        assert docs[0].metadata["id"] == "broncos__c0000"
    keyword = kb.search("Super Bowl Broncos", 4, "keyword")
    assert all("bm25" in d.metadata for d in keyword)
    assert [d.metadata["keyword_rank"] for d in keyword] == list(range(1, len(keyword) + 1))


def test_hybrid_hits_found_by_keyword_carry_their_keyword_rank(kb):
    q = "cilia invertebrates"
    keyword_rank = {d.id: d.metadata["keyword_rank"] for d in kb.search(q, 10, "keyword")}
    hybrid = kb.search(q, 4, "hybrid")
    assert hybrid[0].id == "ctenophora__c0000" and hybrid[0].metadata["keyword_rank"] == 1
    for d in hybrid:  # dense-only hits carry none
        assert d.metadata.get("keyword_rank") == keyword_rank.get(d.id)


def test_hybrid_is_the_rrf_fusion_of_dense_and_keyword(kb):
    from crag_core.text.documents import reciprocal_rank_fusion

    q = "museum in Paris"
    dense, keyword = kb.search(q, 10, "dense"), kb.search(q, 10, "keyword")
    expected = ids(reciprocal_rank_fusion([dense, keyword], k=60))[:3]
    assert ids(kb.search(q, 3, "hybrid")) == expected


def test_reingesting_keeps_both_stores_in_step(kb):
    kb.replace_document("broncos", "/kb/broncos.md", "hash-2", ["Chunk one.", "Chunk two."])
    kb.replace_document("broncos", "/kb/broncos.md", "hash-3", ["Only chunk."])
    chroma_ids = sorted(kb.collection.get(include=[])["ids"])
    assert chroma_ids == sorted(kb.keywords.chunk_ids())
    assert chroma_ids.count("broncos__c0000") == 1 and "broncos__c0001" not in chroma_ids
    assert kb.stored_hash("broncos") == "hash-3"


def test_a_document_missing_from_the_keyword_index_counts_as_not_stored(kb):
    # As after a crash between the Chroma write and the keyword-index commit.
    with kb.keywords.conn:
        kb.keywords.conn.execute("DELETE FROM documents WHERE doc_id = 'louvre'")
    assert kb.stored_hash("louvre") is None
    assert kb.stored_hash("broncos") == "hash-broncos"


def test_keyword_hits_absent_from_chroma_are_never_served(kb):
    kb.collection.delete(ids=["packets__c0000"])
    assert "packets__c0000" not in ids(kb.search("packet switching network", 4, "keyword"))


def test_mode_retriever_searches_in_its_mode(kb):
    assert ids(ModeRetriever(kb, "keyword").search("cilia", 2)) == ["ctenophora__c0000"]


def test_empty_collection_returns_nothing(tmp_path):
    kb = KnowledgeBase(tmp_path / "chroma", "empty-one", HashEmbeddings())
    assert kb.search("anything", 4, "hybrid") == []
