// api.js talks to the JSON API of `sessiontree serve`.
//
// The token: the server prints http://HOST/?token=TOKEN. On that first
// load the page keeps the token in sessionStorage and takes it out of the
// address bar (so it is not in the history or a shared screenshot). Every
// request carries it as "Authorization: Bearer TOKEN"; the server refuses
// writes that carry only its cookie. EventSource cannot send headers, so the
// event stream is a read authorized by the cookie the first load set.

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
  const headers = {"Accept": "application/json"};
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  const init = {method, headers, credentials: "same-origin"};
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new APIError(res.status, "bad_response", `${method} ${path}: the answer is not JSON`);
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new APIError(res.status, e.code || "http_" + res.status, e.message || `${method} ${path}: ${res.status}`);
  }
  return {data, headers: res.headers};
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
  eventsURL: (id) => `/api/sessions/${seg(id)}/events`,
};
