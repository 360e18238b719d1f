"""Codes reported outside the rule engine, and the one place to look up any code's metadata.

The rule engine runs `check(view)` over one DeepSpeed config. A few findings are about other files and cannot be
located in a DeepSpeed config, so they are produced where those files are read and carry a documented code:

- ZL090 `unused-suppression` (zerolint/suppress.py): located in the zerolint config or the baseline file.
- ZL520, ZL524, ZL525 (zerolint/hf.py): located in an Accelerate config YAML.

They are `Rule` objects without a check function: `--select`, `--ignore`, `severity` overrides, SARIF rule
metadata, `zerolint rules` and `zerolint rule CODE` treat them like any other rule. User policy rules
(zerolint/policy.py) register here as they are loaded.
"""

from __future__ import annotations

from typing import Any

from .diagnostics import DOCS_BASE
from .rule import Rule, all_rules

INTEGRATIONS_DOC = DOCS_BASE.rsplit("/", 1)[0] + "/integrations.md"


class EngineRule(Rule):
    """A rule whose findings are produced outside the rule engine; documented in docs/integrations.md."""

    @property
    def url(self) -> str:
        return f"{INTEGRATIONS_DOC}#{self.code.lower()}-{self.name}"

UNUSED_SUPPRESSION = EngineRule(
    code="ZL090",
    name="unused-suppression",
    severity="warning",
    summary="A suppression or baseline entry that matched no finding",
    evidence="zerolint: [tool.zerolint.suppress] and the baseline file (docs/integrations.md)",
    rationale="""A suppression in `[tool.zerolint.suppress]` or an entry in the baseline file matched no finding in
this run: the problem it hid was fixed, or the key moved. Delete it so that it cannot hide a new problem at the
same pointer later. Entries are only checked for files that were linted in the run and for rules that ran, so
linting a subset of the files (as pre-commit does) reports nothing about the others.""",
)

ACCELERATE_FIELDS = EngineRule(
    code="ZL520",
    name="accelerate-fields-with-config-file",
    severity="error",
    summary="An Accelerate config sets DeepSpeed fields and also names a deepspeed_config_file",
    evidence="accelerate/utils/dataclasses.py DeepSpeedPlugin._deepspeed_config_checks; "
             "https://github.com/huggingface/accelerate/pull/941",
    targets=("accelerate",),
    rationale="""When an Accelerate config YAML names a DeepSpeed config file
(`deepspeed_config.deepspeed_config_file`), the DeepSpeed settings must come from that file. `accelerate launch`
passes the names of the other `deepspeed_config` fields to the training process (ACCELERATE_CONFIG_DS_FIELDS) and
`DeepSpeedPlugin` raises
`ValueError: When using deepspeed_config_file, the following accelerate config variables will be ignored: [...]`
if any of `gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`, `offload_optimizer_device`,
`offload_param_device`, `offload_param_nvme_path`, `offload_optimizer_nvme_path`, `zero3_save_16bit_model` is
among them. A top-level `mixed_precision` read from the YAML is added to that list too (accelerate/commands/
launch.py, `mp_from_config_flag`), so it fails the same way; `accelerate config` writes none of these when you
choose a config file. Move the values into the DeepSpeed config file and delete them from the YAML.""",
)

ACCELERATE_FILE_MISSING = EngineRule(
    code="ZL524",
    name="accelerate-config-file-not-found",
    severity="error",
    summary="The deepspeed_config_file named by an Accelerate config does not exist",
    evidence="accelerate/utils/deepspeed.py HfDeepSpeedConfig (opens the path with io.open)",
    targets=("accelerate",),
    rationale="""`deepspeed_config.deepspeed_config_file` in an Accelerate config YAML names a file that cannot be read.
Accelerate opens it in every process at start-up and fails with `FileNotFoundError` (a relative path is resolved
from the directory `accelerate launch` runs in; zerolint resolves it relative to the YAML file first, then to the
working directory).""",
)

ACCELERATE_YAML_INVALID = EngineRule(
    code="ZL525",
    name="accelerate-config-invalid",
    severity="error",
    summary="An Accelerate config YAML that cannot be read as a mapping",
    evidence="accelerate/commands/config/config_args.py load_config_from_file (yaml.safe_load)",
    targets=("accelerate",),
    rationale="""The Accelerate config cannot be read: a YAML syntax error, or a document that is not a mapping of
settings, or a `deepspeed_config` that is not a mapping. `accelerate launch --config_file` fails before any
process starts.""",
)

EXTRA_RULES: list[Rule] = [UNUSED_SUPPRESSION, ACCELERATE_FIELDS, ACCELERATE_FILE_MISSING, ACCELERATE_YAML_INVALID]

# `zerolint verify`'s findings: ZL990-ZL999 (zerolint/verify/codes.py, documented in docs/verify.md).
from .verify.codes import VERIFY_RULES  # noqa: E402

EXTRA_RULES += VERIFY_RULES

# Loaded user policy rules (zerolint/policy.py), by code.
_POLICIES: dict[str, Any] = {}


def register_policy(rule: Any) -> None:
    _POLICIES[rule.code] = rule


def known_rules() -> list[Any]:
    """Every rule zerolint can report in this process: built-in, engine-level, loaded policies."""
    return [*all_rules(), *EXTRA_RULES, *_POLICIES.values()]


def describe(code: str) -> Any | None:
    """The metadata of a code (a `Rule`, or a policy rule with the same attributes), or None."""
    for r in known_rules():
        if r.code == code:
            return r
    return None


def find(code_or_name: str) -> Any | None:
    key = code_or_name.strip()
    for r in known_rules():
        if key.upper() == r.code.upper() or key.lower() == r.name or key in r.aliases:
            return r
    return None
