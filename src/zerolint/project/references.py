"""Which files the repository hands to DeepSpeed: launch lines, Accelerate and framework YAMLs, training code.

The CI gate (`check --only-configs`) judges a changed file by its content; a file that a launch script, a YAML or
the training code in the same tree names as the DeepSpeed config is one whatever its content, so a pull request
cannot hide a config by padding it with keys of its own. Nothing here runs or imports what it reads: the tree's
text files are scanned (regular files only, never through a link, each and all of them under a size limit) for

- `--deepspeed X`, `--deepspeed_config X`, `--deepspeed=X` (deepspeed, torchrun, accelerate launch and python
  command lines in shell scripts, Slurm files, Makefiles, README code blocks, CI workflows), with shell variables
  set in the same file (`DS=configs/z3.json` ... `--deepspeed $DS`) followed;
- `deepspeed_config_file: X` (Accelerate) and `deepspeed: X` (axolotl, LLaMA-Factory, TRL recipes) in YAML;
- in Python files, a string literal handed to DeepSpeed on its line: `TrainingArguments(deepspeed="ds.json")`,
  `deepspeed_config=`, `ds_config=`, `config_params=`, `hf_ds_config=`, `HfDeepSpeedConfig("ds.json")`,
  `deepspeed.initialize(..., config="ds.json")`, an argparse `--deepspeed` default (a script's `open("data.json")`
  names no config).

A name matches a candidate when the candidate's path, relative to the tree, ends with it (after `./` and `../`
are dropped): a launch line is written for the directory it is run from, which this cannot know, so the match errs
towards linting.
"""

from __future__ import annotations

import os
import re

from ..base.fsio import NEVER_READ, read_walked

# What is scanned, and how much: the gate stays cheap on a large monorepo, and reading stops at the budget.
TEXT_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job", ".pbs", ".yaml", ".yml", ".md", ".rst",
                 ".txt", ".py", ".cfg", ".toml", ".ini", ".mk")
TEXT_NAMES = ("Makefile", "makefile", "GNUmakefile", "Dockerfile", "Justfile", "justfile")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
                       "site-packages", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
# Hidden directories are caches and tool state (.cache, .idea, .venv-py311, ...), never read, except those CI
# services keep their workflows in, whose launch lines are uses.
CI_DIRS = frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".azure-pipelines", ".ci", ".gitea",
                     ".forgejo", ".woodpecker"})
MAX_FILE_BYTES = 1 << 20
MAX_FILES = 20_000
MAX_TOTAL_BYTES = 64 << 20

_FLAG = re.compile(rb"--deepspeed(?:_config)?(?:=|[ \t]+(?:\\\r?\n[ \t]*)?)([\"']?)([^\s\"';|&)<>`]+)\1")
_YAML = re.compile(rb"(?m)^[ \t-]*(deepspeed_config_file|deepspeed)[ \t]*:[ \t]*([\"']?)([^\s\"'#]+)\2")
_PY_END = re.compile(rb"\.h?json([\"'])")  # the end of a string literal naming a JSON file (found from its end:
# a search from every quote would cost the literal's length per quote)
# What stands before such a literal on its line when the literal is handed to DeepSpeed.
_PY_CONTEXT = re.compile(rb"(?:\b(?:deepspeed|deepspeed_config|ds_config|config_params|hf_ds_config|config_file)\s*=\s*"
                         rb"|HfDeepSpeedConfig\(\s*|\bdefault\s*=\s*)$")
_ASSIGN = re.compile(rb"(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=([\"']?)([^\s\"';]*)\2")
_VAR = re.compile(rb"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


class Reference:
    """Where a file names a config: `source` (a path), `line`, `how` (the flag or key)."""

    __slots__ = ("source", "line", "how")

    def __init__(self, source: str, line: int, how: str) -> None:
        self.source, self.line, self.how = source, line, how

    def __str__(self) -> str:
        return f"{self.source}:{self.line} ({self.how})"


def tree_root(path: str) -> str:
    """The repository a file is in: the nearest directory above it holding `.git`, else the working directory."""
    root = repository_root(path)
    return root if root is not None else os.getcwd()


def repository_root(path: str) -> str | None:
    """The repository a file is in (the nearest directory above it holding `.git`), None outside one: the uses of
    a config are read only inside a repository, never from whatever directory a command happens to run in."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def named_configs(candidates: list[str]) -> dict[str, Reference]:
    """{candidate: the first place in its tree that names it}, for the candidates something names."""
    by_root: dict[str, list[str]] = {}
    for c in candidates:
        by_root.setdefault(tree_root(c), []).append(c)
    found: dict[str, Reference] = {}
    for root, group in by_root.items():
        rel = {c: os.path.relpath(os.path.abspath(c), root).replace(os.sep, "/") for c in group}
        for source, data in text_files(root):
            for name, line, how in _names_in(source, data):
                for c, r in rel.items():
                    if c not in found and name_matches(r, name):
                        found[c] = Reference(os.path.relpath(source), line, how)
            if len(found) == len(group):
                break
    return found


def name_matches(rel: str, name: str) -> bool:
    """Whether a config named `name` in a launch line or code can be the file at `rel` (relative to the tree)."""
    name = name.replace("\\", "/")
    while name.startswith(("./", "../")):
        name = name[name.index("/") + 1:]
    return bool(name) and (rel == name or rel.endswith("/" + name))


def text_files(root: str, suffixes: tuple[str, ...] = TEXT_SUFFIXES, names: tuple[str, ...] = TEXT_NAMES):
    """(path, bytes) of the tree's text files (those `suffixes` and `names` say), in walk order, within the budget;
    never through a link."""
    total = 0
    for path in tree_paths(root, suffixes, names):
        data = read_walked(path, MAX_FILE_BYTES)
        if data is None or len(data) > MAX_FILE_BYTES:
            continue
        if total > MAX_TOTAL_BYTES:
            return
        total += len(data)
        yield path, data


def tree_paths(root: str, suffixes: tuple[str, ...] = TEXT_SUFFIXES, names: tuple[str, ...] = TEXT_NAMES,
               readmes: tuple[str, ...] = ()) -> list[str]:
    """The paths of the tree's text files in walk order (a directory's files by name, then each subdirectory by
    name, depth first), at most MAX_FILES of them: those `suffixes` and `names` say, and README files ending with
    one of `readmes`. No link is followed, to a directory or a file, so every path is inside the tree without a
    realpath per file; /proc, /sys and /dev are never entered, nor hidden directories other than CI_DIRS."""
    out: list[str] = []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            try:
                if e.is_symlink():
                    continue
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIP_DIRS and e.path not in NEVER_READ and (
                            e.name[0] != "." or e.name in CI_DIRS):
                        subdirs.append(e.path)
                elif e.name.endswith(suffixes) or e.name in names or (
                        readmes and e.name[:6].upper() == "README" and e.name.endswith(readmes)):
                    if len(out) == MAX_FILES:
                        return out
                    out.append(e.path)
            except OSError:
                continue
        stack.extend(reversed(subdirs))
    return out


def _names_in(path: str, data: bytes):
    """(name, line, how) for every config name the file holds."""
    low = path.lower()
    if b"deepspeed" not in data.lower():
        return
    if b"--deepspeed" in data:
        env = {m.group(1): m.group(3) for m in _ASSIGN.finditer(data)}
        for m in _FLAG.finditer(data):
            token = _VAR.sub(lambda v: env.get(v.group(1), v.group(0)), m.group(2))
            flag = m.group(0).split(b"=")[0].split()[0].decode("ascii", "replace")
            yield _text(token), _line(data, m.start()), flag
    if low.endswith((".yaml", ".yml", ".md")):
        for m in _YAML.finditer(data):
            yield _text(m.group(3)), _line(data, m.start(3)), f"{m.group(1).decode()}:"
    if low.endswith(".py"):
        for m in _PY_END.finditer(data):
            quote, end = m.group(1), m.start(1)
            start = data.rfind(quote, max(0, end - 300), end)
            body = data[start + 1:end] if start >= 0 else b""
            line_start = data.rfind(b"\n", 0, start) + 1
            before = data[line_start:start]
            handed = _PY_CONTEXT.search(before) is not None or (
                re.search(rb"\bconfig\s*=\s*$", before) is not None and b"initialize" in before)
            if body and b"\n" not in body and handed and (b"default" not in before[-12:] or b"deepspeed" in before):
                yield _text(body), _line(data, start), "handed to DeepSpeed in Python code"


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1
