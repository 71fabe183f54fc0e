// piask.mjs asks pi 1.6.0 what it answers on a session file and records
// it: the answers of *.expected.json (README.md). gen.mjs here and
// ../pirand/gen.mjs both use it. Each file is opened by pi in a child
// process (this module run as a program), on a copy (pi appends a newline
// to a file without one and rewrites a migrated one), with a time limit: a
// file on which pi loops is recorded as such. The answers are
// deterministic.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const self = fileURLToPath(import.meta.url);

// answer opens the file at path with pi's SessionManager (smPath) and
// returns what pi answers on it.
export async function answer(smPath, path) {
	// pi draws a version-1 file's ids with crypto.randomUUID: count instead,
	// so that the answers do not change from run to run.
	let n = 0;
	crypto.randomUUID = () => `${(++n).toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
	syncBuiltinESMExports();
	const { SessionManager } = await import(pathToFileURL(smPath).href);
	const { version } = JSON.parse(readFileSync(join(dirname(smPath), "..", "..", "package.json"), "utf8"));
	const out = { piVersion: version };
	let sm;
	try {
		sm = SessionManager.open(path, dirname(path));
	} catch (err) {
		out.error = String(err.message).replaceAll(path, "<file>");
		return out;
	}
	const ctx = (c) => ({ messages: c.messages, thinkingLevel: c.thinkingLevel, model: c.model });
	const proj = (p) => p.entries.map((x) => ({ sourceId: x.sourceEntry.id, messages: x.messages }));
	const ids = (es) => es.map((x) => x.id);
	const header = sm.getHeader();
	Object.assign(out, {
		sessionId: sm.getSessionId(),
		cwd: sm.getCwd(),
		entryCount: sm.getEntryCount(),
		leafId: sm.getLeafId() ?? null,
		name: sm.getSessionName() ?? null,
		header,
		context: ctx(sm.buildSessionContext()),
		branch: ids(sm.getBranch()),
		contextEntryIds: ids(sm.buildContextEntries()),
		labels: Object.fromEntries([...sm.byId.keys()].filter((id) => sm.getLabel(id) !== undefined).map((id) => [id, sm.getLabel(id)])),
	});
	// What pi's tree shows of each label (`[${label}]`): a label that is
	// not a string as JavaScript's String() writes it.
	out.labelsShown = Object.fromEntries(Object.entries(out.labels).map(([id, l]) => [id, String(l)]));
	const children = {};
	const labelTimestamps = {};
	const walk = (key, nodes) => {
		children[key] = nodes.map((n) => n.entry.id);
		for (const n of nodes) {
			if (n.labelTimestamp !== undefined) labelTimestamps[n.entry.id] = n.labelTimestamp;
			walk(n.entry.id, n.children);
		}
	};
	walk("", sm.getTree());
	out.children = children;
	out.labelTimestamps = labelTimestamps;
	// The long file's text is recorded once, in the context.
	const small = statSync(path).size < 100000;
	if (small) out.projection = proj(sm.buildSessionProjection());
	if (header && header.version === 3 && small) {
		const { buildSessionContext, buildSessionProjection } = await import(pathToFileURL(smPath).href);
		const entries = sm.getEntries();
		// getBranch from an entry whose ancestors loop never returns.
		const loops = (id) => {
			const seen = new Set();
			for (let cur = sm.byId.get(id); cur; cur = cur.parentId ? sm.byId.get(cur.parentId) : undefined) {
				if (seen.has(cur.id)) return true;
				seen.add(cur.id);
			}
			return false;
		};
		out.probes = [...sm.byId.keys()].filter((from) => !loops(from)).map((from) => ({
			from,
			branch: ids(sm.getBranch(from)),
			context: ctx(buildSessionContext(entries, from, sm.byId)),
			projection: proj(buildSessionProjection(entries, from, sm.byId)),
		}));
	}
	// What appendCompaction would store as systemMessage here (pi stamps
	// it with the compaction's time; 1 here).
	const piAI = join(dirname(smPath), "..", "..", "..", "pi-ai", "dist", "index.js");
	const { getCurrentSystemMessage } = await import(pathToFileURL(piAI).href);
	try {
		const snap = getCurrentSystemMessage(sm.buildSessionProjection().messages);
		out.systemSnapshot = snap ? { ...snap, timestamp: 1 } : null;
	} catch (err) {
		// A compaction's systemMessage with null content, say: pi's
		// appendCompaction would throw there too.
		out.systemSnapshotError = String(err.message);
	}
	try {
		out.stats = await stats(smPath, sm);
	} catch (err) {
		// An assistant message without usage (old files): /session throws.
		out.statsError = String(err.message);
	}
	const list = await SessionManager.listAll(dirname(path));
	const info = list.find((s) => s.path === path);
	out.sessionInfo = info ? { id: info.id, messageCount: info.messageCount, firstMessage: info.firstMessage } : null;
	return out;
}

// stats are pi's /session totals: AgentSession.getSessionStats, whose
// module does not load on node 20, transcribed here, over pi's own
// usage-totals.js, with its getUsageCostBreakdown.
async function stats(smPath, sm) {
	const { createUsageTotals, addUsageToTotals, getUsageCostBreakdown } = await import(pathToFileURL(join(dirname(smPath), "usage-totals.js")).href);
	const st = { userMessages: 0, assistantMessages: 0, toolCalls: 0, toolResults: 0, totalMessages: 0 };
	const totals = createUsageTotals();
	for (const entry of sm.getEntries()) {
		if (entry.type === "usage") addUsageToTotals(totals, entry.usage);
		else if ((entry.type === "branch_summary" || entry.type === "compaction") && entry.usage) addUsageToTotals(totals, entry.usage);
		if (entry.type !== "message") continue;
		st.totalMessages++;
		const message = entry.message;
		if (message.role === "user") st.userMessages++;
		else if (message.role === "toolResult") {
			st.toolResults++;
			if (message.usage) addUsageToTotals(totals, message.usage);
		} else if (message.role === "assistant") {
			st.assistantMessages++;
			if (Array.isArray(message.content)) st.toolCalls += message.content.filter((c) => c.type === "toolCall").length;
			addUsageToTotals(totals, message.usage);
		}
	}
	const { input, output, cacheRead, cacheWrite, cost } = totals;
	return { ...st, tokens: { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite }, cost, breakdown: getUsageCostBreakdown(sm.getEntries()) };
}

// askPi writes content to a copy in a new folder under work, has pi open
// it in a child process and returns pi's answers, plus whether opening
// changed the file and, for a version-1 file, that pi invented its ids.
export function askPi(smPath, work, name, content) {
	const copy = copyIn(work, name, content);
	const r = spawnSync(process.execPath, ["--max-old-space-size=256", self, "--answer", smPath, copy, copy + ".answer"], { timeout: 10000, encoding: "utf8" });
	let out;
	if (r.error || r.status !== 0) {
		// pi walks a cycle in parent ids for ever, filling memory.
		const loops = r.error?.code === "ETIMEDOUT" || /heap out of memory/.test(r.stderr);
		out = loops ? { loops: true } : { error: `exit ${r.status}: ${r.stderr.split("\n").find((x) => x.includes("Error")) ?? ""}` };
	} else {
		out = JSON.parse(readFileSync(copy + ".answer", "utf8"));
	}
	return finish(out, copy, content);
}

// askPiBatch answers many files ({name, content}) in one child process,
// which saves node's start per file; when that child fails or runs out of
// time, each file is asked alone (askPi), so a file pi loops on is still
// recorded as such. It returns the answers in order.
export function askPiBatch(smPath, work, files) {
	const copies = files.map((f) => copyIn(work, f.name, f.content));
	const list = join(mkdtempSync(join(work, "batch-")), "list.json");
	writeFileSync(list, JSON.stringify(copies));
	const r = spawnSync(process.execPath, ["--max-old-space-size=512", self, "--answer-batch", smPath, list], { timeout: 10000 + 2000 * files.length, encoding: "utf8" });
	if (r.error || r.status !== 0) return files.map((f) => askPi(smPath, work, f.name, f.content));
	return copies.map((copy, i) => finish(JSON.parse(readFileSync(copy + ".answer", "utf8")), copy, files[i].content));
}

function copyIn(work, name, content) {
	const copy = join(mkdtempSync(join(work, `${name}-`)), `${basename(name)}.jsonl`);
	writeFileSync(copy, content);
	return copy;
}

function finish(out, copy, content) {
	out.fileChangedByOpen = !readFileSync(copy).equals(Buffer.from(content));
	// pi draws random ids for a version-1 file's entries.
	const first = content.toString().split("\n").find((l) => l.trim());
	try {
		const h = JSON.parse(first);
		if (h.type === "session" && (h.version ?? 1) < 2) out.idsAssignedOnMigration = true;
	} catch {}
	return out;
}

// The child processes: pi answers on one file, or on each of a list.
if (process.argv[1] === self && process.argv[2] === "--answer") {
	writeFileSync(process.argv[5], JSON.stringify(await answer(process.argv[3], process.argv[4])));
	process.exit(0);
}
if (process.argv[1] === self && process.argv[2] === "--answer-batch") {
	for (const path of JSON.parse(readFileSync(process.argv[4], "utf8"))) {
		writeFileSync(path + ".answer", JSON.stringify(await answer(process.argv[3], path)));
	}
	process.exit(0);
}
