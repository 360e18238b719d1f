// Drives the built playground in headless Chromium for tests/test_playground.py:
//   node playground/e2e/drive.mjs PLAN.json  ->  results JSON on stdout
// PLAN: {base, chromium, shots (a folder or ""), examples: [name], fragments: [{name, hash}],
//        fixes: [{example, kind}], estimate: {example, params, world, gpumem}}
// Every wait is on a condition the page exposes (window.zerolintPlayground), never a fixed sleep.

import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const plan = JSON.parse(readFileSync(process.argv[2], "utf-8"));
const LONG = 180_000; // Pyodide's first start on a loaded 2-core machine
const requests = [];
const errors = [];

const browser = await chromium.launch({ executablePath: plan.chromium, args: ["--no-sandbox"] });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  context.on("request", (r) => requests.push(r.url()));
  context.on("weberror", (e) => errors.push(`pageerror: ${e.error().message}`));

  async function open(hash = "") {
    const page = await context.newPage();
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    await page.goto(plan.base + hash);
    await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.status) &&
      (window.zerolintPlayground.lintCount > 0 || window.zerolintPlayground.error), null, { timeout: LONG });
    return page;
  }

  // Run `action`, then wait for a lint that started after it and saw the editor's current text.
  async function linted(page, action) {
    const before = await page.evaluate(() => window.zerolintPlayground.lintCount);
    const t0 = Date.now();
    await action();
    await page.waitForFunction((n) => {
      const h = window.zerolintPlayground;
      return h.lintCount > n && h.lastLinted === h.text();
    }, before, { timeout: LONG });
    return Date.now() - t0;
  }

  const state = (page) => page.evaluate(() => {
    const h = window.zerolintPlayground;
    return {
      status: document.body.dataset.status,
      statusText: document.getElementById("status").textContent,
      notice: document.getElementById("notice").textContent,
      error: h.error,
      text: h.text(),
      timings: h.timings,
      settings: h.lastSettings,
      target: document.getElementById("target").value,
      world: document.getElementById("world").value,
      version: document.getElementById("version").value,
      versions: [...document.getElementById("version").options].map((o) => [o.value, o.textContent]),
      findings: [...document.querySelectorAll("#findings li[data-code]")].map((li) => ({
        code: li.dataset.code, severity: li.dataset.severity, line: Number(li.dataset.line),
        column: Number(li.dataset.column), message: li.querySelector(".message").textContent,
        help: li.querySelector(".help")?.textContent ?? null, url: li.querySelector("a")?.href ?? null,
      })),
      editor: h.diagnostics(),
      images: document.querySelectorAll("#findings img, #side img").length,
      pwned: window.pwned ?? null,
    };
  });
  const shot = async (page, name) => { if (plan.shots) await page.screenshot({ path: `${plan.shots}/${name}` }); };

  const results = { examples: {}, fragments: {}, fixes: [], warm_ms: [] };
  const page = await open();
  results.initial = await state(page);
  // the tooltip of the first finding: message, help and docs link at its range
  await page.hover(".cm-lintRange-error");
  await page.waitForSelector(".cm-tooltip-lint", { timeout: LONG });
  results.tooltip = await page.textContent(".cm-tooltip-lint");
  await shot(page, "playground-findings.png");
  // its quick fix (the tooltip's button): the finding's own edits, as the language server applies them
  results.quickFix = { title: await page.textContent(".cm-tooltip-lint .cm-diagnosticAction") };
  await linted(page, () => page.click(".cm-tooltip-lint .cm-diagnosticAction"));
  results.quickFix.after = await state(page);
  results.quickFix.example = await page.inputValue("#example");
  await page.mouse.move(0, 0);

  for (const name of plan.examples) {
    const ms = await linted(page, () => page.selectOption("#example", name));
    results.warm_ms.push(ms);
    results.examples[name] = await state(page);
  }
  for (const { example, kind } of plan.fixes) {
    await linted(page, () => page.selectOption("#example", example));
    const diff = await page.textContent(`.fix[data-kind="${kind}"] pre.diff`);
    await linted(page, () => page.click(`button.apply[data-kind="${kind}"]`));
    results.fixes.push({ example, kind, diff, text: (await state(page)).text, after: (await state(page)).findings });
    if (kind === "safe") await shot(page, "playground-fix.png");
  }
  if (plan.estimate) {
    const e = plan.estimate;
    await linted(page, () => page.selectOption("#example", e.example));
    await page.fill("#world", e.world);
    await page.fill("#gpumem", e.gpumem);
    await page.fill("#params", e.params);
    await page.waitForFunction((want) => {
      const h = window.zerolintPlayground;
      return h.lastSettings && h.lastSettings.params === want.params && String(h.lastSettings.world) === want.world &&
        h.lastSettings.gpumem === want.gpumem && document.querySelector('.bars[data-where="gpu"]');
    }, e, { timeout: LONG });
    results.estimate = await page.evaluate(() => ({
      gpu_total: Number(document.querySelector('.bars[data-where="gpu"]').dataset.total),
      host_total: Number(document.querySelector('.bars[data-where="host"]').dataset.total),
      verdict: document.querySelector(".verdict").dataset.verdict,
      bars: document.querySelectorAll('.bars[data-where="gpu"] .bar').length,
    }));
    if (plan.shots) await page.screenshot({ path: `${plan.shots}/playground-estimate.png`, fullPage: true });
  }
  // the page's own share link, opened in a new tab below
  await linted(page, () => page.selectOption("#target", "hf"));
  await page.click("#share");
  await page.waitForFunction(() => location.hash.startsWith("#c="), null, { timeout: LONG });
  results.shared = { from: await state(page), hash: await page.evaluate(() => location.hash) };
  await page.close();

  for (const { name, hash } of plan.fragments) {
    const p = await open(hash);
    results.fragments[name] = await state(p);
    await p.close();
  }
  const again = await open(results.shared.hash);
  results.shared.to = await state(again);
  await again.close();
  results.requests = requests;
  results.errors = errors;
  process.stdout.write(JSON.stringify(results));
} finally {
  await browser.close();
}
