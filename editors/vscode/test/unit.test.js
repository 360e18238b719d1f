'use strict';
// The launch logic alone (src/launch.js), in plain Node: `node --test test/unit.test.js`.
const test = require('node:test');
const assert = require('node:assert/strict');
const { INSTALL_HINT, candidates, serverOptions } = require('../src/launch.js');

test('path, then interpreter, then zerolint on PATH, each with the same server options', () => {
  const got = candidates({ path: '/venv/bin/zerolint', interpreter: '/usr/bin/python3', target: 'hf',
                           deepspeedVersion: '0.16.9' }, true);
  assert.deepEqual(got, [
    { label: 'zerolint.path (/venv/bin/zerolint)', command: '/venv/bin/zerolint',
      args: ['server', '--target', 'hf', '--deepspeed-version', '0.16.9'] },
    { label: 'zerolint.interpreter (/usr/bin/python3)', command: '/usr/bin/python3',
      args: ['-m', 'zerolint', 'server', '--target', 'hf', '--deepspeed-version', '0.16.9'] },
    { label: 'zerolint on PATH', command: 'zerolint',
      args: ['server', '--target', 'hf', '--deepspeed-version', '0.16.9'] },
  ]);
});

test('empty settings: only zerolint on PATH, with no options', () => {
  assert.deepEqual(candidates({ path: '', interpreter: '  ', target: '', deepspeedVersion: '' }, true),
                   [{ label: 'zerolint on PATH', command: 'zerolint', args: ['server'] }]);
});

test('an untrusted workspace starts the server with --isolated', () => {
  assert.deepEqual(serverOptions({ target: 'deepspeed' }, false), ['--target', 'deepspeed', '--isolated']);
});

test('a value the server would refuse is left out instead of failing its start', () => {
  assert.deepEqual(serverOptions({ target: 'trainer', deepspeedVersion: '0.16' }, true), []);
  assert.deepEqual(serverOptions({ target: ' accelerate ', deepspeedVersion: ' 0.14.5 ' }, true),
                   ['--target', 'accelerate', '--deepspeed-version', '0.14.5']);
});

test('the world size is passed when it is a whole number of GPUs, left out otherwise', () => {
  assert.deepEqual(serverOptions({ worldSize: 8 }, true), ['--world-size', '8']);
  for (const bad of [0, -2, 2.5, null, undefined, '']) assert.deepEqual(serverOptions({ worldSize: bad }, true), []);
});

test('the install hint names both installs', () => {
  assert.match(INSTALL_HINT, /from a clone, pip install -e '\.\[lsp\]'; once on PyPI, pip install 'zerolint\[lsp\]'/);
});
