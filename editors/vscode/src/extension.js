'use strict';
// The zerolint extension: starts `zerolint server` (LSP over stdio) for JSON, JSONC, hjson and YAML documents.
// Which of them are DeepSpeed configs is the server's call (src/zerolint/lsp/detect.py: it publishes an empty
// list for a package.json or a tsconfig.json), so the extension attaches to every such document and decides
// nothing itself. Findings, quick fixes, fix-all, hover and completion all come from the server.

const vscode = require('vscode');
const { LanguageClient, CloseAction, ErrorAction, CodeActionRequest } = require('vscode-languageclient/node');
const { INSTALL_HINT, candidates } = require('./launch');

const FIX_ALL = 'source.fixAll.zerolint';
const SERVER_SETTINGS = ['path', 'interpreter', 'target', 'deepspeedVersion', 'worldSize'];
const LANGUAGES = ['json', 'jsonc', 'hjson', 'yaml'];
const SELECTOR = LANGUAGES.flatMap((language) => [{ scheme: 'file', language }, { scheme: 'untitled', language }]);

/** A LanguageClient that stays quiet while it is only a candidate: a candidate that does not start (no such
 * executable, a Python without zerolint) must not pop up an error of its own before the next one is tried. */
class ZerolintClient extends LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    super(id, name, serverOptions, clientOptions);
    this.probing = true;
  }

  error(message, data, showNotification) {
    super.error(message, data, this.probing ? false : showNotification);
  }
}

let client; // the running client, or undefined
let output; // one output channel for every candidate and restart, so a failed start stays readable
let settingsFiles; // one watcher of zerolint's settings files, shared by every client
let starting = Promise.resolve();

function settings() {
  const c = vscode.workspace.getConfiguration('zerolint');
  return Object.fromEntries(SERVER_SETTINGS.map((key) => [key, c.get(key)]));
}

function makeClient(candidate) {
  const serverOptions = { command: candidate.command, args: candidate.args, options: { env: process.env } };
  let made;
  const clientOptions = {
    documentSelector: SELECTOR,
    outputChannel: output,
    // The server re-reads its settings when a settings file changes (src/zerolint/lsp/server.py, `watched`).
    synchronize: { fileEvents: settingsFiles },
    // While probing, a failure means "try the next candidate"; once started, the client's usual restart policy.
    errorHandler: {
      error: (e, m, count) => (made.probing ? { action: ErrorAction.Shutdown, handled: true }
                                            : made.usual.error(e, m, count)),
      closed: () => (made.probing ? { action: CloseAction.DoNotRestart, handled: true } : made.usual.closed()),
    },
  };
  made = new ZerolintClient('zerolint', 'zerolint', serverOptions, clientOptions);
  made.usual = made.createDefaultErrorHandler(4);
  return made;
}

/** Try each candidate in turn; the first that answers `initialize` is kept. */
async function start() {
  const trusted = vscode.workspace.isTrusted;
  for (const candidate of candidates(settings(), trusted)) {
    output.appendLine(`[zerolint] starting ${candidate.label}: ${candidate.command} ${candidate.args.join(' ')}`);
    const made = makeClient(candidate);
    try {
      await made.start();
      made.probing = false;
      client = made;
      output.appendLine(`[zerolint] started ${candidate.label}`);
      return;
    } catch (e) {
      output.appendLine(`[zerolint] ${candidate.label} did not start: ${e && e.message ? e.message : e}`);
      await made.dispose().catch(() => undefined);
    }
  }
  vscode.window.showErrorMessage(INSTALL_HINT, 'Open Settings').then((choice) => {
    if (choice) vscode.commands.executeCommand('workbench.action.openSettings', 'zerolint');
  });
}

async function stop() {
  const old = client;
  client = undefined;
  if (old) await old.stop().catch(() => undefined);
}

/** Restarts run one after the other: a settings change during a start waits for it, then starts afresh. */
function restart() {
  starting = starting.then(stop).then(start).catch((e) => output.appendLine(`[zerolint] restart failed: ${e}`));
  return starting;
}

/** The server's fix-all edits for a document being saved (empty when nothing is fixable or no server runs). */
async function fixAllEdits(document) {
  if (!client || !LANGUAGES.includes(document.languageId)) return [];
  const end = document.lineAt(document.lineCount - 1).range.end;
  const params = {
    textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
    range: { start: { line: 0, character: 0 }, end: { line: end.line, character: end.character } },
    context: { diagnostics: [], only: [FIX_ALL] },
  };
  const actions = (await client.sendRequest(CodeActionRequest.type, params)) || [];
  const fix = actions.find((a) => a.kind === FIX_ALL && a.edit);
  if (!fix) return [];
  const edit = await client.protocol2CodeConverter.asWorkspaceEdit(fix.edit);
  return edit.get(document.uri);
}

function activate(context) {
  output = vscode.window.createOutputChannel('zerolint');
  settingsFiles = vscode.workspace.createFileSystemWatcher('**/{pyproject.toml,.zerolint.toml}');
  context.subscriptions.push(
    output,
    settingsFiles,
    vscode.commands.registerCommand('zerolint.restart', restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // The settings the server starts with; zerolint.fixOnSave is read at each save.
      if (SERVER_SETTINGS.some((key) => e.affectsConfiguration(`zerolint.${key}`))) restart();
    }),
    // Trusting the workspace lets its zerolint.path/interpreter and its settings files count: start again.
    vscode.workspace.onDidGrantWorkspaceTrust(restart),
    vscode.workspace.onWillSaveTextDocument((e) => {
      if (vscode.workspace.getConfiguration('zerolint', e.document).get('fixOnSave')) {
        e.waitUntil(fixAllEdits(e.document).catch((err) => {
          output.appendLine(`[zerolint] fix on save failed: ${err}`);
          return [];
        }));
      }
    }),
  );
  return restart();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
