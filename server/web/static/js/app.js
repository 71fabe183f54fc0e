// app.js is the page: the session list with search, and a session's view
// (graph, entry, context, info, actions), live while an agent writes.
//
// The address's hash says what is open: #/s/SESSION or #/s/SESSION/ENTRY.

import {api, takeToken} from "./api.js";
import {h, fill, debounce, shortID, number, money} from "./dom.js";
import {GraphView} from "./graph.js";
import {entryView, contextView} from "./entry.js";

const $ = (id) => document.getElementById(id);

const state = {
  session: "", // the open session's id
  entry: "", // the selected entry's id
  events: null, // closes the open session's event stream
};

// status shows a message (an error in red) in the header.
function status(text, isError = false) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", isError);
}

// guard runs an async action and reports its failure instead of losing it.
async function guard(what, fn) {
  try {
    return await fn();
  } catch (err) {
    status(`${what}: ${err.message}`, true);
    return undefined;
  }
}

// ---- the session list and search --------------------------------------

function sessionItem(row) {
  const title = row.name || row.firstMessage || row.firstUserMessage || "(no messages)";
  const li = h("li", {class: "session-item" + (row.id === state.session ? " current" : ""), tabindex: 0, role: "button", "data-id": row.id},
    h("div", {class: "title"}, title),
    h("div", {class: "meta"}, h("code", null, shortID(row.id)), ` · ${number(row.messageCount ?? row.messages)} messages · `,
      h("span", {class: "cwd"}, String(row.cwd ?? ""))),
    h("div", {class: "meta muted"}, String(row.updatedAt ?? row.createdAt ?? "")));
  onActivate(li, () => go(row.id));
  return li;
}

// snippet shows a search snippet with its [matched] words marked.
function snippet(text) {
  return String(text ?? "").split(/(\[[^\]]*\])/).map((part) =>
    part.startsWith("[") && part.endsWith("]") && part.length > 2 ? h("mark", null, part.slice(1, -1)) : part);
}

function hitItem(hit) {
  const branch = hit.onActiveBranch ? h("span", {class: "badge on"}, "on branch") : h("span", {class: "badge off"}, "off branch");
  const li = h("li", {class: "hit-item", tabindex: 0, role: "button", "data-id": hit.sessionId, "data-entry": hit.entryId},
    h("div", {class: "title"}, String(hit.sessionName || shortID(hit.sessionId)), " ", branch),
    h("div", {class: "snippet"}, snippet(hit.snippet)),
    h("div", {class: "meta muted"}, `${hit.role || hit.type} · ${shortID(hit.entryId)} · ${hit.timestamp ?? ""}`));
  onActivate(li, () => go(hit.sessionId, hit.entryId));
  return li;
}

function onActivate(el, fn) {
  el.addEventListener("click", fn);
  el.addEventListener("keydown", (e) => {
    if (e.key === "Enter") fn();
  });
}

// LIST_PAGE is how many sessions the list shows at a time.
const LIST_PAGE = 100;

async function showList() {
  const page = await guard("list sessions", () => api.sessions({limit: LIST_PAGE}));
  if (!page) return;
  fill($("list"));
  appendList(page);
}

// appendList adds a page of sessions to the list, and a button for the
// next page when there is one.
function appendList(page) {
  const list = $("list");
  list.querySelector(".more-sessions")?.remove();
  list.append(...page.rows.map(sessionItem));
  const n = list.querySelectorAll(".session-item").length;
  fill($("list-head"), `${n}${page.next ? "+" : ""} session${n === 1 ? "" : "s"}`);
  if (n === 0) list.append(h("li", {class: "empty"}, "No sessions yet: run `sessiontree import` or `sessiontree demo`."));
  if (!page.next) return;
  const more = h("li", {class: "more-sessions", tabindex: 0, role: "button"}, `Show ${LIST_PAGE} more sessions`);
  onActivate(more, async () => {
    const next = await guard("list sessions", () => api.sessions({limit: LIST_PAGE, cursor: page.next}));
    if (next) appendList(next);
  });
  list.append(more);
}

let searchSeq = 0;

async function search(q) {
  const seq = ++searchSeq;
  if (!q.trim()) {
    await showList();
    return;
  }
  const answer = await guard("search", () => api.search({q, limit: 50}));
  if (!answer || seq !== searchSeq) return;
  const hits = Array.isArray(answer) ? answer : answer.hits || [];
  fill($("list-head"), `${hits.length} hit${hits.length === 1 ? "" : "s"} for `, h("q", null, q));
  fill($("list"), hits.length ? hits.map(hitItem) : h("li", {class: "empty"}, "No hits."));
}

// ---- a session --------------------------------------------------------

let graph = null;

function go(id, entry = "") {
  const hash = "#/s/" + encodeURIComponent(id) + (entry ? "/" + encodeURIComponent(entry) : "");
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function openSession(id, focus) {
  const changed = id !== state.session;
  state.session = id;
  $("session").hidden = false;
  $("welcome").hidden = true;
  for (const li of document.querySelectorAll(".session-item")) li.classList.toggle("current", li.dataset.id === id);
  if (changed) {
    state.entry = "";
    fill($("entry"));
    fill($("info"));
    fill($("session-head"), h("h2", null, shortID(id)), h("div", {class: "meta"}, "loading…"));
    // The stream starts at the end of the log when it opens: the tree is
    // read once it is open, so an entry appended meanwhile is in one or
    // the other.
    await listen(id);
    if (state.session !== id) return;
    // The info reads the whole log: it waits for the tree's first screen
    // rather than compete with it.
    await guard("load the tree", () => graph.load({focus}));
    showInfo();
  } else if (focus && !graph.has(focus)) {
    await guard("load the tree", () => graph.load({focus, keepExpanded: true}));
  }
  if (focus) await selectEntry(focus);
}

async function showInfo() {
  const info = await guard("read the session", () => api.info(state.session));
  if (!info) return;
  fill($("session-head"),
    h("h2", null, info.name || info.firstMessage || shortID(info.id)),
    h("div", {class: "meta"}, h("code", null, String(info.id)), " · ", h("span", {class: "cwd"}, String(info.cwd ?? "")),
      ` · ${number(info.entryCount)} entries · ${number(info.branches)} branches · ${number(info.compactions)} compactions · ${number(info.labels)} labels`));
  const st = info.stats || {};
  const t = st.tokens || {};
  const byModel = (st.breakdown || []).map((b) =>
    h("tr", null, h("td", null, String(b.key)), h("td", {class: "num"}, number(b.tokens)), h("td", {class: "num"}, money(b.cost))));
  fill($("info"),
    h("h3", null, "Tokens and cost"),
    h("table", {class: "totals"},
      h("tr", null, h("th", null, "input"), h("td", {class: "num"}, number(t.input))),
      h("tr", null, h("th", null, "output"), h("td", {class: "num"}, number(t.output))),
      h("tr", null, h("th", null, "cache read"), h("td", {class: "num"}, number(t.cacheRead))),
      h("tr", null, h("th", null, "cache write"), h("td", {class: "num"}, number(t.cacheWrite))),
      h("tr", null, h("th", null, "total"), h("td", {class: "num"}, number(t.total))),
      h("tr", null, h("th", null, "cost"), h("td", {class: "num"}, money(st.cost)))),
    h("h4", null, "By model"),
    byModel.length
      ? h("table", {class: "by-model"}, h("tr", null, h("th", null, "model"), h("th", null, "tokens"), h("th", null, "cost")), byModel)
      : h("p", {class: "muted"}, "No usage recorded."),
    h("p", {class: "muted"}, `${number(st.userMessages)} user, ${number(st.assistantMessages)} assistant messages, ${number(st.toolCalls)} tool calls`));
}

async function selectEntry(id) {
  state.entry = id;
  graph.select(id);
  const session = state.session;
  const [entry, context] = await Promise.all([
    guard("read the entry", () => api.entry(session, id)),
    guard("build the context", () => api.context(session, id)),
  ]);
  if (!entry || session !== state.session || id !== state.entry) return;
  fill($("entry"),
    entryView(entry.entry, entry.label),
    actions(entry),
    h("h3", null, "The context from here"),
    context ? contextView(context) : h("p", {class: "muted"}, "No context."));
}

// actions are the writes a person can make at the selected entry.
function actions(answer) {
  const e = answer.entry;
  const labelInput = h("input", {type: "text", id: "label-input", placeholder: "label (empty clears it)", value: answer.label || ""});
  const summaryInput = h("textarea", {id: "summary-input", rows: 2, placeholder: "optional summary of the branch being left"});
  const run = (what, fn) => async () => {
    const ok = await guard(what, fn);
    if (ok === undefined) return;
    status(what + ": done");
    await afterWrite();
  };
  const setLabel = run("label", () => api.label(state.session, e.id, labelInput.value));
  labelInput.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") setLabel();
  });
  return h("div", {class: "actions"},
    h("div", {class: "action"}, labelInput, h("button", {type: "button", id: "label-button", onclick: setLabel}, "Set label")),
    h("div", {class: "action"}, summaryInput,
      h("button", {type: "button", id: "leaf-button", onclick: run("move the leaf", () => api.moveLeaf(state.session, e.id, summaryInput.value.trim()))}, "Move the leaf here")),
    h("div", {class: "action"},
      h("button", {type: "button", id: "omit-button", onclick: run("omit", () => api.omit(state.session, e.id))}, "Omit from the context"),
      h("button", {type: "button", id: "fork-button", onclick: async () => {
        const answer = await guard("fork", () => api.fork(state.session, e.id));
        const id = answer && (answer.id || answer.sessionId);
        if (!id) return;
        status("forked into " + shortID(id));
        await showList();
        go(id);
      }}, "Fork up to here")));
}

// afterWrite redraws what a write changes: the graph, the info, the entry.
async function afterWrite() {
  await Promise.all([guard("reload the tree", () => graph.refresh()), showInfo()]);
  if (state.entry) await selectEntry(state.entry);
}

// OPEN_WAIT is how long the first load waits for the event stream to open.
const OPEN_WAIT = 5000;

// listen follows the session's events: an agent appending shows on screen.
// A stream opened without an event id (the first, or one opened again
// before any event came) starts at the end of the log as it
// is then, so what was loaded before is reloaded on each open after the
// first; listen resolves once the stream is open, has failed, or OPEN_WAIT
// has passed, for the caller to load the session then.
function listen(id) {
  if (state.events) state.events();
  // One update at a time: entries that come during one make one more,
  // so an agent writing fast costs a redraw per answer, not per entry.
  let running = false, again = false;
  const update = debounce(async () => {
    if (state.session !== id) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    await Promise.all([guard("reload the tree", () => graph.refresh()), showInfo()]);
    $("live").textContent = "● live · updated " + new Date().toLocaleTimeString();
    running = false;
    if (again) {
      again = false;
      update();
    }
  }, 150);
  let loaded = false; // a load may have read the log before this open
  return new Promise((resolve) => {
    const release = () => {
      loaded = true;
      resolve();
    };
    setTimeout(release, OPEN_WAIT);
    state.events = api.events(id, {
      open: () => {
        $("live").classList.add("on");
        if (loaded) update();
        release();
      },
      event: (type, data) => {
        if (type !== "error") return update();
        // The stream's last event: the session is gone.
        $("live").classList.remove("on");
        let message = data;
        try {
          message = JSON.parse(data).error.message;
        } catch {
          // shown as it came
        }
        if (state.session === id) status(`live updates: ${message}`, true);
      },
      error: (err, final) => {
        $("live").classList.remove("on");
        if (final && state.session === id) status(`live updates: ${err.message}`, true);
        release();
      },
    });
  });
}

// ---- routing and start ----------------------------------------------------

async function route() {
  const m = location.hash.match(/^#\/s\/([^/]+)(?:\/([^/]+))?$/);
  if (!m) return;
  await openSession(decodeURIComponent(m[1]), m[2] ? decodeURIComponent(m[2]) : "");
}

function start() {
  takeToken();
  graph = new GraphView($("graph"), {
    fetchWindow: (params) => api.graph(state.session, params),
    onSelect: (row) => go(state.session, row.id),
    onExpand: (row) => guard("expand", () => graph.expand(row.id)),
  });
  const input = $("search");
  input.addEventListener("input", debounce(() => search(input.value), 200));
  window.addEventListener("hashchange", route);
  // The list and an open session load side by side.
  showList();
  route();
}

start();
