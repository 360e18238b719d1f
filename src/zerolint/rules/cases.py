"""A rule's examples: `src/zerolint/data/rule_cases/<CODE>.toml` (package data).

Each file holds `[[case]]` tables:

    [[case]]
    name = "offload_optimizer at the top level"
    kind = "bad"                       # bad | good
    target = "deepspeed"               # optional: deepspeed | hf | accelerate | auto (default: auto)
    deepspeed_version = "0.19.8"       # optional
    transformers_version = "5.17.0"    # optional, HF rules (default: the installed one, else the newest known)
    torch_version = "2.11.0"           # optional, rules that depend on torch (default: the installed one)
    packages = { wandb = "" }          # optional: the training machine's packages ("" = not installed)
    world_size = 8                     # optional
    params = "1.1B"                    # optional, memory rules: model size, GPU and host memory, GPUs per node
    gpu_memory = "24GB"                #   (gpus_per_node defaults to world_size: one node)
    config = '''{ ... }'''             # the config text, exactly as a user would write it
    expect = [{ code = "ZL101", severity = "error", pointer = "/offload_optimizer", line = 3, column = 3,
                message = "offload_optimizer belongs inside zero_optimization; DeepSpeed ignores it ..." }]
    fixed = '''{ ... }'''              # optional: the text after `zerolint check --fix`

Every expectation of a bad case names the message: `message` (the exact text) or `message_re` (a regular
expression the whole message must match, for messages with computed figures), and `fails_at` exactly when the
finding claims a failure (absent: it claims none).

The tests run every case (the rule must report exactly `expect` for a bad case, nothing for a good one) and
the rule's docs page is rendered from them, so examples cannot drift from behaviour.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class Case:
    code: str
    name: str
    kind: str
    config: str
    expect: list[dict[str, Any]] = field(default_factory=list)
    target: str = "auto"
    deepspeed_version: str | None = None
    transformers_version: str | None = None  # the HF rules (ZL5xx)
    torch_version: str | None = None  # rules whose verdict depends on torch (ZL612)
    packages: dict | None = None  # rules that depend on an installed package (ZL913); "" = not installed
    world_size: int | None = None
    training_args: dict | None = None  # a TrainingArguments dump (ZL523)
    accelerate: dict | None = None  # an Accelerate config YAML's content (ZL521)
    params: str | int | None = None  # model size for the memory rules (ZL801)
    gpu_memory: str | int | None = None
    host_memory: str | int | None = None
    gpus_per_node: int | None = None
    client_optimizer: str | None = None  # the class the code passes deepspeed.initialize (ZL219, ZL602)
    prepared: dict | None = None  # what a loop hands accelerator.prepare: {"optimizer": class, ...} (ZL536)
    engine_calls: dict | None = None  # engine calls the code makes: {"no_sync": "engine.no_sync()"} (ZL223)
    fixed: str | None = None
    unsafe_fixed: str | None = None
    prefer: str | None = None
    note: str = ""

    @property
    def settings(self):
        from ..model.view import Settings

        training_args = accelerate = None
        if self.training_args is not None:
            from ..model.trainer import training_args_dict

            training_args = training_args_dict(self.training_args)
        if self.accelerate is not None:
            from ..model.trainer import AccelerateConfig

            accelerate = AccelerateConfig("accelerate_config.yaml", self.accelerate)
        return Settings(target=self.target, deepspeed_version=self.deepspeed_version, world_size=self.world_size,
                        transformers_version=self.transformers_version, torch_version=self.torch_version,
                        training_args=training_args, accelerate=accelerate, params=self.params,
                        gpu_memory=self.gpu_memory, host_memory=self.host_memory, gpus_per_node=self.gpus_per_node,
                        packages=None if self.packages is None else {k: v or None for k, v in self.packages.items()},
                        client_optimizer=None if self.client_optimizer is None else (self.client_optimizer,
                                                                                     "train.py:1"),
                        prepared=None if self.prepared is None else {k: (v, "train.py:1")
                                                                     for k, v in self.prepared.items()},
                        engine_calls=None if self.engine_calls is None else {k: (v, "train.py:1")
                                                                             for k, v in self.engine_calls.items()})


def load_cases(code: str) -> list[Case]:
    from importlib import resources

    path = resources.files("zerolint").joinpath("data", "rule_cases", f"{code}.toml")
    if not path.is_file():
        return []
    data = tomllib.loads(path.read_text("utf-8"))
    out = []
    for raw in data.get("case", []):
        unknown = set(raw) - {"name", "kind", "config", "expect", "target", "deepspeed_version", "world_size",
                              "fixed", "unsafe_fixed", "prefer", "note", "training_args", "accelerate", "params",
                              "gpu_memory", "host_memory", "gpus_per_node", "transformers_version",
                              "torch_version", "packages", "client_optimizer", "prepared",
                              "engine_calls"}
        if unknown:
            raise ValueError(f"{code}.toml: unknown case keys {sorted(unknown)}")
        if raw.get("kind") not in ("bad", "good"):
            raise ValueError(f"{code}.toml: case {raw.get('name')!r} needs kind = 'bad' or 'good'")
        out.append(Case(code=code, **raw))
    return out
