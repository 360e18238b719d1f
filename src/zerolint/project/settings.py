"""zerolint's own configuration: `[tool.zerolint]` in pyproject.toml, or a `.zerolint.toml` (top-level keys).

For each checked file the nearest configuration above it applies (from the working directory for stdin); in one
directory `.zerolint.toml` wins over pyproject.toml, and a pyproject.toml without `[tool.zerolint]` is passed
over. Paths and globs in a configuration (per-file-ignores, include, exclude, extend-rules, suppress, baseline) are
relative to the directory of the file that holds them. Command-line flags override the file; `severity` tables
merge, the command line winning per code.

    [tool.zerolint]
    target = "hf"                      # deepspeed | hf | accelerate | auto
    world-size = 8
    deepspeed-version = "0.19.8"
    torch-version = "2.11"             # the training machine's torch (default: the installed one)
    fail-on = "warning"                # error | warning | info
    select = ["ALL"]
    ignore = ["ZL103"]
    extend-select = []
    extend-ignore = []
    exclude = ["**/*_TEMPLATE.json"]
    include = ["configs/**/*.json"]    # DeepSpeed configs whatever their content (never skipped by --only-configs)
    severity = { ZL401 = "warning" }
    per-file-ignores = { "legacy/*.json" = ["ZL7"] }
    extend-rules = ["policies/*.yaml"]
    baseline = ".zerolint-baseline.json"

    [tool.zerolint.suppress]
    "ds/zero3.json" = [{ code = "ZL203", pointer = "/zero_optimization/stage3_max_live_parameters", reason = "..." }]

Validation is plain code (no pydantic on the check path): unknown keys get a did-you-mean, wrong types name the
key and the file, and any of it is a `ConfigError` (exit code 2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from fnmatch import fnmatch

from ..base.errors import ZerolintError
from ..base.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

CONFIG_NAMES = (".zerolint.toml", "pyproject.toml")
TARGETS = ("auto", "deepspeed", "hf", "accelerate")
LEVELS = ("error", "warning", "info")
DEFAULT_BASELINE = ".zerolint-baseline.json"

DEFAULTS: dict[str, Any] = {
    "select": ["ALL"],
    "ignore": [],
    "extend-select": [],
    "extend-ignore": [],
    "severity": {},
    "per-file-ignores": {},
    "target": "auto",
    "world-size": None,
    "deepspeed-version": None,
    "torch-version": None,
    "fail-on": "error",
    "exclude": [],
    "include": [],
    "extend-rules": [],
    "suppress": {},
    "baseline": None,
}


# Settings fields that come from the config file (or the file being linted); the others are shared by every file.
RESOLVED = ("target", "deepspeed_version", "world_size", "training_args", "accelerate", "torch_version")


class ConfigError(ZerolintError):
    """A broken zerolint configuration: exit code 2 with this message."""


# -- validation -------------------------------------------------------------------------------------------------------

def _type_error(where: str, key: str, expected: str, value: Any) -> ConfigError:
    return ConfigError(f"{where}: `{key}` must be {expected}, not {type(value).__name__} {value!r}")


def _str_list(where: str, key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _type_error(where, key, "a list of strings", value)
    return [v.strip() for v in value]


def _choice(choices: tuple[str, ...]) -> Callable[[str, str, Any], str]:
    def check(where: str, key: str, value: Any) -> str:
        if not isinstance(value, str):
            raise _type_error(where, key, f"one of {', '.join(choices)}", value)
        if value.lower() not in choices:
            from ..base.suggest import closest

            hint = closest(value, choices)
            raise ConfigError(f"{where}: `{key}` = {value!r} is not one of {', '.join(choices)}"
                              + (f"; did you mean {hint!r}?" if hint else ""))
        return value.lower()
    return check


def _world_size(where: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _type_error(where, key, "an integer >= 1", value)
    return value


def _version(where: str, key: str, value: Any) -> str:
    from ..model.versions import Version

    if not isinstance(value, str):
        raise _type_error(where, key, 'a version string such as "0.19.8"', value)
    try:
        Version(value)
    except ValueError as e:
        raise ConfigError(f"{where}: `{key}`: {e}") from None
    return value


def _severity_table(where: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _type_error(where, key, "a table of CODE = LEVEL", value)
    out = {}
    for code, level in value.items():
        out[code] = _choice(LEVELS)(where, f"{key}.{code}", level)
    return out


def _per_file_ignores(where: str, key: str, value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise _type_error(where, key, "a table of GLOB = [CODES]", value)
    return {glob_: _str_list(where, f'{key}."{glob_}"', codes) for glob_, codes in value.items()}


def _suppress(where: str, key: str, value: Any) -> dict[str, list[dict[str, str]]]:
    if not isinstance(value, dict):
        raise _type_error(where, key, 'a table of "FILE" = [{code, pointer, reason}]', value)
    out: dict[str, list[dict[str, str]]] = {}
    for path, entries in value.items():
        here = f'{key}."{path}"'
        if isinstance(entries, dict):
            entries = [entries]
        if not isinstance(entries, list):
            raise _type_error(where, here, "a list of {code, pointer, reason} tables", entries)
        checked = []
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                raise _type_error(where, f"{here}[{i}]", "a table {code, pointer, reason}", e)
            unknown = set(e) - {"code", "pointer", "reason"}
            if unknown:
                from ..base.suggest import closest

                bad = sorted(unknown)[0]
                hint = closest(bad, ["code", "pointer", "reason"])
                raise ConfigError(f"{where}: unknown key `{bad}` in {here}[{i}]"
                                  + (f"; did you mean `{hint}`?" if hint else "") + " (keys: code, pointer, reason)")
            for k in ("code", "pointer"):
                if not isinstance(e.get(k), str):
                    raise ConfigError(f"{where}: {here}[{i}] needs `{k}` (a string)")
            if e["pointer"] and not e["pointer"].startswith("/"):
                raise ConfigError(f"{where}: {here}[{i}].pointer {e['pointer']!r} must be a JSON pointer: \"\" or "
                                  "starting with /")
            if "reason" in e and not isinstance(e["reason"], str):
                raise _type_error(where, f"{here}[{i}].reason", "a string", e["reason"])
            checked.append({"code": e["code"].strip(), "pointer": e["pointer"], "reason": e.get("reason", "")})
        out[path] = checked
    return out


def _path(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _type_error(where, key, "a path (string)", value)
    return value


VALIDATORS: dict[str, Callable[[str, str, Any], Any]] = {
    "select": _str_list,
    "ignore": _str_list,
    "extend-select": _str_list,
    "extend-ignore": _str_list,
    "severity": _severity_table,
    "per-file-ignores": _per_file_ignores,
    "target": _choice(TARGETS),
    "world-size": _world_size,
    "deepspeed-version": _version,
    "torch-version": _version,
    "fail-on": _choice(LEVELS),
    "exclude": _str_list,
    "include": _str_list,
    "extend-rules": _str_list,
    "suppress": _suppress,
    "baseline": _path,
}


def check_codes(codes: list[str], where: str, extra: tuple[str, ...] = ()) -> None:
    """Each entry must name a rule (code, code prefix, name, ALL); `extra` are more known codes (policies)."""
    from ..rules.ruleset import RuleSet

    rules = RuleSet.builtin().known()
    known = [r.code for r in rules] + [r.name for r in rules] + list(extra)
    for c in codes:
        u = c.upper()
        if u in ("ALL", "ZL") or any(c.lower() == r.name or c in r.aliases or r.code.startswith(u) for r in rules) \
                or any(x.upper().startswith(u) for x in extra):
            continue
        from ..base.suggest import closest

        hint = closest(c, known)
        raise ConfigError(f"{where}: unknown rule {c!r}" + (f"; did you mean {hint!r}?" if hint else ""))


class ConfigFile(Record):
    """One validated configuration file (`path` is absolute)."""

    _fields = ("path", "values", "policies")
    path: str
    values: dict[str, Any]
    policies: list[Any]

    def __init__(self, path: str, values: dict[str, Any], policies: list[Any] | None = None) -> None:
        self.path = path
        self.values = values
        self.policies = [] if policies is None else policies

    @property
    def root(self) -> str:
        return os.path.dirname(self.path)

    def relative(self, path: str) -> str:
        """`path` relative to this file's directory, with forward slashes."""
        return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")

    def matches(self, path: str, pattern: str) -> bool:
        rel = self.relative(path)
        pattern = pattern.replace(os.sep, "/").removeprefix("./")
        return (rel == pattern or fnmatch(rel, pattern)
                or ("/" not in pattern and fnmatch(os.path.basename(path), pattern))
                or (pattern.startswith("**/") and fnmatch(rel, pattern[3:])))


def _table(path: str) -> dict[str, Any] | None:
    """The zerolint table of a config file, or None (a pyproject.toml without [tool.zerolint])."""
    if os.path.basename(path) == "pyproject.toml":
        try:
            with open(path, "rb") as f:
                if b"zerolint" not in f.read():
                    return None  # no [tool.zerolint]: skip the TOML parser (and its import) on every run
        except OSError as e:
            raise ConfigError(f"{path}: cannot be read ({e.strerror or e})") from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror or e})") from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool")
        table = tool.get("zerolint") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.zerolint] must be a table")
        return table
    return data


def load_config(path: str) -> ConfigFile | None:
    path = os.path.abspath(path)
    table = _table(path)
    if table is None:
        return None
    where = path if os.path.basename(path) != "pyproject.toml" else f"{path} [tool.zerolint]"
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in VALIDATORS:
            from ..base.suggest import closest

            hint = closest(key, list(VALIDATORS))
            if hint is None and key.replace("_", "-") in VALIDATORS:
                hint = key.replace("_", "-")
            raise ConfigError(f"{where}: unknown key `{key}`" + (f"; did you mean `{hint}`?" if hint else "")
                              + f" (known keys: {', '.join(VALIDATORS)})")
        values[key] = VALIDATORS[key](where, key, value)
    cfg = ConfigFile(path, values)
    if values.get("extend-rules"):
        import glob  # only for policy files (it brings contextlib)

        from .policy import PolicyError, load_policies

        files: list[str] = []
        for pattern in values["extend-rules"]:
            found = sorted(glob.glob(os.path.join(cfg.root, pattern), recursive=True))
            if not found:
                raise ConfigError(f"{where}: extend-rules pattern {pattern!r} matches no file")
            files += found
        try:
            from ..base.fsio import settings_tree

            cfg.policies = load_policies(files, (settings_tree(cfg.root),))
        except PolicyError as e:
            raise ConfigError(str(e)) from None
    policy_codes = tuple(p.code for p in cfg.policies)
    for key in ("select", "ignore", "extend-select", "extend-ignore"):
        check_codes(values.get(key, []), f"{where}: `{key}`", policy_codes)
    check_codes(list(values.get("severity", {})), f"{where}: `severity`", policy_codes)
    for pattern, codes in values.get("per-file-ignores", {}).items():
        check_codes(codes, f'{where}: `per-file-ignores."{pattern}"`', policy_codes)
    for file_key, entries in values.get("suppress", {}).items():
        check_codes([e["code"] for e in entries], f'{where}: `suppress."{file_key}"`', policy_codes)
    return cfg


# Keys an inline `--config KEY = VALUE` cannot set: they name files relative to a config file's directory.
NOT_INLINE = ("extend-rules", "baseline")


def inline_settings(texts: list[str]) -> dict[str, Any]:
    """`--config 'world-size = 8'` (ruff's inline form): each text is TOML holding settings of [tool.zerolint],
    validated as a config file's are; later texts win. Raises ConfigError."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    values: dict[str, Any] = {}
    for text in texts:
        where = f"--config {text!r}"
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{where}: not a TOML `key = value` ({e}); a file path that does not exist also "
                              "lands here") from None
        for key, value in table.items():
            if key not in VALIDATORS or key in NOT_INLINE:
                from ..base.suggest import closest

                known = [k for k in VALIDATORS if k not in NOT_INLINE]
                hint = closest(key, known)
                if key in NOT_INLINE:
                    raise ConfigError(f"{where}: `{key}` names files relative to a config file: set it in one")
                raise ConfigError(f"{where}: unknown key `{key}`" + (f"; did you mean `{hint}`?" if hint else "")
                                  + f" (known keys: {', '.join(known)})")
            values[key] = VALIDATORS[key](where, key, value)
            if key in ("select", "ignore", "extend-select", "extend-ignore"):
                check_codes(values[key], f"{where}: `{key}`")
            elif key == "severity":
                check_codes(list(values[key]), f"{where}: `severity`")
    return values


class Finder:
    """Finds (and caches) the configuration that applies to a directory."""

    def __init__(self) -> None:
        self._by_dir: dict[str, ConfigFile | None] = {}
        self._by_path: dict[str, ConfigFile | None] = {}

    def load(self, path: str) -> ConfigFile | None:
        path = os.path.abspath(path)
        if path not in self._by_path:
            self._by_path[path] = load_config(path)
        return self._by_path[path]

    def for_dir(self, directory: str) -> ConfigFile | None:
        directory = os.path.abspath(directory)
        if directory in self._by_dir:
            return self._by_dir[directory]
        found = None
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                found = self.load(candidate)
                if found is not None:
                    break
        if found is None:
            parent = os.path.dirname(directory)
            found = self.for_dir(parent) if parent != directory else None
        self._by_dir[directory] = found
        return found

    def for_file(self, path: str) -> ConfigFile | None:
        if path == "-" or path.startswith("<"):
            return self.for_dir(os.getcwd())
        return self.for_dir(os.path.dirname(os.path.abspath(path)))


class Resolved(Record):
    """The settings for one checked file, with where each came from: 'default', a config path, or 'CLI'."""

    _fields = ("config", "values", "sources", "path", "isolated")
    config: ConfigFile | None
    values: dict[str, Any]
    sources: dict[str, str]
    path: str
    isolated: bool

    def __init__(self, config: ConfigFile | None, values: dict[str, Any], sources: dict[str, str], path: str = "",
                 isolated: bool = False) -> None:
        self.config = config
        self.values = values
        self.sources = sources
        self.path = path
        self.isolated = isolated

    def get(self, key: str) -> Any:
        return self.values[key]

    def settings(self, **extra: Any):
        from ..model.view import Settings

        return Settings(target=self.values["target"], deepspeed_version=self.values["deepspeed-version"],
                        world_size=self.values["world-size"], torch_version=self.values["torch-version"], **extra)

    def ignored_here(self) -> list[str]:
        """Codes ignored for this file by per-file-ignores."""
        if self.config is None or not self.path:
            return []
        return [c for pattern, codes in self.values["per-file-ignores"].items()
                if self.config.matches(self.path, pattern) for c in codes]

    def selection(self):
        from ..rules.engine import Selection

        return Selection(select=[*self.values["select"], *self.values["extend-select"]],
                         ignore=[*self.values["ignore"], *self.values["extend-ignore"], *self.ignored_here()],
                         severity=dict(self.values["severity"]))

    def excluded(self, path: str) -> bool:
        if self.config is None:
            return False
        return any(self.config.matches(path, pattern) for pattern in self.values["exclude"])

    def included_by(self, path: str) -> str | None:
        """The `include` pattern that makes `path` a DeepSpeed config whatever its content, or None."""
        if self.config is None:
            return None
        return next((p for p in self.values["include"] if self.config.matches(path, p)), None)

    @property
    def policies(self) -> list[Any]:
        return self.config.policies if self.config is not None else []

    def ruleset(self, base: Any = None) -> Any:
        """The rules this file runs: `base` (a RuleSet; default the built-in one) plus its config's policy rules."""
        from ..rules.ruleset import RuleSet

        return (base or RuleSet.builtin()).with_policies(self.policies)

    def baseline_path(self, for_writing: bool = False) -> str | None:
        """The baseline file for this file: --baseline, else the config's `baseline`, else a
        .zerolint-baseline.json beside the config file (or in the working directory) when it exists."""
        b = self.values["baseline"]
        if b is None and self.isolated and self.config is None:
            return os.path.abspath(DEFAULT_BASELINE) if for_writing else None  # a planted baseline hides nothing
        if b is None:
            default = os.path.join(self.config.root if self.config else os.getcwd(), DEFAULT_BASELINE)
            return default if for_writing or os.path.isfile(default) else None
        if self.sources["baseline"] == "CLI" or self.config is None:
            return os.path.abspath(b)
        return os.path.join(self.config.root, b)

    def baseline_roots(self) -> tuple[str, ...] | None:
        """Where the baseline may be read from: anywhere the user named with --baseline (within the checks every
        read has), else inside the tree of the settings file that names it (base/fsio.read_setting_file)."""
        from ..base.fsio import read_roots, settings_tree

        b = self.values["baseline"]
        if b is not None and self.sources["baseline"] == "CLI":
            return read_roots(b)
        if self.config is not None:
            return (settings_tree(self.config.root),)
        return (os.path.realpath(os.getcwd()),)

    def show(self) -> str:
        import json

        head = f"Settings for {self.path or '<stdin>'}"
        lines = [head, f"  config file: {self.config.path if self.config else '(none found)'}", ""]
        width = max(len(k) for k in self.values)
        shown = {k: json.dumps(v, ensure_ascii=False) for k, v in self.values.items()}
        column = min(40, max(len(v) for v in shown.values()))
        for key, text in shown.items():
            if len(text) > 60 and isinstance(self.values[key], (dict, list)):
                indent = "\n" + " " * (width + 5)
                text = json.dumps(self.values[key], ensure_ascii=False, indent=2).replace("\n", indent)
            lines.append(f"  {key:<{width}} = {text:<{column}}  # {self.sources[key]}")
        return "\n".join(lines) + "\n"


class Project:
    """Resolves settings per checked file: defaults < nearest config file < command line."""

    def __init__(self, cli: dict[str, Any] | None = None, config_path: str | None = None,
                 isolated: bool = False, inline: dict[str, Any] | None = None) -> None:
        given = {k: v for k, v in (cli or {}).items()
                 if v is not None and not (isinstance(v, (tuple, list, dict)) and not v)}
        self.cli = {**(inline or {}), **given}  # `--config KEY = VALUE` over the files, the other flags over it
        unknown = set(self.cli) - set(DEFAULTS)
        if unknown:  # pragma: no cover - a programming error
            raise ValueError(f"unknown settings {sorted(unknown)}")
        # --isolated (like ruff's): no .zerolint.toml, pyproject.toml or baseline found in the tree is used; a pull
        # request cannot switch its own checks off. Only what the command line names (--config, --baseline) applies.
        self.isolated = isolated
        self.finder = Finder()
        self.forced = self.finder.load(config_path) if config_path else None
        if config_path and self.forced is None:
            raise ConfigError(f"{config_path}: has no [tool.zerolint] table")
        self._cache: dict[str, Resolved] = {}

    def resolve(self, path: str) -> Resolved:
        if path in self._cache:
            return self._cache[path]
        cfg = self.forced or (None if self.isolated else self.finder.for_file(path))
        values, sources = dict(DEFAULTS), {k: "default" for k in DEFAULTS}
        if cfg is not None:
            for k, v in cfg.values.items():
                values[k], sources[k] = v, cfg.path
        for k, v in self.cli.items():
            if k == "severity" and values["severity"]:
                values[k], sources[k] = {**values["severity"], **v}, f"{sources[k]} + CLI"
            else:
                values[k], sources[k] = v, "CLI"
        shown = path if path != "-" else ""
        resolved = Resolved(cfg, values, sources, shown, isolated=self.isolated)
        self._cache[path] = resolved
        return resolved

    def included(self, paths: list[str]) -> list[str]:
        """Resolve every path (loading configs and their policy rules) and drop the ones a config excludes, and
        baseline files (a directory argument would otherwise lint .zerolint-baseline.json as a DeepSpeed config)."""
        out = []
        for p in paths:
            res = self.resolve(p)
            if res.excluded(p) or (p != "-" and (os.path.basename(p) == DEFAULT_BASELINE
                                                 or os.path.abspath(p) == res.baseline_path())):
                continue
            out.append(p)
        return out

    def excluded_by(self, paths: list[str]) -> dict[str, int]:
        """{config file: how many of `paths` its `exclude` drops}."""
        out: dict[str, int] = {}
        for p in paths:
            res = self.resolve(p)
            if res.config is not None and res.excluded(p):
                out[res.config.path] = out.get(res.config.path, 0) + 1
        return out

    def weakened(self, paths: list[str], excluded: dict[str, int], hidden: dict[str, int]) -> list[str]:
        """What settings files (not the command line) turned off in this run, and which file did it: excluded files,
        ignored or unselected rules, changed severities, suppressed findings. Every summary shows these lines, so a
        repository's config cannot turn broken configs into a silent "All checks passed"."""
        from ..base.paths import display_path

        notes: list[str] = []
        for origin, n in excluded.items():
            notes.append(f"{n} file{'s' if n != 1 else ''} excluded by {display_path(origin)} (exclude)")
        seen: set[str] = set()
        for p in paths:
            res = self.resolve(p)
            cfg = res.config
            if cfg is None or cfg.path in seen:
                continue
            seen.add(cfg.path)
            where, v = display_path(cfg.path), cfg.values

            def from_file(key: str) -> bool:
                return key in v and res.sources.get(key, "").startswith(cfg.path)

            off = [*(v["ignore"] if from_file("ignore") else []), *v.get("extend-ignore", [])]
            if off:
                notes.append(f"rules turned off by {where}: {', '.join(off)}")
            if from_file("select") and [c.upper() for c in v["select"]] != ["ALL"]:
                notes.append(f"only these rules selected by {where}: {', '.join(v['select']) or '(none)'}")
            for pattern, codes in v.get("per-file-ignores", {}).items():
                notes.append(f"rules turned off by {where} for {pattern}: {', '.join(codes)}")
            if from_file("severity") and v["severity"]:
                changed = ", ".join(f"{c}={lvl}" for c, lvl in v["severity"].items())
                notes.append(f"severities changed by {where}: {changed}")
        for origin, n in hidden.items():
            if n:
                notes.append(f"{n} finding{'s' if n != 1 else ''} suppressed by {display_path(origin)}")
        return notes

    def fail_rank(self, path: str) -> int:
        from ..model.diagnostics import Severity

        return Severity.parse(self.resolve(path).get("fail-on")).rank
