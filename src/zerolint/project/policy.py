"""User policy rules without Python: YAML files with a JMESPath condition, loaded with `extend-rules`.

    # policies/cluster.yaml
    rules:
      - id: ORG001                       # letters then digits; not ZL (zerolint's own)
        name: bf16-only                  # optional slug (default: the id in lower case)
        severity: error                  # error | warning | info (default: error)
        condition: "fp16.enabled == `true`"
        pointer: /fp16/enabled           # where to report; a list: the first that exists (default: "")
        message: "our A100 cluster trains in bf16; fp16 is enabled ({value})"
        help: "enable bf16 instead"      # optional
        targets: [deepspeed, hf, accelerate]   # optional: which consumers the rule applies to
        description: "..."               # optional: longer text for `zerolint rule ORG001` and SARIF

The condition is a JMESPath expression (https://jmespath.org, the `jmespath` library) evaluated on the config as
JSON data; a finding is reported when its result is truthy in JMESPath's sense (anything but false, null, an
empty string, list or object, so `0` counts). `{value}` in the message is replaced by the value at the pointer,
as JSON. Policy rules are rules: `--select`, `--ignore`, `severity`, `per-file-ignores` and suppressions take
their ids, and a condition that fails to evaluate is reported as ZL000 for that rule, like a crashing rule.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..model.diagnostics import Finding, Severity
from ..rules.rule import TARGETS

ID = re.compile(r"[A-Z][A-Z0-9]*\d+")
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
KEYS = ("id", "name", "severity", "condition", "pointer", "message", "help", "targets", "description", "at", "url")

_DATA: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _config_data(doc) -> Any:
    """The config as JSON data (what json.load gives), computed once per document."""
    try:
        return _DATA[doc]
    except KeyError:
        data = doc.root.to_python() if doc.root is not None else None
        _DATA[doc] = data
        return data


def truthy(value: Any) -> bool:
    """JMESPath truthiness: false, null, "", [] and {} are false; everything else (0 too) is true."""
    return not (value is None or value is False or value == "" or value == [] or value == {})


@dataclass
class PolicyRule:
    """A user rule; it has the attributes the engine, selection and reporters read from a `Rule`."""

    code: str
    name: str
    severity: str
    summary: str
    condition: str
    pointers: tuple[str, ...]
    help: str | None = None
    rationale: str = ""
    targets: tuple[str, ...] = TARGETS
    at: str = "key"
    url: str | None = None
    source: str = ""
    versions: str = ""
    aliases: tuple[str, ...] = ()
    fixable: str | None = None
    evidence: str = ""
    _compiled: Any = field(default=None, repr=False)
    _interpreter: Any = field(default=None, repr=False)

    @property
    def default_severity(self) -> Severity:
        return Severity.parse(self.severity)

    def run(self, view) -> Iterator[Finding]:
        data = _config_data(view.doc)
        if data is None or not truthy(self._interpreter.visit(self._compiled.parsed, data)):
            return
        pointer = next((p for p in self.pointers if view.doc.node(p) is not None), self.pointers[0])
        node = view.doc.node(pointer)
        value = json.dumps(node.to_python(), ensure_ascii=False) if node is not None else "(absent)"
        yield view.finding(pointer, self.summary.replace("{value}", value), help=self.help, at=self.at)


def _spec_interpreter() -> Any:
    """A JMESPath interpreter that compares the way the spec says: an ordering comparison (<, <=, >, >=) of anything
    but two numbers or two strings is null. The library raises TypeError for a string against a number, and configs
    are full of those ("auto" micro batches): a condition like `micro > `16`` must be false there, not a crash."""
    from jmespath import visitor

    class SpecInterpreter(visitor.TreeInterpreter):
        def visit_comparator(self, node, value):
            if node["value"] in self._EQUALITY_OPS:
                return super().visit_comparator(node, value)
            left = self.visit(node["children"][0], value)
            right = self.visit(node["children"][1], value)
            if not (_number(left) and _number(right)) and not (isinstance(left, str) and isinstance(right, str)):
                return None
            return self.COMPARATOR_FUNC[node["value"]](left, right)

    return SpecInterpreter()


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class PolicyError(ValueError):
    pass


def _rule_from(raw: Any, where: str) -> PolicyRule:
    import jmespath
    from jmespath.exceptions import JMESPathError

    from ..base.suggest import closest

    if not isinstance(raw, dict):
        raise PolicyError(f"{where}: a rule must be a mapping with id, condition, message")
    for key in raw:
        if key not in KEYS:
            hint = closest(str(key), KEYS)
            raise PolicyError(f"{where}: unknown key `{key}`" + (f"; did you mean `{hint}`?" if hint else "")
                              + f" (keys: {', '.join(KEYS)})")
    for key in ("id", "condition", "message"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise PolicyError(f"{where}: `{key}` is required (a string)")
    code = raw["id"].strip()
    if not ID.fullmatch(code) or code.startswith("ZL"):
        raise PolicyError(f"{where}: id {code!r} must be upper-case letters then digits (e.g. ORG001), not ZL...")
    name = raw.get("name", code.lower())
    if not isinstance(name, str) or not SLUG.fullmatch(name):
        raise PolicyError(f"{where}: name {name!r} must be a lower-case slug such as bf16-only")
    severity = raw.get("severity", "error")
    if severity not in ("error", "warning", "info"):
        raise PolicyError(f"{where}: severity {severity!r} must be error, warning or info")
    pointers = raw.get("pointer", "")
    pointers = [pointers] if isinstance(pointers, str) else pointers
    if not isinstance(pointers, list) or not pointers or not all(
            isinstance(p, str) and (p == "" or p.startswith("/")) for p in pointers):
        raise PolicyError(f"{where}: pointer must be a JSON pointer (\"\" or /a/b) or a list of them")
    targets = raw.get("targets", list(TARGETS))
    if isinstance(targets, str):
        targets = [targets]
    if not isinstance(targets, list) or not targets or any(t not in TARGETS for t in targets):
        raise PolicyError(f"{where}: targets must be a list of {', '.join(TARGETS)}")
    at = raw.get("at", "key")
    if at not in ("key", "value", "member"):
        raise PolicyError(f"{where}: at must be key, value or member")
    for key in ("help", "description", "url"):
        if key in raw and not isinstance(raw[key], str):
            raise PolicyError(f"{where}: `{key}` must be a string")
    try:
        compiled = jmespath.compile(raw["condition"])
    except JMESPathError as e:
        raise PolicyError(f"{where}: condition {raw['condition']!r} is not valid JMESPath: {e}") from None
    return PolicyRule(code=code, name=name, severity=severity, summary=raw["message"].strip(),
                      condition=raw["condition"], pointers=tuple(pointers), help=raw.get("help"),
                      rationale=(raw.get("description") or raw["message"]).strip(), targets=tuple(targets), at=at,
                      url=raw.get("url"), source=where, evidence=where, _compiled=compiled,
                      _interpreter=_spec_interpreter())


def load_policy_file(path: str, roots: tuple[str, ...] | None = None) -> list[PolicyRule]:
    """The rules of one policy file, read only as base/fsio.read_setting_file allows: a regular file inside
    `roots` (the tree of the settings file that names it), under a size limit."""
    import yaml

    from ..base.fsio import SettingFileRefused, read_setting_file

    try:
        data = yaml.safe_load(read_setting_file(path, "extend-rules", roots))
    except SettingFileRefused as e:
        raise PolicyError(str(e)) from None
    except yaml.YAMLError as e:
        raise PolicyError(f"{path}: not valid YAML: {e}") from None
    if isinstance(data, dict) and set(data) == {"rules"}:
        data = data["rules"]
    elif isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise PolicyError(f"{path}: expected `rules:` with a list of rules, or one rule mapping")
    return [_rule_from(raw, f"{path}: rule {i + 1}") for i, raw in enumerate(data)]


def load_policies(paths: list[str], roots: tuple[str, ...] | None = None) -> list[PolicyRule]:
    """Load the policy rules of `paths`; any problem is a PolicyError (settings.py makes it a ConfigError: exit 2).
    Nothing is registered: the caller adds them to its run's RuleSet (`RuleSet.with_policies`)."""
    from ..rules.ruleset import RuleSet

    builtin = {r.code for r in RuleSet.builtin().known()}
    out: list[PolicyRule] = []
    seen: dict[str, str] = {}
    for path in paths:
        rules = load_policy_file(path, roots)
        for r in rules:
            if r.code in seen or r.code in builtin:
                raise PolicyError(f"{r.source}: id {r.code} is already defined ({seen.get(r.code, 'built-in')})")
            seen[r.code] = r.source
            out.append(r)
    return out
