#!/usr/bin/env bash
# Installs code-server (pinned in code-server/package-lock.json) for the end-to-end test (e2e.js,
# tests/test_vscode.py), into test/code-server/node_modules. Needs Node.js 20 (code-server 4.100 runs on Node 20
# only), a C/C++ toolchain and the headers its native modules build against:
#   apt-get install -y chromium ripgrep build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
set -euo pipefail
cd "$(dirname "$0")/code-server"
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then
    echo "install-code-server.sh: code-server 4.100.3 needs Node.js 20, this is $(node --version)" >&2
    exit 2
fi
# @vscode/ripgrep (VS Code's search) downloads rg from GitHub releases in its postinstall, unless its download
# cache already holds the archive: put the system's rg there, so the install needs only the npm registry.
rg=$(command -v rg) || { echo "install-code-server.sh: needs ripgrep (apt-get install -y ripgrep)" >&2; exit 2; }
cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"  # the @vscode/ripgrep code-server pins
archive="$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -f "$archive" ]; then
    stage=$(mktemp -d)
    cp "$rg" "$stage/rg"
    mkdir -p "$cache"
    tar czf "$archive" -C "$stage" rg
    rm -rf "$stage"
fi
# The native modules build against the headers of the Node.js that runs them, from its own prefix when they are
# there (a packaged Node.js has them in /usr/include/node), not downloaded from nodejs.org.
prefix=$(dirname "$(dirname "$(command -v node)")")
if [ -f "$prefix/include/node/node_api.h" ]; then export npm_config_nodedir="$prefix"; fi
# code-server's postinstall runs `npm install` in its VS Code tree: as root only with unsafe-perm, and node-pty's
# runs `npx node-gyp`, which must not stop to ask.
npm_config_unsafe_perm=true npm_config_yes=true npm ci --no-audit --no-fund
test -x node_modules/.bin/code-server
