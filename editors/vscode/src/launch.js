'use strict';
// How the extension starts `zerolint server`: which commands it tries, in which order, with which options.
// Plain functions of the settings (no `vscode` import), so test/unit.test.js checks them in Node alone.

const TARGETS = ['auto', 'deepspeed', 'hf', 'accelerate'];
const VERSION = /^\d+\.\d+\.\d+$/;

const INSTALL_HINT =
  "zerolint could not start its language server. Install zerolint with its lsp extra: from a clone, " +
  "pip install -e '.[lsp]'; once on PyPI, pip install 'zerolint[lsp]'. Then set zerolint.path to its " +
  "zerolint executable, or zerolint.interpreter to the Python that has it, or put zerolint on PATH.";

/** The server's command-line options from the settings. Values the server would refuse (a target it does not
 * know, a version that is not X.Y.Z) are left out, so a typo falls back to the server's default instead of a
 * server that exits at start. `trusted`: false in an untrusted workspace, whose settings files are not read. */
function serverOptions(settings, trusted) {
  const args = [];
  const target = String(settings.target || '').trim();
  if (TARGETS.includes(target)) args.push('--target', target);
  const version = String(settings.deepspeedVersion || '').trim();
  if (VERSION.test(version)) args.push('--deepspeed-version', version);
  const world = Number(settings.worldSize);
  if (Number.isInteger(world) && world >= 1) args.push('--world-size', String(world));
  if (!trusted) args.push('--isolated');
  return args;
}

/** The commands to try, first to last: zerolint.path, then zerolint.interpreter -m zerolint, then `zerolint`
 * found on PATH. Each is {label, command, args}; an empty setting gives no candidate. */
function candidates(settings, trusted) {
  const options = ['server', ...serverOptions(settings, trusted)];
  const found = [];
  const path = String(settings.path || '').trim();
  if (path) found.push({ label: `zerolint.path (${path})`, command: path, args: options });
  const python = String(settings.interpreter || '').trim();
  if (python) {
    found.push({ label: `zerolint.interpreter (${python})`, command: python, args: ['-m', 'zerolint', ...options] });
  }
  found.push({ label: 'zerolint on PATH', command: 'zerolint', args: options });
  return found;
}

module.exports = { INSTALL_HINT, TARGETS, candidates, serverOptions };
