// graph.js draws a session's tree as an SVG graph, a window at a time.
//
// The server lays the tree out (GET /api/sessions/{id}/graph): rows in the
// order of `sessiontree tree`, each with its lane, its parent's row, and
// long linear runs folded into one row. The page asks only for the rows
// around what is on screen and for the edges that cross them, so a
// 100,000-entry session costs what one screen costs. A tall empty element
// gives the scroll bar its true length; the SVG sits where the window is.

import {s, shortID} from "./dom.js";

const ROW = 24; // px per row
const LANE = 16; // px per lane
const PAGE = 240; // rows asked for at a time
const MARGIN = 40; // rows kept loaded beyond the screen before asking again

export class GraphView {
  // container is the scrolling element; fetchWindow(params) answers the
  // graph endpoint; onSelect(row) and onExpand(row) react to clicks.
  constructor(container, {fetchWindow, onSelect, onExpand}) {
    this.container = container;
    this.fetchWindow = fetchWindow;
    this.onSelect = onSelect;
    this.onExpand = onExpand;
    this.space = document.createElement("div");
    this.space.className = "graph-space";
    this.svg = s("svg", {class: "graph-svg"});
    this.space.append(this.svg);
    container.replaceChildren(this.space);
    this.expanded = new Set();
    this.win = null; // the loaded window: {offset, rows, edges, total, lanes}
    this.selected = "";
    this.seq = 0; // the newest request; older answers are dropped
    this.firstDraw = null; // resolves when a load has drawn its first window
    container.addEventListener("scroll", () => this.ensure());
    new ResizeObserver(() => this.ensure()).observe(container);
  }

  // load shows the graph from the top, or around the entry focus (whose
  // fold is then expanded). It resolves once the first screen is drawn.
  async load({focus = "", keepExpanded = false} = {}) {
    if (!keepExpanded) this.expanded.clear();
    this.win = null;
    return this.fetch(0, focus);
  }

  // refresh reloads the window on screen, as after a write.
  refresh() {
    return this.fetch(this.visibleStart(), "");
  }

  // expand unfolds a folded run and redraws.
  expand(foldID) {
    this.expanded.add(foldID);
    return this.fetch(this.visibleStart(), "");
  }

  // has reports whether the entry is drawn in the loaded window.
  has(id) {
    return !!this.win && this.win.rows.some((r) => r.id === id && r.type !== "fold");
  }

  select(id) {
    this.selected = id;
    for (const g of this.svg.querySelectorAll("g.row")) {
      g.classList.toggle("selected", g.dataset.id === id && !g.classList.contains("fold"));
    }
  }

  visibleStart() {
    return Math.floor(this.container.scrollTop / ROW);
  }

  // ensure asks for a new window when the screen gets near the edge of the
  // loaded one.
  ensure() {
    const w = this.win;
    if (!w) return;
    const first = this.visibleStart();
    const last = first + Math.ceil(this.container.clientHeight / ROW);
    const lo = Math.max(0, first - MARGIN / 2);
    const hi = Math.min(w.total, last + MARGIN / 2);
    if (lo >= w.offset && hi <= w.offset + w.rows.length) return;
    this.fetch(first, "");
  }

  async fetch(first, focus) {
    const seq = ++this.seq;
    const offset = Math.max(0, first - PAGE / 4);
    const answer = await this.fetchWindow({
      offset, limit: PAGE, focus,
      expand: [...this.expanded].join(","),
    });
    if (seq !== this.seq) return;
    for (const id of answer.expand || []) this.expanded.add(id);
    this.win = answer;
    this.draw();
    // With a focus the server centres the window on it.
    if (focus && answer.focusRow >= 0) {
      const top = answer.focusRow * ROW - this.container.clientHeight / 2;
      this.container.scrollTop = Math.max(0, top);
      this.select(focus);
    }
    performance.mark("sessiontree-graph-drawn");
  }

  draw() {
    const {offset, rows, edges, total, lanes} = this.win;
    this.space.style.height = total * ROW + "px";
    const textX = laneX(Math.max(lanes, 1)) + 4;
    const width = Math.max(this.container.clientWidth, textX + 600);
    this.svg.setAttribute("width", width);
    this.svg.setAttribute("height", rows.length * ROW);
    this.svg.style.top = offset * ROW + "px";
    const y = (row) => (row - offset) * ROW + ROW / 2;
    const lines = edges.map(([from, fromLane, to, toLane]) => edge(y(from), fromLane, y(to), toLane, rows[to - offset]));
    const nodes = rows.map((r, i) => this.row(r, offset + i, y(offset + i), textX, width));
    this.svg.replaceChildren(s("g", {class: "edges"}, lines), s("g", {class: "rows"}, nodes));
  }

  row(r, index, cy, textX, width) {
    const fold = r.type === "fold";
    const classes = ["row", kind(r)];
    if (r.active) classes.push("active");
    if (r.leaf) classes.push("leaf");
    if (r.id === this.selected && !fold) classes.push("selected");
    const x = laneX(r.lane);
    const g = s("g", {class: classes.join(" "), "data-id": r.id, "data-row": index, tabindex: 0, role: "button"},
      s("rect", {class: "hit", x: 0, y: cy - ROW / 2, width, height: ROW}),
      marker(r, x, cy),
      s("text", {x: textX, y: cy, "dominant-baseline": "central"}, rowText(r)),
    );
    const act = () => (fold ? this.onExpand(r) : this.onSelect(r));
    g.addEventListener("click", act);
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        act();
      }
    });
    return g;
  }
}

function laneX(lane) {
  return 12 + lane * LANE;
}

// kind is the row's class: its entry type, or the message role.
function kind(r) {
  if (r.type === "fold") return "fold";
  if (r.type === "message") return "msg-" + (r.role || "other");
  return "t-" + r.type;
}

function edge(y1, lane1, y2, lane2, child) {
  const x1 = laneX(lane1), x2 = laneX(lane2);
  const cls = child && child.active ? "edge active" : "edge";
  if (lane1 === lane2) return s("path", {class: cls, d: `M${x1},${y1} L${x2},${y2}`});
  // Bend into the child's lane within the row below the parent, then run
  // straight down it.
  const bend = y1 + ROW;
  return s("path", {class: cls, d: `M${x1},${y1} C${x1},${y1 + ROW / 2} ${x2},${y1 + ROW / 2} ${x2},${bend} L${x2},${y2}`});
}

// marker is the row's node: a circle for a message, a diamond for a
// compaction, a square for a branch summary, a dashed bar for a fold.
function marker(r, x, y) {
  switch (r.type) {
    case "fold":
      return s("path", {class: "marker", d: `M${x},${y - ROW / 2} L${x},${y + ROW / 2}`});
    case "compaction":
      return s("path", {class: "marker", d: `M${x},${y - 7} L${x + 7},${y} L${x},${y + 7} L${x - 7},${y} Z`});
    case "branch_summary":
      return s("rect", {class: "marker", x: x - 5, y: y - 5, width: 10, height: 10});
  }
  return s("circle", {class: "marker", cx: x, cy: y, r: r.leaf ? 6 : 4.5});
}

function rowText(r) {
  if (r.type === "fold") {
    return [s("tspan", {class: "fold-text"}, `⋯ ${r.summary}`), s("tspan", {class: "hint"}, "  (click to expand)")];
  }
  return [
    s("tspan", {class: "id"}, shortID(r.id) + " "),
    r.leaf ? s("tspan", {class: "leaf-mark"}, "(leaf) ") : null,
    r.mark ? s("tspan", {class: "edit-mark"}, r.mark + " ") : null,
    r.label ? s("tspan", {class: "label"}, `[${r.label}] `) : null,
    s("tspan", {class: "summary"}, r.summary),
  ];
}
