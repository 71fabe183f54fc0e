// api.js talks to the JSON API of `sessiontree serve`.
//
// The token: the server prints http://HOST/?token=TOKEN. On that first
// load the page keeps the token in sessionStorage and takes it out of the
// address bar (so it is not in the history or a shared screenshot). Every
// request carries it as "Authorization: Bearer TOKEN", the event stream
// too: it is read with fetch (see stream), since EventSource cannot send
// a header. No cookie holds it: a browser sends a host's cookies to every
// port of it, so any other server on this machine would get them.

const TOKEN_KEY = "sessiontree.token";

// takeToken moves ?token= from the address bar into sessionStorage.
export function takeToken() {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token !== null) {
    sessionStorage.setItem(TOKEN_KEY, token);
    url.searchParams.delete("token");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

// APIError is a failed request: status and the API's error code.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// send makes a request and answers its JSON body and headers; an error
// status throws an APIError.
async function send(method, path, body) {
  const headers = authHeaders({"Accept": "application/json"});
  const init = {method, headers, credentials: "omit"};
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res, method, path);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new APIError(res.status, "bad_response", `${method} ${path}: the answer is not JSON`);
  }
  return {data, headers: res.headers};
}

// authHeaders adds the token's Authorization header to headers.
function authHeaders(headers) {
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  return headers;
}

// failure is the APIError of an error answer, from its JSON error body.
async function failure(res, method, path) {
  let e = {};
  try {
    e = (JSON.parse(await res.text()) || {}).error || {};
  } catch {
    // not JSON: the status says what there is to say
  }
  return new APIError(res.status, e.code || "http_" + res.status, e.message || `${method} ${path}: ${res.status}`);
}

// STREAM_RETRY is how long a broken event stream waits before it opens
// again, as EventSource does.
const STREAM_RETRY = 3000;

// stream follows the server-sent events of GET path, as EventSource would
// but with the token's header: on.open() when the stream opens (again),
// on.event(type, data) for each event, on.error(err, final) when it fails.
// A stream that breaks opens again after STREAM_RETRY with the last event's
// id as Last-Event-ID; one refused for good (401, 403, 404, 400) does not.
// It returns a function that closes the stream.
export function stream(path, on) {
  const abort = new AbortController();
  let lastID = "";
  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const headers = authHeaders({"Accept": "text/event-stream"});
        if (lastID) headers["Last-Event-ID"] = lastID;
        const res = await fetch(path, {headers, credentials: "omit", cache: "no-store", signal: abort.signal});
        if (!res.ok) throw await failure(res, "GET", path);
        on.open();
        await readEvents(res.body, (ev) => {
          if (ev.id) lastID = ev.id;
          on.event(ev.type, ev.data);
        });
        throw new Error("the event stream ended");
      } catch (err) {
        if (abort.signal.aborted) return;
        const final = err instanceof APIError && [400, 401, 403, 404].includes(err.status);
        on.error(err, final);
        if (final) return;
      }
      await new Promise((resolve) => setTimeout(resolve, STREAM_RETRY));
    }
  };
  run();
  return () => abort.abort();
}

// readEvents reads a text/event-stream body and calls emit({id, type, data})
// for each event: its lines (ended by a line feed, as the server ends
// them, or CRLF) up to a blank one, the data lines joined by a line feed;
// a comment (":") is skipped.
async function readEvents(body, emit) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "", ev = {id: "", type: "message", data: []};
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buf += value;
    let start = 0, nl;
    while ((nl = buf.indexOf("\n", start)) >= 0) {
      const line = buf.slice(start, buf[nl - 1] === "\r" ? nl - 1 : nl);
      start = nl + 1;
      if (line === "") {
        if (ev.data.length) emit({id: ev.id, type: ev.type, data: ev.data.join("\n")});
        ev = {id: "", type: "message", data: []};
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") ev.id = value;
      else if (field === "event") ev.type = value;
      else if (field === "data") ev.data.push(value);
    }
    buf = buf.slice(start);
  }
}

async function request(method, path, body) {
  return (await send(method, path, body)).data;
}

// listPage answers a page of the session list: its rows, and the cursor of
// the next page ("" on the last), which the server sends in a header.
async function listPage(params) {
  const {data, headers} = await send("GET", "/api/sessions" + query(params));
  return {rows: data, next: headers.get("X-Next-Cursor") || ""};
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

const seg = encodeURIComponent;

// The API, one function per route the page uses.
export const api = {
  sessions: listPage,
  info: (id) => request("GET", `/api/sessions/${seg(id)}`),
  graph: (id, params) => request("GET", `/api/sessions/${seg(id)}/graph` + query(params)),
  entry: (id, entryID) => request("GET", `/api/sessions/${seg(id)}/entries/${seg(entryID)}`),
  context: (id, from) => request("GET", `/api/sessions/${seg(id)}/context` + query({from})),
  search: (params) => request("GET", "/api/search" + query(params)),
  label: (id, entryId, label) => request("POST", `/api/sessions/${seg(id)}/labels`, {entryId, label}),
  moveLeaf: (id, entryId, summary) => request("POST", `/api/sessions/${seg(id)}/leaf`, summary ? {entryId, summary} : {entryId}),
  omit: (id, entryId) => request("POST", `/api/sessions/${seg(id)}/edits`, {entryId, omit: true}),
  fork: (id, at) => request("POST", `/api/sessions/${seg(id)}/fork`, {at}),
  events: (id, on) => stream(`/api/sessions/${seg(id)}/events`, on),
};
