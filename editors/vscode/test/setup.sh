#!/usr/bin/env bash
# What the extension's tests need in the checkout (tests/test_vscode.py runs this first): the npm packages of the
# extension (vscode-languageclient, @vscode/vsce, playwright-core) and code-server, each installed from its lock file
# only when that lock file changed since the last install, so a second run stays offline and fast. The system's
# packages (Node.js 20, Chromium, ripgrep, a C/C++ toolchain and headers: install-code-server.sh) come first.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cmp -s package-lock.json node_modules/.zerolint-lock 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.zerolint-lock
fi
cs=test/code-server
if ! cmp -s "$cs/package-lock.json" "$cs/node_modules/.zerolint-lock" 2>/dev/null; then
    test/install-code-server.sh
    cp "$cs/package-lock.json" "$cs/node_modules/.zerolint-lock"
fi
