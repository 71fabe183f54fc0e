// gen.mjs writes random but plausible pi 1.x session files, one per seed,
// and records what pi 1.6.0 answers on each (through ../piedge/piask.mjs,
// the answers of ../piedge/README.md). Run it from anywhere:
//
//	node testdata/pirand/gen.mjs <pi>/dist/core/session-manager.js [--all-probes] [first last [dir]]
//
// Seeds first to last (default 1 to 200) go to dir (default this folder)
// as rNNNN.jsonl and rNNNN.expected.json, with pi's answers at a few
// entries besides the leaf (fewProbes), or at every one (--all-probes). A file depends on its seed
// alone: the same seed writes the same file, so the corpus here can be
// regenerated, and a larger one written elsewhere for a longer run
// (SESSIONTREE_PIRAND_DIR, see README.md).
//
// A file is what pi could have written, plus what a hand, an extension or
// an older pi leaves: branches (the leaf moved to an earlier entry, or to
// none: a new root), branch summaries after a move, compactions whose kept
// entry is on the path, off it, missing, the compaction itself, null or
// absent, labels set and cleared on any entry (a compaction among them)
// with labels of any JSON type, names with space JavaScript's trim does or
// does not remove, model and thinking changes, system messages, tool calls
// and results, images, custom entries and messages, usage entries, context
// edits (of entries behind a compaction, of compactions, of entries off
// the path or not yet written), unknown entry types, odd timestamps, CRLF
// and blank lines. Every parent is written before its child and no id
// repeats: the damage sessiontree refuses is ../piedge's business, and so
// are the answers it gives apart from pi's on purpose (../piedge/README.md:
// a cwd pi resolves, a label that JavaScript writes as nothing, a context
// model whose provider or model is not a string: only "" is drawn there,
// and any JSON for a response model, which the context does not read).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { askPiBatch } from "../piedge/piask.mjs";

const here = dirname(fileURLToPath(import.meta.url));

// mulberry32: a small PRNG with a 32-bit state; the same seed gives the
// same numbers on every node.
function prng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

// Rand wraps a PRNG with the draws the generator needs.
class Rand {
	constructor(seed) {
		this.next = prng(seed);
	}
	int(n) {
		return Math.floor(this.next() * n);
	}
	chance(p) {
		return this.next() < p;
	}
	pick(list) {
		return list[this.int(list.length)];
	}
	// weighted picks a key of weights (name -> weight).
	weighted(weights) {
		const total = Object.values(weights).reduce((a, b) => a + b, 0);
		let r = this.next() * total;
		for (const [k, w] of Object.entries(weights)) {
			if ((r -= w) < 0) return k;
		}
		return Object.keys(weights)[0];
	}
	hex(n) {
		let s = "";
		for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(16)];
		return s;
	}
}

const WORDS = ["fix", "the", "auth", "bug", "in", "main.go", "refactor", "tests", "why", "does", "it", "fail", "ok", "done", "über", "日本語", "emoji 😀", "tab\there", "quote \"x\"", "back\\slash"];
const MODELS = [
	["anthropic", "claude-sonnet-5"],
	["anthropic", "claude-opus-5"],
	["openai", "gpt-5"],
	["google", "gemini-3-pro"],
	["local", "qwen-coder"],
];
// Ids pi's reader takes as any string ("__proto__" aside, which the
// answers' plain objects would mistake).
const ODD_IDS = ["root", "a b", "ü-1", "😀", "x/y", "0", "constructor", "null", "gone"];
const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"];
const TOOLS = ["read", "bash", "edit", "write", "grep"];
// Space around names: JavaScript's trim removes the first ones, not the
// last three (NEL, the Mongolian vowel separator, the zero-width space),
// and Go's strings.TrimSpace differs on NEL and the BOM.
const TRIMMED = [" ", "\t", "\n", "\r\n", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"];
const KEPT = ["\u0085", "\u180e", "\u200b"];

// Session builds one file's entries in the order pi would append them.
class Session {
	constructor(seed) {
		this.r = new Rand(seed);
		this.seed = seed;
		this.clock = Date.parse("2026-11-01T08:00:00.000Z") + this.r.int(30 * 86400) * 1000;
		this.entries = [];
		this.byId = new Map();
		this.leaf = null;
		this.model = this.r.pick(MODELS);
		this.future = []; // ids named before they are written
	}

	// ts is the next entry time: mostly later by up to a few seconds, at
	// times the same millisecond, earlier, or in another form Date reads
	// (or does not: rarely NaN).
	ts() {
		const r = this.r;
		const kind = r.weighted({ later: 90, same: 3, earlier: 3, odd: 4 });
		if (kind === "later") this.clock += 1 + r.int(5000);
		if (kind === "earlier") this.clock -= 1 + r.int(3000);
		const iso = new Date(this.clock).toISOString();
		if (kind !== "odd") return iso;
		return r.pick([
			iso.replace(/\.\d+Z$/, "Z"),
			iso.replace("Z", "1Z"),
			iso.replace(/\.\d+Z$/, ".123456Z"),
			new Date(this.clock + 7200000).toISOString().replace("Z", "+02:00"),
			iso.slice(0, 10),
			iso.slice(0, 16) + "Z",
			iso.replace("T", "t").replace("Z", "z"),
			iso.replace(/\.\d+Z$/, ".9999999Z"),
			"+00" + iso,
			new Date(this.clock - 34200000).toISOString().replace("Z", "-09:30"),
			"garbage",
		]);
	}
	ms() {
		return this.clock;
	}
	id() {
		if (this.future.length && this.r.chance(0.3)) return this.future.shift();
		for (;;) {
			const id = this.r.chance(0.03) ? `custom-${this.r.hex(4)}` : this.r.chance(0.02) ? this.r.pick(ODD_IDS) : this.r.hex(8);
			if (!this.byId.has(id) && !this.future.includes(id)) return id;
		}
	}
	// futureId names an entry not written yet (perhaps never).
	futureId() {
		const id = `${this.r.hex(8)}`;
		if (this.byId.has(id) || this.future.includes(id)) return "gone";
		this.future.push(id);
		return id;
	}
	append(type, fields) {
		const e = { type, id: this.id(), parentId: this.leaf, timestamp: this.ts(), ...fields };
		this.entries.push(e);
		this.byId.set(e.id, e);
		this.leaf = e.id;
		return e;
	}
	path(from = this.leaf) {
		const out = [];
		for (let e = from ? this.byId.get(from) : undefined; e; e = e.parentId ? this.byId.get(e.parentId) : undefined) out.push(e);
		return out.reverse();
	}
	text(n = 1 + this.r.int(6)) {
		const w = [];
		for (let i = 0; i < n; i++) w.push(this.r.pick(WORDS));
		return w.join(" ");
	}
	image() {
		return { type: "image", data: "iVBORw0KGgo=", mimeType: this.r.pick(["image/png", "image/jpeg"]) };
	}
	// usage is a usage record; a local model's costs nothing.
	usage(provider) {
		const r = this.r;
		const input = r.int(5000), output = r.int(800), cacheRead = r.chance(0.5) ? r.int(100000) : 0, cacheWrite = r.chance(0.3) ? r.int(5000) : 0;
		const c = (n, per) => Math.round(n * per * 1e6) / 1e12;
		const cost = { input: c(input, 3), output: c(output, 15), cacheRead: c(cacheRead, 0.3), cacheWrite: c(cacheWrite, 3.75) };
		if (provider === "local") for (const k of Object.keys(cost)) cost[k] = 0;
		cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
		if (r.chance(0.05)) return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
		return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
	}

	// ---- entries ----

	user() {
		const r = this.r;
		const kind = r.weighted({ string: 60, blocks: 20, image: 8, imageOnly: 4, empty: 3, none: 2, nul: 1 });
		const content = {
			string: () => this.text(),
			blocks: () => [{ type: "text", text: this.text() }, { type: "text", text: this.text() }],
			image: () => [{ type: "text", text: this.text() }, this.image()],
			imageOnly: () => [this.image()],
			empty: () => r.pick(["", [], "  "]),
			none: () => undefined,
			nul: () => null,
		}[kind]();
		const message = { role: "user", ...(content === undefined ? {} : { content }), timestamp: this.ms() };
		return this.append("message", { message });
	}
	assistant() {
		const r = this.r;
		const content = [];
		if (r.chance(0.3)) content.push({ type: "thinking", thinking: this.text(), thinkingSignature: r.hex(16) });
		if (r.chance(0.9)) content.push({ type: "text", text: this.text() });
		const calls = r.chance(0.35) ? 1 + r.int(3) : 0;
		for (let i = 0; i < calls; i++) content.push({ type: "toolCall", id: `call_${r.hex(6)}`, name: r.pick(TOOLS), arguments: { path: this.text(1) } });
		const [provider, model] = this.model[0] && this.model[1] ? this.model : MODELS[0];
		const message = { role: "assistant", content: r.chance(0.03) ? this.text() : content, api: "anthropic-messages", provider, model, usage: this.usage(provider), stopReason: calls ? "toolUse" : r.pick(["stop", "stop", "length", "error", "aborted"]), timestamp: this.ms() };
		if (r.chance(0.1)) message.responseModel = `${model}-20261101`;
		if (r.chance(0.04)) delete message[r.pick(["provider", "model"])];
		if (r.chance(0.04)) message.responseModel = r.pick(["", null, 7, [1, 2]]);
		if (r.chance(0.03)) message[r.pick(["provider", "model"])] = "";

		if (message.stopReason === "error") message.errorMessage = "overloaded";
		this.append("message", { message });
		for (const call of content.filter((c) => c.type === "toolCall")) {
			if (r.chance(0.1)) continue; // an interrupted call: no result
			const result = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: r.pick([[this.image()], this.text(), [{ type: "text", text: this.text() }], [{ type: "text", text: this.text() }]]), isError: r.chance(0.1), timestamp: this.ms() };
			if (r.chance(0.1)) result.usage = this.usage();
			this.append("message", { message: result });
		}
	}
	turn() {
		this.user();
		const replies = this.r.chance(0.15) ? 0 : 1 + (this.r.chance(0.3) ? 1 : 0);
		for (let i = 0; i < replies; i++) this.assistant();
	}
	system() {
		const r = this.r;
		const sections = {};
		for (const s of ["preamble", "tools", "rules", "cwd", "skills", "2"]) {
			if (r.chance(0.3)) sections[s] = r.chance(0.2) ? null : `<${s}>${this.text()}</${s}>`;
		}
		const message = { role: "system", content: r.pick(["", "", this.text(), [{ type: "text", text: this.text() }], null, "  "]) };
		if (Object.keys(sections).length) message.sections = sections;
		if (r.chance(0.4)) message.toolsAdded = [{ name: r.pick(TOOLS), description: this.text(), parameters: { type: "object" } }];
		if (r.chance(0.2)) message.toolsRemoved = [{ name: r.pick(TOOLS) }];
		if (r.chance(0.95)) message.timestamp = this.ms();
		return this.append("message", { message });
	}
	// otherMessage is a message of a role pi's agent writes besides user,
	// assistant and toolResult, or one only a hand or an old pi writes.
	otherMessage() {
		const r = this.r;
		const kind = r.weighted({ bash: 40, custom: 30, branchSummary: 6, compactionSummary: 6, hook: 6, unknown: 6, noRole: 3, noContent: 3 });
		const message = {
			bash: () => ({ role: "bashExecution", command: `ls ${this.text(1)}`, output: this.text(), exitCode: r.int(3), cancelled: false, truncated: false, timestamp: this.ms(), ...(r.chance(0.3) ? { excludeFromContext: true } : {}) }),
			custom: () => ({ role: "custom", customType: "ext", content: r.chance(0.5) ? this.text() : [{ type: "text", text: this.text() }], display: r.chance(0.5), timestamp: this.ms() }),
			branchSummary: () => ({ role: "branchSummary", summary: this.text(), fromId: this.anyId() ?? "root", timestamp: this.ms() }),
			compactionSummary: () => ({ role: "compactionSummary", summary: this.text(), tokensBefore: r.int(1000), timestamp: this.ms() }),
			hook: () => ({ role: "hookMessage", customType: "h", content: this.text(), display: true, timestamp: this.ms() }),
			unknown: () => ({ role: "narrator", content: this.text(), timestamp: this.ms() }),
			noRole: () => ({ content: this.text(), timestamp: this.ms() }),
			noContent: () => ({ role: r.pick(["user", "assistant", "toolResult", "system", "custom"]), timestamp: this.ms() }),
		}[kind]();
		return this.append("message", { message });
	}
	modelChange() {
		this.model = this.r.chance(0.05) ? this.r.pick([["", ""], ["anthropic", ""], ["", "x"]]) : this.r.pick(MODELS);
		return this.append("model_change", { provider: this.model[0], modelId: this.model[1] });
	}
	thinking() {
		return this.append("thinking_level_change", { thinkingLevel: this.r.pick(THINKING) });
	}
	usageEntry() {
		const r = this.r;
		const [provider, model] = r.chance(0.8) && this.model[0] && this.model[1] ? this.model : r.pick(MODELS);
		return this.append("usage", { kind: r.chance(0.9) ? "cache_warm" : "other", provider, model, usage: this.usage(provider), ...(r.chance(0.1) ? { note: "extension override" } : {}) });
	}
	custom() {
		return this.append("custom", { customType: this.r.pick(["ext", "todo", "mcp"]), data: this.r.chance(0.8) ? { n: this.r.int(10), s: this.text() } : null });
	}
	customMessage() {
		const r = this.r;
		const kind = r.weighted({ string: 50, blocks: 30, none: 8, nul: 6, image: 6 });
		const content = { string: () => this.text(), blocks: () => [{ type: "text", text: this.text() }], none: () => undefined, nul: () => null, image: () => [this.image()] }[kind]();
		const fields = { customType: r.pick(["ext", "note"]), display: r.chance(0.7) };
		if (r.chance(0.1)) fields.display = r.pick([undefined, null, "yes", 1]);
		if (content !== undefined) fields.content = content;
		if (r.chance(0.3)) fields.details = r.pick([{ why: this.text(1) }, { why: this.text(1) }, null, "text", []]);
		return this.append("custom_message", fields);
	}
	unknown() {
		const r = this.r;
		const fields = r.chance(0.5) ? { payload: { a: r.int(9) } } : { message: { role: "user", content: "not a message entry" }, targetId: this.anyId() };
		return this.append(r.pick(["future_thing", "annotation", "checkpoint"]), fields);
	}

	// anyId is an id written so far, or null when none is.
	anyId() {
		const ids = [...this.byId.keys()];
		return ids.length ? this.r.pick(ids) : null;
	}
	// pathBehindCompaction is an entry of the path before its newest
	// compaction, if any.
	pathBehindCompaction() {
		const p = this.path();
		const k = p.findLastIndex((e) => e.type === "compaction");
		return k > 0 ? this.r.pick(p.slice(0, k)).id : undefined;
	}
	// target picks the entry an edit or a label names, weighted toward the
	// ones that interact: on the path, behind a compaction, a compaction,
	// a system message; sometimes off the path, missing, or later.
	target() {
		const r = this.r;
		const p = this.path();
		const of = (pred) => {
			const l = this.entries.filter(pred);
			return l.length ? r.pick(l).id : undefined;
		};
		const onPath = new Set(p.map((e) => e.id));
		const kind = r.weighted({ path: 45, behind: 15, compaction: 8, system: 6, offPath: 12, missing: 4, later: 5, self: 2, any: 3 });
		const id = {
			path: () => (p.length ? r.pick(p).id : undefined),
			behind: () => this.pathBehindCompaction(),
			compaction: () => of((e) => e.type === "compaction"),
			system: () => of((e) => e.type === "message" && e.message.role === "system"),
			offPath: () => of((e) => !onPath.has(e.id)),
			missing: () => "gone",
			later: () => this.futureId(),
			self: () => "self",
			any: () => this.anyId(),
		}[kind]();
		return id ?? this.anyId() ?? "gone";
	}

	contextEdit() {
		const r = this.r;
		const targetId = r.chance(0.02) ? r.pick([null, 5]) : this.target();
		const kind = r.weighted({ omit: 40, string: 25, blocks: 20, odd: 8 });
		const replacement = {
			omit: () => null,
			string: () => ({ content: this.text() }),
			blocks: () => ({ content: r.chance(0.8) ? [{ type: "text", text: this.text() }] : [] }),
			odd: () => r.pick([{}, "bare", { content: 42 }, { content: null }, { content: { text: "x" } }, { content: "" }, 7, []]),
		}[kind]();
		const e = this.append("context_edit", { targetId, replacement });
		if (targetId === "self") e.targetId = e.id;
		return e;
	}
	label() {
		const r = this.r;
		let targetId = this.target();
		if (targetId === "self" || this.future.includes(targetId)) targetId = this.anyId() ?? "gone";
		const kind = r.weighted({ text: 50, spaced: 6, clear: 15, odd: 12, none: 2 });
		const lbl = {
			text: () => this.text(r.int(3) + 1),
			spaced: () => ` ${this.text(1)}${r.pick(TRIMMED)}`,
			clear: () => r.pick(["", null, false, 0]),
			odd: () => r.pick([5, true, -0.5, 1e21, 123456789.125, 1e-7, ["a", "b"], [1, [2, null]], {}, { a: 1 }, "0", " "]),
			none: () => undefined,
		}[kind]();
		return this.append("label", { targetId, ...(lbl === undefined ? {} : { label: lbl }) });
	}
	name() {
		const r = this.r;
		const space = () => (r.chance(0.5) ? r.pick(TRIMMED) : r.pick(KEPT));
		const kind = r.weighted({ plain: 40, spaced: 35, blank: 10, inner: 8, none: 4, nul: 3 });
		const name = {
			plain: () => this.text(r.int(3) + 1),
			spaced: () => space() + this.text(r.int(2) + 1) + space() + (r.chance(0.3) ? space() : ""),
			blank: () => space() + (r.chance(0.5) ? space() : ""),
			inner: () => `two${r.pick(["\n", "\r\n", "\u2028", "\u0085"])}lines`,
			none: () => undefined,
			nul: () => null,
		}[kind]();
		return this.append("session_info", name === undefined ? {} : { name });
	}
	compaction() {
		const r = this.r;
		const p = this.path();
		const offPath = this.entries.filter((e) => !p.includes(e));
		const older = p.filter((e) => e.type === "compaction");
		const kind = r.weighted({ path: 55, recent: 15, offPath: 6, missing: 4, self: 6, nul: 4, absent: 4, older: 6, later: 4, number: 2 });
		let kept = {
			path: () => (p.length ? r.pick(p).id : "gone"),
			recent: () => (p.length ? p[Math.max(0, p.length - 1 - r.int(4))].id : "gone"),
			offPath: () => (offPath.length ? r.pick(offPath).id : "gone"),
			missing: () => "gone",
			self: () => "self",
			nul: () => null,
			absent: () => undefined,
			older: () => (older.length ? r.pick(older).id : "self"),
			later: () => this.futureId(),
			number: () => r.pick([5, 0, true, ["x"]]),
		}[kind]();
		const fields = { summary: r.chance(0.05) ? "" : `## Summary\n${this.text(8)}`, tokensBefore: r.int(200000) };
		if (kept !== undefined) fields.firstKeptEntryId = kept;
		if (r.chance(0.05)) delete fields.tokensBefore;
		else if (r.chance(0.04)) fields.tokensBefore = r.pick([null, "5", 1.5, -1]);
		if (r.chance(0.5)) fields.details = { readFiles: ["main.go"], modifiedFiles: [] };
		if (r.chance(0.5)) fields.usage = this.usage();
		if (r.chance(0.3)) fields.fromHook = r.chance(0.5);
		const snap = r.weighted({ none: 40, snapshot: 50, odd: 10 });
		if (snap === "snapshot") {
			fields.systemMessage = { role: "system", content: r.pick(["", this.text()]), sections: { preamble: this.text() }, timestamp: this.ms() };
			if (r.chance(0.5)) fields.systemMessage.toolsAdded = [{ name: r.pick(TOOLS), description: "d", parameters: { type: "object" } }];
		} else if (snap === "odd") fields.systemMessage = r.pick([null, false, { role: "system", content: null }]);
		const e = this.append("compaction", fields);
		if (e.firstKeptEntryId === "self") e.firstKeptEntryId = e.id;
		return e;
	}
	// move puts the leaf on an earlier entry, as pi's /tree does (pi writes
	// no entry for it), then maybe a branch summary of the abandoned branch
	// (fromId is the old leaf, as pi 1.x writes; an older pi wrote the
	// target).
	move() {
		const r = this.r;
		const old = this.leaf;
		const p = this.path();
		const target = r.chance(0.6) && p.length > 1 ? p[r.int(p.length - 1)].id : this.anyId();
		this.leaf = target;
		if (!r.chance(0.5)) return;
		const fields = { fromId: r.chance(0.8) ? old ?? "root" : target ?? "root", summary: r.chance(0.07) ? "" : `The abandoned branch ${this.text()}` };
		if (r.chance(0.4)) fields.details = { readFiles: [], modifiedFiles: [] };
		if (r.chance(0.4)) fields.usage = this.usage();
		if (r.chance(0.3)) fields.fromHook = false;
		this.append("branch_summary", fields);
	}
	// newRoot moves the leaf to none (pi's resetLeaf): the next entry is a
	// root.
	newRoot() {
		this.leaf = null;
	}

	build() {
		const r = this.r;
		if (r.chance(0.7)) this.modelChange();
		if (r.chance(0.5)) this.thinking();
		if (r.chance(0.6)) this.system();
		this.turn();
		const steps = 3 + r.int(r.chance(0.1) ? 40 : 18);
		const acts = { turn: 30, move: 9, compaction: 7, contextEdit: 8, label: 6, name: 4, modelChange: 3, thinking: 3, system: 4, usageEntry: 4, custom: 2, customMessage: 3, otherMessage: 2, unknown: 1, newRoot: 1 };
		for (let i = 0; i < steps; i++) this[r.weighted(acts)]();
		// Combinations that interact, at the end where they decide the
		// leaf's context.
		const tail = r.weighted({ none: 40, editBehind: 12, summaryAfterMove: 12, labelCompaction: 8, compactThenEdit: 12, nameLast: 8, editCompaction: 8 });
		if (tail === "editBehind") this.contextEditOf(this.pathBehindCompaction());
		if (tail === "summaryAfterMove") this.move();
		if (tail === "labelCompaction") this.labelOf(this.entries.findLast((e) => e.type === "compaction")?.id);
		if (tail === "compactThenEdit") {
			this.compaction();
			this.contextEditOf(this.pathBehindCompaction());
			if (r.chance(0.5)) this.turn();
		}
		if (tail === "nameLast") this.name();
		if (tail === "editCompaction") this.contextEditOf(this.path().findLast((e) => e.type === "compaction")?.id);
		return this.entries;
	}
	contextEditOf(targetId) {
		if (!targetId) return this.contextEdit();
		return this.append("context_edit", { targetId, replacement: this.r.chance(0.6) ? null : { content: this.text() } });
	}
	labelOf(targetId) {
		if (!targetId) return this.label();
		return this.append("label", { targetId, label: this.r.pick(["checkpoint", "", " spaced ", 7]) });
	}

	header() {
		const h = { type: "session", version: 3, id: `0190e5c2-0000-7000-8000-${String(this.seed).padStart(12, "0")}`, timestamp: new Date(this.clock - 1000).toISOString(), cwd: this.r.pick(["/home/user/proj", "/srv/app", "/home/user/my proj"]) };
		if (this.r.chance(0.1)) h.parentSession = "/home/user/.pi/agent/sessions/--home-user-proj--/parent.jsonl";
		return h;
	}
}

// file writes a seed's session file (and returns its entries): its JSON lines, at times with CRLF
// endings, blank lines, or no final newline.
function file(seed) {
	const s = new Session(seed);
	const h = s.header();
	const lines = [h, ...s.build()].map((o) => JSON.stringify(o));
	const r = s.r;
	if (r.chance(0.05)) {
		for (let i = 0; i < 3; i++) lines.splice(1 + r.int(lines.length), 0, r.pick(["", "  ", "\t"]));
	}
	const eol = r.chance(0.05) ? "\r\n" : "\n";
	return { content: lines.join(eol) + (r.chance(0.05) ? "" : eol), entries: s.entries };
}

// fewProbes keeps pi's answers at a few entries only (answers at every
// entry grow with the square of a file's length): the tips of branches
// and the entries whose kind decides a context (compactions, branch
// summaries, edits), the last four, without their projection (the
// leaf's is kept). The committed corpus is so kept small; a run
// elsewhere keeps them all.
function fewProbes(answer, entries) {
	if (!answer.probes) return answer;
	const parents = new Set(entries.map((e) => e.parentId));
	const decides = new Set(["compaction", "branch_summary", "context_edit"]);
	const type = new Map(entries.map((e) => [e.id, e.type]));
	answer.probes = answer.probes
		.filter((p) => !parents.has(p.from) || decides.has(type.get(p.from)))
		.slice(-4)
		.map(({ projection, ...p }) => p);
	return answer;
}

// ---- main ----

const args = process.argv.slice(2).filter((a) => a !== "--all-probes");
const all = args.length < process.argv.length - 2;
const [smPath, first = "1", last = "200", dir = here] = args;
if (!smPath) {
	console.error("usage: node gen.mjs <pi>/dist/core/session-manager.js [--all-probes] [first last [dir]]");
	process.exit(2);
}
mkdirSync(dir, { recursive: true });
if (dir === here) {
	for (const f of readdirSync(here)) {
		if (f.endsWith(".jsonl") || f.endsWith(".json")) unlinkSync(join(here, f));
	}
}
const work = mkdtempSync(join(tmpdir(), "pirand-"));
const name = (seed) => `r${String(seed).padStart(4, "0")}`;
try {
	const seeds = [];
	for (let seed = Number(first); seed <= Number(last); seed++) seeds.push(seed);
	for (let i = 0; i < seeds.length; i += 25) {
		const batch = seeds.slice(i, i + 25).map((seed) => ({ name: name(seed), ...file(seed) }));
		const answers = askPiBatch(smPath, work, batch);
		batch.forEach((f, j) => {
			writeFileSync(join(dir, `${f.name}.jsonl`), f.content);
			writeFileSync(join(dir, `${f.name}.expected.json`), JSON.stringify(all ? answers[j] : fewProbes(answers[j], f.entries)) + "\n");
		});
		rmSync(work, { recursive: true, force: true });
		mkdirSync(work);
		console.log(`${batch.at(-1).name}: ${answers.filter((a) => a.error || a.loops).length} refused by pi`);
	}
} finally {
	rmSync(work, { recursive: true, force: true });
}
