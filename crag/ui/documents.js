// The documents panel: pick or create a collection, add files (several, by picker or drag and
// drop, each with its progress and result) or a web page, list what the collection holds,
// remove a document, read every source again. Runs ask the collection picked here.
import { api, upload } from "./api.js";
import { $, make } from "./dom.js";


const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const when = (epoch) => (epoch ? new Date(epoch * 1000).toLocaleString() : "never");

export class DocumentsPanel {
  // defaultName: the server's default collection; onPick(name): a collection was chosen.
  constructor(defaultName, onPick, report) {
    this.defaultName = defaultName;
    this.onPick = onPick;
    this.report = report; // (message) -> the page's status line
    this.summaries = [];
    $("collection").addEventListener("change", () => this.pick($("collection").value));
    $("new-collection").addEventListener("click", () => this.create());
    $("files").addEventListener("change", () => this.addFiles([...$("files").files]));
    const drop = $("drop");
    drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (event) => {
      event.preventDefault();
      drop.classList.remove("over");
      this.addFiles([...event.dataTransfer.files]);
    });
    $("add-url").addEventListener("submit", (event) => {
      event.preventDefault();
      this.addUrl($("url").value.trim());
    });
    $("resync").addEventListener("click", () => this.resync());
  }

  get name() { return $("collection").value || this.defaultName; }

  // The server's collections; the one shown is kept, else the default when it holds
  // something, else the first that does (the one `make demo` filled, say).
  async load(keep) {
    const { collections } = await api.collections();
    this.summaries = collections;
    const names = collections.map((c) => c.name);
    const filled = collections.filter((c) => c.documents > 0).map((c) => c.name);
    let chosen = keep || null; // kept even before it exists: the first file creates it
    chosen ??= filled.includes(this.defaultName) ? this.defaultName : filled[0] ?? this.defaultName;
    const select = $("collection");
    select.replaceChildren();
    for (const name of new Set([...names, chosen])) {
      const row = collections.find((c) => c.name === name);
      const label = row ? `${name} (${plural(row.documents, "document")})` : `${name} (not created yet)`;
      select.append(make("option", { value: name }, label));
    }
    select.value = chosen;
    await this.pick(chosen);
  }

  async pick(name) {
    $("collection").value = name;
    $("collection-note").textContent = "Loading…";
    this.onPick(name);
    await this.listDocuments();
  }

  async create() {
    const name = (prompt("Name of the new collection (3 to 63 letters, digits, - or _):") || "").trim();
    if (!name) return;
    try {
      await api.createCollection(name);
      await this.load(name);
      this.report(`Collection "${name}" is ready: add files to it.`);
    } catch (error) {
      this.report(`Not created: ${error.message}`);
    }
  }

  async listDocuments() {
    const list = $("doc-list");
    const name = this.name;
    const row = this.summaries.find((c) => c.name === name);
    list.replaceChildren();
    if (!row) {
      $("doc-count").textContent = "";
      $("collection-note").textContent = `There is no collection "${name}" yet: add files to create it.`;
      return;
    }
    const { documents } = await api.documents(name);
    $("doc-count").textContent = `${plural(documents.length, "document")}, ${plural(row.chunks, "chunk")}`;
    $("collection-note").textContent = documents.length
      ? `Last ingest ${when(row.last)}.`
      : `"${name}" is empty: add files to ask about them.`;
    for (const doc of documents) {
      const item = make("li", { "data-doc": doc.doc_id });
      const where = doc.pages?.length
        ? plural(doc.pages.length, "page")
        : doc.headings?.length ? plural(doc.headings.length, "heading") : "";
      const about = [doc.type, where, plural(doc.chunks, "chunk"), `ingested ${when(doc.ingested)}`]
        .filter(Boolean).join(" · ");
      const remove = make("button", { type: "button", "aria-label": `Remove ${doc.title || doc.doc_id}` }, "Remove");
      remove.addEventListener("click", () => this.remove(doc));
      item.append(
        make("span", { class: "title", title: doc.source }, doc.title || doc.doc_id),
        remove,
        make("span", { class: "about", title: (doc.headings || []).join("\n") }, about),
      );
      list.append(item);
    }
  }

  async refresh() {
    await this.load(this.name);
  }

  // One file at a time (the server writes a collection in turn anyway), each with its line.
  async addFiles(files) {
    const collection = this.name;
    for (const file of files) {
      const item = make("li", { "data-file": file.name });
      const label = make("span", {}, file.name);
      const result = make("span", { class: "result" }, "waiting");
      const bar = make("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}` });
      item.append(label, result, bar);
      $("uploads").prepend(item);
    }
    let added = 0;
    for (const file of files) {
      const item = $("uploads").querySelector(`[data-file="${CSS.escape(file.name)}"]`);
      const result = item.querySelector(".result");
      const bar = item.querySelector("progress");
      result.textContent = "uploading";
      try {
        const done = await upload(collection, file, (sent, total) => {
          bar.value = total ? sent / total : 0;
          if (sent >= total) result.textContent = "reading and indexing";
        });
        bar.value = 1;
        item.dataset.status = done.status;
        result.textContent = done.status === "skipped"
          ? `skipped: ${done.reason}`
          : `${done.status}${done.chunks ? ` (${plural(done.chunks, "chunk")})` : ""}`;
        added += done.status !== "skipped";
      } catch (error) {
        item.dataset.status = "failed";
        result.textContent = `failed: ${error.message}`;
      }
    }
    $("files").value = "";
    this.report(`${plural(added, "file")} of ${files.length} in "${collection}".`);
    await this.refresh();
  }

  async addUrl(url) {
    if (!url) return;
    const item = make("li", { "data-file": url });
    const result = make("span", { class: "result" }, "fetching and indexing");
    item.append(make("span", {}, url), result);
    $("uploads").prepend(item);
    try {
      const report = await api.addUrls(this.name, [url]);
      const failed = report.failed[0];
      item.dataset.status = failed ? "skipped" : report.added.length ? "added" : report.replaced.length ? "replaced" : "unchanged";
      result.textContent = failed ? `skipped: ${failed.reason}` : item.dataset.status;
      $("url").value = "";
    } catch (error) {
      item.dataset.status = "failed";
      result.textContent = `failed: ${error.message}`;
    }
    await this.refresh();
  }

  async remove(doc) {
    if (!confirm(`Remove "${doc.title || doc.doc_id}" from "${this.name}"?`)) return;
    try {
      const done = await api.removeDocument(this.name, doc.doc_id);
      this.report(`Removed "${doc.title || doc.doc_id}" (${plural(done.chunks_removed, "chunk")}).`);
    } catch (error) {
      this.report(`Not removed: ${error.message}`);
    }
    await this.refresh();
  }

  async resync() {
    this.report(`Reading every source of "${this.name}" again…`);
    try {
      const r = await api.resync(this.name);
      this.report(
        `Re-synced "${this.name}": ${r.replaced.length} replaced, ${r.unchanged.length} unchanged, ` +
        `${r.removed.length} removed, ${r.failed.length} failed.`,
      );
    } catch (error) {
      this.report(`Re-sync failed: ${error.message}`);
    }
    await this.refresh();
  }
}
