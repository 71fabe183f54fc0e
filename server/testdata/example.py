import json, os, urllib.request

BASE = os.environ.get("SESSIONTREE_URL", "http://127.0.0.1:7878")
TOKEN = os.environ["SESSIONTREE_TOKEN"]

def call(method, path, body=None):
    req = urllib.request.Request(BASE + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:  # an error status raises HTTPError
        return json.load(resp)

session = call("POST", "/api/sessions", {"cwd": os.getcwd()})["id"]
leaf = call("GET", f"/api/sessions/{session}")["leafId"] or ""
# Both entries or neither; 409 if another writer moved the leaf meanwhile.
call("POST", f"/api/sessions/{session}/entries", {"ifLeaf": leaf, "entries": [
    {"type": "message", "message": {"role": "user", "content": "What is 2+2?"}},
    {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "4"}]}},
]})
for m in call("GET", f"/api/sessions/{session}/context")["messages"]:
    print(m["role"], json.dumps(m["content"]))
