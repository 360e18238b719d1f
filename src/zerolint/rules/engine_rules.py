"""Codes reported outside the rule engine, and the one place to look up any code's metadata.

The rule engine runs `check(view)` over one DeepSpeed config. A few findings are about other files and cannot be
located in a DeepSpeed config, so they are produced where those files are read and carry a documented code:

- ZL090 `unused-suppression` (zerolint/project/suppress.py): located in the zerolint config or the baseline file.
- ZL520, ZL524, ZL525 (zerolint/pipeline.py, reading through integrations/hf.py): located in an Accelerate config
  YAML.
- ZL091 `flag-overrides-repository` and ZL092 `inference-config` (zerolint/pipeline.py, where `check` reads the
  uses): a setting given to zerolint that the repository's use of the config contradicts; a config only
  `deepspeed.init_inference` reads. Located at the config's top-level object.

They are `Rule` objects without a check function: `--select`, `--ignore`, `severity` overrides, SARIF rule
metadata, `zerolint rules` and `zerolint rule CODE` treat them like any other rule: `ENGINE_RULES` is part of every
`RuleSet` (rules/ruleset.py), which is where any code's metadata is looked up.
"""

from __future__ import annotations

from ..model.diagnostics import DOCS_BASE
from .rule import Rule

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

FLAG_OVERRIDES_USE = EngineRule(
    code="ZL091",
    name="flag-overrides-repository",
    severity="warning",
    summary="A --target or --world-size that the repository's use of the config contradicts",
    evidence="zerolint: check, reading the uses (docs/uses.md)",
    rationale="""`check` checks a config as each place in the repository uses it: the consumer from the launched
code, the world size from the launch line. A setting given to zerolint (`--target`, `--world-size`, or the same keys
in the zerolint config) wins over what the repository says, so that a check can be pinned; but where it contradicts
a use (the config is checked for 4 GPUs while `run.sh` launches it on 8, or as the HF Trainer's while the code hands
it to `deepspeed.initialize`), the verdicts about that use are the setting's, not the run's. Drop the setting to
check each use as it runs, or make the launch line agree.""",
)

INFERENCE_CONFIG = EngineRule(
    code="ZL092",
    name="inference-config",
    severity="info",
    summary="A config that only deepspeed.init_inference reads: an inference config, not checked",
    evidence="deepspeed/inference/config.py (DeepSpeedInferenceConfig); zerolint: check, reading the uses "
             "(docs/uses.md)",
    rationale="""`deepspeed.init_inference(model, config=...)` reads its config as a `DeepSpeedInferenceConfig`
(`tensor_parallel`, `dtype`, `replace_with_kernel_inject`, ...), a different schema from the training config that
`deepspeed.initialize` reads. zerolint's rules are about training configs, so where the repository's only uses of a
file are `init_inference` calls (docs/uses.md), the file is not checked by them and this info says so, instead of
reporting the inference keys as unknown training keys. A ZeRO-3 inference config handed to `HfDeepSpeedConfig` is a
training-style config and is checked (as raw DeepSpeed).""",
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

INTEGRATION_RULES: tuple[Rule, ...] = (UNUSED_SUPPRESSION, FLAG_OVERRIDES_USE, INFERENCE_CONFIG, ACCELERATE_FIELDS,
                                       ACCELERATE_FILE_MISSING, ACCELERATE_YAML_INVALID)

# `zerolint verify`'s findings: ZL990-ZL999, reserved for findings that only a real run can make. They live in the
# rules layer, not in verify/, so that rules never import verify; their documentation is docs/verify.md (one anchor
# per code), not docs/rules/.
VERIFY_DOCS = "https://github.com/zerolint/zerolint/blob/main/docs/verify.md"
VERIFY_TARGETS = ("deepspeed", "hf", "accelerate")


class VerifyRule(Rule):
    @property
    def url(self) -> str:
        return f"{VERIFY_DOCS}#{self.code.lower()}-{self.name}"


def _rule(code: str, name: str, severity: str, summary: str, rationale: str) -> VerifyRule:
    return VerifyRule(code=code, name=name, severity=severity, summary=summary, rationale=rationale,
                      evidence="zerolint verify: a real deepspeed.initialize and optimizer steps (docs/verify.md)",
                      targets=VERIFY_TARGETS)


FAILED = _rule("ZL990", "verify-failed", "error", "DeepSpeed fails with this config in a real init-and-step run",
               "DeepSpeed raised while parsing the config, in deepspeed.initialize, or in one of the first "
               "optimizer steps. The diagnostic says where (parse / initialize / step N), quotes DeepSpeed's "
               "exception and points at the key responsible.")
TIMEOUT = _rule("ZL991", "verify-timeout", "error", "The verify run did not finish within its timeout",
                "The run was killed (with every process it started) after --timeout seconds; the message says "
                "how far it got. DeepSpeed's ops are built before the run, under --build-timeout; when that "
                "build is what ran out of time the message says so, and the config was not run.")
CRASHED = _rule("ZL992", "verify-crashed", "error", "The verify run ended without a result",
                "The child process died (a signal, out of memory, a launcher error) or could not start; the "
                "message carries the end of its log.")
SKIPPED = _rule("ZL993", "verify-skipped", "warning", "The config cannot be verified on this machine",
                "The run was not attempted because this machine cannot show what DeepSpeed does with the config "
                "(fp16 on a CPU without fp16 support). This is never a pass.")
OPTIMIZER_OFFLOAD = _rule(
    "ZL994", "optimizer-offload-not-effective", "error",
    "The config asks for optimizer offload but the optimizer states were not offloaded",
    "The engine DeepSpeed built keeps the optimizer states where the parameters are, with a non-CPU optimizer, "
    "although the config apparently asks for offload (for example an `offload_optimizer` block at the top level, "
    "which DeepSpeed never reads).")
PARAM_OFFLOAD = _rule(
    "ZL995", "param-offload-not-effective", "error",
    "The config asks for parameter offload but the parameters were not offloaded",
    "Parameter offload happens only under ZeRO stage 3; with stage 1 or 2 `offload_param` is accepted and "
    "ignored, and a top-level `offload_param` is never read.")
STAGE = _rule(
    "ZL996", "zero-stage-not-effective", "error",
    "The ZeRO stage that ran differs from the one the config asks for, or stage 3 did not partition",
    "The engine's ZeRO stage is not the stage the config apparently asks for (a top-level `stage`, a raw "
    "`\"stage\": \"auto\"`), or under stage 3 the parameters were not partitioned across the ranks.")
PRECISION = _rule(
    "ZL997", "precision-not-effective", "error",
    "The config enables bf16 or fp16 but the run used another precision",
    "The engine's parameters are not in the precision the config enables, for example `\"enabled\": \"auto\"` "
    "read by raw DeepSpeed, which drops \"auto\" in its strict sections and trains in fp32.")
LOSS = _rule("ZL998", "verify-loss-not-finite", "error", "The loss was not finite after the verify steps",
             "The tiny job's loss was NaN or infinite after the last step although no step was skipped for an "
             "fp16 overflow.")

VERIFY_RULES: tuple[Rule, ...] = (FAILED, TIMEOUT, CRASHED, SKIPPED, OPTIMIZER_OFFLOAD, PARAM_OFFLOAD, STAGE, PRECISION,
                                  LOSS)
BY_CHECK = {"optimizer-offload": OPTIMIZER_OFFLOAD, "param-offload": PARAM_OFFLOAD, "zero-stage": STAGE,
            "precision": PRECISION}

# Every code reported outside the rule engine, in code order.
ENGINE_RULES: tuple[Rule, ...] = INTEGRATION_RULES + VERIFY_RULES
