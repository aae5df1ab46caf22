"""``python -m tests.scripted_server PORT DELAY_S``: the scripted CRAG model in its own process.

Answers like ``tests.loopback.scripted_model`` after ``DELAY_S`` per request, and prints one
line per request, so a test can kill it by pid in the middle of a run.
"""

from __future__ import annotations

import sys
import threading
import time

from tests.loopback import loopback, scripted_model
from tests.system.conftest import ANSWER


def main() -> None:
    port, delay_s = int(sys.argv[1]), float(sys.argv[2])
    scripted = scripted_model(f"{ANSWER} [S1]", "What was the score of Super Bowl 50?")

    def slow(method, path, body):
        print(f"request {path}", flush=True)
        time.sleep(delay_s)
        return scripted(method, path, body)

    with loopback(slow, port=port):
        print("ready", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
