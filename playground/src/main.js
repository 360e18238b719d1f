// The playground page: an editor, zerolint in Pyodide, and the panels. Linting runs on every edit (debounced);
// the test hook window.zerolintPlayground exposes the state tests wait on (which text was last linted).

import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { json } from "@codemirror/lang-json";
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { forEachDiagnostic, lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorSelection, EditorState } from "@codemirror/state";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";

import { startPython } from "./python.js";
import { findingBody, renderEstimate, renderFindings, renderFixes } from "./render.js";
import { decode, encode, MAX_TEXT_BYTES } from "./share.js";

const $ = (id) => document.getElementById(id);
const started = performance.now();
const hook = { lastLinted: null, lintCount: 0, timings: {}, error: null };
window.zerolintPlayground = hook;

function setStatus(text, status) {
  $("status").textContent = text;
  if (status) document.body.dataset.status = status;
}

function selectors() {
  const world = Number.parseInt($("world").value, 10);
  return {
    target: $("target").value, version: $("version").value, world: world >= 1 ? world : 0,
    params: $("params").value.trim(), gpumem: $("gpumem").value.trim(),
  };
}

// Only values the controls offer are taken from a link; anything else is left at its default.
function applySelectors(s) {
  const pick = (select, value) => {
    if (value !== undefined && [...select.options].some((o) => o.value === value)) select.value = value;
  };
  pick($("target"), s.t);
  pick($("version"), s.v);
  if (s.w !== undefined && /^[1-9][0-9]{0,4}$/.test(s.w)) $("world").value = s.w;
  if (s.p !== undefined && /^[0-9][0-9.eE]*\s*[A-Za-z]{0,3}$/.test(s.p)) $("params").value = s.p;
  if (s.m !== undefined && /^[0-9][0-9.]*\s*[A-Za-z]{0,3}$/.test(s.m)) $("gpumem").value = s.m;
}

let view = null;
let python = null;
let timer = null;

function replaceText(text) {
  // Replace only the part that differs, so the cursor and scroll stay where they were.
  const old = view.state.doc.toString();
  let a = 0;
  while (a < old.length && a < text.length && old[a] === text[a]) a++;
  let b = 0;
  while (b < old.length - a && b < text.length - a && old[old.length - 1 - b] === text[text.length - 1 - b]) b++;
  view.dispatch({ changes: { from: a, to: old.length - b, insert: text.slice(a, text.length - b) } });
}

function runAll() {
  timer = null;
  if (python === null) return;
  const text = view.state.doc.toString();
  const s = selectors();
  const t0 = performance.now();
  try {
    const findings = python.lint(text, s);
    const lintMs = performance.now() - t0;
    view.dispatch(setDiagnostics(view.state, findings.map((d) => ({
      from: Math.min(d.from, text.length), to: Math.min(Math.max(d.to, d.from), text.length),
      severity: d.severity, source: d.code, message: d.message, renderMessage: () => findingBody(d),
      actions: d.quick_fixes.map((q) => ({
        name: q.title,
        apply: (v) => v.dispatch({ changes: q.changes.map((c) => ({ from: c.from, to: c.to, insert: c.insert })) }),
      })),
    }))));
    renderFindings($("findings"), $("count"), findings, (d) => {
      view.dispatch({ selection: EditorSelection.range(d.from, d.to), scrollIntoView: true });
      view.focus();
    });
    const safe = python.fix(text, s, false);
    const unsafe = python.fix(text, s, true);
    const fixes = [{ kind: "safe", title: "Safe fixes (zerolint check --fix)", fix: safe }];
    if (unsafe.text !== safe.text) {
      fixes.push({ kind: "unsafe", title: "Safe and unsafe fixes (--fix --unsafe-fixes)", fix: unsafe });
    }
    if (!safe.diff && unsafe.text === safe.text && !safe.skipped) {
      fixes[0].title = "Nothing to fix automatically";
    }
    renderFixes($("fixes"), fixes, replaceText);
    renderEstimate($("estimate"), s.params ? python.estimate(text, s) : null);
    hook.timings.lastLintMs = lintMs;
    hook.timings.lastRunMs = performance.now() - t0;
    if (hook.timings.firstLintMs === undefined) hook.timings.firstLintMs = performance.now() - started;
    hook.lastSettings = s;
    hook.lastLinted = text;
    hook.lintCount += 1;
    setStatus(`zerolint ${hook.version}: ${findings.length} finding(s), linted in ${lintMs.toFixed(0)} ms`, "ready");
  } catch (e) {
    hook.error = String(e);
    setStatus(`zerolint failed: ${e}`, "error");
  }
}

function schedule(delay = 250) {
  if (timer !== null) clearTimeout(timer);
  timer = setTimeout(runAll, delay);
}

async function fromFragment() {
  try {
    return await decode(location.hash);
  } catch (e) {
    // stays on screen (the status line is rewritten by every lint)
    $("notice").textContent = `The link's config could not be read (${e.message}); showing the example instead.`;
    return null;
  }
}

async function share() {
  const s = selectors();
  const text = view.state.doc.toString();
  if (new TextEncoder().encode(text).length > MAX_TEXT_BYTES) {
    setStatus("The config is too large for a link.");
    return;
  }
  const fragment = await encode(text, { t: s.target !== "auto" ? s.target : "", v: s.version,
    w: s.world || "", p: s.params, m: s.gpumem });
  window.history.replaceState(null, "", `#${fragment}`); // (`history` is the editor's undo history here)
  try {
    await navigator.clipboard.writeText(location.href);
    setStatus("Link copied: the config is in the link itself, nothing was uploaded.");
  } catch {
    setStatus("The link is in the address bar: the config is in the link itself, nothing was uploaded.");
  }
}

async function main() {
  const response = await fetch("build.json");
  const build = await response.json();
  const example = $("example");
  const yours = new Option("(your config)", "");
  yours.disabled = true;
  example.append(yours);
  for (const name of Object.keys(build.examples)) example.append(new Option(name, name));
  example.value = build.default_example;
  const linked = await fromFragment();
  view = new EditorView({
    parent: $("editor"),
    state: EditorState.create({
      doc: linked ? linked.text : build.examples[build.default_example],
      extensions: [lineNumbers(), history(), bracketMatching(), highlightActiveLine(), json(),
        syntaxHighlighting(defaultHighlightStyle), lintGutter(), keymap.of([...defaultKeymap, ...historyKeymap]),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          // the example menu names the text only while it is that example's
          if (build.examples[example.value] !== u.state.doc.toString()) example.value = "";
          schedule();
        })],
    }),
  });
  if (linked) example.value = "";
  example.addEventListener("change", () => {
    if (example.value in build.examples) replaceText(build.examples[example.value]);
    schedule(0); // also when the text did not change: a test (or a person) waits for this lint
  });
  for (const id of ["target", "version", "world", "params", "gpumem"]) $(id).addEventListener("input", () => schedule());
  $("share").addEventListener("click", share);
  window.addEventListener("hashchange", async () => {
    const again = await fromFragment();
    if (again) { applySelectors(again.selectors); replaceText(again.text); schedule(0); }
  });
  hook.text = () => view.state.doc.toString();
  hook.diagnostics = () => { // what the editor holds, as positions: tests compare them with the CLI's
    const out = [];
    forEachDiagnostic(view.state, (d, from, to) => {
      const a = view.state.doc.lineAt(from);
      const b = view.state.doc.lineAt(to);
      out.push({ code: d.source, severity: d.severity, message: d.message, line: a.number, column: from - a.from + 1,
        end_line: b.number, end_column: to - b.from + 1 });
    });
    return out;
  };

  const t0 = performance.now();
  python = await startPython(build);
  hook.timings.pythonStartMs = performance.now() - t0;
  const about = python.about();
  hook.version = about.version;
  const version = $("version");
  version.append(new Option(`default (${about.default_deepspeed})`, ""));
  for (const line of [...about.deepspeed_lines].reverse()) version.append(new Option(line, line));
  if (linked) applySelectors(linked.selectors);
  runAll();
}

main().catch((e) => {
  hook.error = String(e);
  setStatus(`The playground could not start: ${e.message || e}`, "error");
});
