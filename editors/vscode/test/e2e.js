'use strict';
// End-to-end run of the packaged extension in a real VS Code (code-server, driven by headless Chromium through
// playwright-core): install the .vsix, open a workspace of DeepSpeed configs, read the Problems panel, hover a
// key, apply a quick fix and save, and save a file with zerolint.fixOnSave on. It reports what it saw in
// OUT/result.json (and OUT/failure.png, OUT/failure.html when a step fails) and leaves
// the judging to tests/test_vscode.py, which knows what `zerolint check` says of the same files.
//
//   node test/e2e.js SCENARIO.json
//
// SCENARIO: {codeServer, chromium, vsix, workspace, out, settings: {user settings}, env: {for code-server},
//            open: [file...], codes: [code...], hover: key, quickfix: {file, code, line, title}, fixOnSave: file}
//       or, for a machine where no server starts: {..., open: [file], expectError: true}
// Every wait is on a condition (a line on code-server's output, an element, a file's content), each with a
// deadline; everything started here is stopped before the script exits, failed or not.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const DEADLINE_MS = 60_000; // for any one condition: a cold code-server on a loaded 2-core machine is slow
const scenario = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const result = { steps: [] };
const started = []; // {kill()} of what to stop, last first
let page; // the workbench tab, for a screenshot of a failure

function step(name) {
  result.steps.push(name);
  process.stderr.write(`e2e: ${name}\n`);
}

/** Wait until `check()` returns a truthy value (polled: used for files on disk, which have no event to await). */
async function until(what, check, ms = DEADLINE_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let home; // code-server writes its config.yaml and logs under XDG_CONFIG_HOME/XDG_DATA_HOME: kept in the run's tmp

function isolatedEnv() {
  return { ...process.env, ...(scenario.env || {}), XDG_CONFIG_HOME: path.join(home, 'config'),
           XDG_DATA_HOME: path.join(home, 'data') };
}

function installExtension(extensions, userData) {
  const run = spawnSync(scenario.codeServer, ['--install-extension', scenario.vsix, '--extensions-dir', extensions,
                                              '--user-data-dir', userData],
                        { encoding: 'utf8', timeout: 120_000, env: isolatedEnv() });
  result.install = (run.stdout + run.stderr).trim();
  if (run.status !== 0) throw new Error(`--install-extension exited ${run.status}: ${result.install}`);
}

function writeUserSettings(userData) {
  const settings = {
    ...scenario.settings, // how the extension finds zerolint
    '[jsonc]': { 'zerolint.fixOnSave': true }, // only the fix-on-save file is JSONC
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'chat.commandCenter.enabled': false,
    'window.commandCenter': false,
    'workbench.colorTheme': 'Default Light Modern',
    'editor.minimap.enabled': false,
    'files.autoSave': 'off',
  };
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** Start code-server on a free port (port 0) and return its URL, read from its "listening on" line. */
function startCodeServer(extensions, userData) {
  const child = spawn(scenario.codeServer, [
    '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--disable-getting-started-override', '--extensions-dir', extensions,
    '--user-data-dir', userData, scenario.workspace,
  ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: isolatedEnv() });
  // detached: its own process group, so the extension host and the zerolint server it started stop with it.
  started.push({ kill: () => killGroup(child) });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not listen in ${DEADLINE_MS} ms:\n${log}`)),
                             DEADLINE_MS);
    const read = (chunk) => {
      log += chunk;
      const m = /HTTP server listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    child.on('exit', (code) => reject(new Error(`code-server exited ${code}:\n${log}`)));
  });
}

/** SIGTERM to code-server's process group; once code-server has exited (or after 5 s), SIGKILL to whatever of
 * the group is left (an extension host or a zerolint server still shutting down). */
function killGroup(child) {
  const kill = (signal) => { try { process.kill(-child.pid, signal); } catch { /* the group is gone */ } };
  if (child.exitCode !== null || child.signalCode !== null) {
    kill('SIGKILL');
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const hard = setTimeout(() => kill('SIGKILL'), 5000);
    child.on('exit', () => { clearTimeout(hard); kill('SIGKILL'); resolve(); });
    kill('SIGTERM');
  });
}

/** The command palette, as a user runs a command (a browser keeps some keybindings of the desktop for itself). */
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  // Enter runs the focused row: wait until the filter has made it this command's.
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: title }).waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/** Ctrl+S in the active editor (the palette's "File: Save" also matches "File: Compare Active File with Saved"). */
async function save(page) {
  await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
  await page.keyboard.press('Control+S');
}

async function openFile(page, name) {
  const tab = page.locator(`.tabs-container .tab[aria-label^="${name}"]`);
  if (await tab.count()) {
    await tab.first().click(); // already open: its tab
  } else {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    // Enter takes the focused row: wait until the filter has made it this file's row.
    await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).waitFor();
    await page.keyboard.press('Enter');
  }
  await page.locator(`.tabs-container .tab.active[aria-label^="${name}"]`).waitFor();
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').waitFor();
}

/** Whether a Problems row is a zerolint finding of `code` (the row reads "MESSAGE zerolint CODE [Ln L, Col C]"). */
function shows(row, code) {
  return row.text.includes(` zerolint ${code} [Ln `);
}

/** The notifications on screen, as their text. */
async function toasts(page) {
  return page.locator('.notifications-toasts .notification-toast .notification-list-item-message').evaluateAll(
    (items) => items.map((i) => i.innerText.replace(/\s+/g, ' ').trim()));
}

/** The Problems panel's rows (each marker: its message, source(code) and [Ln, Col]), as shown. */
async function problemRows(page) {
  return page.locator('.markers-panel .monaco-list-row').evaluateAll((rows) => rows.map((r) => ({
    label: r.getAttribute('aria-label'), text: r.innerText.replace(/\s+/g, ' ').trim(),
  })));
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zerolint-vscode-e2e-'));
  started.push({ kill: () => fs.rmSync(tmp, { recursive: true, force: true }) });
  home = path.join(tmp, 'home');
  const extensions = path.join(tmp, 'extensions');
  const userData = path.join(tmp, 'user-data');

  step('install the .vsix');
  installExtension(extensions, userData);
  writeUserSettings(userData);

  step('start code-server');
  const url = await startCodeServer(extensions, userData);

  step('start Chromium');
  const browser = await chromium.launch({ executablePath: scenario.chromium, headless: true,
                                          args: ['--no-sandbox', '--disable-gpu'] });
  started.push({ kill: () => browser.close() });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(DEADLINE_MS);
  await page.goto(`${url}/?folder=${encodeURIComponent(scenario.workspace)}`);
  await page.locator('.monaco-workbench .part.editor').waitFor();
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor();

  step('open the configs');
  for (const name of scenario.open) await openFile(page, name);

  if (scenario.expectError) {
    step('wait for the error message');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'zerolint' });
    await toast.first().waitFor();
    result.notifications = await toasts(page);
    return;
  }

  step('wait for the findings in the Problems panel');
  await runCommand(page, 'View: Focus Problems (Errors, Warnings, Infos)');
  await page.locator('.markers-panel').waitFor();
  const listed = () => problemRows(page).then((rows) => {
    result.problemsSeen = rows; // the last reading, for the report of a timeout
    return scenario.codes.every((code) => rows.some((r) => shows(r, code))) && rows;
  });
  result.problems = await until(`the codes ${scenario.codes.join(', ')} in the Problems panel`, listed);
  await page.locator('.editor-group-container.active .squiggly-error').first().waitFor();
  result.notifications = await toasts(page); // a candidate that did not start must not have said so here
  await page.screenshot({ path: path.join(scenario.out, 'vscode-diagnostics.png') });

  step('hover a key');
  // The active editor is the last config opened; hover its key as the mouse does.
  await page.locator('.editor-group-container.active .view-line span[class^="mtk"]',
                     { hasText: `"${scenario.hover}"` }).first().hover();
  const hover = page.locator('.monaco-hover-content', { hasText: scenario.hover });
  await hover.first().waitFor();
  result.hover = await hover.first().innerText();
  await page.mouse.move(700, 500); // off the key (an empty part of the editor) and Escape: the hover goes
  await page.keyboard.press('Escape');
  await hover.first().waitFor({ state: 'hidden' });

  step('apply a quick fix');
  const fix = scenario.quickfix;
  const fixPath = path.join(scenario.workspace, fix.file);
  const before = fs.readFileSync(fixPath, 'utf8');
  await openFile(page, fix.file);
  // Clicking the finding's row moves the cursor to it, as a user goes to a problem.
  const at = (await problemRows(page)).findIndex((r) => shows(r, fix.code));
  await page.locator('.markers-panel .monaco-list-row').nth(at).dblclick();
  await page.locator('.editor-group-container.active .monaco-editor.focused').waitFor();
  // The finding is selected: the status bar reads "Ln LINE, Col END_COLUMN (N selected)".
  await page.locator('.statusbar-item', { hasText: new RegExp(`^Ln ${fix.line}, Col \\d+ \\(\\d+ selected\\)`) })
    .first().waitFor();
  await runCommand(page, 'Quick Fix...');
  const menu = page.locator('.action-widget');
  await menu.locator('.monaco-list-row.action', { hasText: fix.title }).first().waitFor();
  result.quickfixMenu = await menu.locator('.monaco-list-row.action').evaluateAll(
    (items) => items.map((i) => i.innerText.replace(/\s+/g, ' ').trim()));
  // The first fix is the focused row (the one Enter applies), as a user sees the menu open.
  await menu.locator('.monaco-list-row.action.focused', { hasText: fix.title }).waitFor();
  await page.screenshot({ path: path.join(scenario.out, 'vscode-quickfix.png') });
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'hidden' });
  await page.locator(`.tabs-container .tab.active.dirty[aria-label^="${fix.file}"]`).waitFor();
  await save(page);
  result.quickfixed = await until(`${fix.file} saved with the fix`, () => {
    const now = fs.readFileSync(fixPath, 'utf8');
    return now !== before && now;
  });
  // The fixed finding leaves the Problems panel once the server has linted the new text.
  result.problemsAfterFix = await until(`${fix.code} gone from the Problems panel`, () => problemRows(page).then(
    (rows) => !rows.some((r) => shows(r, fix.code)) && rows));

  step('save with zerolint.fixOnSave');
  const savePath = path.join(scenario.workspace, scenario.fixOnSave);
  const unsaved = fs.readFileSync(savePath, 'utf8');
  await openFile(page, scenario.fixOnSave);
  // Wait for its findings, so the server has the document before the save asks it for the fix-all.
  await page.locator('.editor-group-container.active .squiggly-error').first().waitFor();
  await save(page);
  result.fixedOnSave = await until(`${scenario.fixOnSave} fixed on save`, () => {
    const now = fs.readFileSync(savePath, 'utf8');
    return now !== unsaved && now;
  });
}

async function stopAll() {
  while (started.length) {
    const s = started.pop();
    try { await s.kill(); } catch (e) { process.stderr.write(`e2e: stopping: ${e}\n`); }
  }
}

main().then(
  async () => { result.ok = true; },
  async (e) => {
    result.ok = false;
    result.error = String(e && e.stack ? e.stack : e);
    if (page) {
      await page.screenshot({ path: path.join(scenario.out, 'failure.png') }).catch(() => undefined);
      const html = await page.content().catch(() => '');
      fs.writeFileSync(path.join(scenario.out, 'failure.html'), html);
    }
  },
).then(async () => {
  await stopAll();
  fs.writeFileSync(path.join(scenario.out, 'result.json'), JSON.stringify(result, null, 2));
  process.exitCode = result.ok ? 0 : 1;
});
