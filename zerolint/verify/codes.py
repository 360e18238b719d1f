"""The codes `zerolint verify` reports: ZL990-ZL999, reserved for findings that only a real run can make.

They are `Rule`s without a check function (like the engine-level codes in zerolint/extra_rules.py, which lists
them), so `--select`/`--ignore`, severity overrides, SARIF rule metadata and `zerolint rules` treat them like
any other code. Their documentation is docs/verify.md (one anchor per code), not docs/rules/.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rule import Rule

VERIFY_DOCS = "https://github.com/zerolint/zerolint/blob/main/docs/verify.md"
VERIFY_TARGETS = ("deepspeed", "hf", "accelerate")


@dataclass
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

VERIFY_RULES: list[Rule] = [FAILED, TIMEOUT, CRASHED, SKIPPED, OPTIMIZER_OFFLOAD, PARAM_OFFLOAD, STAGE, PRECISION, LOSS]
BY_CHECK = {"optimizer-offload": OPTIMIZER_OFFLOAD, "param-offload": PARAM_OFFLOAD, "zero-stage": STAGE,
            "precision": PRECISION}
