"""How the repository uses each DeepSpeed config: the launch lines and the training code that consume it (issue 24).

references.py answers "is this file a config?"; this module answers "who reads it, on how many GPUs, with which
code". Nothing is run or imported: shell files are tokenised with `shlex`, Python with `ast`, both read through
references.text_files (regular files inside the tree, never through a link, under a size budget). What cannot be
settled (a variable set elsewhere, a script outside the tree, a file that does not parse) is kept as an unresolved
reason on the use, never guessed.

A use records, each with the `file:line` it was read from:
- `launcher`: deepspeed, torchrun, accelerate launch, python, or the Python call that hands the config over
  (TrainingArguments, deepspeed.initialize, deepspeed.init_inference, HfDeepSpeedConfig);
- `gpus` and `nodes` (the world size is their product where both are known);
- `script` and the `consumer` its code implies: "hf" (a Trainer or TrainingArguments), "accelerate" (an
  Accelerator of one's own), "deepspeed" (deepspeed.initialize), "inference" (init_inference, or
  HfDeepSpeedConfig without a Trainer);
- `values`: TrainingArguments fields written as literals next to the config.
"""

from __future__ import annotations

import ast
import os
import re
import shlex

from ..base.fsio import read_walked
from .references import MAX_FILE_BYTES, MAX_TOTAL_BYTES, name_matches, tree_paths

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job", ".pbs", ".md", ".rst", ".mk", ".yml", ".yaml")
SHELL_NAMES = ("Makefile", "makefile", "GNUmakefile", "Justfile", "justfile", "Dockerfile")
# What the scan reads: launch and Slurm scripts, Makefiles, YAML (Accelerate, recipes, CI workflows), Python, and
# the READMEs' code blocks; other Markdown (a docs site's examples) describes runs, it does not make them.
SCAN_SUFFIXES = tuple(s for s in SHELL_SUFFIXES if s not in (".md", ".rst")) + (".py",)
README_SUFFIXES = (".md", ".rst", ".txt")
CONFIG_FLAGS = ("--deepspeed", "--deepspeed_config")
# launcher -> {flag: what it sets}
LAUNCH_FLAGS = {
    "deepspeed": {"--num_gpus": "gpus", "--num_nodes": "nodes", "--include": "include", "-i": "include",
                  "--hostfile": "hostfile", "-H": "hostfile", "--exclude": "exclude", "-e": "exclude"},
    "torchrun": {"--nproc_per_node": "gpus", "--nproc-per-node": "gpus", "--nnodes": "nodes"},
    "accelerate launch": {"--num_processes": "world", "--num_machines": "nodes", "--config_file": "yaml"},
}
SBATCH = re.compile(r"^#SBATCH\s+--(nodes|gpus-per-node|ntasks-per-node)[= ](\S+)", re.M)
ASSIGN = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)", re.M)
VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_QUOTING = re.compile(r"[\"'\\#]")
_WORDS = re.compile(r"[^ \t\r\n]+")  # shlex's whitespace
TRAINING_ARGS = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                 "ORPOConfig", "KTOConfig", "RewardConfig")
TRAINERS = ("Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "GRPOTrainer", "ORPOTrainer", "KTOTrainer",
            "RewardTrainer")
ARG_FIELDS = ("per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate", "weight_decay",
              "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm", "warmup_steps", "bf16", "fp16",
              "max_steps", "num_train_epochs")


class Use:
    """One place that hands a config to a consumer; every value with the `file:line` it came from."""

    __slots__ = ("config", "source", "line", "launcher", "gpus", "nodes", "script", "consumer", "values",
                 "unresolved")

    def __init__(self, config: str, source: str, line: int, launcher: str) -> None:
        self.config, self.source, self.line, self.launcher = config, source, line, launcher
        self.gpus: tuple[int, str] | None = None
        self.nodes: tuple[int, str] | None = None
        self.script: tuple[str, str] | None = None
        self.consumer: tuple[str, str] | None = None
        self.values: dict[str, tuple[Any, str]] = {}  # key -> (value, where): values of several types
        self.unresolved: list[str] = []

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    @property
    def world_size(self) -> int | None:
        if self.gpus is None:
            return None
        return self.gpus[0] * (self.nodes[0] if self.nodes is not None else 1)

    def describe(self) -> str:
        """`scripts/train.sh:12: deepspeed, 8 GPUs x 2 nodes, HF Trainer in train.py:88`."""
        parts = [self.launcher]
        if self.gpus is not None:
            nodes = f" x {self.nodes[0]} nodes" if self.nodes is not None and self.nodes[0] != 1 else ""
            parts.append(f"{self.gpus[0]} GPU{'s' if self.gpus[0] != 1 else ''}{nodes}")
        if self.consumer is not None:
            name = CONSUMER_NAMES[self.consumer[0]]
            if self.consumer[1] != self.where:
                parts.append(f"{name} in {self.consumer[1]}")
            elif name != self.launcher:
                parts.append(name)
        return f"{self.where}: {', '.join(parts)}"


    def details(self) -> list[str]:
        """What was read, one line per value, each with its file:line; then what could not be settled."""
        out = []
        for name, value in (("GPUs per node", self.gpus), ("nodes", self.nodes), ("script", self.script),
                            ("consumer", self.consumer)):
            if value is not None:  # the consumer's value[0] is a str, the other ones' an int
                shown = CONSUMER_NAMES[value[0]] if name == "consumer" else value[0]  # type: ignore[index]
                out.append(f"{name}: {shown} ({value[1]})")
        if self.world_size is not None:
            out.append(f"world size: {self.world_size}")
        out.extend(f"{key.replace('prepared_', 'accelerator.prepare ')}: {value!r} ({where})"
                   for key, (value, where) in self.values.items())
        out.extend(f"unresolved: {why}" for why in self.unresolved)
        return out

    def to_json(self) -> dict:
        """The use as the JSON output's `uses` field shows it (docs/json-format.md)."""
        return {"where": self.where, "launcher": self.launcher,
                "consumer": self.consumer[0] if self.consumer is not None else None, "world_size": self.world_size}


CONSUMER_NAMES = {"hf": "HF Trainer", "accelerate": "Accelerate loop", "deepspeed": "deepspeed.initialize",
                  "inference": "DeepSpeed inference"}


def find_uses(root: str, workers: int | None = None) -> list[Use]:
    """Every use of a DeepSpeed config in the tree at `root`, in walk order (UseScan, waited for)."""
    return UseScan(root, workers).result()


SKIPPED, NOT_READ = -1, -2  # a file not read (a link, not regular, too large); a file past the read budget


class UseScan:
    """The scan of a tree for uses, started when made. `workers` child processes (default: one per core but the one
    the caller keeps, where this process may fork) each walk the tree and scan their share of its files while the
    caller goes on (the command line finds and judges the files to lint meanwhile); the caller scans the last share
    itself when it asks for the result, half the size of a child's, since the children started first. 0: all of it
    is scanned here, when `result()` is asked for. The result is the same either way: the shares are contiguous runs
    of the walk, joined in order; a share whose child fails is scanned here. `result()` waits for the scan (once)."""

    def __init__(self, root: str, workers: int | None = None) -> None:
        self.root = os.path.abspath(root)  # the walk's paths start with it
        self._uses: list[Use] | None = None
        n = workers if workers is not None else (_cores() - 1 if _may_fork() else 0)
        n = n if n > 0 and _may_fork() else 0
        self._parts = 2 * n + 1  # the walk in units: two per child, one for the caller
        self._children = [_fork_share(self.root, 2 * k, 2 * k + 2, self._parts) for k in range(n)]

    def _scanned(self) -> tuple[list[str], list[tuple[int, list[Use]]]]:
        paths: list[str] = []
        found: list[tuple[int, list[Use]]] = []
        shares = [(child, 2 * k, 2 * k + 2) for k, child in enumerate(self._children)]
        for child, lo, hi in shares + [(None, self._parts - 1, self._parts)]:
            share = _collect(child) if child is not None else None
            p, f = share if share is not None else _scan_share(self.root, lo, hi, self._parts)
            paths += p
            found += f
        self._children = []
        return paths, found

    def result(self) -> list[Use]:
        if self._uses is not None:
            return self._uses
        uses: list[Use] = []
        scanned: set[str] = set()
        total = 0
        for path, (size, found) in zip(*self._scanned()):
            if size == NOT_READ or total > MAX_TOTAL_BYTES:
                break  # the read budget is spent: the same files as references.text_files
            if size == SKIPPED:
                continue
            total += size
            scanned.add(path)
            uses.extend(found)
        kinds: dict[str, tuple | None] = {}
        for use in uses:
            if use.script is not None and use.consumer is None:
                _consumer_from_script(use, self.root, scanned, kinds)
            if "hostfile" in use.values and (use.gpus is None or use.nodes is None):
                _hostfile(use, self.root)
        _yaml_consumers(uses)
        self._uses = uses
        return uses


def _may_fork() -> bool:
    """Where a child can be forked safely: POSIX, and this process has one thread (the command line; a server with
    threads must not fork, and spawning an interpreter costs more than a scan saves)."""
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1


def _fork_share(root: str, lo: int, hi: int, parts: int) -> tuple[int, int] | None:
    """(pid, the pipe it writes its pickled share to), or None where no child could be made."""
    import pickle

    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:  # the child: scan, write, and leave without running anything of the parent's (no atexit, no flush)
        code = 1
        try:
            os.close(read_end)
            data = pickle.dumps(_scan_share(root, lo, hi, parts), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _collect(child: tuple[int, int]):
    """The share a child wrote, or None when it failed (then the caller scans that share itself)."""
    import pickle

    pid, fd = child
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # a truncated or damaged share: scanned again by the caller
        return None


def _scan_share(root: str, lo: int, hi: int, parts: int) -> tuple[list[str], list[tuple[int, list[Use]]]]:
    """Units lo to hi of the tree's walk cut in `parts` contiguous units: their paths, and for each (bytes read or
    SKIPPED / NOT_READ, the file's uses). A worker's unit of work; the walk is cheap beside the reads, so each does
    its own."""
    paths = tree_paths(root, SCAN_SUFFIXES, SHELL_NAMES, README_SUFFIXES)
    share = paths[lo * len(paths) // parts:hi * len(paths) // parts]
    out: list[tuple[int, list[Use]]] = []
    total = 0
    for path in share:
        if total > MAX_TOTAL_BYTES:  # the caller stops here too: its total up to this file is at least this one
            out.append((NOT_READ, []))
            continue
        data = read_walked(path, MAX_FILE_BYTES)
        if data is None or len(data) > MAX_FILE_BYTES:
            out.append((SKIPPED, []))
            continue
        total += len(data)
        out.append((len(data), _uses_in(path[len(root) + 1:].replace(os.sep, "/"), data)))
    return share, out


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _uses_in(rel: str, data: bytes) -> list[Use]:
    if rel.endswith(".py"):
        return _python_uses(rel, data)
    uses = []
    if rel.endswith((".yaml", ".yml")):
        uses.extend(_yaml_uses(rel, data))
    if rel.endswith(SHELL_SUFFIXES + (".txt",)) or os.path.basename(rel) in SHELL_NAMES:
        uses.extend(_shell_uses(rel, data))
    return uses


def _yaml_consumers(uses: list[Use]) -> None:
    """An Accelerate config run by an `accelerate launch --config_file` line whose script uses the HF Trainer is
    read by the Trainer (through Accelerate): the launched script decides what fills "auto" (ZL534)."""
    for launch in uses:
        named = launch.values.get("accelerate_config")
        if launch.launcher != "accelerate launch" or named is None or launch.consumer is None:
            continue
        for use in uses:
            if use.launcher == "Accelerate config" and name_matches(use.source, str(named[0])):
                if launch.consumer[0] == "hf":
                    use.consumer = launch.consumer


LAUNCHER_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job", ".pbs", ".py", ".mk")


def configs_used_by(path: str) -> list[tuple[str, Use]]:
    """(config path, the use) for each config file a launch script, Slurm file or training script at `path` names,
    resolved as the uses are (from its directory, then the repository root; an existing file inside the tree)."""
    from ..base.fsio import ReadRefused, check_read
    from .references import repository_root

    root = repository_root(path)
    if root is None:
        return []
    real_root = os.path.realpath(root)
    try:
        check_read(path, (real_root,))
    except ReadRefused:
        return []
    data = read_walked(path, MAX_FILE_BYTES)
    if data is None or len(data) > MAX_FILE_BYTES:
        return []
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    out = []
    for use in _uses_in(rel, data):
        for base in (os.path.dirname(use.source), ""):
            name = _from(base, use.config)
            if name is None:
                continue
            config = os.path.join(root, name)
            try:
                check_read(config, (real_root,))
            except ReadRefused:
                continue
            if os.path.isfile(config):
                out.append((os.path.relpath(config), use))
                break
    return out


def uses_of(config: str, root: str, uses: list[Use]) -> list[Use]:
    """The uses that name the config file at `config` (UseIndex, for one config)."""
    return UseIndex(root, uses).of(config)


class UseIndex:
    """The uses of a tree by the config file they name, built once per tree (a large tree has thousands of uses and
    hundreds of configs: no stat per pair). A name that is a file from the using file's directory or from the
    repository root (where a launch starts) names that file only; any other name matches every config whose path
    ends with it, as the CI gate matches (references.name_matches)."""

    def __init__(self, root: str, uses: list[Use]) -> None:
        self.root = os.path.abspath(root)
        self._exact: dict[str, list[int]] = {}  # root-relative path -> the uses naming exactly it (their order)
        self._loose: dict[str, list[int]] = {}  # a name's last part -> the uses matched by suffix
        self._uses = uses
        for i, u in enumerate(uses):
            exact = {p for p in (_from(os.path.dirname(u.source), u.config), _from("", u.config))
                     if p is not None and os.path.isfile(os.path.join(self.root, p))}
            for p in exact:
                self._exact.setdefault(p, []).append(i)
            if not exact:
                self._loose.setdefault(u.config.replace("\\", "/").rsplit("/", 1)[-1], []).append(i)

    def of(self, config: str) -> list[Use]:
        """The uses of the config file at `config`, in the order they were found."""
        rel = os.path.relpath(os.path.abspath(config), self.root).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            return []  # a file outside the tree: nothing in it can name the file (a suffix would match by chance)
        picked = list(self._exact.get(rel, ()))
        picked += [i for i in self._loose.get(rel.rsplit("/", 1)[-1], ()) if name_matches(rel, self._uses[i].config)]
        return [self._uses[i] for i in sorted(picked)]


def _from(base: str, name: str) -> str | None:
    """`name` resolved from `base` (relative to the root), as a root-relative path; None outside the tree."""
    if not name or os.path.isabs(name):
        return None
    path = os.path.normpath(os.path.join(base, name)).replace(os.sep, "/")
    return None if path == ".." or path.startswith("../") else path


# -- shell: launch lines -------------------------------------------------------------------------------------------

def _logical_lines(text: str):
    """(first line number, text) with backslash continuations joined."""
    start, buf = None, []
    for number, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = number
        if line.rstrip().endswith("\\"):
            buf.append(line.rstrip()[:-1])
            continue
        buf.append(line)
        yield start, " ".join(buf)
        start, buf = None, []
    if buf:
        yield start, " ".join(buf)


def _shell_uses(rel: str, data: bytes) -> list[Use]:
    if b"--deepspeed" not in data and b"--config_file" not in data:
        return []
    text = data.decode("utf-8", "replace")
    env = {m.group(1): m.group(2).strip("\"'") for m in ASSIGN.finditer(text)}
    sbatch = {m.group(1): (m.group(2), _line_of(text, m.start())) for m in SBATCH.finditer(text)}
    out = []
    for number, line in _logical_lines(text):
        if ("--deepspeed" not in line and "--config_file" not in line) or line.lstrip().startswith("#"):
            continue  # (an `accelerate launch --config_file` line names the YAML that names the config)
        try:  # shlex only where quoting or a comment needs it: a plain line splits the same on whitespace
            tokens = _WORDS.findall(line) if not _QUOTING.search(line) else shlex.split(line, comments=True)
        except ValueError as e:
            use = Use("", rel, number, "a command line")
            use.unresolved.append(f"the line does not tokenise ({e})")
            out.append(use)
            continue
        launched = _launch(rel, number, tokens, env, sbatch)
        if launched is not None:
            out.append(launched)
    return out


def _launch(rel: str, number: int, tokens: list[str], env: dict, sbatch: dict) -> Use | None:
    config = None
    for i, t in enumerate(tokens):
        flag, _, inline = t.partition("=")
        if flag in CONFIG_FLAGS and (inline or (i + 1 < len(tokens) and not tokens[i + 1].startswith("-"))):
            config = inline or tokens[i + 1]  # (raw DeepSpeed's `--deepspeed` alone is a switch)
            break
    launcher, at = _launcher(tokens)
    if config is None and launcher != "accelerate launch":
        return None
    use = Use(_expand(config or "", env, None), rel, number, launcher)
    if "$" in use.config:
        use.unresolved.append(f"the config path {config} uses a variable not set in {rel}")
    where = f"{rel}:{number}"
    flags = LAUNCH_FLAGS.get(launcher, {})
    world = None
    for i in range(at, len(tokens)):
        flag, _, inline = tokens[i].partition("=")
        if flag in CONFIG_FLAGS:
            break
        if flag in flags:
            raw = inline or (tokens[i + 1] if i + 1 < len(tokens) else "")
            value = _expand(raw, env, sbatch)
            if flags[flag] == "yaml":
                use.values["accelerate_config"] = (value, where)
                continue
            if flags[flag] in ("include", "hostfile", "exclude"):
                use.values[flags[flag]] = (value, where)
                continue
            if not value.isdigit():
                use.unresolved.append(f"{flag} {raw} is not a number zerolint can read")
                continue
            if flags[flag] == "world":
                world = int(value)
            else:
                setattr(use, flags[flag], (int(value), where))
        elif use.script is None and tokens[i].endswith(".py"):
            use.script = (tokens[i], where)
            _script_args(use, tokens[i + 1:], env, where)
            break
    if "include" in use.values:
        _include(use, *use.values["include"])
    _srun(use, tokens[:at], env, sbatch, where)
    if use.gpus is None and "gpus-per-node" in sbatch and launcher in ("deepspeed", "torchrun"):
        value, line = sbatch["gpus-per-node"]
        if value.isdigit():
            use.gpus = (int(value), f"{rel}:{line}")
    if use.nodes is None and "nodes" in sbatch and sbatch["nodes"][0].isdigit():
        use.nodes = (int(sbatch["nodes"][0]), f"{rel}:{sbatch['nodes'][1]}")
    if world is not None:  # accelerate's --num_processes counts every process of every machine
        nodes = use.nodes[0] if use.nodes is not None else 1
        if world % nodes:
            use.unresolved.append(f"{world} processes do not divide over {nodes} machines")
            use.nodes = None
        use.gpus = (world // nodes if world % nodes == 0 else world, where)
    if use.gpus is None and launcher == "deepspeed" and "hostfile" not in use.values and "include" not in use.values:
        use.unresolved.append("deepspeed without --num_gpus (or --include) uses every GPU of the host")
    if "exclude" in use.values and (use.gpus is None or use.nodes is None):
        use.unresolved.append(f"--exclude {use.values['exclude'][0]}: the GPUs left depend on the hosts' GPUs")
    return use


def _hostfile(use: Use, root: str) -> None:
    """deepspeed --hostfile F, where F is in the tree: a node per host line, its GPUs from `slots=N` (--num_gpus and
    --num_nodes, where given, take part of them, as the launcher does)."""
    from ..base.fsio import ReadRefused, check_read

    name, where = use.values["hostfile"]
    launch_dir = os.path.dirname(use.source)
    for base in (launch_dir, ""):
        rel = _from(base, name)
        if rel is None:
            continue
        path = os.path.join(root, rel)
        try:
            check_read(path, (os.path.realpath(root),))
        except ReadRefused:
            continue
        data = read_walked(path, MAX_FILE_BYTES)
        if data is not None:
            break
    else:
        use.unresolved.append(f"the hostfile {name} is not in the tree, so the nodes and their GPUs are unknown")
        return
    slots = []
    for line in data.decode("utf-8", "replace").splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        found = [w[len("slots="):] for w in words[1:] if w.startswith("slots=")]
        if not found or not found[0].isdigit():
            use.unresolved.append(f"{rel}: the host {words[0]} has no slots=N")
            return
        slots.append(int(found[0]))
    if not slots:
        use.unresolved.append(f"the hostfile {rel} names no host")
        return
    if use.nodes is None:
        use.nodes = (len(slots), f"{rel}")
    taken = slots[:use.nodes[0]]
    if use.gpus is None:
        if len(set(taken)) != 1:
            use.unresolved.append(f"the hosts of {rel} have different numbers of GPUs")
            return
        use.gpus = (taken[0], f"{rel}")


def _include(use: Use, value: str, where: str) -> None:
    """deepspeed --include host:0,1@host2:0,1: the hosts are the nodes, the slots of each its GPUs."""
    counts = []
    for host in value.split("@"):
        name, _, slots = host.partition(":")
        if not slots:
            use.unresolved.append(f"--include {value} names {name} without slots: every GPU of it is used")
            return
        counts.append(len([s for s in slots.split(",") if s]))
    if len(set(counts)) != 1:
        use.unresolved.append(f"--include {value} gives the hosts different numbers of GPUs")
        return
    if use.gpus is None:
        use.gpus = (counts[0], where)
    if use.nodes is None:
        use.nodes = (len(counts), where)


SRUN_FLAGS = {"--nodes": "nodes", "-N": "nodes", "--ntasks-per-node": "tasks", "--ntasks": "ntasks", "-n": "ntasks",
              "--gpus-per-node": "gpus"}


def _srun(use: Use, before: list[str], env: dict, sbatch: dict, where: str) -> None:
    """`srun [options] LAUNCHER ...`: srun's --nodes count the nodes where the launcher does not; a python run by
    srun directly is one rank per task (--ntasks-per-node, or --ntasks over the nodes)."""
    start = next((i for i, t in enumerate(before) if os.path.basename(t) == "srun"), None)
    if start is None:
        return
    read: dict[str, int] = {}
    if "ntasks-per-node" in sbatch and sbatch["ntasks-per-node"][0].isdigit():  # srun runs the batch's tasks
        read["tasks"] = int(sbatch["ntasks-per-node"][0])
    i = start + 1
    while i < len(before):
        flag, eq, inline = before[i].partition("=")
        if flag in SRUN_FLAGS:
            raw = inline if eq else (before[i + 1] if i + 1 < len(before) else "")
            value = _expand(raw, env, sbatch)
            if value.isdigit():
                read[SRUN_FLAGS[flag]] = int(value)
            else:
                use.unresolved.append(f"srun {flag} {raw} is not a number zerolint can read")
            i += 1 if eq else 2
            continue
        i += 1
    if use.nodes is None and "nodes" in read:
        use.nodes = (read["nodes"], where)
    if use.launcher == "python" and use.gpus is None:
        use.launcher = "srun"
        nodes = use.nodes[0] if use.nodes is not None else 1
        if "tasks" in read:
            use.gpus = (read["tasks"], where)
        elif "ntasks" in read and read["ntasks"] % nodes == 0:
            use.gpus = (read["ntasks"] // nodes, where)


def _script_args(use: Use, tokens: list[str], env: dict, where: str) -> None:
    """TrainingArguments fields the launch line passes to the script (`--learning_rate 2e-5`, `--bf16`), as an
    HfArgumentParser script reads them; a value with an unset variable is left out."""
    for i, token in enumerate(tokens):
        flag, eq, inline = token.partition("=")
        field = flag[2:] if flag.startswith("--") else None
        if field not in ARG_FIELDS:
            continue
        if eq:
            raw = inline
        elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
            raw = tokens[i + 1]
        else:
            raw = "true"  # a bare boolean flag
        value = _expand(raw, env, None)
        if "$" not in value:
            use.values[field] = (_scalar(value), where)


def _launcher(tokens: list[str]) -> tuple[str, int]:
    """(launcher, index of its first argument)."""
    for i, t in enumerate(tokens):
        base = os.path.basename(t)
        if base == "deepspeed":
            return "deepspeed", i + 1
        if base == "torchrun":
            return "torchrun", i + 1
        if base == "accelerate" and i + 1 < len(tokens) and tokens[i + 1] == "launch":
            return "accelerate launch", i + 2
        if base.startswith("python") and i + 2 < len(tokens) and tokens[i + 1] == "-m" and \
                tokens[i + 2] in ("torch.distributed.run", "torch.distributed.launch"):
            return "torchrun", i + 3
        if base.startswith("python"):
            return "python", i + 1
    return "a command line", 0


def _expand(value: str, env: dict, sbatch: dict | None) -> str:
    slurm = {"SLURM_NNODES": "nodes", "SLURM_JOB_NUM_NODES": "nodes", "SLURM_GPUS_PER_NODE": "gpus-per-node"}

    def one(m: re.Match) -> str:
        name = m.group(1)
        if name in env:
            return env[name]
        if sbatch is not None and name in slurm and slurm[name] in sbatch:
            return sbatch[slurm[name]][0]
        return m.group(0)

    return VAR.sub(one, value)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# -- YAML: Accelerate configs and the frameworks' recipes ----------------------------------------------------------

YAML_KEY = re.compile(r"^([ \t]*)([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*([\"']?)([^\"'#\n]*?)\3[ \t]*(?:#.*)?$", re.M)
# recipe keys (axolotl, LLaMA-Factory, TRL recipes) -> the TrainingArguments field they set
RECIPE_FIELDS = {"micro_batch_size": "per_device_train_batch_size", "per_device_train_batch_size":
                 "per_device_train_batch_size", "gradient_accumulation_steps": "gradient_accumulation_steps",
                 "learning_rate": "learning_rate", "bf16": "bf16", "fp16": "fp16", "max_grad_norm": "max_grad_norm",
                 "weight_decay": "weight_decay", "warmup_steps": "warmup_steps"}


def _yaml_uses(rel: str, data: bytes) -> list[Use]:
    """An Accelerate config's `deepspeed_config_file` (with num_processes / num_machines), or a training recipe's
    `deepspeed:` (axolotl, LLaMA-Factory, TRL: the HF Trainer reads it, with the recipe's TrainingArguments)."""
    if b"deepspeed" not in data:
        return []
    text = data.decode("utf-8", "replace")
    keys: dict[str, tuple[str, int]] = {}
    for m in YAML_KEY.finditer(text):
        keys.setdefault(m.group(2), (m.group(4).strip(), _line_of(text, m.start(2))))

    def where(key: str) -> str:
        return f"{rel}:{keys[key][1]}"

    if "deepspeed_config_file" in keys:
        use = Use(keys["deepspeed_config_file"][0], rel, keys["deepspeed_config_file"][1], "Accelerate config")
        use.consumer = ("accelerate", where("deepspeed_config_file"))  # `accelerate launch` reads it (any script)
        machines = keys.get("num_machines", ("1", 0))[0]
        nodes = int(machines) if machines.isdigit() else 1
        if machines.isdigit() and "num_machines" in keys:
            use.nodes = (nodes, where("num_machines"))
        procs = keys.get("num_processes", ("", 0))[0]
        if procs.isdigit() and nodes and int(procs) % nodes == 0:
            use.gpus = (int(procs) // nodes, where("num_processes"))
        elif procs.isdigit():
            use.unresolved.append(f"num_processes {procs} does not divide over num_machines {machines}")
        if "mixed_precision" in keys:
            use.values["mixed_precision"] = (keys["mixed_precision"][0], where("mixed_precision"))
        return [use]
    if "deepspeed" in keys and keys["deepspeed"][0].endswith((".json", ".hjson")):
        use = Use(keys["deepspeed"][0], rel, keys["deepspeed"][1], "training recipe")
        use.consumer = ("hf", where("deepspeed"))
        for key, field in RECIPE_FIELDS.items():
            if key in keys and keys[key][0]:
                use.values[field] = (_scalar(keys[key][0]), where(key))
        return [use]
    return []


def _scalar(text: str) -> object:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


# -- Python: the calls that hand a config over ----------------------------------------------------------------------

def _python_uses(rel: str, data: bytes) -> list[Use]:
    if (b".json" not in data and b".hjson" not in data) or b"deepspeed" not in data.lower():
        return []  # every config a call can name is a .json or .hjson literal: no parse needed
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # a file that does not parse names no config zerolint can trust
    kinds = _code_kinds(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out.extend(_argument_defaults(node, rel))
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node.func)
        config = None
        launcher = None
        if name.rsplit(".", 1)[-1] in TRAINING_ARGS:
            config, launcher = _kw_str(node, "deepspeed"), name.rsplit(".", 1)[-1]
        elif name.endswith("initialize") and "deepspeed" in name:
            config = _kw_str(node, "config") or _kw_str(node, "config_params")
            launcher = "deepspeed.initialize"
        elif name.endswith("init_inference"):
            config, launcher = _kw_str(node, "config"), "deepspeed.init_inference"
        elif name.endswith("DeepSpeedPlugin"):
            config, launcher = _kw_str(node, "hf_ds_config"), "DeepSpeedPlugin"
        elif name.endswith("HfDeepSpeedConfig"):
            config = _str(node.args[0]) if node.args else _kw_str(node, "config_file_or_dict")
            launcher = "HfDeepSpeedConfig"
        if not config or not config.endswith((".json", ".hjson")):
            continue
        assert launcher is not None  # each branch that names a config names its launcher
        use = Use(config, rel, node.lineno, launcher)
        where = f"{rel}:{node.lineno}"
        if launcher in TRAINING_ARGS:
            use.consumer = ("hf", where)
            for kw in node.keywords:
                if kw.arg in ARG_FIELDS and isinstance(kw.value, ast.Constant):
                    use.values[kw.arg] = (kw.value.value, f"{rel}:{kw.value.lineno}")
        elif launcher == "deepspeed.initialize":
            use.consumer = ("deepspeed", where)
            use.values.update(_engine_calls(tree, rel))
            optimizer = next((kw.value for kw in node.keywords if kw.arg == "optimizer"), None)
            if isinstance(optimizer, ast.Call):
                use.values["optimizer"] = (_call_name(optimizer.func), f"{rel}:{optimizer.lineno}")
        elif launcher == "deepspeed.init_inference":
            use.consumer = ("inference", where)
        elif launcher == "DeepSpeedPlugin":  # handed to an Accelerator; a Trainer in the module reads it through one
            use.consumer = ("hf", f"{rel}:{kinds['hf']}") if "hf" in kinds else ("accelerate", where)
            if use.consumer[0] == "accelerate":
                use.values.update(_prepared(tree, rel))
        else:
            use.consumer = ("hf", f"{rel}:{kinds['hf']}") if "hf" in kinds else ("inference", where)
        out.append(use)
    return out


def _argument_defaults(node: ast.ClassDef, rel: str) -> list[Use]:
    """`class Args(TrainingArguments): deepspeed: str = field(default="ds.json")`: the config an HfArgumentParser
    script runs when its command line names none (the HF Trainer reads it). Other fields' defaults are not read:
    the command line may override them."""
    if not any(_call_name(b).rsplit(".", 1)[-1] in TRAINING_ARGS for b in node.bases):
        return []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "deepspeed":
            value = stmt.value
            if isinstance(value, ast.Call) and _call_name(value.func).endswith("field"):
                value = next((kw.value for kw in value.keywords if kw.arg == "default"), None)
            config = _str(value) if value is not None else None
            if config and config.endswith((".json", ".hjson")):
                use = Use(config, rel, stmt.lineno, f"{node.name} default")
                use.consumer = ("hf", f"{rel}:{stmt.lineno}")
                return [use]
    return []


def _consumer_from_script(use: Use, root: str, scanned: set[str], cache: dict[str, tuple | None]) -> None:
    """The consumer a launch line's script implies, read from the script when the scan read it (in the tree)."""
    assert use.script is not None  # asked only for a use that names a script
    script, where = use.script
    launch_dir = os.path.dirname(os.path.join(root, use.source))
    for base in (launch_dir, root):
        path = os.path.normpath(os.path.join(base, script))
        if path in scanned:
            break
    else:
        use.unresolved.append(f"the script {script} is not in the tree, so its consumer is unknown")
        return
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if path not in cache:
        data = read_walked(path, MAX_FILE_BYTES)
        try:
            tree = None if data is None else ast.parse(data)
            cache[path] = None if tree is None else (_code_kinds(tree), _prepared(tree, rel), _engine_calls(tree, rel))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            cache[path] = None
    read = cache[path]
    if read is None:
        use.unresolved.append(f"the script {script} does not parse")
        return
    kinds, prepared, engine = read
    for kind in ("hf", "accelerate", "deepspeed", "inference"):  # a Trainer decides even beside an Accelerator
        if kind in kinds:
            use.consumer = (kind, f"{rel}:{kinds[kind]}")
            use.values.update(prepared if kind == "accelerate" else engine if kind == "deepspeed" else {})
            return
    use.unresolved.append(f"{script} calls none of the HF Trainer, an Accelerator or deepspeed.initialize")


def _prepared(tree: ast.AST, rel: str) -> dict[str, tuple[object, str]]:
    """What a loop of one's own hands `accelerator.prepare` (Accelerate decides from it whether the config's
    optimizer and scheduler sections may be there): {"prepared_optimizer" / "prepared_scheduler": (class as the
    code writes it, file:line)}, from a construction in the call or a name assigned one in the module. Only where a
    module calls `.prepare(` once; a class it cannot place (a factory, a name assigned twice) is left out."""
    built: dict[str, list[ast.Call]] = {}
    prepares = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call):
            built.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "prepare":
            prepares.append(node)
    if len(prepares) != 1:
        return {}
    out: dict[str, tuple[object, str]] = {}
    for arg in prepares[0].args:
        call = arg if isinstance(arg, ast.Call) else (
            built[arg.id][0] if isinstance(arg, ast.Name) and len(built.get(arg.id, ())) == 1 else None)
        if call is None:
            continue
        name = _call_name(call.func)
        kind = _optimizer_or_scheduler(name)
        if kind is not None and f"prepared_{kind}" not in out:
            callable_ = any(kw.arg == "lr_scheduler_callable" for kw in call.keywords)
            out[f"prepared_{kind}"] = (name + (" with lr_scheduler_callable" if callable_ else ""),
                                       f"{rel}:{call.lineno}")
    return out


def _engine_calls(tree: ast.AST, rel: str) -> dict[str, tuple[object, str]]:
    """Calls of the DeepSpeed engine that the config decides about, in a module that calls deepspeed.initialize:
    {"no_sync": ("engine.no_sync()", file:line)} for the first `X.no_sync()` with no arguments (Accelerate's and
    torch DDP's take none either, but neither is a DeepSpeed engine in such a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "no_sync" \
                and not node.args and not node.keywords:
            return {"no_sync": (f"{_call_name(node.func) or 'engine.no_sync'}()", f"{rel}:{node.lineno}")}
    return {}


def _optimizer_or_scheduler(name: str) -> str | None:
    """"optimizer", "scheduler" or None for a class or factory name as the code writes it."""
    parts = name.split(".")
    last = parts[-1]
    if last == "DummyScheduler" or "lr_scheduler" in parts or last.endswith(("LR", "Scheduler", "Schedule")) or (
            last.startswith("get_") and "schedule" in last):
        return "scheduler"
    if last == "DummyOptim" or "optim" in parts[:-1] or last in KNOWN_OPTIMIZERS:
        return "optimizer"
    return None


KNOWN_OPTIMIZERS = ("Adam", "AdamW", "SGD", "Adagrad", "RMSprop", "Lion", "Adafactor", "LAMB", "Lamb",
                    "DeepSpeedCPUAdam", "DeepSpeedCPULion", "DeepSpeedCPUAdagrad", "FusedAdam", "FusedLamb",
                    "FusedLion", "AdamW8bit", "Adam8bit", "PagedAdamW", "PagedAdamW8bit", "OneBitAdam", "ZeroOneAdam",
                    "OneBitLamb")


def _code_kinds(tree: ast.AST) -> dict[str, int]:
    """{consumer kind: line} of the first call of each kind in a module."""
    kinds: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node.func).rsplit(".", 1)[-1]
            full = _call_name(node.func)
            kind = ("hf" if name in TRAINERS or name in TRAINING_ARGS else "accelerate" if name == "Accelerator"
                    else "deepspeed" if name == "initialize" and "deepspeed" in full
                    else "inference" if name == "init_inference" else None)
            if kind and (kind not in kinds or node.lineno < kinds[kind]):
                kinds[kind] = node.lineno
    return kinds


def _call_name(func: ast.AST) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _kw_str(call: ast.Call, name: str) -> str | None:
    return next((_str(kw.value) for kw in call.keywords if kw.arg == name), None)


def _str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
