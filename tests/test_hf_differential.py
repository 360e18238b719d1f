"""The HF differential: zerolint's replayed "auto" fill (verify/resolve.py, what `verify --target hf` runs without
the [hf] extra) and its mismatch check (ZL523, model/trainer.py) against the real transformers 5.24 / accelerate
1.15 on every corpus config and fixture, with HF's default TrainingArguments and two variants. The real side is
tests/hf_fill_oracle.py (TrainingArguments + Trainer + HF's `deepspeed_init`, in a process of its own).

- HF fills: every leaf of the dict HF would hand DeepSpeed equals the replay's, or the difference is in ALLOWED
  below, with its reason (reviewed; an entry marked RULESHF is a replay bug that the ruleshf branch fixes).
- HF raises its mismatch error: the keys it names are exactly the keys ZL523 reports with the same arguments.
- HF raises anything else: the message is in REFUSALS, with the finding that covers it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from conftest import CORPUS, ROOT, require

require("transformers")
require("accelerate")
require("deepspeed")

import zerolint  # noqa: E402
from zerolint.verify import resolve  # noqa: E402
from zerolint.verify.hf_args import TrainingArgs  # noqa: E402

pytestmark = pytest.mark.slow

HIDDEN = 64  # the verify model's hidden size (resolve.ModelSpec): reduce_bucket_size "auto" -> 4096
VARIANTS = {
    "defaults": {},
    "tuned": {"learning_rate": 3e-5, "weight_decay": 0.01, "adam_beta2": 0.98, "max_grad_norm": 0.5,
              "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "max_steps": 100,
              "warmup_steps": 0.1},
    "warmup-fp16": {"warmup_steps": 5, "fp16": True, "max_steps": 20},
}
RULESHF = "expected-to-be-fixed-by-ruleshf: "
# (pointer, replay value, HF value) -> why they may differ. "<absent>": the key is not in that dict.
ALLOWED: dict[tuple[str, object, object], str] = {
    ("/bf16/enabled", "<absent>", False): "Accelerate's set_mixed_precision adds a switched-off bf16 section "
                                          "(accelerate/utils/dataclasses.py); DeepSpeed reads the same: off",
    ("/fp16/enabled", "<absent>", False): "Accelerate's set_mixed_precision adds a switched-off fp16 section; "
                                          "DeepSpeed reads the same: off",
    ("/gradient_accumulation_steps", "<absent>", 1): RULESHF + "Accelerate's DeepSpeedPlugin inserts "
                                                     "gradient_accumulation_steps 1 when it is missing (issue 14 "
                                                     "§3b(a)); the replay leaves DeepSpeed to derive it",
    ("/zero_allow_untested_optimizer", "<absent>", True): "deepspeed_optim_sched sets it when the Trainer passes "
                                                          "its own optimizer; the replay sets it in build_plan, "
                                                          "with the client optimizer (checked below)",
    ("/fp16/enabled", "<absent>", True): "TrainingArguments fp16 and no fp16 section: Accelerate's "
                                         "set_mixed_precision adds {enabled: true, auto_cast: true}; the replay fills "
                                         "only an \"auto\" fp16.enabled (a gap of the replay, left to ruleshf)",
    ("/fp16/auto_cast", "<absent>", True): "the same section's auto_cast (see /fp16/enabled)",
    ("/zero_optimization/stage3_gather_16bit_weights_on_model_save", "auto", False):
        RULESHF + "the Trainer's DeepSpeedPlugin fills it (False) for the HF target too (issue 14 §3b(c)); the "
                  "replay fills it for the accelerate target only",
}
WARMUP = "/scheduler/params/warmup_num_steps"
WARMUP_WHY = RULESHF + "transformers 5.24 fills max(1, warmup steps) (deepspeed.py:252-256); the replay fills 0"
# HF refusals other than the mismatch check, and what covers them statically.
REFUSALS = {  # first line of HF's message -> (zerolint's code, its pointer or None)
    "Please specify the ZeRO optimization config in the DeepSpeed config.": ("ZL522", None),
    # Accelerator(mixed_precision=...) refuses before the Trainer's own check, which ZL523 models, would have
    "`--mixed_precision` arg cannot be set to `fp16` when `bf16` is set in the DeepSpeed config file.":
        ("ZL523", "/bf16/enabled"),
    "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.":
        ("ZL523", "/fp16/enabled"),
}


def _leaves(value, pointer=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{pointer}/{k}")
    else:
        yield pointer, value


def _configs() -> list[tuple[str, dict]]:
    files = sorted(CORPUS.glob("*.json")) + sorted((ROOT / "fixtures" / "examples").glob("*/*.json"))
    out = []
    for f in files:
        try:
            cfg = json.loads(f.read_text(encoding="utf-8"))  # HF's reader; hjson-only files never reach HF
        except ValueError:
            continue
        if isinstance(cfg, dict) and f.name != "training_args.json":
            out.append((f.relative_to(ROOT).as_posix(), cfg))
    assert len(out) >= 78, len(out)  # 72 corpus configs json.load reads (of 77), 6 fixtures
    return out


def _steps(args: dict) -> int:
    return TrainingArgs(path="-", values=args).training_steps(3)


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[tuple[str, str], dict]:
    """(config name, variant) -> HF's result, from one oracle process."""
    configs = _configs()
    cases = [{"config": cfg, "args": args, "steps": _steps(args), "hidden": HIDDEN}
             for _, cfg in configs for args in VARIANTS.values()]
    d = tmp_path_factory.mktemp("hf-oracle")
    (d / "in.json").write_text(json.dumps(cases))
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "hf_fill_oracle.py"), str(d / "in.json"),
                        str(d / "out.json")], capture_output=True, text=True, timeout=1500)
    assert p.returncode == 0, p.stderr[-4000:]
    results = json.loads((d / "out.json").read_text())
    keys = [(name, v) for name, _ in configs for v in VARIANTS]
    return dict(zip(keys, results))


def _replay(cfg: dict, args: dict) -> dict:
    ta = TrainingArgs(path="-", values=args)
    out = copy.deepcopy(cfg)
    resolve._fill_auto(out, "hf", ta.precision("fp32"), ta.training_steps(3), HIDDEN, [], ta)
    return out


def _mismatched_keys(message: str) -> set[str]:
    return {"/" + line[5:].split("=", 1)[0].replace(".", "/") for line in message.splitlines()
            if line.startswith("- ds ")}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_replayed_fill_matches_hf(real, variant):
    args = VARIANTS[variant]
    compared, unexplained, used = 0, [], set()
    for name, cfg in _configs():
        res = real[(name, variant)]
        if "error" in res:
            continue
        compared += 1
        mine, hf = dict(_leaves(_replay(cfg, args))), dict(_leaves(res["config"]))
        for ptr in sorted(set(mine) | set(hf)):
            a, b = mine.get(ptr, "<absent>"), hf.get(ptr, "<absent>")
            if a == b:
                continue
            if ptr == "/train_batch_size" and a == "<absent>" and cfg.get(ptr[1:]) == "auto":
                # the replay leaves DeepSpeed to derive it; HF writes the same product
                assert b == args.get("per_device_train_batch_size", 8) * args.get("gradient_accumulation_steps", 1)
                continue
            if ptr == "/steps_per_print" and b in (float("inf"), "inf"):
                used.add("steps_per_print")  # DeepSpeedPlugin silences DeepSpeed's logging; no effect on the job
                continue
            if ptr == WARMUP and a == 0 and b == 1:
                used.add(WARMUP_WHY)
                continue
            key = (ptr, a, b)
            if key in ALLOWED:
                used.add(ALLOWED[key])
                if ptr == "/zero_allow_untested_optimizer":
                    plan = resolve.build_plan(cfg, target="hf", client_optimizer="auto")
                    assert plan.config["zero_allow_untested_optimizer"] is True
                continue
            unexplained.append(f"{name}: {ptr}: replay {a!r}, HF {b!r}")
    assert compared >= 25, compared
    assert not unexplained, "\n".join(unexplained)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_hf_errors_are_the_ones_zerolint_reports(real, variant):
    args = VARIANTS[variant]
    errors, wrong = 0, []
    for name, cfg in _configs():
        res = real[(name, variant)]
        if "error" not in res:
            continue
        errors += 1
        msg = res["error"]["message"]
        diags = zerolint.lint(cfg, target="hf", world_size=1, training_args=args)
        if "Please correct the following DeepSpeed config values that mismatch TrainingArguments values" in msg:
            hf_keys = _mismatched_keys(msg)
            ours = {d.pointer for d in diags if d.code == "ZL523"}
            if hf_keys - {WARMUP} != ours - {WARMUP}:  # the warm-up comparison: RULESHF (WARMUP_WHY)
                wrong.append(f"{name}: HF {sorted(hf_keys)} vs ZL523 {sorted(ours)}")
            continue
        first = msg.strip().splitlines()[0]
        code, ptr = REFUSALS.get(first, (None, None))
        if code is None or not any(d.code == code and ptr in (None, d.pointer) for d in diags):
            wrong.append(f"{name}: HF refuses ({res['error']['type']}: {first}); zerolint: "
                         f"{sorted({d.code for d in diags})}")
    assert errors >= 10, errors
    assert not wrong, "\n".join(wrong)


def test_hf_mismatch_error_is_reproduced(real):
    """The seed's ZeRO-1 config hard-codes a micro batch of 4: with HF's defaults (8) HF raises its own error, and
    ZL523 reports the same key."""
    res = real[("fixtures/examples/seed/ds_zero1.json", "defaults")]
    assert res["error"]["type"] == "ValueError"
    assert res["error"]["message"].startswith(
        "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
        "- ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8\n")
    cfg = json.loads((ROOT / "fixtures/examples/seed/ds_zero1.json").read_text())
    assert "/train_micro_batch_size_per_gpu" in {d.pointer for d in zerolint.lint(cfg, target="hf", world_size=1,
                                                                                    training_args={})
                                                 if d.code == "ZL523"}
