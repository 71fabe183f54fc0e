export {}; // an ES module, for top-level await

const base = process.env.SESSIONTREE_URL ?? "http://127.0.0.1:7878";
const token = process.env.SESSIONTREE_TOKEN!;

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const resp = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!resp.ok) throw new Error(`${method} ${path}: ${resp.status} ${await resp.text()}`);
  return (await resp.json()) as T;
}

const { id } = await call<{ id: string }>("POST", "/api/sessions", { cwd: process.cwd() });
const { leafId } = await call<{ leafId: string | null }>("GET", `/api/sessions/${id}`);
// Both entries or neither; 409 if another writer moved the leaf meanwhile.
await call("POST", `/api/sessions/${id}/entries`, {
  ifLeaf: leafId ?? "",
  entries: [
    { type: "message", message: { role: "user", content: "What is 2+2?" } },
    { type: "message", message: { role: "assistant", content: [{ type: "text", text: "4" }] } },
  ],
});
const context = await call<{ messages: { role: string; content: unknown }[] }>("GET", `/api/sessions/${id}/context`);
for (const m of context.messages) console.log(m.role, JSON.stringify(m.content));
