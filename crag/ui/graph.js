// The graph drawn from the server's own description (GET /assistants/{id}/graph): nodes in
// layers by longest path from __start__ (loops drawn as back edges on the right), each node
// lighting up while it runs and keeping its last outcome, time and run count.

const SVG = "http://www.w3.org/2000/svg";
const W = 200, H = 40, ROW = 58, COL = 228, PAD = 24, LOOP = 40;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

// Back edges (those that close a cycle in a depth-first walk from __start__), then each
// node's layer: the longest path to it over the remaining edges.
export function layout(description) {
  const ids = description.nodes.map((n) => n.id);
  const out = new Map(ids.map((id) => [id, []]));
  for (const e of description.edges) out.get(e.source)?.push(e);
  const back = new Set(), state = new Map();
  const visit = (id) => {
    state.set(id, "open");
    for (const e of out.get(id) || []) {
      if (state.get(e.target) === "open") back.add(e);
      else if (!state.has(e.target)) visit(e.target);
    }
    state.set(id, "done");
  };
  visit(ids[0] === "__start__" ? ids[0] : "__start__");
  ids.forEach((id) => state.has(id) || visit(id));
  const layer = new Map(ids.map((id) => [id, 0]));
  for (let pass = 0; pass < ids.length; pass++) {
    let changed = false;
    for (const e of description.edges) {
      if (back.has(e)) continue;
      const want = layer.get(e.source) + 1;
      if (layer.get(e.target) < want) { layer.set(e.target, want); changed = true; }
    }
    if (!changed) break;
  }
  const rows = [];
  for (const id of ids) (rows[layer.get(id)] ||= []).push(id);
  const position = new Map();
  const columns = Math.max(...rows.map((r) => r.length));
  rows.forEach((row, y) => {
    const offset = (columns - row.length) / 2;
    row.forEach((id, x) => position.set(id, { x: PAD + (x + offset) * COL, y: PAD + y * ROW }));
  });
  return { position, back, width: 2 * PAD + (columns - 1) * COL + W + LOOP * 2, height: 2 * PAD + (rows.length - 1) * ROW + H };
}

// The question's pass (the answer_question subgraph) is drawn as the turn's own nodes, its end
// as one node "answer_question" where it hands the turn its answer; a part's pass (answer_part,
// the same nodes again) as one node.
export const QUESTION_PASS = "answer_question";
const PART_PASS = "answer_part";

export function flattenPasses(description) {
  const rename = (id) => {
    if (id === `${QUESTION_PASS}:__end__`) return QUESTION_PASS;
    if (id.startsWith(`${QUESTION_PASS}:`)) return id.slice(QUESTION_PASS.length + 1);
    return id.startsWith(`${PART_PASS}:`) ? PART_PASS : id;
  };
  const nodes = [], seen = new Set();
  for (const node of description.nodes) {
    const id = rename(node.id);
    if (!seen.has(id)) { seen.add(id); nodes.push({ ...node, id, name: id }); }
  }
  const edges = [], drawn = new Set();
  for (const edge of description.edges) {
    const source = rename(edge.source), target = rename(edge.target);
    const loop = source === target; // inside a part's pass, unless it is the next part's Send
    if ((loop && !edge.source.endsWith(":collect_part")) || drawn.has(`${source}>${target}`)) continue;
    drawn.add(`${source}>${target}`);
    edges.push({ ...edge, source, target });
  }
  return { ...description, nodes, edges };
}

export class GraphView {
  constructor(svg, description) {
    this.svg = svg;
    this.boxes = new Map();
    this.edges = [];
    const { position, back, width, height } = layout(description);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.replaceChildren();
    const defs = el("defs", {}, svg);
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);
    const edgeLayer = el("g", {}, svg);
    let loops = 0;
    for (const e of description.edges) {
      const s = position.get(e.source), t = position.get(e.target);
      let d;
      if (back.has(e)) {
        const bulge = W + LOOP * (1 + (loops++ % 2) * 0.6);
        d = `M${s.x + W},${s.y + H / 2} C${s.x + bulge},${s.y + H / 2} ${t.x + bulge},${t.y + H / 2} ${t.x + W},${t.y + H / 2}`;
      } else if (t.y - s.y > ROW) {
        // A long edge runs down beside the nodes it passes: left of them or right of them.
        const left = t.x < s.x || (t.x === s.x && e.target < e.source);
        const x = left ? Math.min(s.x, t.x) - 10 : Math.max(s.x, t.x) + W + 10;
        const top = s.y + H + (ROW - H) / 2, bottom = t.y - (ROW - H) / 2;
        d = `M${s.x + W / 2},${s.y + H} Q${s.x + W / 2},${top} ${x},${top} L${x},${bottom} Q${t.x + W / 2},${bottom} ${t.x + W / 2},${t.y}`;
      } else {
        d = `M${s.x + W / 2},${s.y + H} C${s.x + W / 2},${s.y + H + 18} ${t.x + W / 2},${t.y - 18} ${t.x + W / 2},${t.y}`;
      }
      const path = el("path", { d, class: `edge${e.conditional ? " conditional" : ""}`, "marker-end": "url(#arrow)" }, edgeLayer);
      this.edges.push({ source: e.source, target: e.target, path });
    }
    for (const n of description.nodes) {
      const p = position.get(n.id);
      const terminal = n.id.startsWith("__");
      const g = el("g", { class: `node${terminal ? " terminal" : ""}`, transform: `translate(${p.x},${p.y})`, "data-node": n.id }, svg);
      el("title", {}, g).textContent = n.id;
      el("rect", { width: W, height: H, rx: terminal ? H / 2 : 6 }, g);
      const name = el("text", { x: 10, y: terminal ? 25 : 17, class: "name" }, g);
      name.textContent = terminal ? n.id.replaceAll("_", "") : n.id;
      const note = el("text", { x: 10, y: 32, class: "note" }, g);
      this.boxes.set(n.id, { g, note, runs: 0 });
    }
  }

  reset() {
    for (const box of this.boxes.values()) {
      box.runs = 0;
      box.g.classList.remove("running", "done", "failed");
      box.note.textContent = "";
    }
    for (const e of this.edges) e.path.classList.remove("taken");
    this.last = "__start__";
  }

  start(node) {
    const box = this.boxes.get(node);
    if (!box) return;
    box.runs += 1;
    box.g.classList.remove("done", "failed");
    box.g.classList.add("running");
    box.note.textContent = box.runs > 1 ? `running (pass ${box.runs})` : "running";
    const edge = this.edges.find((e) => e.source === this.last && e.target === node);
    edge?.path.classList.add("taken");
    this.last = node;
  }

  finish(node, seconds, summary, failed = false) {
    const box = this.boxes.get(node);
    if (!box) return;
    box.g.classList.remove("running");
    box.g.classList.add(failed ? "failed" : "done");
    const runs = box.runs > 1 ? ` ×${box.runs}` : "";
    const text = `${seconds.toFixed(1)} s${runs} · ${summary}`;
    box.note.textContent = text.length > 30 ? `${text.slice(0, 29)}…` : text;
    el("title", {}, box.note).textContent = text;
  }

  end() {
    const edge = this.edges.find((e) => e.source === this.last && e.target === "__end__");
    edge?.path.classList.add("taken");
    this.boxes.get("__end__")?.g.classList.add("done");
  }
}
