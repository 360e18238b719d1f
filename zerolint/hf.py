"""The HF Trainer and Accelerate as consumers of a DeepSpeed config: what they compare, what they reject.

- `TrainingArguments` (a dump from `args.to_json_string()`, a dict, or the object itself): the Trainer fills
  "auto" values from it and compares every other value at the same keys, raising at `trainer.train()`
  "Please correct the following DeepSpeed config values that mismatch TrainingArguments values" with one
  `- ds KEY=VALUE vs hf ARG=VALUE` line per mismatch (transformers/integrations/deepspeed.py,
  `HfTrainerDeepSpeedConfig.fill_match`, `trainer_config_process`, `trainer_config_finalize`). `COMPARED` below
  is that list; ZL523 reports each mismatch at its key.
- An Accelerate config YAML (`accelerate launch --config_file`): `deepspeed_config.deepspeed_config_file` names
  the DeepSpeed config, resolved relative to the YAML (then the working directory). zerolint lints that file with
  target `accelerate`, reports the YAML's own conflicts in the YAML (ZL520, ZL524, ZL525) and hands the YAML's
  settings to the rules (ZL521 mixed precision, world size from `num_processes`).

PyYAML is imported only when a YAML file is read, and only `yaml.safe_load` / `yaml.compose` with the safe loader
are used: a config can never construct Python objects.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

# TrainingArguments defaults (transformers/training_args.py) for the fields the Trainer compares; a partial dict
# means "these arguments, the rest default", as TrainingArguments(...) would.
TRAINING_ARGS_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "learning_rate": 5e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
    "fp16": False,
    "bf16": False,
    "fp16_full_eval": False,
    "bf16_full_eval": False,
    "fp16_backend": "auto",
    "auto_find_batch_size": False,
    "max_steps": -1,
    "warmup_steps": 0,
    "warmup_ratio": 0.0,
}

MISSING: Any = object()


@dataclass(frozen=True)
class Compared:
    pointer: str  # the DeepSpeed key, as a JSON pointer
    hf_key: str  # how HF names the TrainingArguments side in its message
    value: Callable[[dict, int | None], Any]  # the TrainingArguments value, or MISSING when not knowable here
    must_match: Callable[[dict], bool] = lambda a: True


def _warmup(a: dict, world: int | None) -> Any:
    steps, ratio = a["warmup_steps"], a["warmup_ratio"]
    if isinstance(steps, int) and steps > 0:
        return steps
    if isinstance(steps, float) and steps >= 1:
        return int(steps)
    if steps and steps < 1:  # newer transformers: a fractional warmup_steps is a ratio
        ratio = steps
    if not ratio:
        return 0
    return math.ceil(a["max_steps"] * ratio) if a["max_steps"] > 0 else MISSING


COMPARED: tuple[Compared, ...] = (
    Compared("/train_micro_batch_size_per_gpu", "per_device_train_batch_size",
             lambda a, w: a["per_device_train_batch_size"], lambda a: not a["auto_find_batch_size"]),
    Compared("/gradient_accumulation_steps", "gradient_accumulation_steps",
             lambda a, w: a["gradient_accumulation_steps"]),
    Compared("/train_batch_size", "train_batch_size (calculated)",  # DeepSpeed: world x micro batch x accumulation
             lambda a, w: MISSING if w is None
             else w * a["per_device_train_batch_size"] * a["gradient_accumulation_steps"],
             lambda a: not a["auto_find_batch_size"]),
    Compared("/gradient_clipping", "max_grad_norm", lambda a, w: a["max_grad_norm"]),
    Compared("/optimizer/params/lr", "learning_rate", lambda a, w: a["learning_rate"]),
    Compared("/optimizer/params/betas", "adam_beta1+adam_beta2", lambda a, w: [a["adam_beta1"], a["adam_beta2"]]),
    Compared("/optimizer/params/eps", "adam_epsilon", lambda a, w: a["adam_epsilon"]),
    Compared("/optimizer/params/weight_decay", "weight_decay", lambda a, w: a["weight_decay"]),
    Compared("/scheduler/params/warmup_max_lr", "learning_rate", lambda a, w: a["learning_rate"]),
    # trainer_config_finalize: known before training only when max_steps fixes the step count
    Compared("/scheduler/params/total_num_steps", "num_training_steps (calculated)",
             lambda a, w: a["max_steps"] if a["max_steps"] > 0 else MISSING),
    Compared("/scheduler/params/warmup_num_steps", "warmup_steps", _warmup),
    # Older transformers compared fp16.enabled only for the amp backend; with apex the versions disagree.
    Compared("/fp16/enabled", "fp16|fp16_full_eval",
             lambda a, w: MISSING if "apex" in (a.get("fp16_backend"), a.get("half_precision_backend"))
             else bool(a["fp16"] or a["fp16_full_eval"])),
    Compared("/bf16/enabled", "bf16|bf16_full_eval", lambda a, w: bool(a["bf16"] or a["bf16_full_eval"])),
)


class TrainingArgsError(ValueError):
    """A --training-args file or object that cannot be used."""


def training_args_dict(args: Any) -> dict[str, Any]:
    """A TrainingArguments dump as a dict with defaults filled in: from a path to a JSON file (the output of
    `args.to_json_string()`), a JSON string, a dict, or a TrainingArguments-like object (`to_dict()`; its
    `world_size` property is kept as `world_size`)."""
    world = None
    if isinstance(args, (str, os.PathLike)) and not str(args).lstrip().startswith("{"):
        try:
            with open(args, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise TrainingArgsError(f"{os.fspath(args)}: cannot be read ({e.strerror or e})") from None
        except ValueError as e:
            raise TrainingArgsError(f"{os.fspath(args)}: not a JSON TrainingArguments dump ({e})") from None
    elif isinstance(args, str):
        try:
            data = json.loads(args)
        except ValueError as e:
            raise TrainingArgsError(f"not a JSON TrainingArguments dump ({e})") from None
    elif isinstance(args, dict):
        data = dict(args)
    elif hasattr(args, "to_dict"):
        data = args.to_dict()
        world = getattr(args, "world_size", None)
    else:
        raise TrainingArgsError(
            f"training_args must be a path, a dict or a TrainingArguments, not {type(args).__name__}")
    if not isinstance(data, dict):
        raise TrainingArgsError("a TrainingArguments dump must be a JSON object")
    out = {**TRAINING_ARGS_DEFAULTS, **{k: v for k, v in data.items() if v is not None or k not in
                                        TRAINING_ARGS_DEFAULTS}}
    if world is not None and "world_size" not in out:
        out["world_size"] = world
    for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "max_steps"):
        if isinstance(out[key], bool) or not isinstance(out[key], int):
            raise TrainingArgsError(f"training args: {key} must be an integer, not {out[key]!r}")
    for key in ("learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon", "weight_decay", "max_grad_norm",
                "warmup_ratio"):
        if isinstance(out[key], bool) or not isinstance(out[key], (int, float)):
            raise TrainingArgsError(f"training args: {key} must be a number, not {out[key]!r}")
    return out


def mismatches(view) -> list[tuple[Compared, Any, Any]]:
    """(what, ds value, hf value) for each key where the Trainer would report a mismatch."""
    args = getattr(view.settings, "training_args", None)
    if not args or view.root is None:
        return []
    world = view.world_size or args.get("world_size")
    out = []
    for c in COMPARED:
        parts = c.pointer.strip("/").split("/")
        parent = view.node("/" + "/".join(parts[:-1])) if len(parts) > 1 else view.root
        if parent is None or parent.kind != "object":  # find_config_node: a missing section is skipped
            continue
        node = parent.get(parts[-1])
        if node is None or (node.kind == "string" and node.value == "auto") or not c.must_match(args):
            continue
        ds_val = node.to_python()
        hf_val = c.value(args, world)
        if hf_val is MISSING or ds_val is None or ds_val == hf_val:
            continue
        out.append((c, ds_val, hf_val))
    return out


def ds_key(pointer: str) -> str:
    return ".".join(pointer.strip("/").split("/"))


# -- Accelerate config YAML -------------------------------------------------------------------------------------------

# deepspeed_config fields that `accelerate launch` reports to the process and DeepSpeedPlugin rejects when a config
# file is given (accelerate/utils/dataclasses.py, _deepspeed_config_checks).
REJECTED_WITH_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                      "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                      "zero3_save_16bit_model")
PLUGIN_TO_POINTER = {
    "gradient_accumulation_steps": "/gradient_accumulation_steps",
    "gradient_clipping": "/gradient_clipping",
    "zero_stage": "/zero_optimization/stage",
    "offload_optimizer_device": "/zero_optimization/offload_optimizer/device",
    "offload_param_device": "/zero_optimization/offload_param/device",
    "offload_param_nvme_path": "/zero_optimization/offload_param/nvme_path",
    "offload_optimizer_nvme_path": "/zero_optimization/offload_optimizer/nvme_path",
    "zero3_save_16bit_model": "/zero_optimization/stage3_gather_16bit_weights_on_model_save",
}
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class AccelerateConfig:
    """An Accelerate config YAML as the rules see it (Settings.accelerate)."""

    path: str
    data: dict[str, Any]
    text: str = ""
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # "key" / "deepspeed_config.key" -> value span

    @property
    def deepspeed(self) -> dict[str, Any]:
        ds = self.data.get("deepspeed_config")
        return ds if isinstance(ds, dict) else {}

    @property
    def mixed_precision(self) -> str | None:
        mp = self.data.get("mixed_precision")
        return str(mp).lower() if mp is not None else None

    def where(self, key: str) -> str:
        """'path:line:col' of a key's value, for messages."""
        span = self.spans.get(key)
        if span is None:
            return self.path
        from .document import Document

        line, col = Document(path=self.path, text=self.text).position(span[0])
        return f"{self.path}:{line}:{col}"

    @property
    def world_size(self) -> int | None:
        n = self.data.get("num_processes")
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def is_yaml(path: str) -> bool:
    return path.lower().endswith(YAML_SUFFIXES)


def _spans(text: str) -> dict[str, tuple[int, int]]:
    """Value spans of the top-level keys and of deepspeed_config's keys (character offsets)."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    out: dict[str, tuple[int, int]] = {}
    if not isinstance(root, yaml.MappingNode):
        return out
    for k, v in root.value:
        key = str(k.value)
        out[key] = (v.start_mark.index, v.end_mark.index)
        out[f"key:{key}"] = (k.start_mark.index, k.end_mark.index)
        if key == "deepspeed_config" and isinstance(v, yaml.MappingNode):
            for k2, v2 in v.value:
                out[f"deepspeed_config.{k2.value}"] = (v2.start_mark.index, v2.end_mark.index)
                out[f"key:deepspeed_config.{k2.value}"] = (k2.start_mark.index, k2.end_mark.index)
    return out


NOT_CHECKED = "; the file is not checked"  # a refusal of zerolint's own, not a claim about Accelerate


def _hostile_yaml(text: str, max_depth: int) -> tuple[str, tuple[int, int]] | None:
    """(problem, span) for YAML that would cost far more than its size, from PyYAML's event stream (an iterative
    parser: no recursion, no values built): an anchor or alias (a "billion laughs" of nested aliases expands to
    gigabytes when a value is printed or compared), or nesting deeper than `max_depth` (the composer recurses once per
    level). Accelerate writes neither; `accelerate config` never emits anchors."""
    import yaml

    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            at = event.start_mark.index
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                what = "alias" if isinstance(event, yaml.AliasEvent) else "anchor"
                problem = (f"YAML {what} {getattr(event, 'anchor', '')!r}: zerolint does not expand YAML anchors and "
                           "aliases (nested aliases can expand to gigabytes); write the values out")
                return problem + NOT_CHECKED, (at, at + 1)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > max_depth:
                    return (f"YAML nested deeper than {max_depth} levels (raise the limit with --max-depth)"
                            + NOT_CHECKED, (at, at + 1))
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None  # safe_load reports it, located
    return None


def read_accelerate_yaml(path: str, data_bytes: bytes, max_depth: int = 256
                         ) -> tuple[AccelerateConfig | None, str | None, tuple[int, int]]:
    """(config, problem, span of the problem) for an Accelerate YAML's bytes."""
    import yaml

    text = data_bytes.decode("utf-8", errors="replace")
    hostile = _hostile_yaml(text, max_depth)
    if hostile is not None:
        return None, hostile[0], hostile[1]
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = mark.index if mark is not None else 0
        return None, f"not valid YAML: {getattr(e, 'problem', None) or e}", (at, at + 1)
    except RecursionError:  # a --max-depth beyond what the composer's recursion can take
        return None, "YAML nested too deep for this Python's recursion limit" + NOT_CHECKED, (0, 1)
    if not isinstance(data, dict):
        return None, f"an Accelerate config must be a mapping of settings, not {type(data).__name__}", (0, 1)
    cfg = AccelerateConfig(path, data, text, _spans(text))
    if "deepspeed_config" in data and data["deepspeed_config"] is not None and not isinstance(
            data["deepspeed_config"], dict):
        return cfg, "deepspeed_config must be a mapping", cfg.spans.get("deepspeed_config", (0, 1))
    return cfg, None, (0, 0)


def resolve_ds_file(yaml_path: str, name: str) -> str | None:
    """The DeepSpeed config a YAML names: relative to the YAML's directory, then to the working directory."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    for base in (os.path.dirname(yaml_path), os.getcwd()):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def lint_accelerate(path: str, settings, selection, limits, rules=None) -> list:
    """Results for an Accelerate config YAML: its own findings (located in the YAML) and, when it names a
    DeepSpeed config file, that file linted with target `accelerate`."""
    from dataclasses import replace

    from .api import Result, lint_path, read_bytes
    from .diagnostics import Diagnostic
    from .document import Document
    from .extra_rules import ACCELERATE_FIELDS, ACCELERATE_FILE_MISSING, ACCELERATE_YAML_INVALID

    raw = read_bytes(path, limits)
    cfg, problem, problem_span = read_accelerate_yaml(path, raw, limits.max_depth)
    doc = Document(path=path, text=cfg.text if cfg else raw.decode("utf-8", errors="replace"))
    found: list[Diagnostic] = []

    def report(rule, span, message, help_, pointer=""):
        if not selection.enabled(rule):
            return
        (line, col), (end_line, end_col) = doc.position(span[0]), doc.position(max(span[1], span[0]))
        found.append(Diagnostic(file=path, code=rule.code, name=rule.name, severity=selection.severity_for(rule, None),
                                message=message, pointer=pointer, line=line, column=col, end_line=end_line,
                                end_column=end_col, help=help_, url=rule.url, start=span[0], end=span[1]))

    def result() -> Any:
        return Result(path, doc, sorted(found, key=Diagnostic.sort_key))

    if problem is not None:
        claim = "" if problem.endswith(NOT_CHECKED) else "; accelerate launch fails before any process starts"
        report(ACCELERATE_YAML_INVALID, problem_span, problem + claim,
               "fix the YAML, or regenerate it with `accelerate config`")
        return [result()]
    ds = cfg.deepspeed
    name = ds.get("deepspeed_config_file")
    if not isinstance(name, str) or not name or name == "none":
        return [result()]  # DeepSpeed settings live in the YAML itself: nothing else to lint

    fields = [k for k in REJECTED_WITH_FILE if k in ds]
    if cfg.data.get("mixed_precision") is not None:
        fields.append("mixed_precision")
    for key in fields:
        span_key = key if key == "mixed_precision" else f"deepspeed_config.{key}"
        span = cfg.spans.get(f"key:{span_key}", (0, 1))
        where = ("in the DeepSpeed config file" if key == "mixed_precision"
                 else f"in the DeepSpeed config file as {ds_key(PLUGIN_TO_POINTER[key])}")
        report(ACCELERATE_FIELDS, span,
               f"{key} is set here and deepspeed_config_file is given: Accelerate raises \"ValueError: When using "
               f"`deepspeed_config_file`, the following accelerate config variables will be ignored\" at start-up",
               f"delete {key} from this YAML and set it {where}", pointer=f"/{span_key.replace('.', '/')}")

    ds_path = resolve_ds_file(path, name)
    if ds_path is None:
        report(ACCELERATE_FILE_MISSING, cfg.spans.get("deepspeed_config.deepspeed_config_file", (0, 1)),
               f"deepspeed_config_file {name!r} does not exist (looked in {os.path.dirname(path) or '.'} and the "
               "working directory); Accelerate fails with FileNotFoundError", "fix the path",
               pointer="/deepspeed_config/deepspeed_config_file")
        return [result()]
    shown = os.path.relpath(ds_path) if not os.path.isabs(name) else ds_path
    ds_settings = replace(settings, target="accelerate", accelerate=cfg,
                          world_size=settings.world_size or cfg.world_size)
    return [result(), lint_path(shown, ds_settings, selection, limits, rules=rules)]


# -- the Python helper for training scripts ---------------------------------------------------------------------------

class DeepSpeedConfigError(ValueError):
    """Raised by `check_or_raise` when the DeepSpeed config has errors; `.diagnostics` holds all findings."""

    def __init__(self, message: str, diagnostics: list) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


def format_diagnostics(diagnostics: list) -> str:
    from .reporters import safe

    lines = []
    for d in diagnostics:
        lines.append(f"  {d.file}:{d.line}:{d.column}: {d.severity.value} {d.code} [{d.name}] {safe(d.message)}")
        if d.help:
            lines.append(f"      help: {safe(d.help)}")
    return "\n".join(lines)


def check_or_raise(training_args: Any = None, config: Any = None, *, target: str = "hf", fail_on: str = "error",
                   **kwargs: Any) -> list:
    """Lint the DeepSpeed config a training script is about to use, before `Trainer(...)` allocates anything.

        args = TrainingArguments(..., deepspeed="ds_config.json")
        zerolint.check_or_raise(args)          # raises DeepSpeedConfigError listing the errors
        trainer = Trainer(model=model, args=args, ...)

    `config` defaults to `training_args.deepspeed` (a path or a dict). Returns the findings below `fail_on` (for
    logging); raises `DeepSpeedConfigError` when any finding is at or above it."""
    from .api import lint
    from .diagnostics import Severity

    if config is None:
        config = getattr(training_args, "deepspeed", None) if not isinstance(training_args, dict) else \
            training_args.get("deepspeed")
        if config is None:
            raise ValueError("no DeepSpeed config: pass config=..., or training_args with deepspeed set")
    diagnostics = lint(config, target=target, training_args=training_args, **kwargs)
    threshold = Severity.parse(fail_on).rank
    failing = [d for d in diagnostics if d.severity.rank >= threshold]
    if failing:
        raise DeepSpeedConfigError(
            f"zerolint found {len(failing)} problem(s) in the DeepSpeed config that would stop or silently change "
            f"training:\n{format_diagnostics(failing)}", diagnostics)
    return diagnostics
