// The graph explorer's view (autograd_lab.viz.explore): an SVG drawing of the graph and the
// engine's backward walk, one step at a time. Every number shown comes from Python (the
// engine's own walk, recorded by autograd_lab/explore_model.py); this file only draws.
const SVG = "http://www.w3.org/2000/svg";
const X_UNIT = 130, Y_UNIT = 74, BOX_W = 104, BOX_H = 36;

function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, cls, parent, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function oneLine(text) {
  return String(text).replace(/\s*\n\s*/g, " ");
}

function buildDrawing(nodes, edges, area) {
  const xs = nodes.map((n) => n.x);
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const depth = Math.max(...nodes.map((n) => n.layer)) + 1;
  const width = (xmax - xmin) * X_UNIT + BOX_W + 120, height = depth * Y_UNIT + 30;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "al-svg" }, area);
  const defs = svg("defs", {}, root);
  const marker = svg("marker", { id: "al-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, defs);
  svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "al-arrowhead" }, marker);
  const pos = {};
  for (const n of nodes) pos[n.key] = [(n.x - xmin) * X_UNIT + BOX_W / 2 + 20, n.layer * Y_UNIT + 30];
  const drawn = { nodes: {}, edges: {}, notes: {} };
  const edgeLayer = svg("g", {}, root), nodeLayer = svg("g", {}, root), noteLayer = svg("g", {}, root);
  for (const e of edges) {
    const [x1, y1] = pos[e.src], [x2, y2] = pos[e.dst];
    const g = svg("g", { class: "al-edge", "data-edge": e.id }, edgeLayer);
    svg("line", { x1, y1: y1 + BOX_H / 2, x2, y2: y2 - BOX_H / 2, "marker-end": "url(#al-arrow)" }, g);
    const label = svg("text", { x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2 + 4, class: "al-edge-grad" }, g);
    drawn.edges[e.id] = { g, label };
  }
  for (const n of nodes) {
    const [x, y] = pos[n.key];
    const g = svg("g", { class: `al-node al-${n.kind}`, "data-key": n.key, tabindex: 0 }, nodeLayer);
    if (n.kind === "function") svg("ellipse", { cx: x, cy: y, rx: BOX_W / 2 + 4, ry: BOX_H / 2 }, g);
    else svg("rect", { x: x - BOX_W / 2, y: y - BOX_H / 2, width: BOX_W, height: BOX_H, rx: 5 }, g);
    const lines = n.label.split("\n");
    lines.forEach((line, i) => {
      const t = svg("text", { x, y: y + 4 + (i - (lines.length - 1) / 2) * 13, class: "al-label" }, g);
      t.textContent = line;
    });
    const note = svg("text", { x: x + BOX_W / 2 + 6, y: y - 4, class: "al-grad" }, noteLayer);
    const leaf = svg("text", { x: x + BOX_W / 2 + 6, y: y + 12, class: "al-leafgrad", "data-key": n.key }, noteLayer);
    drawn.nodes[n.key] = g;
    drawn.notes[n.key] = { note, leaf };
  }
  return drawn;
}

function showInfo(panel, n) {
  panel.textContent = "";
  html("div", "al-info-title", panel, oneLine(n.label) + (n.kind === "function" ? "" : ` (${n.kind})`));
  const info = n.info || {};
  for (const k of ["shape", "dtype", "version", "requires_grad", "is_leaf"]) {
    if (k in info) html("div", "al-info-row", panel, `${k}: ${info[k]}`);
  }
  if ("data" in info) html("pre", "al-info-data", panel, info.data);
  if (info.saved) {
    html("div", "al-info-row", panel, info.saved.length ? "ctx saved:" : "ctx saved nothing");
    for (const line of info.saved) html("pre", "al-info-data", panel, line);
  }
}

// What the page shows after `position` steps: gradients on edges, sums at boxes, leaves' .grad.
function update(drawn, model, status) {
  const steps = model.get("steps"), position = model.get("position");
  const edges = model.get("edges");
  const terms = {}, totals = {}, leafGrads = {};
  for (const key in drawn.nodes) drawn.nodes[key].classList.remove("al-current", "al-done", "al-error");
  for (const id in drawn.edges) {
    drawn.edges[id].label.textContent = "";
    drawn.edges[id].g.classList.remove("al-sent");
  }
  const srcOf = {};
  for (const e of edges) srcOf[e.id] = e.src;
  steps.slice(0, position).forEach((step, i) => {
    const g = drawn.nodes[step.node];
    if (g) g.classList.add(i === position - 1 ? "al-current" : "al-done");
    if (step.error && g) g.classList.add("al-error");
    for (const [key, value] of Object.entries(step.grads_in)) totals[key] = value;
    for (const [id, value] of Object.entries(step.sent)) {
      drawn.edges[id].label.textContent = oneLine(value);
      drawn.edges[id].g.classList.add("al-sent");
      (terms[srcOf[id]] = terms[srcOf[id]] || []).push(oneLine(value));
    }
    if (step.leaf_grad !== null && step.leaf_grad !== undefined) leafGrads[step.node] = step.leaf_grad;
  });
  for (const key in drawn.notes) {
    const { note, leaf } = drawn.notes[key];
    const parts = terms[key] || [];
    let text = parts.join(" + ");
    if (key in totals) text = parts.length > 1 ? `${text} = ${oneLine(totals[key])}` : `grad ${oneLine(totals[key])}`;
    else if (text) text = `grad ${text}` + (parts.length > 1 ? " + …" : "");
    note.textContent = text;
    leaf.textContent = key in leafGrads ? `.grad = ${oneLine(leafGrads[key])}` : "";
  }
  const total = steps.length;
  const error = model.get("error");
  status.textContent = !model.get("walked") ? "Step runs backward() once and shows it node by node."
    : `step ${position} / ${total}` + (position === total && error ? ` — ${error}` : "");
  status.classList.toggle("al-status-error", Boolean(error) && position === total);
}

// The first Step asks the kernel to run backward once (a message to Python); after that the
// recorded steps are here and the view moves through them itself, telling Python where it is.
function act(model, action) {
  if (!model.get("walked")) {
    model.send({ action });
    return;
  }
  const total = model.get("steps").length, position = model.get("position");
  model.set("position", action === "step" ? Math.min(position + 1, total) : action === "end" ? total : 0);
  model.save_changes();
}

function render({ model, el }) {
  const root = html("div", "al-explorer", el);
  root.tabIndex = 0;
  const bar = html("div", "al-bar", root);
  const buttons = {};
  for (const [action, label] of [["step", "Step"], ["end", "Run to end"], ["reset", "Reset"]]) {
    buttons[action] = html("button", `al-button al-${action}`, bar, label);
    buttons[action].addEventListener("click", () => act(model, action));
  }
  const status = html("span", "al-status", bar);
  const title = model.get("title");
  if (title) html("div", "al-title", root, title);
  const area = html("div", "al-area", root);
  const panel = html("div", "al-info", root, "Click a node to see its data, or what its ctx saved.");
  const nodes = model.get("nodes");
  const drawn = buildDrawing(nodes, model.get("edges"), area);
  for (const n of nodes) drawn.nodes[n.key].addEventListener("click", () => showInfo(panel, n));
  root.addEventListener("keydown", (event) => {
    const action = { s: "step", ArrowRight: "step", e: "end", r: "reset" }[event.key];
    if (action) { act(model, action); event.preventDefault(); }
  });
  const refresh = () => update(drawn, model, status);
  model.on("change:position", refresh);
  model.on("change:steps", refresh);
  model.on("change:walked", refresh);
  refresh();
  return () => {
    model.off("change:position", refresh);
    model.off("change:steps", refresh);
    model.off("change:walked", refresh);
  };
}

export default { render };
