"""What the shared knowledge base's keyword copy costs: the check per search, catching up.

    python -m benchmarks.measurements.keyword_sync --squad ../shared/data/squad-v1.1-dev.json.gz

All SQuAD dev paragraphs are written to a Chroma server (``chroma run`` on loopback) through
one process's knowledge base; a second one, with an empty data dir, then catches up (its first
search), checks an unchanged collection (every later search), and catches up after one
document changed. Embeddings are a fast hash (the sync never embeds: it copies text and
hashes), so only the sync is timed. Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fixtures.shared_services import chroma_server


def timed(action: object, repeat: int = 1) -> tuple[float, object]:
    """Median seconds of ``repeat`` calls of ``action`` and its last result."""
    seconds, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()  # type: ignore[operator]
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def main(argv: list[str] | None = None) -> int:
    """Write SQuAD dev to a Chroma server; time a second process's keyword copy."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squad", type=Path, required=True)
    args = parser.parse_args(argv)
    if not args.squad.is_file():
        print(f"No SQuAD file at {args.squad}.", file=sys.stderr)
        return 2
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from crag.eval.corpus import index_paragraphs
    from crag.eval.squad import load_squad
    from crag_core.clients.chroma import NewDocument
    from crag_core.clients.knowledge_base import KnowledgeBase

    squad = load_squad(args.squad)
    with tempfile.TemporaryDirectory() as tmp, chroma_server(Path(tmp)) as chroma:
        writer = KnowledgeBase(
            Path(tmp) / "a", "squad", DeterministicFakeEmbedding(size=64), server_url=chroma.url
        )
        index_paragraphs(writer, squad)
        reader = KnowledgeBase(
            Path(tmp) / "b", "squad", DeterministicFakeEmbedding(size=64), server_url=chroma.url
        )
        first, caught = timed(reader.sync)
        unchanged, _ = timed(reader.sync, repeat=20)
        search, _ = timed(lambda: reader.search("Super Bowl Broncos", 4, "keyword"), repeat=20)
        para = squad.paragraphs[0]
        writer.replace_documents([NewDocument(para.id, "edited", "new-hash", [para.text + " x"])])
        one, changed = timed(reader.sync)
        rows = [
            ("first search of a new process (copy everything)", first, f"{caught} documents"),
            ("every search, nothing changed (token check)", unchanged, "0 documents"),
            ("keyword search, token check included", search, "k=4"),
            ("first search after one document changed", one, f"{changed} document"),
        ]
        print(f"{len(squad.paragraphs)} paragraphs, {writer.count()} chunks on the Chroma server")
        print("| step | seconds | re-indexed |\n|---|---|---|")
        for step, seconds, what in rows:
            print(f"| {step} | {seconds:.4f} | {what} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
