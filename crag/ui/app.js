// The page: ask a question on a thread, watch every node run on the drawn graph, read the
// answer as it is written, open what it cites, browse threads and inspect each turn's steps,
// and manage the documents of the collection asked (documents.js).
import { api, streamRun } from "./api.js";
import { DocumentsPanel } from "./documents.js";
import { GraphView, QUESTION_PASS, flattenPasses } from "./graph.js";
import { $, make } from "./dom.js";

const GRAPH_ID = "crag";
const STREAM_MODE = ["tasks", "custom", "messages-tuple"];
const page = { readyMs: null, runs: [] }; // read by the browser test and by curious users
window.cragPage = page;

let assistant, graphView, defaults = {}, schema = {}, threadId = null, running = null;

function status(text) { $("status").textContent = text; }

// A handler whose failure (the server stopped, say) is shown in the status line, not lost.
const shown = (fn) => (...args) => fn(...args).catch((error) => status(`Failed: ${error.message}`));

// LangGraph writes a reducer's overwrite as {value, type: "__overwrite__"}: show the value.
function plain(value) {
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    if (value.type === "__overwrite__" && "value" in value) return plain(value.value);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

// ---- run settings, from the graph's context schema ----

// Fields the server keeps for its operator (settings.locked) are shown, not editable.
function buildFields(contextSchema, locked = []) {
  const box = $("fields");
  box.replaceChildren();
  schema = contextSchema.properties || {};
  for (const [name, field] of Object.entries(schema)) {
    const value = defaults[name] ?? field.default;
    const label = make("label", { title: field.description || "" });
    let input;
    if (field.enum) {
      input = make("select");
      for (const option of field.enum) input.append(make("option", { value: option }, option));
      input.value = value;
    } else if (field.type === "boolean") {
      input = make("input", { type: "checkbox" });
      input.checked = Boolean(value);
      label.classList.add("check");
    } else if (field.type === "integer" || field.type === "number") {
      input = make("input", { type: "number", step: field.type === "integer" ? "1" : "any" });
      if (field.minimum !== undefined) input.min = field.minimum;
      if (field.maximum !== undefined) input.max = field.maximum;
      input.value = value;
    } else {
      input = make("input", { type: "text" });
      input.value = typeof value === "object" ? JSON.stringify(value) : value ?? "";
      if (name === "collection") input.setAttribute("list", "collections");
    }
    input.name = name;
    input.id = `field-${name}`;
    const note = locked.includes(name) ? " Set by the server's operator." : "";
    if (note) input.disabled = true;
    label.append(make("span", {}, field.title || name), input, make("small", {}, (field.description || "") + note));
    box.append(label);
  }
}

// Only the fields changed from the server's values: the rest keep the server's settings.
function runContext() {
  const context = {};
  for (const [name, field] of Object.entries(schema)) {
    const input = $(`field-${name}`);
    let value;
    if (input.type === "checkbox") value = input.checked;
    else if (input.type === "number") value = input.value === "" ? null : Number(input.value);
    else if (field.type === "object") value = input.value ? JSON.parse(input.value) : {};
    else value = input.value;
    if (input.disabled) continue;
    if (value !== null && JSON.stringify(value) !== JSON.stringify(defaults[name] ?? field.default)) context[name] = value;
  }
  return context;
}

const collection = () => $("field-collection")?.value || defaults.collection;

// ---- one turn: question, streamed answer, sources, steps ----

class TurnView {
  constructor(question, collectionName) {
    this.collection = collectionName;
    this.documents = new Map(); // chunk or web id -> Document, from the steps' updates
    this.root = make("article", { class: "turn", "data-status": "running" });
    this.answer = make("p", { class: "answer draft" });
    this.confidence = make("p", { class: "confidence", hidden: "" });
    this.cost = make("p", { class: "cost", hidden: "" });
    this.spent = { calls: 0, prompt: 0, cached: 0 }; // the turn's ledger, summed as steps end
    this.sources = make("ol", { class: "sources", "aria-label": "Sources" });
    const steps = make("details", { class: "steps" });
    this.stepCount = make("summary", {}, "Steps");
    this.stepList = make("ol");
    steps.append(this.stepCount, this.stepList);
    this.root.append(make("p", { class: "question" }, question), this.answer, this.confidence, this.cost, this.sources, steps);
    this.open = new Map(); // task id -> its running step (parallel branches run at once)
    $("turns").append(this.root);
  }

  draft(text) {
    this.answer.textContent = text;
    this.root.scrollIntoView({ block: "end" });
  }

  startStep(node, task) {
    const item = make("li", { class: "step running", "data-node": node });
    const details = make("details");
    const summary = make("summary");
    summary.append(make("span", { class: "node" }, node), make("span", { class: "time" }), make("span", { class: "summary" }));
    details.append(summary, make("pre"));
    item.append(details);
    this.stepList.append(item);
    this.stepCount.textContent = `Steps (${this.stepList.children.length})`;
    this.open.set(task, item);
    return item;
  }

  finishStep(node, task, update, seconds, summary) {
    const item = this.open.get(task) || this.startStep(node, task);
    this.open.delete(task);
    item.classList.remove("running");
    const line = summary || (update ? Object.keys(update).join(", ") : "no change");
    item.querySelector(".time").textContent = `${seconds.toFixed(2)} s`;
    item.querySelector(".summary").textContent = line;
    item.querySelector("pre").textContent = JSON.stringify(update ?? {}, null, 2);
    for (const key of ["documents", "web_results", "relevant_documents"]) {
      for (const doc of update?.[key] || []) {
        const id = doc.id || doc.metadata?.id;
        // The first sighting is the stored chunk as retrieved; later ones may be refined strips.
        if (id && !this.documents.has(id)) this.documents.set(id, doc);
      }
    }
    return line;
  }

  // A top-level step's cost entries (a part's come once, in answer_part's update).
  addCost(entries) {
    for (const entry of entries || []) {
      this.spent.calls += entry.calls;
      this.spent.prompt += entry.prompt_tokens;
      this.spent.cached += entry.cached_tokens;
    }
  }

  finish(answer, sources, confidence, warnings = [], firstTokenMs = null) {
    this.answer.classList.remove("draft");
    this.answer.textContent = answer;
    for (const text of warnings) this.answer.after(make("p", { class: "warning" }, text));
    // P(right) as the graph estimates it; "I don't know" and small talk carry none.
    this.confidence.hidden = typeof confidence !== "number";
    if (typeof confidence === "number") {
      const level = confidence >= 0.75 ? "high" : confidence >= 0.5 ? "medium" : "low";
      this.confidence.dataset.level = level;
      this.confidence.textContent = `confidence ${confidence.toFixed(2)} (${level})`;
      this.confidence.title = "How likely this answer is right, estimated from the checks the run made";
    }
    const { calls, prompt, cached } = this.spent;
    const first = typeof firstTokenMs === "number" ? ` · first token ${(firstTokenMs / 1000).toFixed(1)} s` : "";
    this.cost.hidden = false;
    this.cost.textContent = `${calls} model call${calls === 1 ? "" : "s"} · ${prompt.toLocaleString("en")} prompt tokens, ${cached.toLocaleString("en")} from the model's cache${first}`;
    this.cost.title = "What the answer cost: the model calls of every step, and the prompt tokens the model server read from its cache";
    this.sources.replaceChildren();
    sources.forEach((source, n) => {
      const where = source.location ? ` (${source.location})` : "";
      const button = make("button", { type: "button", "data-id": source.id }, `[${n + 1}] ${source.source}${where}`);
      button.addEventListener("click", () => preview(source, this));
      const item = make("li");
      item.append(button);
      this.sources.append(item);
    });
    this.root.dataset.status = "done";
  }

  fail(message) {
    this.answer.classList.remove("draft");
    this.root.append(make("p", { class: "error", role: "alert" }, message));
    this.root.dataset.status = "error";
  }
}

async function preview(source, turn) {
  $("preview-title").textContent = source.id;
  $("preview-source").textContent = source.source + (source.location ? ` — ${source.location}` : "");
  $("preview-text").textContent = "Loading…";
  $("preview-figure").hidden = true;
  $("preview").showModal();
  if (source.sql) {  // an answer read from a table: the query that read it
    $("preview-text").textContent = `SQL: ${source.sql}`;
    return;
  }
  let text, about;
  const seen = turn.documents.get(source.id);
  // A whole document (a catalog's or a summary's source) opens at its first chunk.
  const id = source.id.includes("__c") || source.id.startsWith("web:") ? source.id : `${source.id}__c0000`;
  try {
    if (seen) [text, about] = [seen.page_content, seen.metadata || {}];
    else {
      const chunk = await api.chunk(turn.collection, id);
      [text, about] = [chunk.text, chunk];
    }
  } catch (error) {
    $("preview-text").textContent = `The text is not available: ${error.message}`;
    return;
  }
  showQuoted($("preview-text"), text, source.quote);
  // A PDF page or an image is shown as it looks, drawn by the server from the file, with
  // the region of the cited text marked where the reader knew it.
  const drawn = (about.type === "pdf" && about.page != null) || about.type === "image";
  if (drawn && !source.id.startsWith("web:")) {
    const image = $("preview-page");
    image.alt = about.page != null ? `Page ${about.page} of ${source.source}` : source.source;
    image.src = api.pageImage(turn.collection, id);
    markRegion($("preview-mark"), source.box || about.box);
    $("preview-figure").hidden = false;
  }
}

// A box [left, top, right, bottom] (fractions of the page; or stored as "l,t,r,b") drawn
// over the page's image.
function markRegion(mark, box) {
  const values = typeof box === "string" ? box.split(",").map(Number) : box;
  const ok = Array.isArray(values) && values.length === 4 && values.every((v) => v >= 0 && v <= 1);
  mark.hidden = !ok;
  if (!ok) return;
  const [left, top, right, bottom] = values;
  Object.assign(mark.style, {
    left: `${left * 100}%`, top: `${top * 100}%`,
    width: `${(right - left) * 100}%`, height: `${(bottom - top) * 100}%`,
  });
}

// The chunk's text with the sentence the answer stands on marked (spacing may differ).
function showQuoted(box, text, quote) {
  box.replaceChildren();
  const words = (quote || "").trim().split(/\s+/).filter(Boolean);
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const found = words.length ? new RegExp(escaped.join("\\s+")).exec(text) : null;
  if (!found) {
    box.textContent = text;
    return;
  }
  const mark = make("mark", {}, found[0]);
  box.append(text.slice(0, found.index), mark, text.slice(found.index + found[0].length));
  mark.scrollIntoView({ block: "center" });
}

// ---- asking: one streamed run on the current thread ----

async function ask(question) {
  const context = runContext();
  const used = collection(); // what the run searches: the field, sent only when changed
  if (!threadId) {
    threadId = (await api.createThread({ title: question.slice(0, 120), collection: used })).thread_id;
  }
  page.threadId = threadId;
  const turn = new TurnView(question, used);
  graphView.reset();
  const began = performance.now();
  const run = { firstTokenMs: null, totalMs: null, tokens: 0, nodes: [] };
  const started = new Map(), summaries = new Map();
  running = new AbortController();
  $("stop").hidden = false;
  $("ask-button").disabled = true;
  status("Running…");
  try {
    const body = {
      assistant_id: assistant.assistant_id,
      input: { messages: [{ role: "user", content: question }] },
      context,
      stream_mode: STREAM_MODE,
      stream_subgraphs: true, // a question's parts: their steps and tokens too
      on_disconnect: "cancel", // Stop ends the run on the server too
    };
    // A question's pass runs in the answer_question subgraph, a question in parts each part's
    // in the answer_part subgraph: their events come as "tasks|answer_question:<id>",
    // "tasks|answer_part:<id>" and so on. The question's pass's steps are the turn's own; a
    // part's are named "part N/node", with drafts per part.
    const parts = new Map(); // subgraph namespace -> part number
    const drafts = new Map();
    const partName = (ns, name) => (ns ? `part ${parts.get(ns) ?? "?"}/${name}` : name);
    const showDrafts = () => turn.draft([...drafts.entries()]
      .map(([ns, text]) => (ns ? `part ${parts.get(ns) ?? "?"}: ${text}` : text)).join("\n"));
    for await (const { event: named, data } of streamRun(threadId, body, running.signal)) {
      const [event, raw = ""] = named.split("|");
      const ns = raw.startsWith(`${QUESTION_PASS}:`) ? "" : raw; // "": the turn's own steps
      if (event === "tasks" && !raw && data.name === QUESTION_PASS) {
        // the pass's start, or what it gave the turn back (its steps came on their own)
        if (!("input" in data)) turn.addCost(plain(data.result)?.cost);
      } else if (event === "tasks" && "input" in data) {
        if (data.name === "answer_part" && typeof data.input?.part_index === "number") {
          parts.set(`answer_part:${data.id}`, data.input.part_index + 1); // its events' namespace
        }
        started.set(data.id, performance.now());
        graphView.start(data.name);
        turn.startStep(partName(ns, data.name), data.id);
        if (data.name === "generate") drafts.set(ns, "");
        status(`Running ${partName(ns, data.name)}…`);
      } else if (event === "tasks") {
        const seconds = (performance.now() - (started.get(data.id) ?? began)) / 1000;
        const update = plain(data.result);
        const key = `${ns}|${data.name}`;
        const summary = turn.finishStep(partName(ns, data.name), data.id, update, seconds, summaries.get(key));
        summaries.delete(key);
        graphView.finish(data.name, seconds, summary, Boolean(data.error));
        run.nodes.push(partName(ns, data.name));
        if (data.error) turn.fail(`${data.name} failed: ${data.error}`);
        if (!raw) turn.addCost(update?.cost); // a pass's cost comes once, in its update
        if (data.name === "finalize" && !ns && update) turn.finish(update.answer ?? "", update.sources ?? [], update.confidence, update.warnings, run.firstTokenMs);
      } else if (event === "custom" && data.node) {
        if (ns && typeof data.part === "number") parts.set(ns, data.part + 1);
        summaries.set(`${ns}|${data.node}`, data.summary);
      } else if (event === "messages") {
        const [chunk, meta] = data;
        if (meta.langgraph_node === "generate" && typeof chunk.content === "string" && chunk.content) {
          run.firstTokenMs ??= performance.now() - began;
          run.tokens += 1;
          drafts.set(ns, (drafts.get(ns) ?? "") + chunk.content);
          showDrafts();
        }
      } else if (event === "error") {
        throw new Error(data.message || data.error || JSON.stringify(data));
      }
    }
    graphView.end();
    status(`Answered in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  } catch (error) {
    const message = error.name === "AbortError" ? "Stopped." : error.message;
    turn.fail(message);
    status(message);
  } finally {
    run.totalMs = performance.now() - began;
    page.runs.push(run);
    running = null;
    $("stop").hidden = true;
    $("ask-button").disabled = false;
    if (turn.root.dataset.status === "running") turn.fail("The run ended without an answer.");
    await shown(listThreads)();
  }
}

// ---- threads: list, open (each turn's steps from the checkpoint history), continue ----

function threadTitle(thread) {
  const { first, asked } = thread.extracted || {};
  return thread.metadata?.title || first || asked || thread.thread_id;
}

async function listThreads() {
  const list = $("thread-list");
  const threads = await api.threads();
  list.replaceChildren();
  for (const thread of threads) {
    const button = make("button", { type: "button", "data-thread": thread.thread_id }, threadTitle(thread));
    button.setAttribute("aria-current", String(thread.thread_id === threadId));
    button.addEventListener("click", () => shown(openThread)(thread.thread_id, thread.metadata || {}));
    const item = make("li");
    item.append(button);
    list.append(item);
  }
}

function askedIn(input) {
  const messages = input?.messages || [];
  const last = messages[messages.length - 1];
  return (last && (last.content ?? last.text)) || input?.question || "";
}

// Seconds from a checkpoint to the next (its task's time); 0 for the last.
function secondsAfter(checkpoints, i) {
  const next = checkpoints[i + 1];
  return next ? (Date.parse(next.created_at) - Date.parse(checkpoints[i].created_at)) / 1000 : 0;
}

// A subgraph run's steps from its checkpoints (newest first, as the server lists them).
async function replaySteps(turn, history) {
  const checkpoints = history.reverse();
  for (const [i, checkpoint] of checkpoints.entries()) {
    for (const task of checkpoint.tasks || []) {
      if (checkpoint.metadata?.source !== "input" && task.result !== undefined) {
        turn.finishStep(task.name, task.id, plain(task.result), secondsAfter(checkpoints, i));
      }
    }
  }
}

async function openThread(id, metadata) {
  threadId = page.threadId = id;
  $("turns").replaceChildren();
  graphView.reset();
  status("Loading thread…");
  const checkpoints = (await api.history(id)).reverse(); // oldest first
  let turn = null;
  for (const [i, checkpoint] of checkpoints.entries()) {
    for (const task of checkpoint.tasks || []) {
      if (checkpoint.metadata?.source === "input") {
        turn = new TurnView(askedIn(task.result), metadata.collection || collection());
      } else if (turn && task.result !== undefined) {
        const update = plain(task.result);
        if (task.name === QUESTION_PASS) { // its steps are in its own checkpoints
          await replaySteps(turn, await api.history(id, `${QUESTION_PASS}:${task.id}`));
        } else {
          turn.finishStep(task.name, task.id, update, secondsAfter(checkpoints, i));
        }
        turn.addCost(update?.cost);
        if (task.name === "finalize" && update) turn.finish(update.answer ?? "", update.sources ?? [], update.confidence, update.warnings);
      }
    }
  }
  for (const view of $("turns").querySelectorAll(".turn[data-status=running]")) view.dataset.status = "incomplete";
  await listThreads();
  status(`Thread ${id}: ${$("turns").children.length} turn(s)`);
  $("question").focus();
}

// ---- start ----

async function init() {
  try {
    assistant = await api.assistant(GRAPH_ID);
    const [description, schemas, settings] = await Promise.all([
      api.graph(assistant.assistant_id), api.schemas(assistant.assistant_id), api.settings(),
    ]);
    defaults = settings.context;
    const options = make("datalist", { id: "collections" });
    for (const name of settings.collections) options.append(make("option", { value: name }));
    document.body.append(options);
    graphView = new GraphView($("graph"), flattenPasses(description));
    graphView.reset();
    buildFields(schemas.context_schema || {}, settings.locked || []);
    // The panel's collection is the one runs ask: it writes the settings form's field.
    const documents = new DocumentsPanel(defaults.collection, (name) => {
      if ($("field-collection")) $("field-collection").value = name;
    }, status);
    $("field-collection")?.addEventListener("change", (event) => shown(() => documents.load(event.target.value))());
    await Promise.all([documents.load(), listThreads()]);
    page.readyMs = performance.now();
    status(`Ready: graph "${GRAPH_ID}", collection "${collection()}", model "${defaults.model}"`);
  } catch (error) {
    status(`The server did not answer as expected: ${error.message}`);
  }
}

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || running) return;
  $("question").value = "";
  shown(ask)(question);
});
$("stop").addEventListener("click", () => running?.abort());
$("new-thread").addEventListener("click", () => {
  threadId = null;
  $("turns").replaceChildren();
  graphView.reset();
  status("New thread: ask a question");
  shown(listThreads)();
  $("question").focus();
});
init();
