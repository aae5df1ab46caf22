"""The server's front door (``crag.gate``), on the page's app: what a browser page may not do."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from crag.auth import access
from crag.web import app

STUDIO = "https://smith.langchain.com"


@pytest.fixture
def client():
    access.cache_clear()
    yield TestClient(app, base_url="http://127.0.0.1:2024")
    access.cache_clear()


@pytest.fixture
def signed_in(monkeypatch, client):
    monkeypatch.setenv("CRAG_API_TOKENS", "alice:tok-alice-11")
    access.cache_clear()
    return client


def test_a_host_that_is_not_this_server_is_refused_in_open_mode(client, monkeypatch):
    assert client.get("/crag/collections").status_code == 200
    assert client.get("/crag/collections", headers={"Host": "localhost:2024"}).status_code == 200
    rebound = client.get("/crag/collections", headers={"Host": "attacker.example:2024"})
    assert rebound.status_code == 403 and "CRAG_API_HOSTS" in rebound.json()["detail"]
    monkeypatch.setenv("CRAG_API_HOSTS", "crag.lan")
    assert client.get("/crag/collections", headers={"Host": "crag.lan:2024"}).status_code == 200


def test_only_the_servers_own_page_and_allowed_origins_may_call(client, monkeypatch):
    own = client.get("/crag/collections", headers={"Origin": "http://127.0.0.1:2024"})
    assert own.status_code == 200
    for origin in ("http://attacker.example", "http://127.0.0.1:9999", "null"):
        other = client.get("/crag/collections", headers={"Origin": origin})
        assert other.status_code == 403 and "not accepted" in other.json()["detail"]
    studio = client.get("/crag/collections", headers={"Origin": STUDIO})
    assert studio.status_code == 200
    monkeypatch.setenv("CRAG_API_ORIGINS", "none")
    assert client.get("/crag/collections", headers={"Origin": STUDIO}).status_code == 403


def test_a_body_must_be_json(client):
    simple = client.post(
        "/crag/collections", content=b'{"name": "pwned"}', headers={"Content-Type": "text/plain"}
    )
    assert simple.status_code == 415
    form = client.post("/crag/collections", data={"name": "pwned"})
    assert form.status_code == 415
    assert client.post("/crag/collections", json={"name": "fine"}).status_code in (200, 201)


def test_a_token_in_the_address_is_refused(signed_in):
    for query in ("token=tok-alice-11", "access_token=x", "q=tok-alice-11"):
        reply = signed_in.get(f"/crag/collections?{query}")
        assert reply.status_code == 400 and "Authorization" in reply.json()["detail"]
    store_key = signed_in.get("/crag/settings?key=abc")  # the store's key is not a credential
    assert store_key.status_code == 401


def test_the_meta_routes_and_page_posts_need_sign_in(signed_in):
    for path in ("/metrics", "/docs", "/openapi.json", "/info"):
        assert signed_in.get(path).status_code == 401
        with_token = signed_in.get(path, headers={"Authorization": "Bearer tok-alice-11"})
        assert with_token.status_code == 404  # past the gate (langgraph-api serves them)
    assert signed_in.get("/ui/").status_code == 200
    assert signed_in.post("/ui/crag", json={}).status_code == 405


def test_replies_name_the_origin_never_a_wildcard_and_may_not_be_framed(client):
    page = client.get("/ui/")
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    reply = client.get("/crag/collections", headers={"Origin": STUDIO})
    assert reply.headers.get("access-control-allow-origin") in (None, STUDIO)
    assert "content-security-policy" not in reply.headers  # the page's files only
