// gen.mjs writes the tricky session files of this folder and records what
// pi itself answers on each (see README.md). Run it from anywhere with the
// path of pi's session-manager.js:
//
//	node testdata/piedge/gen.mjs <pkg>/dist/core/session-manager.js
//
// It needs node 20 or later and pi 1.6.0 installed (internal/pipkg
// installs it in the bench cache). piask.mjs asks pi, each file in a
// child process of its own. The output is deterministic.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { askPi } from "./piask.mjs";

const here = dirname(fileURLToPath(import.meta.url));

// ---- building the files ----

const SID = (n) => `0190e5c1-0000-7000-8000-${String(n).padStart(12, "0")}`;
const CWD = "/home/user/proj";
let clock;
const resetClock = () => {
	clock = Date.parse("2026-12-01T10:00:00.000Z");
};
const ts = () => new Date((clock += 1000)).toISOString();
const ms = () => clock;

function header(n, extra = {}) {
	resetClock();
	return { type: "session", version: 3, id: SID(n), timestamp: ts(), cwd: CWD, ...extra };
}
const e = (type, id, parentId, fields = {}) => ({ type, id, parentId, timestamp: ts(), ...fields });
const user = (id, parentId, text) => e("message", id, parentId, { message: { role: "user", content: text, timestamp: ms() } });
const asst = (id, parentId, text) =>
	e("message", id, parentId, {
		message: {
			role: "assistant",
			content: [{ type: "text", text }],
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-5",
			usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0.00003, output: 0.000075, cacheRead: 0, cacheWrite: 0, total: 0.000105 } },
			stopReason: "stop",
			timestamp: ms(),
		},
	});
const sys = (id, parentId, content, sections) =>
	e("message", id, parentId, { message: { role: "system", content, ...(sections ? { sections } : {}), timestamp: ms() } });
const usageEntry = (id, parentId) =>
	e("usage", id, parentId, {
		kind: "cache_warm",
		provider: "anthropic",
		model: "claude-sonnet-5",
		usage: { input: 3, output: 1, cacheRead: 1000, cacheWrite: 0, totalTokens: 1004, cost: { input: 0.000009, output: 0.000015, cacheRead: 0.0003, cacheWrite: 0, total: 0.000324 } },
	});
const edit = (id, parentId, targetId, replacement) => e("context_edit", id, parentId, { targetId, replacement });
const compaction = (id, parentId, firstKeptEntryId, extra = {}) =>
	e("compaction", id, parentId, { summary: `summary ${id}`, firstKeptEntryId, tokensBefore: 1000, ...extra });
const label = (id, parentId, targetId, lbl) => e("label", id, parentId, { targetId, label: lbl });

const lines = (...objs) => objs.map((o) => (typeof o === "string" ? o : JSON.stringify(o)));
const file = (ls) => ls.join("\n") + "\n";

// A plain conversation of n turns after a model change, ids c1..: the body
// most cases start from.
function chat(n, h) {
	const out = [h, e("model_change", "c0", null, { provider: "anthropic", modelId: "claude-sonnet-5" })];
	let prev = "c0";
	for (let i = 1; i <= n; i++) {
		out.push(user(`u${i}`, prev, `question ${i}`), asst(`a${i}`, `u${i}`, `answer ${i}`));
		prev = `a${i}`;
	}
	return out;
}

const cases = {};

cases["crlf"] = () => lines(...chat(2, header(1))).join("\r\n") + "\r\n";

cases["bom"] = () => "\uFEFF" + file(lines(...chat(1, header(2))));

cases["blank-lines"] = () => {
	const l = lines(...chat(2, header(3)));
	return "\n  \n" + [l[0], "", l[1], " \t ", l[2], "", "", l[3], l[4], l[5]].join("\n") + "\n\n \n";
};

cases["torn-tail"] = () => file(lines(...chat(2, header(4)))) + JSON.stringify(user("u9", "a2", "never finished")).slice(0, 40);

cases["no-final-newline"] = () => lines(...chat(2, header(5))).join("\n");

cases["bad-middle-line"] = () => {
	const l = lines(...chat(2, header(6)));
	l.splice(3, 0, '{"type":"message","id":"zz","parentId":"u1","timest', "<<<<<<< HEAD");
	return file(l);
};

cases["dup-line"] = () => {
	const l = lines(...chat(2, header(7)));
	l.splice(4, 0, l[3]);
	return file(l);
};

cases["dup-id"] = () => {
	const l = chat(2, header(8));
	l.push(user("u1", "c0", "same id, other entry"));
	return file(lines(...l));
};

// A fork pi 0.73.1 cut out of a session: it dropped a label entry without
// re-chaining, so the entry after it names a parent that is not there.
cases["missing-parent"] = () => {
	const l = chat(1, header(9));
	l.push(user("u2", "l1", "asked under a dropped label"), asst("a2", "u2", "answer 2"));
	return file(lines(...l));
};

cases["cycle-off-path"] = () => {
	const l = chat(1, header(10));
	l.push(user("x1", "x2", "in a cycle"), user("x2", "x1", "in a cycle too"), user("u2", "a1", "after"));
	return file(lines(...l));
};

cases["cycle-on-path"] = () => {
	const l = chat(1, header(11));
	l.push(user("x1", "x2", "in a cycle"), user("x2", "x1", "the leaf, in a cycle"));
	return file(lines(...l));
};

cases["self-parent"] = () => {
	const l = chat(1, header(12));
	l.push(user("x1", "x1", "my own parent"), user("u2", "a1", "after"));
	return file(lines(...l));
};

cases["unknown-types"] = () => {
	const h = header(13);
	return file(
		lines(
			h,
			e("future_thing", "f1", null, { payload: { a: 1 } }),
			user("u1", "f1", "under an unknown root"),
			e("future_note", "f2", "u1", { targetId: "u1", message: { role: "user", content: "not a message entry" } }),
			asst("a1", "f2", "answer under unknown"),
			e("future_thing", "f3", "a1", { content: "leaf is unknown" }),
		),
	);
};

cases["context-edits-odd"] = () => {
	const h = header(14);
	return file(
		lines(
			h,
			sys("s1", null, "", { rules: "be brief" }),
			e("model_change", "m1", "s1", { provider: "anthropic", modelId: "claude-sonnet-5" }),
			user("u1", "m1", "first"),
			asst("a1", "u1", "reply 1"),
			e("branch_summary", "b1", "a1", { fromId: "a1", summary: "a branch summary" }),
			e("custom_message", "cm1", "b1", { customType: "ext", content: "custom text", display: true }),
			edit("e1", "cm1", "nope", null),
			edit("e2", "e1", "m1", { content: "model change edited" }),
			edit("e3", "e2", "s1", { content: "system edited" }),
			edit("e4", "e3", "b1", { content: "summary edited" }),
			edit("e5", "e4", "e5", null),
			edit("e6", "e5", "u1", {}),
			edit("e7", "e6", "a1", "a bare string"),
			edit("e8", "e7", "cm1", { content: 42 }),
			user("u2", "e8", "second"),
			edit("e9", "u2", "u3", { content: "edits a later entry" }),
			user("u3", "e9", "third"),
			asst("a3", "u3", "reply 3"),
			edit("e10", "a3", "a3", { content: null }),
			edit("e11", "e10", "s1", null),
		),
	);
};

cases["edits-on-branches"] = () => {
	const h = header(15);
	return file(
		lines(
			h,
			user("u1", null, "first"),
			asst("a1", "u1", "reply 1"),
			edit("e1", "a1", "u1", { content: "edited on branch one" }),
			user("u2", "e1", "branch one"),
			edit("e2", "a1", "a1", { content: [{ type: "text", text: "edited on branch two" }] }),
			user("u3", "e2", "branch two"),
			edit("e3", "u3", "u2", null),
			edit("e4", "e3", "u1", null),
			edit("e5", "e4", "u1", { content: "last edit wins" }),
		),
	);
};

// Edits and a compaction: an edit summarised away does nothing, even on a
// kept target; an edit in the kept range counts; one after the
// compaction on an older compaction does nothing.
cases["edits-and-compaction"] = () => {
	const h = header(81);
	return file(
		lines(
			h,
			user("u1", null, "first"),
			asst("a1", "u1", "reply 1"),
			edit("e0", "a1", "u2", { content: "summarised away" }),
			compaction("k0", "e0", "e0"),
			user("u2", "k0", "second"),
			asst("a2", "u2", "reply 2"),
			edit("e1", "a2", "a2", { content: "kept edit" }),
			compaction("k1", "e1", "u2", { systemMessage: { role: "system", content: "snap", timestamp: 1 } }),
			edit("e2", "k1", "k0", null),
			edit("e3", "e2", "k1", { content: "ignored on a compaction" }),
			user("u3", "e3", "third"),
		),
	);
};

cases["usage-odd"] = () => {
	const h = header(16);
	return file(
		lines(
			h,
			usageEntry("g1", null),
			user("u1", "g1", "first"),
			usageEntry("g2", "u1"),
			asst("a1", "g2", "reply 1"),
			compaction("k1", "a1", "g2"),
			usageEntry("g3", "k1"),
		),
	);
};

cases["system-messages"] = () => {
	const h = header(17);
	return file(
		lines(
			h,
			sys("s1", null, "", { preamble: "you are pi" }),
			user("u1", "s1", "first"),
			sys("s2", "u1", [{ type: "text", text: "patched" }], { rules: "new rules" }),
			asst("a1", "s2", "reply 1"),
			e("message", "s3", "a1", { message: { role: "system", content: null, timestamp: ms() } }),
			user("u2", "s3", "second"),
			compaction("k1", "u2", "s2", { systemMessage: { role: "system", content: "snapshot", sections: { preamble: "you are pi" }, timestamp: ms() } }),
			sys("s4", "k1", "after compaction"),
			user("u3", "s4", "third"),
		),
	);
};

cases["compaction-missing-kept"] = () => {
	const l = chat(2, header(18));
	l.push(compaction("k1", "a2", "gone"), user("u3", "k1", "after"));
	return file(lines(...l));
};

cases["compaction-offpath-kept"] = () => {
	const l = chat(2, header(19));
	l.push(user("o1", "a1", "other branch"), compaction("k1", "a2", "o1"), user("u3", "k1", "after"));
	return file(lines(...l));
};

cases["compaction-kept-after"] = () => {
	const l = chat(2, header(20));
	l.push(compaction("k1", "a2", "u3"), user("u3", "k1", "after, and named as kept"));
	return file(lines(...l));
};

cases["compaction-kept-none"] = () => {
	const l = chat(2, header(21));
	l.push(compaction("k1", "a2", "k1"), user("u3", "k1", "after"), compaction("k2", "u3", null), user("u4", "k2", "after null"));
	return file(lines(...l));
};

cases["compaction-no-kept-field"] = () => {
	const l = chat(2, header(22));
	const k = compaction("k1", "a2", undefined);
	delete k.firstKeptEntryId;
	l.push(k, user("u3", "k1", "after"));
	return file(lines(...l));
};

cases["compactions-nested"] = () => {
	const l = chat(3, header(23));
	l.push(compaction("k1", "a3", "u3"), user("u4", "k1", "after k1"), asst("a4", "u4", "answer 4"));
	l.push(compaction("k2", "a4", "u2"), user("u5", "k2", "after k2"));
	return file(lines(...l));
};

cases["compaction-root"] = () => {
	const h = header(24);
	return file(lines(h, compaction("k1", null, "k1"), user("u1", "k1", "after a root compaction"), compaction("k2", "u1", "k1"), user("u2", "k2", "after k2")));
};

cases["branch-summaries"] = () => {
	const h = header(25);
	return file(
		lines(
			h,
			user("u1", null, "first"),
			asst("a1", "u1", "reply 1"),
			e("branch_summary", "b1", "a1", { fromId: "gone", summary: "" }),
			e("branch_summary", "r2", null, { fromId: "b1", summary: "a second root" }),
			user("u2", "r2", "under the second root"),
		),
	);
};

cases["branch-summary-null"] = () => {
	const h = header(26);
	const nosum = e("branch_summary", "b3", "b2", { fromId: "a1" });
	return file(
		lines(
			h,
			user("u1", null, "first"),
			asst("a1", "u1", "reply 1"),
			e("branch_summary", "b2", "a1", { fromId: "a1", summary: null }),
			nosum,
			e("branch_summary", "b4", "b3", { summary: "no fromId" }),
			user("u2", "b4", "after"),
		),
	);
};

cases["labels-odd"] = () => {
	const h = header(28);
	return file(
		lines(
			h,
			user("u1", null, "first"),
			label("l1", "u1", "gone", "on a missing entry"),
			label("l2", "l1", "a1", "on a later entry"),
			asst("a1", "l2", "reply 1"),
			label("l3", "a1", "u1", " spaced "),
			label("l4", "l3", "gone2", ""),
			label("l6", "l4", "a1", null),
			user("u2", "l6", "after labels"),
		),
	);
};

cases["long-line"] = () => {
	const h = header(27);
	const head = JSON.stringify(h) + "\n";
	const first = JSON.stringify(user("u1", null, "short")) + "\n";
	// The long text puts a 4-byte character across pi's 1 MiB read
	// boundary.
	const entryStart = Buffer.byteLength(head + first);
	const probe = JSON.stringify(user("u2", "u1", "X")).indexOf('"X"') + 1;
	const pad = (1 << 20) - entryStart - probe - 2;
	const text = "a".repeat(pad) + "😀" + "b".repeat(1000);
	const long = JSON.stringify(user("u2", "u1", text)) + "\n";
	return head + first + long + JSON.stringify(asst("a2", "u2", "read it")) + "\n";
};

function v1(n, body) {
	resetClock();
	const h = { type: "session", id: SID(n), timestamp: ts(), cwd: CWD };
	return [h, ...body];
}
const v1msg = (role, text) =>
	role === "assistant"
		? { type: "message", timestamp: ts(), message: { role, content: [{ type: "text", text }], provider: "anthropic", model: "claude-3", timestamp: ms() } }
		: { type: "message", timestamp: ts(), message: { role, content: text, timestamp: ms() } };
const v1compaction = (idx) => ({ type: "compaction", timestamp: ts(), summary: `kept from ${JSON.stringify(idx)}`, firstKeptEntryIndex: idx, tokensBefore: 500 });

// Version 1: index 3 names the third JSON line after the header, counted
// after pi drops blank and malformed lines.
cases["v1-kept-after-bad-lines"] = () => {
	const l = lines(...v1(40, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1msg("user", "q2"), v1msg("assistant", "a2"), v1compaction(3), v1msg("user", "q3")]));
	l.splice(2, 0, "", "not json at all");
	return file(l);
};
cases["v1-kept-header"] = () => file(lines(...v1(41, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1compaction(0), v1msg("user", "q2")])));
cases["v1-kept-forward"] = () => file(lines(...v1(42, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1compaction(5), v1msg("user", "q2"), v1msg("user", "q3")])));
cases["v1-kept-string"] = () => file(lines(...v1(43, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1compaction("1"), v1msg("user", "q2")])));
cases["v1-kept-fraction"] = () => file(lines(...v1(44, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1compaction(1.5), v1msg("user", "q2")])));
cases["v1-kept-self"] = () => file(lines(...v1(45, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1compaction(3), v1msg("user", "q2")])));
cases["v1-hookmessage-crlf"] = () =>
	lines(...v1(46, [v1msg("user", "q1"), { type: "message", timestamp: ts(), message: { role: "hookMessage", customType: "h", content: "hooked", display: true, timestamp: ms() } }, v1msg("assistant", "a1")])).join(
		"\r\n",
	) + "\r\n";

cases["v2-hookmessage"] = () => {
	const h = header(47, { version: 2 });
	return file(
		lines(h, user("u1", null, "q1"), e("message", "h1", "u1", { message: { role: "hookMessage", customType: "h", content: null, display: false, timestamp: ms() } }), asst("a1", "h1", "a1")),
	);
};

for (const [n, [name, v]] of Object.entries([["version-string", "3"], ["version-4", 4], ["version-fraction", 2.5], ["version-0", 0], ["version-null", null]])) {
	cases[name] = () => {
		const l = chat(1, header(50 + Number(n), { version: v }));
		return file(lines(...l));
	};
}

cases["header-no-timestamp"] = () => {
	const h = header(60);
	delete h.timestamp;
	return file(lines(...chat(1, h)));
};
cases["header-id-number"] = () => file(lines(...chat(1, { ...header(61), id: 61 })));
cases["header-after-garbage"] = () => "garbage before the header\n" + file(lines(...chat(1, header(62))));
cases["header-not-first"] = () => {
	const l = lines(...chat(1, header(63)));
	return file([l[1], l[0], ...l.slice(2)]);
};
cases["blank-only"] = () => "\n\n  \n";
cases["second-header"] = () => {
	const l = chat(1, header(64));
	const h2 = { type: "session", version: 3, id: SID(65), timestamp: ts(), cwd: "/elsewhere" };
	l.push(h2, user("u2", "a1", "after a second header"));
	return file(lines(...l));
};
cases["non-object-lines"] = () => {
	const l = lines(...chat(2, header(66)));
	l.splice(3, 0, "null", "false", "0", '""');
	return file(l);
};

cases["timestamps-odd"] = () => {
	const h = header(67);
	const at = (o, t) => ({ ...o, timestamp: t });
	return file(
		lines(
			h,
			user("u1", null, "root"),
			at(user("s1", "u1", "sub-ms later in text"), "2026-12-01T10:00:05.1239Z"),
			at(user("s2", "u1", "sub-ms earlier in text"), "2026-12-01T10:00:05.1231Z"),
			at(user("s3", "u1", "offset, an hour before"), "2026-12-01T11:00:04.000+02:00"),
			at(user("s4", "u1", "date only"), "2026-12-01"),
			at(user("s5", "u1", "minutes only"), "2026-12-01T10:00Z"),
			at(e("custom_message", "cm1", "u1", { customType: "x", content: "c", display: true }), "2026-12-01T10:00:09.000+01:00"),
			at(e("branch_summary", "b1", "cm1", { fromId: "u1", summary: "sum" }), "2026-12-01"),
			at(compaction("k1", "b1", "cm1"), "2026-12-01T10:00:10.5Z"),
			at(e("custom_message", "cm2", "k1", { customType: "x", content: "d", display: true }), "2026-12-01T10:00:11.123456Z"),
		),
	);
};

cases["stats-odd"] = () => {
	const h = header(74);
	const u = (n, cost) => ({ input: n, output: n, cacheRead: 0, cacheWrite: n, totalTokens: 3 * n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost } });
	const a1 = asst("a1", "u1", "with a response model");
	a1.message.responseModel = "claude-sonnet-5-20261101";
	a1.message.content.push({ type: "toolCall", id: "t1", name: "read", arguments: {} }, { type: "toolCall", id: "t2", name: "bash", arguments: {} });
	const zero = asst("a2", "r1", "free");
	zero.message.usage = u(0, 0);
	zero.message.provider = "local";
	return file(
		lines(
			h,
			user("u1", null, "q1"),
			a1,
			e("message", "r1", "a1", { message: { role: "toolResult", toolCallId: "t1", toolName: "read", content: "x", usage: u(7, 0.5), timestamp: ms() } }),
			zero,
			e("usage", "g1", "a2", { kind: "other_kind", provider: "openai", model: "gpt-5", usage: u(3, 0.25), note: "n" }),
			e("branch_summary", "b1", "g1", { fromId: "a1", summary: "s", usage: u(2, 0.125) }),
			compaction("k1", "b1", "a2", { usage: u(1, 0.0625) }),
			e("message", "x1", "k1", { message: { role: "bashExecution", command: "ls", output: "", exitCode: 0, timestamp: ms() } }),
		),
	);
};

cases["list-odd"] = () => {
	const h = header(75);
	const blocks = (id, parentId, role, content) => e("message", id, parentId, { message: { role, content, timestamp: ms() } });
	return file(
		lines(
			h,
			sys("s1", null, "", { preamble: "p" }),
			blocks("u1", "s1", "user", [{ type: "image", data: "AAAA", mimeType: "image/png" }]),
			blocks("u2", "u1", "user", [{ type: "text", text: "two" }, { type: "image", data: "AAAA", mimeType: "image/png" }, { type: "text", text: "blocks" }]),
			e("message", "u3", "u2", { message: { role: "user", timestamp: ms() } }),
			asst("a1", "u3", "answer"),
		),
	);
};

// The model of the context, taken from assistant messages without
// provider or model: pi copies the fields as they are, so its model lacks
// a missing one ({} for neither).
cases["models-odd"] = () => {
	const h = header(82);
	const bare = (id, parentId, text, drop) => {
		const a = asst(id, parentId, text);
		for (const k of drop) delete a.message[k];
		return a;
	};
	return file(
		lines(
			h,
			user("u1", null, "q1"),
			bare("a1", "u1", "neither", ["provider", "model"]),
			user("u2", "a1", "q2"),
			bare("a2", "u2", "no model", ["model"]),
			bare("a3", "a2", "no provider", ["provider"]),
			e("model_change", "c1", "a3", { provider: "openai", modelId: "gpt-5" }),
			user("u3", "c1", "q3"),
			bare("a4", "u3", "neither again", ["provider", "model"]),
		),
	);
};

// Labels that are not strings: pi keeps a truthy one as it is, and its
// tree shows it as JavaScript's String() does; a falsy one clears.
cases["labels-nonstring"] = () => {
	const h = header(83);
	return file(
		lines(
			h,
			user("u1", null, "q1"),
			asst("a1", "u1", "r1"),
			user("u2", "a1", "q2"),
			asst("a2", "u2", "r2"),
			label("l1", "a2", "u1", 5),
			label("l2", "l1", "a1", true),
			label("l3", "l2", "u2", 1.5e300),
			label("l4", "l3", "a2", "cleared next"),
			label("l5", "l4", "a2", 0),
			label("l6", "l5", "u1", -0.000001),
			user("u3", "l6", "after labels"),
		),
	);
};

cases["parent-empty-string"] = () => {
	const l = chat(1, header(76));
	l.push(user("u2", "", "parentId is an empty string"));
	return file(lines(...l));
};

cases["compaction-odd"] = () => {
	const l = chat(2, header(69));
	const k1 = compaction("k1", "a2", "u2", { systemMessage: null });
	const k2 = compaction("k2", "u3", "u3", { systemMessage: false, summary: "" });
	delete k2.tokensBefore;
	l.push(k1, user("u3", "k1", "after k1"), k2, user("u4", "k2", "after k2"));
	return file(lines(...l));
};

cases["names-odd"] = () => {
	const l = chat(1, header(70));
	l.push(e("session_info", "n1", "a1", { name: "  spaced  " }), e("session_info", "n2", "n1", { name: "two\nlines" }), e("session_info", "n3", "n2", {}), user("u2", "n3", "after a nameless session_info"));
	return file(lines(...l));
};

cases["names-blank"] = () => {
	const l = chat(1, header(71));
	l.push(e("session_info", "n1", "a1", { name: "kept?" }), e("session_info", "n2", "n1", { name: " \t " }));
	return file(lines(...l));
};

// pi drops falsy JSON lines (null, false, 0, "") before it numbers a
// version-1 file's entries.
cases["v1-kept-after-null-line"] = () => {
	const l = lines(...v1(48, [v1msg("user", "q1"), v1msg("assistant", "a1"), v1msg("user", "q2"), v1msg("assistant", "a2"), v1compaction(3), v1msg("user", "q3")]));
	l.splice(2, 0, "null", "false");
	return file(l);
};

cases["invalid-utf8"] = () => {
	const l = lines(...chat(1, header(72)));
	const [before, after] = JSON.stringify(user("u2", "a1", "bad bytes: XX end")).split("XX");
	return Buffer.concat([Buffer.from(file(l) + before), Buffer.from([0xff, 0xc3]), Buffer.from(after + "\n")]);
};

cases["timestamps-nan"] = () => {
	const h = header(73);
	const at = (o, t) => ({ ...o, timestamp: t });
	return file(lines(h, user("u1", null, "root"), at(user("s1", "u1", "garbage time"), "garbage"), user("s2", "u1", "a real time"), at(e("custom_message", "cm1", "u1", { customType: "x", content: "c", display: true }), "not a time")));
};

// System messages that pi's replay (getCurrentSystemMessage, which
// appendCompaction stores) treats in odd ways: integer-like section
// names, null sections, a redefined tool, text blocks among others,
// blank text.
cases["system-replay"] = () => {
	const h = header(78);
	const tool = (name, description) => ({ name, description, parameters: { type: "object" } });
	const m = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", timestamp: ms(), ...message } });
	return file(
		lines(
			h,
			m("s1", null, { content: "", sections: { b: "B", 2: "two", a: "A" }, toolsAdded: [tool("read", "v1"), tool("bash", "b")] }),
			user("u1", "s1", "q1"),
			m("s2", "u1", { content: [{ type: "text", text: "x" }, { type: "image", data: "AA", mimeType: "image/png" }, { type: "text", text: "y" }], sections: { a: null, c: "C" }, toolsRemoved: [{ name: "read" }], toolsAdded: [tool("read", "v2")] }),
			m("s3", "s2", { content: "   ", sections: { 1: "one", z: null }, toolsRemoved: [{ name: "gone" }] }),
			m("s4", "s3", { content: null, sections: { b: "B2" } }),
			asst("a1", "s4", "answer"),
		),
	);
};

// pi's replay takes its time from the first system message that has one
// and gives nothing when none has and no tool is declared; a tool without
// name is kept, under the key undefined, where a later one without name
// replaces it.
cases["system-no-timestamp"] = () => {
	const h = header(79);
	const bare = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", ...message } });
	return file(lines(h, bare("s1", null, { content: "no time", sections: { a: "A" } }), user("u1", "s1", "q1"), asst("a1", "u1", "answer")));
};
cases["system-nameless-tool"] = () => {
	const h = header(80);
	const bare = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", ...message } });
	return file(
		lines(
			h,
			bare("s1", null, { content: "", toolsAdded: [{ description: "nameless" }, { name: "read", description: "r" }] }),
			user("u1", "s1", "q1"),
			bare("s2", "u1", { content: "", toolsAdded: [{ description: "nameless again" }] }),
			asst("a1", "s2", "answer"),
			bare("s3", "a1", { content: "", toolsRemoved: [{ name: "read" }] }),
			user("u2", "s3", "q2"),
		),
	);
};

// pi's replay takes its time with timestamp ??= message.timestamp: a
// system message whose timestamp is null sets it (to null, which a later
// time replaces), so the replay gives a snapshot (timestamp 0) where one
// without timestamp gives none. Found by the root package's
// TestPiMutations.
cases["system-null-timestamp"] = () => {
	const h = header(87);
	const bare = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", ...message } });
	return file(lines(h, bare("s1", null, { content: "null time", timestamp: null }), user("u1", "s1", "q1"), asst("a1", "u1", "answer")));
};
// Before the first time, a later system message without timestamp takes
// the null back to undefined (??= assigns over null): no snapshot.
cases["system-null-timestamp-then-none"] = () => {
	const h = header(88);
	const bare = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", ...message } });
	return file(
		lines(
			h,
			bare("s1", null, { content: "null time", timestamp: null }),
			user("u1", "s1", "q1"),
			bare("s2", "u1", { content: "no time", sections: { a: "A" } }),
			asst("a1", "s2", "answer"),
		),
	);
};

// pi's replay joins a system message's text blocks as JavaScript's join
// does: String() of a text that is not a string, "" for null or none; a
// type spelled with an escape is "text" all the same. Found by the root
// package's TestPiMutations.
cases["system-text-not-string"] = () => {
	const h = header(86);
	const m = (id, parentId, message) => e("message", id, parentId, { message: { role: "system", timestamp: ms(), ...message } });
	const texts = [5, undefined, null, true, { a: 1 }, [1, [2, null]], 1e21, -0.000001, "plain"];
	const escaped = JSON.stringify(m("s2", "u1", { content: [{ type: "text", text: "escaped type" }] })).replace('"type":"text"', '"type":"te\\u0078t"');
	return file(
		lines(
			h,
			m("s1", null, { content: texts.map((text) => ({ type: "text", text })), sections: { a: "A" } }),
			user("u1", "s1", "q1"),
			escaped,
			asst("a1", "s2", "answer"),
		),
	);
};

// A name inside a byte order mark and NELs: JavaScript's trim removes the
// mark (which Go's strings.TrimSpace keeps) and keeps NEL (which it
// removes). Found by ../pirand.
cases["names-js-trim"] = () => {
	const l = chat(1, header(84));
	l.push(e("session_info", "n1", "a1", { name: "\ufeff\u0085 x \u0085\ufeff" }));
	return file(lines(...l));
};

// White space other than JSON's around an entry's JSON: pi's JSON.parse
// refuses the line (a no-break space after it, a vertical tab before
// it) and pi drops the entry; a line of such space alone (a byte order
// mark, a no-break space, a NEL) is skipped. Found by ../pirand.
cases["line-unicode-space"] = () => {
	const l = lines(...chat(2, header(85)));
	const x1 = JSON.stringify(user("x1", "a1", "a no-break space after")) + "\u00a0";
	const x2 = "\v" + JSON.stringify(user("x2", "a1", "a vertical tab before"));
	l.splice(4, 0, x1, "\ufeff", x2, "\u00a0", "\u0085");
	return file(l);
};

// A session pi resumed after a crash tore its last line: pi opens the
// torn file (adding a newline after the torn bytes) and appends, so the
// torn line ends up between entries. Written by pi itself (resume below).
cases["torn-then-resumed"] = "resume";

// Timestamps as JavaScript's Date reads them (pi reads every entry time
// with new Date): timestamps.json, [text, Unix ms or null for NaN]. A date
// and time without zone is local time, so none is listed.
const timestamps = [
	"2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00Z", "2026-12-01T10:00:00.1239Z", "2026-12-01T10:00:00.9999999Z",
	"2026-12-01T10:00:00.5Z", "2026-12-01T10:00:00.Z", "2026-12-01T10:00:00,5Z", "2026-12-01T12:00:00+02:00",
	"2026-12-01T12:00:00+0200", "2026-12-01T12:00:00+02", "2026-12-01T10:00:00-00:00", "2026-12-01T10:00:00+23:59",
	"2026-12-01T10:00:00+24:00", "2026-12-01T10:00:00-09:30", "2026-12-01t10:00:00z", "2026-12-01 10:00:00Z",
	"2026-12-01T10:00Z", "2026-12-01T10Z", "2026-12-01T1:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T24:00:01Z",
	"2026-12-01T10:60:00Z", "2026-12-01T10:00:60Z", "2026-12-01", "2026-12", "2026", "20261201",
	"2026-02-29", "2026-02-30", "2026-04-31", "2026-02-32", "2026-13-01", "2026-00-10", "2026-12-00",
	"+002026-12-01T10:00:00.000Z", "-000001-01-01T00:00:00Z", "+2026-12-01T10:00:00Z", "0000-01-01T00:00:00Z",
	"-000000-01-01T00:00:00Z", "0049-01-01 00:00Z", "0050-12-01 10:00Z", "+000050-12-01 10:00Z", "0050-12-01T10:00Z",
	"2026-12-01T10:00:00.000010000000Z", "2026-12-01T10:00:00.000999999999Z", "2026-12-01T10:00:00.00000000000000000000000009Z",
	"+700000", "+275760-09-13T00:00:00.001Z", "-271821-04-19T23:59:59.999Z",
	"+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "+275760-09-13T02:00:00.000+02:00",
	"2026-12-03T24:00:00.0000000000Z", "2026-12-03T24:00:00.0000001Z", "2026-12-03T24:00:00.0000000001Z",
	" 2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z ", "2026-12-01T10:00:00.000ZZ", "2026-12-01T10:00:00.000Z[UTC]",
	"", "garbage", "1796119200000",
];


// resume opens the torn file at path with pi and appends a user message
// and an assistant reply, with a fixed clock and counted ids.
async function resume(smPath, path) {
	let n = 0;
	crypto.randomUUID = () => `${(++n).toString(16).padStart(8, "f")}-0000-4000-8000-000000000000`;
	syncBuiltinESMExports();
	let now = Date.parse("2026-12-01T11:00:00.000Z");
	const RealDate = Date;
	globalThis.Date = class extends RealDate {
		constructor(...args) {
			super(...(args.length ? args : [(now += 1000)]));
		}
		static now() {
			return (now += 1000);
		}
	};
	const { SessionManager } = await import(pathToFileURL(smPath).href);
	const sm = SessionManager.open(path, dirname(path));
	sm.appendMessage({ role: "user", content: "resumed after a crash", timestamp: now });
	resetClock();
	sm.appendMessage({ ...asst("x", "x", "answer after the crash").message, timestamp: now });
}


// resumed is the torn-tail file after pi resumed it (see resume).
function resumed(smPath, work) {
	const path = join(mkdtempSync(join(work, "resume-")), "s.jsonl");
	writeFileSync(path, cases["torn-tail"]().replace(SID(4), SID(77)));
	const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--resume", smPath, path], { encoding: "utf8" });
	if (r.status !== 0) throw new Error(`pi resume: ${r.stderr}`);
	return readFileSync(path, "utf8");
}

// ---- main ----

// The child process: pi resumes a file.
if (process.argv[2] === "--resume") {
	await resume(process.argv[3], process.argv[4]);
	process.exit(0);
}

const smPath = process.argv[2];
if (!smPath) {
	console.error("usage: node gen.mjs <pi>/dist/core/session-manager.js");
	process.exit(2);
}
for (const f of readdirSync(here)) {
	if (f.endsWith(".jsonl") || f.endsWith(".json")) unlinkSync(join(here, f));
}
const work = mkdtempSync(join(tmpdir(), "piedge-"));
try {
	const times = timestamps.map((t) => [t, Number.isNaN(new Date(t).getTime()) ? null : new Date(t).getTime()]);
	writeFileSync(join(here, "timestamps.json"), "[\n" + times.map((x) => " " + JSON.stringify(x)).join(",\n") + "\n]\n");
	for (const [name, build] of Object.entries(cases)) {
		const content = build === "resume" ? resumed(smPath, work) : build();
		writeFileSync(join(here, `${name}.jsonl`), content);
		const out = askPi(smPath, work, name, content);
		writeFileSync(join(here, `${name}.expected.json`), JSON.stringify(out, null, 1) + "\n");
		console.log(name, out.error ? `pi: ${out.error}` : `${out.entryCount} entries`);
	}
} finally {
	rmSync(work, { recursive: true, force: true });
}
