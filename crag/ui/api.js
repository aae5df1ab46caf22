// The LangGraph API of the server that serves this page (same origin), and the page's own
// routes under /crag. Every request has a timeout except a run's stream, which the user can
// stop.

const TIMEOUT_MS = 30000;
const TOKEN_KEY = "crag-token";

// A server with sign-in answers 401 until the request carries a user's token: the page asks
// for it once (a dialog), keeps it for the browser tab's session and sends it every time.
const bearer = () => {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
};

let asking = null; // one sign-in dialog at a time, whoever needs it
export function signIn(reason) {
  asking ??= new Promise((resolve) => {
    const dialog = document.getElementById("sign-in");
    document.getElementById("sign-in-reason").textContent = reason;
    const form = document.getElementById("sign-in-form");
    form.onsubmit = (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value.trim());
      document.getElementById("token").value = "";
      dialog.close();
      asking = null;
      resolve();
    };
    dialog.oncancel = (event) => event.preventDefault(); // nothing works without it
    dialog.showModal();
  });
  return asking;
}

// fetch with the token; on 401, sign in (with the server's reason) and try again, 3 times.
async function authorized(path, options) {
  const send = () => fetch(path, { ...options, headers: { ...options.headers, ...bearer() } });
  let reply = await send();
  for (let attempt = 0; reply.status === 401 && attempt < 3; attempt += 1) {
    const data = await reply.clone().json().catch(() => ({}));
    await signIn(data.detail || "This server needs a token.");
    reply = await send();
  }
  return reply;
}

async function request(method, path, body, timeoutMs = TIMEOUT_MS) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const reply = await authorized(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
    });
    const data = await reply.json().catch(() => ({}));
    if (!reply.ok) throw new Error(data.detail || data.message || `${method} ${path}: ${reply.status}`);
    return data;
  } finally {
    clearTimeout(timer);
  }
}

export const api = {
  assistant: async (graphId) => {
    const found = await request("POST", "/assistants/search", { graph_id: graphId, limit: 1 });
    if (!found.length) throw new Error(`The server has no graph "${graphId}".`);
    return found[0];
  },
  // The turn's graph with its subgraphs drawn in (xray): a question's pass and a part's.
  graph: (assistantId) => request("GET", `/assistants/${assistantId}/graph?xray=1`),
  schemas: (assistantId) => request("GET", `/assistants/${assistantId}/schemas`),
  settings: () => request("GET", "/crag/settings"),
  chunk: (collection, id) =>
    request("GET", `/crag/collections/${encodeURIComponent(collection)}/chunks/${encodeURIComponent(id)}`),
  // The newest threads, each with only what the list shows (a thread's values can be large).
  threads: () =>
    request("POST", "/threads/search", {
      limit: 50, sort_by: "updated_at", sort_order: "desc",
      select: ["thread_id", "metadata", "updated_at"],
      extract: { first: "values.messages[0].content", asked: "values.question" },
    }),
  createThread: (metadata) => request("POST", "/threads", { metadata }),
  // A thread's checkpoints; with a subgraph's namespace ("answer_question:<task id>"), that
  // run of the subgraph's.
  history: (threadId, namespace = "") => request("POST", `/threads/${threadId}/history`, {
    limit: 1000, ...(namespace ? { checkpoint: { checkpoint_ns: namespace } } : {}),
  }),
  pageImage: (collection, id) => `${at(collection)}/chunks/${encodeURIComponent(id)}/page.png`,
  collections: () => request("GET", "/crag/collections"),
  createCollection: (name) => request("POST", "/crag/collections", { name }),
  documents: (collection) => request("GET", `${at(collection)}/documents`),
  removeDocument: (collection, docId) =>
    request("DELETE", `${at(collection)}/documents/${encodeURIComponent(docId)}`, undefined, INGEST_MS),
  resync: (collection) => request("POST", `${at(collection)}/sync`, {}, INGEST_MS),
  addUrls: (collection, urls) => request("POST", `${at(collection)}/sources`, { urls }, INGEST_MS),
};

const at = (collection) => `/crag/collections/${encodeURIComponent(collection)}`;
const INGEST_MS = 600000; // reading, embedding and writing a large file takes a while

// PUT one file as the request body; onProgress(sent, total) follows the upload. Resolves with
// the server's account of it ({status: added|replaced|unchanged|skipped, reason, chunks}).
export function upload(collection, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", `${at(collection)}/files/${encodeURIComponent(file.name)}`);
    for (const [name, value] of Object.entries(bearer())) xhr.setRequestHeader(name, value);
    xhr.timeout = INGEST_MS;
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.total || file.size);
    xhr.onload = () => {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch { /* not JSON: described below */ }
      if (xhr.status === 200 || (xhr.status === 422 && data.status)) resolve(data);
      else reject(new Error(data.detail || `${file.name}: ${xhr.status} ${xhr.statusText}`));
    };
    xhr.onerror = () => reject(new Error(`${file.name}: the upload failed`));
    xhr.ontimeout = () => reject(new Error(`${file.name}: no answer in ${INGEST_MS / 60000} minutes`));
    xhr.send(file);
  });
}

// POST a run and yield its server-sent events as {event, data} until the stream ends.
export async function* streamRun(threadId, body, signal) {
  const reply = await authorized(`/threads/${threadId}/runs/stream`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  if (!reply.ok) {
    const data = await reply.json().catch(() => ({}));
    throw new Error(data.detail || `The run was refused: ${reply.status}`);
  }
  const reader = reply.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}
