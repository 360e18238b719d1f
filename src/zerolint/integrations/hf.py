"""Reading an Accelerate config YAML (`accelerate launch --config_file`) safely, and finding the DeepSpeed config
it names: `deepspeed_config.deepspeed_config_file`, resolved relative to the YAML (then the working directory). The
pipeline (zerolint/pipeline.py) lints that file with target `accelerate` and reports the YAML's own conflicts in the
YAML (ZL520, ZL524, ZL525); what the HF Trainer and Accelerate do with the settings is model/trainer.py.

PyYAML is imported only when a YAML file is read, and only `yaml.safe_load` / `yaml.compose` with the safe loader
are used: a config can never construct Python objects.
"""

from __future__ import annotations

import os

from ..model.trainer import AccelerateConfig


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


MAX_YAML_EVENTS = 5_000  # YAML scalars (keys and values) read at most; nesting has its own limit (--max-depth)


def _hostile_yaml(text: str, max_depth: int) -> tuple[str, tuple[int, int]] | None:
    """(problem, span) for YAML that would cost far more than its size, from PyYAML's event stream (an iterative
    parser: no recursion, no values built): an anchor or alias (a "billion laughs" of nested aliases expands to
    gigabytes when a value is printed or compared), or nesting deeper than `max_depth` (the composer recurses once per
    level). Accelerate writes neither; `accelerate config` never emits anchors. And more than MAX_YAML_EVENTS
    scalars: an Accelerate config is a few dozen settings, and PyYAML builds each value in Python (a flat 10 MB YAML
    took minutes); the parse stops there (issue 22, item 3)."""
    import yaml

    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            at = event.start_mark.index
            values += isinstance(event, yaml.ScalarEvent)
            if values > MAX_YAML_EVENTS:
                return (f"the YAML holds more than {MAX_YAML_EVENTS:,} values: an Accelerate config is a few dozen "
                        "settings" + NOT_CHECKED, (at, at + 1))
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
    """The DeepSpeed config a YAML names, where `accelerate launch` would find it (it opens the path as written,
    from the directory the launch starts in): see launch_dirs."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    for _, base in launch_dirs(yaml_path):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def launch_dirs(yaml_path: str) -> list[tuple[str, str]]:
    """(what, directory) for the directories a launch that uses `yaml_path` can start in, most likely first: the
    repository's root (the nearest directory above the YAML holding .git, where `accelerate launch --config_file
    configs/a.yaml` is usually typed), the YAML's own directory, and the working directory."""
    here = os.path.dirname(os.path.abspath(yaml_path))
    out, d = [], here
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            out.append(("the repository root", d))
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for what, extra in (("the YAML's directory", here), ("the working directory", os.getcwd())):
        if all(extra != seen for _, seen in out):
            out.append((what, extra))
    return out
