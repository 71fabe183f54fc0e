// dom.js builds DOM nodes from data without ever parsing it as HTML.
//
// Session text is model output and may hold anything: every string given
// here becomes a text node or an attribute value set through the DOM, never
// markup. Attributes that load or run something (href, src, on*, style) are
// refused, so no URL and no handler is ever made from data; the one
// exception, an image's data URL, is built by imageURL after checking it.

const SVG_NS = "http://www.w3.org/2000/svg";

// Attributes that may carry data. Anything else throws: a new use must be
// added here after thinking about what it can do.
const SAFE_ATTRS = new Set([
  "class", "id", "title", "type", "value", "placeholder", "role", "tabindex",
  "aria-label", "aria-live", "aria-expanded", "for", "name", "rows", "disabled",
  "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "d", "width", "height",
  "viewBox", "transform", "text-anchor", "dominant-baseline", "alt",
]);

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("data-")) {
      node.setAttribute(key, String(value));
    } else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (SAFE_ATTRS.has(key)) {
      node.setAttribute(key, value === true ? "" : String(value));
    } else {
      throw new Error(`dom: attribute ${key} is not allowed`);
    }
  }
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// h makes an HTML element: h("p", {class: "x"}, "text", otherNode).
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

// s makes an SVG element the same way.
export function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

// fill empties a node and appends children to it.
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

// Image types a browser shows without running anything (no SVG).
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// imageURL returns a data URL for an image content block, or null when its
// type is not a plain raster image or its data is not base64.
export function imageURL(mimeType, data) {
  if (!IMAGE_TYPES.has(mimeType) || typeof data !== "string" || !BASE64.test(data)) return null;
  return `data:${mimeType};base64,${data}`;
}

// img makes an image element for an image content block, or a note saying
// why it is not shown.
export function img(mimeType, data) {
  const url = imageURL(mimeType, data);
  if (url === null) return h("p", {class: "note"}, `[image of type ${String(mimeType)} not shown]`);
  const node = h("img", {class: "block-image", alt: `image (${mimeType})`});
  node.src = url;
  return node;
}

// debounce returns fn delayed until wait ms have passed without a call.
export function debounce(fn, wait) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}

// shortID is the first 8 characters of an id, as the CLI shows it.
export function shortID(id) {
  return String(id ?? "").slice(0, 8);
}

// number formats a count with thousands separators.
export function number(n) {
  return Number(n ?? 0).toLocaleString("en-US");
}

// money formats a cost in dollars.
export function money(n) {
  return "$" + Number(n ?? 0).toFixed(4);
}
