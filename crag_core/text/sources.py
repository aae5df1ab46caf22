"""Where a stored document came from, and how it is named to the people who see it.

Every stored chunk's metadata says where its document came from (``origin``) and what to show
for it (``label``), besides ``source``, which only the server uses:

- ``file``: ``source`` is the file's absolute path (the CLI ingested it); the label is its path
  below the folder the CLI was given, or its name. A sync reads it again.
- ``upload``: ``source`` is the file kept under the data dir's ``uploads/``; the label is its
  name. A sync reads it again.
- ``url``: ``source`` and label are the address without ``user:password@``. A sync fetches it
  again, through the same checks as the first time.
- ``inline``: ``source`` and label are whatever name its sender gave it (never read as a path).
  A sync leaves it: there is nothing to read.

Documents stored before ``origin`` existed are told apart by what they carry: only files and
web pages were given a ``modified`` time, so a document without one was sent inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

Origin = Literal["file", "upload", "url", "inline"]
READ_AGAIN: frozenset[Origin] = frozenset({"file", "upload", "url"})
"""The origins whose sources a sync reads again."""


def is_url(source: str) -> bool:
    """Whether ``source`` is an http(s) address."""
    return source.lower().startswith(("http://", "https://"))


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (what is stored, listed and logged of a web source)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def origin_of(meta: Mapping[str, Any]) -> Origin:
    """Where the document whose chunk metadata is ``meta`` came from."""
    origin = meta.get("origin")
    if origin in ("file", "upload", "url", "inline"):
        return origin  # type: ignore[no-any-return]
    if "modified" not in meta:
        return "inline"
    return "url" if is_url(str(meta.get("source", ""))) else "file"


def public_source(meta: Mapping[str, Any]) -> str:
    """What to show for a document's source: its label; never a path on the server."""
    if meta.get("label"):
        return str(meta["label"])
    source = str(meta.get("source", ""))
    if is_url(source):
        return without_userinfo(source)
    if origin_of(meta) in ("file", "upload"):
        return PurePosixPath(source.replace("\\", "/")).name
    return source


def document_name(doc: Mapping[str, Any]) -> str:
    """What a catalog entry is called in an answer (its label, else its title, else its id)."""
    return str(doc.get("label") or doc.get("title") or doc.get("doc_id"))
