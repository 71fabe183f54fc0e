// entry.js shows an entry and the messages of a context: text, tool calls
// and results, thinking, images. Everything is text nodes (see dom.js).

import {h, img, shortID, number} from "./dom.js";

function pretty(value) {
  return JSON.stringify(value, null, 2);
}

// blocks shows message content: a string, or an array of content blocks.
function blocks(content) {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return [h("div", {class: "block text"}, content)];
  if (!Array.isArray(content)) return [h("pre", {class: "block json"}, pretty(content))];
  return content.map((b) => {
    switch (b && b.type) {
      case "text":
        return h("div", {class: "block text"}, String(b.text ?? ""));
      case "thinking":
        return h("details", {class: "block thinking"},
          h("summary", null, "thinking"), h("div", {class: "text"}, String(b.thinking ?? "")));
      case "toolCall":
        return h("div", {class: "block tool-call"},
          h("div", {class: "block-head"}, "tool call ", h("code", null, String(b.name ?? "")),
            b.id ? h("span", {class: "muted"}, " " + String(b.id)) : null),
          h("pre", null, pretty(b.arguments ?? {})));
      case "image":
        return h("div", {class: "block image"}, img(b.mimeType, b.data));
    }
    return h("pre", {class: "block json"}, pretty(b));
  });
}

// messageView shows one agent message (an entry's message, or one message
// of a built context).
export function messageView(m) {
  if (!m || typeof m !== "object") return h("pre", {class: "json"}, pretty(m));
  const role = String(m.role ?? "message");
  const head = [h("span", {class: "role"}, role)];
  switch (role) {
    case "assistant":
      if (m.provider || m.model) head.push(h("span", {class: "muted"}, ` ${m.provider ?? ""}/${m.model ?? ""}`));
      if (m.stopReason && m.stopReason !== "stop") head.push(h("span", {class: "muted"}, ` (${m.stopReason})`));
      break;
    case "toolResult":
      head.push(h("span", {class: "muted"}, ` ${m.toolName ?? ""}`));
      if (m.isError) head.push(h("span", {class: "error-tag"}, " error"));
      break;
    case "bashExecution":
      return h("div", {class: "msg role-bash"}, h("div", {class: "msg-head"}, ...head),
        h("pre", {class: "block"}, `$ ${m.command ?? ""}\n${m.output ?? ""}`),
        h("div", {class: "muted"}, `exit ${m.exitCode ?? "?"}`));
    case "custom":
    case "hookMessage":
      head.push(h("span", {class: "muted"}, ` ${m.customType ?? ""}`));
      break;
    case "compactionSummary":
      head.push(h("span", {class: "muted"}, ` (${number(m.tokensBefore)} tokens before)`));
      return h("div", {class: "msg role-compactionSummary"}, h("div", {class: "msg-head"}, ...head),
        h("div", {class: "block text"}, String(m.summary ?? "")));
    case "branchSummary":
      head.push(h("span", {class: "muted"}, ` from ${shortID(m.fromId)}`));
      return h("div", {class: "msg role-branchSummary"}, h("div", {class: "msg-head"}, ...head),
        h("div", {class: "block text"}, String(m.summary ?? "")));
  }
  const body = blocks(m.content);
  if (m.errorMessage) body.push(h("div", {class: "block error"}, String(m.errorMessage)));
  return h("div", {class: "msg role-" + role.replace(/[^A-Za-z0-9_-]/g, "")}, h("div", {class: "msg-head"}, ...head), ...body);
}

// entryView shows a stored entry: its type's fields read for people, and
// the whole JSON underneath.
export function entryView(e, label) {
  const head = h("div", {class: "entry-head"},
    h("code", {class: "entry-id"}, String(e.id ?? "")), " ",
    h("span", {class: "type"}, String(e.type ?? "")), " ",
    h("span", {class: "muted"}, String(e.timestamp ?? "")),
    label ? h("span", {class: "label-tag"}, label) : null);
  let body;
  switch (e.type) {
    case "message":
      body = messageView(e.message);
      break;
    case "compaction":
      body = h("div", {class: "msg role-compactionSummary"},
        h("div", {class: "msg-head"}, `compaction (${number(e.tokensBefore)} tokens before, keeps from ${shortID(e.firstKeptEntryId) || "here"})`),
        h("div", {class: "block text"}, String(e.summary ?? "")));
      break;
    case "branch_summary":
      body = h("div", {class: "msg role-branchSummary"},
        h("div", {class: "msg-head"}, `branch summary (from ${shortID(e.fromId)})`),
        h("div", {class: "block text"}, String(e.summary ?? "")));
      break;
    case "custom_message":
      body = messageView({role: "custom", customType: e.customType, content: e.content});
      break;
    case "label":
      body = h("p", null, e.label ? `label ${shortID(e.targetId)}: ${e.label}` : `label of ${shortID(e.targetId)} cleared`);
      break;
    case "context_edit":
      body = h("p", null, e.replacement === null ? `omits ${shortID(e.targetId)} from the context` : `replaces the content of ${shortID(e.targetId)}`);
      break;
    default:
      body = null;
  }
  return h("div", {class: "entry"}, head, body,
    h("details", {class: "raw"}, h("summary", null, "JSON"), h("pre", null, pretty(e))));
}

// CONTEXT_PAGE is how many messages of a context are shown at first, the
// newest (those nearest the entry); a button shows the earlier ones.
const CONTEXT_PAGE = 40;

// contextView shows a built context: its state line and its messages.
export function contextView(c) {
  const msgs = Array.isArray(c.messages) ? c.messages : [];
  const model = c.model ? `${c.model.provider}/${c.model.modelId}` : "no model";
  const state = h("div", {class: "context-state muted"},
    `${msgs.length} message${msgs.length === 1 ? "" : "s"} · ${model} · thinking ${c.thinkingLevel ?? "off"}`);
  const list = h("div", {class: "context-messages"});
  let shown = Math.min(msgs.length, CONTEXT_PAGE);
  const more = h("button", {type: "button", class: "more"});
  const render = () => {
    list.replaceChildren(...msgs.slice(msgs.length - shown).map(messageView));
    more.hidden = shown >= msgs.length;
    more.textContent = `show ${Math.min(CONTEXT_PAGE * 5, msgs.length - shown)} earlier messages`;
  };
  more.addEventListener("click", () => {
    shown = Math.min(msgs.length, shown + CONTEXT_PAGE * 5);
    render();
  });
  render();
  return h("div", {class: "context"}, state, more, list);
}
