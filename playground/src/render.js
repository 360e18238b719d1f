// The side panels. Every string from zerolint (which may quote the config) goes in with textContent, never as
// HTML; the only attribute taken from a finding is its docs link, and only when it is an https URL.

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k === "data") Object.assign(node.dataset, v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

function docsLink(url, label) {
  if (typeof url !== "string" || !url.startsWith("https://")) return null;
  return el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: label });
}

// What the editor's tooltip shows for one finding: message, help, docs link (the editor adds the code).
export function findingBody(d) {
  return el("div", {},
    el("div", { text: d.message }),
    d.help ? el("div", { class: "help", text: `help: ${d.help}` }) : null,
    docsLink(d.url, `rule documentation (${d.name})`));
}

export function renderFindings(list, count, findings, onPick) {
  count.textContent = `(${findings.length})`;
  list.replaceChildren(...findings.map((d) => {
    const item = el("li", { data: { code: d.code, severity: d.severity, line: d.line, column: d.column } },
      el("span", { class: `sev sev-${d.severity}`, text: d.severity }), " ",
      docsLink(d.url, d.code) || el("span", { text: d.code }), " ",
      el("span", { class: "loc", text: `${d.line}:${d.column}` }),
      el("div", { class: "message", text: d.message }),
      d.help ? el("div", { class: "help", text: `help: ${d.help}` }) : null);
    item.addEventListener("click", (e) => { if (e.target.tagName !== "A") onPick(d); });
    return item;
  }));
  if (!findings.length) list.replaceChildren(el("li", { class: "muted", text: "No findings." }));
}

function diffBlock(diff) {
  const pre = el("pre", { class: "diff" });
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : null;
    pre.append(cls ? el("span", { class: cls, text: line }) : line, "\n");
  }
  return pre;
}

// `results`: [{kind: "safe"|"unsafe", title, fix: the Python fix() result}]
export function renderFixes(box, results, onApply) {
  const blocks = [];
  for (const { kind, title, fix } of results) {
    const block = el("div", { class: "fix", data: { kind } }, el("strong", { text: title }));
    if (fix.skipped) block.append(el("div", { class: "muted", text: fix.skipped }));
    for (const a of fix.applied) block.append(el("div", { text: `${a.code} ${a.line}:${a.column}: ${a.description}` }));
    for (const a of fix.failed) {
      block.append(el("div", { class: "muted", text: `${a.code} not applied (${a.description}): ${a.reason}` }));
    }
    if (fix.diff) {
      block.append(diffBlock(fix.diff));
      const button = el("button", { type: "button", class: "apply", data: { kind }, text: "Apply" });
      button.addEventListener("click", () => onApply(fix.text));
      block.append(button);
    }
    blocks.push(block);
  }
  box.replaceChildren(...blocks);
}

const GiB = 1024 ** 3;
const gib = (n) => (n / GiB).toFixed(2);

function barRows(est, where) {
  const perNode = where === "host" ? est.cluster.gpus_per_node : 1; // host rows are per process
  const rows = est.breakdown.filter((c) => c.where === where && c.bytes > 0 && (c.margin || c.at_peak));
  const total = where === "gpu" ? est.per_gpu_bytes : est.per_node_host_bytes;
  const cap = where === "gpu" ? est.gpu_memory : null;
  const scale = Math.max(cap || 0, total, 1);
  const grid = el("div", { class: "bars", data: { where, total } });
  for (const c of rows.sort((a, b) => a.margin - b.margin || b.bytes - a.bytes)) {
    const bar = el("div", { class: c.margin ? "bar margin" : "bar", title: c.formula || "" });
    bar.style.width = `${Math.min(100, (100 * c.bytes * perNode) / scale)}%`;
    grid.append(el("span", { text: (c.margin ? "+ " : "") + c.name }), el("span", { text: gib(c.bytes * perNode) }),
      el("div", {}, bar));
  }
  grid.append(el("span", { class: "total", text: where === "gpu" ? "= total per GPU" : "= total host per node" }),
    el("span", { class: "total", text: gib(total) }), el("span"));
  return grid;
}

export function renderEstimate(box, est) {
  if (est === null) {
    box.replaceChildren(el("p", { class: "muted", text: "Give a model size (e.g. 7B) to see the per-GPU memory." }));
    return;
  }
  if (est.error) {
    box.replaceChildren(el("p", { class: "muted", text: est.error }));
    return;
  }
  const p = est.plan;
  const verdict = est.verdict ? `${est.verdict} in ${gib(est.gpu_memory)} GiB` : "no GPU memory given";
  box.replaceChildren(
    el("p", { text: `${est.model.name}: P = ${est.model.params.toLocaleString("en")}; ZeRO stage ${p.stage}, ` +
      `${p.precision}, ${est.cluster.world_size} GPU(s); peak at "${est.gpu_peak_moment}"` }),
    el("p", { class: "verdict", data: { verdict: est.verdict || "" }, text: verdict }),
    el("h3", { text: "Per GPU (GiB)" }), barRows(est, "gpu"),
    el("h3", { text: "Host per node (GiB)" }), barRows(est, "host"));
}
