"""Tests of the generated DeepSpeed config JSON Schemas (src/zerolint/data/schemas/deepspeed-*.json,
scripts/gen_schema.py)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, missing, require

jsonschema = require("jsonschema")

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "src" / "zerolint" / "data" / "schemas"
SCHEMAS = sorted(SCHEMA_DIR.glob("deepspeed-*.json"))
LINES = ["0.14", "0.15", "0.16", "0.17", "0.18", "0.19"]


def load(line):
    return json.loads((SCHEMA_DIR / f"deepspeed-{line}.json").read_text(encoding="utf-8"))


def deref(schema, node):
    """Follow $ref / allOf[$ref] / anyOf (first object branch) down to an object schema with properties."""
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        elif "allOf" in node:
            node = node["allOf"][0]
        elif "properties" not in node and "anyOf" in node:
            node = next(b for b in node["anyOf"] if "$ref" in b or "properties" in b)
        else:
            return node


def prop(schema, dotted):
    node = schema
    for part in dotted.split("."):
        node = deref(schema, node)["properties"][part]
    return node


def type_part(p):
    """The type schema of a property, unwrapping the HF/Accelerate "auto" anyOf."""
    if "x-zerolint-auto-filled-by" in p:
        return p["anyOf"][0]
    return p


# (1) every schema is a valid draft 2020-12 schema ---------------------------------------------------------


def test_all_lines_present():
    assert [p.name for p in SCHEMAS] == [f"deepspeed-{v}.json" for v in LINES]


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_check_schema(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    line = path.stem.split("-")[1]
    assert schema["$id"] == f"https://zerolint.dev/schemas/deepspeed-{line}.json"
    assert schema["x-zerolint"]["deepspeed_version"].startswith(line + ".")
    assert schema["x-zerolint"]["generator"] == "scripts/gen_schema.py"
    assert schema["x-zerolint-unknown"] == "ignored" and "additionalProperties" not in schema
    assert path.read_text(encoding="utf-8").endswith("}\n")


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_structural_rules(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    problems = []

    def walk(node, where):
        if isinstance(node, dict):
            if "$ref" in node and set(node) - {"$ref", "description", "default"}:
                problems.append(f"$ref with siblings at {where}")
            if node.get("type") == "object" and "properties" in node and where:
                if "x-zerolint-section" not in node:
                    problems.append(f"object without x-zerolint-section at {where}")
                unknown = node.get("x-zerolint-unknown")
                if unknown == "rejected" and node.get("additionalProperties") is not False:
                    problems.append(f"rejected without additionalProperties:false at {where}")
                if unknown in ("ignored", "rejected_at_init") and "additionalProperties" in node:
                    problems.append(f"lax section with additionalProperties at {where}")
                if unknown not in ("ignored", "rejected", "rejected_at_init"):
                    problems.append(f"missing/odd x-zerolint-unknown at {where}")
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}/{i}")

    walk(schema, "")
    assert problems == []


# (2) the committed 0.19 schema is what the generator produces from the installed DeepSpeed -------------------


def test_generator_check_0_19():
    if importlib.util.find_spec("deepspeed") is None:
        missing("deepspeed is not importable in this environment; cannot regenerate the 0.19 schema")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_schema.py"), "--check", "--version", "0.19"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def test_top_level_keys_match_what_deepspeed_reads():
    """Every top-level key DeepSpeedConfig 0.19.8 looks up is a schema property, and vice versa."""
    if importlib.util.find_spec("deepspeed") is None:
        missing("deepspeed is not importable in this environment")
    code = r"""
import json, logging
logging.disable(logging.CRITICAL)
class KV(set):
    def __init__(s, d, log): super().__init__(dict.keys(d)); s.log = log
    def __contains__(s, k): s.log.add(k); return set.__contains__(s, k)
class T(dict):
    log = set()
    def get(s, k, d=None): s.log.add(k); return super().get(k, d)
    def __getitem__(s, k): s.log.add(k); return super().__getitem__(k)
    def __contains__(s, k): s.log.add(k); return super().__contains__(k)
    def keys(s): return KV(s, s.log)
    def __copy__(s): return T(s)
from deepspeed.runtime.config import DeepSpeedConfig
import deepspeed
DeepSpeedConfig(T({"train_batch_size": 8}))
print(json.dumps([deepspeed.__version__, sorted(T.log)]))
"""
    env = {"DS_ACCELERATOR": "cpu", "DS_BUILD_OPS": "0", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    version, read = json.loads(proc.stdout.strip().splitlines()[-1])
    if not version.startswith("0.19.8"):
        missing(f"installed deepspeed is {version}, the 0.19 schema describes 0.19.8")
    props = set(load("0.19")["properties"])
    # read outside DeepSpeedConfig._initialize_params (deepspeed/__init__.py:543-546; zero/config.py:62-63)
    elsewhere = {"sequence_parallel_size", "data_parallel_size", "allgather_size"}
    assert set(read) - props == set()
    assert props - set(read) == elsewhere


# (3) exact facts ------------------------------------------------------------------------------------------


def test_facts_0_19():
    s = load("0.19")
    assert s["x-zerolint"]["deepspeed_version"] == "0.19.8"
    zero = deref(s, s["properties"]["zero_optimization"])
    assert zero["additionalProperties"] is False and zero["x-zerolint-unknown"] == "rejected"
    assert zero["x-zerolint-section"] == "zero_optimization"
    # the legacy bool form
    assert {"type": "boolean"}.items() <= s["properties"]["zero_optimization"]["anyOf"][1].items()
    stage = prop(s, "zero_optimization.stage")
    assert stage["default"] == 0
    assert type_part(stage)["enum"] == [0, 1, 2, 3]
    assert stage["x-zerolint-auto-filled-by"] == ["accelerate"]
    alias = prop(s, "zero_optimization.stage3_prefetch_bucket_size")
    assert alias["x-zerolint-alias-of"] == "prefetch_bucket_size"
    assert alias["x-zerolint-auto-filled-by"] == ["hf", "accelerate"]
    canon = prop(s, "zero_optimization.prefetch_bucket_size")
    assert canon["x-zerolint-aliases"] == ["stage3_prefetch_bucket_size"]
    assert canon["default"] == 50_000_000 and canon["minimum"] == 0 and canon["type"] == "integer"
    cpu_offload = prop(s, "zero_optimization.cpu_offload")
    assert cpu_offload["deprecated"] is True and cpu_offload["x-zerolint-replaced-by"] == "offload_optimizer"
    pin = prop(s, "zero_optimization.cpu_offload_use_pin_memory")
    assert pin["x-zerolint-sets-new-param"] is False
    assert prop(s, "zero_optimization.model_persistence_threshold")["default"] == 9223372036854775807
    amp = s["properties"]["amp"]
    assert amp["x-zerolint-removed-in"] == "0.19.8" and amp["not"] == {} and amp["deprecated"] is True
    assert s["properties"]["sparse_attention"]["x-zerolint-removed-in"] == "0.19.7"
    assert prop(s, "zero_optimization.mics_shard_size")["x-zerolint-removed-in"] == "0.19.7"
    assert prop(s, "zero_optimization.zeropp_loco_param")["x-zerolint-removed-in"] == "0.19.8"
    assert s["properties"]["gradient_clipping"]["default"] == 1.0
    fp16 = deref(s, s["properties"]["fp16"])
    assert fp16["additionalProperties"] is False and fp16["x-zerolint-section"] == "fp16"
    assert prop(s, "fp16.enabled")["x-zerolint-auto-filled-by"] == ["hf", "accelerate"]
    assert prop(s, "zero_optimization.offload_param.device")["x-zerolint-auto-filled-by"] == ["accelerate"]
    assert s["properties"]["optimizer"]["properties"]["params"]["x-zerolint-unknown"] == "rejected_at_init"
    assert s["properties"]["aio"]["x-zerolint-unknown"] == "ignored"
    assert "additionalProperties" not in s["properties"]["aio"]
    assert "x-zerolint-ignored" in prop(s, "aio.thread_count")
    assert "x-zerolint-ignored" in s["properties"]["disable_allgather"]
    assert s["properties"]["bfloat16"]["x-zerolint-replaced-by"] == "bf16"
    assert type_part(prop(s, "gradient_allreduce_op"))["enum"] == ["mean", "sum"]
    assert type_part(prop(s, "communication_data_type"))["enum"] == ["fp32", "fp16", "bf16", None]
    for monitor in ("tensorboard", "wandb", "csv_monitor", "comet"):
        assert deref(s, s["properties"][monitor])["x-zerolint-unknown"] == "rejected"
    assert deref(s, prop(s, "timers.throughput"))["x-zerolint-section"] == "timers.throughput"
    assert "managed_gradient_accumulation" in s["properties"] and "disable_python_gc" in s["properties"]


def test_facts_0_18():
    s = load("0.18")
    assert s["x-zerolint"]["deepspeed_version"] == "0.18.9"
    assert s["properties"]["gradient_clipping"]["default"] == 0.0
    assert deref(s, s["properties"]["fp16"])["x-zerolint-unknown"] == "rejected"
    # legacy sections are ordinary lax dicts before 0.19.7
    assert s["properties"]["amp"]["x-zerolint-unknown"] == "ignored"
    assert "x-zerolint-removed-in" not in s["properties"]["sparse_attention"]
    assert "not" not in prop(s, "zero_optimization.mics_shard_size")
    for key in ("gradient_allreduce_op", "managed_gradient_accumulation", "log_level", "expert_parallel"):
        assert key not in s["properties"]
    assert "datastates_ckpt" in s["properties"]


def test_facts_0_17():
    s = load("0.17")
    assert s["properties"]["gradient_clipping"]["default"] == 0.0
    fp16 = deref(s, s["properties"]["fp16"])
    assert fp16["additionalProperties"] is False and fp16["x-zerolint-unknown"] == "rejected"
    assert "torch_autocast" in s["properties"] and "datastates_ckpt" not in s["properties"]


def test_facts_0_16():
    s = load("0.16")
    assert s["x-zerolint"]["deepspeed_version"] == "0.16.9"
    assert s["properties"]["gradient_clipping"]["default"] == 0.0
    fp16 = s["properties"]["fp16"]
    assert fp16["x-zerolint-unknown"] == "ignored" and "additionalProperties" not in fp16
    assert fp16["x-zerolint-section"] == "fp16"
    assert prop(s, "fp16.enabled")["x-zerolint-auto-filled-by"] == ["hf", "accelerate"]
    assert "torch_autocast" not in s["properties"]
    assert prop(s, "zero_optimization.stage3_prefetch_bucket_size")["x-zerolint-alias-of"] == "prefetch_bucket_size"
    # the key 0.16.9 reads (constants.py:252); the 0.15 spelling is unknown here
    assert "seq_parallel_comm_data_type" not in s["properties"]
    assert "x-zerolint-ignored" not in s["properties"]["seq_parallel_communication_data_type"]
    assert "compile" in s["properties"] and "tensor_parallel" in s["properties"]


def test_facts_0_15():
    """Verified against 0.15.4's source and DeepSpeedConfig (world size 1)."""
    s = load("0.15")
    assert s["x-zerolint"]["deepspeed_version"] == "0.15.4"
    # deepspeed/compile and runtime/tensor_parallel do not exist yet: the keys are unknown (silently ignored)
    assert "compile" not in s["properties"] and "tensor_parallel" not in s["properties"]
    assert not any(k in s["$defs"] for k in ("CompileConfig", "TPTrainingConfig", "TPConfig"))
    # constants.py:252: the key read is seq_parallel_comm_data_type; the documented long name is not read
    assert type_part(prop(s, "seq_parallel_comm_data_type"))["enum"] == ["fp32", "fp16", "bf16", None]
    assert "x-zerolint-ignored" in s["properties"]["seq_parallel_communication_data_type"]
    # aio: thread_count is the real key (renamed intra_op_parallelism in 0.16)
    aio = s["properties"]["aio"]["properties"]
    assert "intra_op_parallelism" not in aio and "x-zerolint-ignored" not in aio["thread_count"]
    assert aio["thread_count"]["default"] == 1 and "use_gds" in aio
    sampling = prop(s, "data_efficiency.data_sampling")["properties"]
    assert "dynamic_batching" not in sampling and "pin_memory" not in sampling
    zero = deref(s, s["properties"]["zero_optimization"])
    for key in ("module_granularity_threshold", "stage3_module_granularity_threshold", "zeropp_loco_param",
                "log_trace_cache_warnings"):
        assert key not in zero["properties"]
    assert "x-zerolint-pydantic-v1" not in zero  # pydantic v2 from 0.15 on
    assert prop(s, "zero_optimization.stage")["x-zerolint-coerces"] == ["boolean", "string"]
    assert prop(s, "zero_optimization.reduce_bucket_size")["x-zerolint-coerces"] == ["boolean", "string"]
    assert s["properties"]["steps_per_print"]["default"] is None
    assert "sequence_parallel_size" in s["properties"] and "data_parallel_size" in s["properties"]
    assert s["properties"]["fp16"]["x-zerolint-unknown"] == "ignored"


def test_facts_0_14():
    """DeepSpeed 0.14.5's models are pydantic v1 (deepspeed/pydantic_v1.py); verified against its source and
    DeepSpeedConfig (world size 1)."""
    s = load("0.14")
    assert s["x-zerolint"]["deepspeed_version"] == "0.14.5"
    assert s["$defs"] and all(d.get("x-zerolint-pydantic-v1") is True for d in s["$defs"].values())
    zero = deref(s, s["properties"]["zero_optimization"])
    assert zero["additionalProperties"] is False and zero["x-zerolint-unknown"] == "rejected"  # Config.extra
    # comm/config.py:10-16: a plain v1 BaseModel (not DeepSpeedConfigModel), still extra = 'forbid'
    assert deref(s, s["properties"]["comms_logger"])["additionalProperties"] is False
    # v1 lax mode: ZeroStageEnum("3") fails but ZeroStageEnum(True) is 1; int(1.5) == 1; str(1) == "1"
    assert prop(s, "zero_optimization.stage")["x-zerolint-coerces"] == ["boolean"]
    assert prop(s, "zero_optimization.reduce_bucket_size")["x-zerolint-coerces"] == ["boolean", "number", "string"]
    assert prop(s, "wandb.project")["x-zerolint-coerces"] == ["boolean", "integer", "number"]
    assert prop(s, "zero_optimization.contiguous_gradients")["x-zerolint-coerces"] == ["integer", "string"]
    # `overlap_comm: bool = None` is optional in v1 (allow_none)
    assert prop(s, "zero_optimization.overlap_comm")["type"] == ["boolean", "null"]
    assert prop(s, "zero_optimization.offload_param")["anyOf"][1] == {"type": "null"}
    # Field(..., deprecated=True, new_param=..., set_new_param=False) kwargs (field_info.extra)
    cpu_offload = prop(s, "zero_optimization.cpu_offload")
    assert cpu_offload["deprecated"] is True and cpu_offload["x-zerolint-replaced-by"] == "offload_optimizer"
    assert prop(s, "zero_optimization.cpu_offload_use_pin_memory")["x-zerolint-sets-new-param"] is False
    alias = prop(s, "zero_optimization.stage3_prefetch_bucket_size")
    assert alias["x-zerolint-alias-of"] == "prefetch_bucket_size" and alias["default"] == 50_000_000
    assert type_part(alias)["minimum"] == 0
    assert prop(s, "zero_optimization.model_persistence_threshold")["default"] == 9223372036854775807
    # constants.py:80 (None from 0.15); engine.py:2160 divides by it unguarded
    assert s["properties"]["steps_per_print"]["default"] == 10
    assert s["properties"]["steps_per_print"]["type"] == "integer"
    assert "use_gds" not in s["properties"]["aio"]["properties"]
    # not read anywhere in 0.14.5 (deepspeed/__init__.py reads them from 0.15)
    assert "sequence_parallel_size" not in s["properties"] and "data_parallel_size" not in s["properties"]
    assert "seq_parallel_comm_data_type" in s["properties"]


@pytest.mark.parametrize("line", LINES)
def test_legacy_allgather_size_coerces_as_its_model_field(line):
    """allgather_size is handed to DeepSpeedZeroConfig(allgather_bucket_size=...) (curated by hand): it coerces what
    the generated model field does (pydantic v1 in 0.14 also truncates floats)."""
    s = load(line)
    assert (s["properties"]["allgather_size"]["x-zerolint-coerces"]
            == prop(s, "zero_optimization.allgather_bucket_size")["x-zerolint-coerces"])


# (4) the real-world corpus against the 0.19 schema ------------------------------------------------------------


def leaf_errors(err):
    """Descend anyOf/oneOf failures into the branch that got furthest into the instance."""
    if not err.context:
        yield err
        return
    branches = {}
    for c in err.context:
        branches.setdefault(c.relative_schema_path[0], []).append(c)
    best = max(branches.values(), key=lambda errs: max(len(e.absolute_path) for e in errs))
    for c in best:
        yield from leaf_errors(c)


# Reviewed: each entry was compared with deepspeed.runtime.config.DeepSpeedConfig(dict) of DeepSpeed 0.19.8
# (after replacing the "auto" values the HF Trainer / Accelerate fill).
EXPECTED_CORPUS_FAILURES = [
    # fp16 keys of Apex/Megatron (opt_level, fp16_scale_tolerance): DeepSpeed: extra_forbidden
    ("CarperAI__trlx__examples__summarize_rlhf__configs__ds_config_trlx_gptj_summarize.json", "$.fp16"),
    # 0.5 for an int field: DeepSpeed: int_from_float
    ("CarperAI__trlx__examples__summarize_rlhf__configs__ds_config_trlx_gptj_summarize.json",
     "$.fp16.min_loss_scale"),
    ("CarperAI__trlx__examples__summarize_rlhf__sft__ds_config_gptj.json", "$.fp16"),  # opt_level: extra_forbidden
    # "true" (a string): DeepSpeed's pydantic model COERCES it to True -> schema stricter than DeepSpeed
    ("LAION-AI__Open-Assistant__model__model_training__configs__deepspeed_rl.json", "$.fp16.enabled"),
    # "8" (a string) at the lax top level: DeepSpeed keeps the string -> TypeError in the batch arithmetic
    ("LAION-AI__Open-Assistant__model__model_training__configs__deepspeed_rl.json", "$.gradient_accumulation_steps"),
    # torch.compile kwargs (backend, disable) inside DeepSpeed's "compile": DeepSpeed: extra_forbidden
    ("axolotl-ai-cloud__axolotl__deepspeed_configs__zero2_torch_compile.json", "$.compile"),
    # "auto" on keys HF/Accelerate never fill: DeepSpeed silently drops them (default applies) -> schema
    # stricter than DeepSpeed, but the intent is lost
    ("deepspeedai__DeepSpeedExamples__inference__sglang__ds_offload_nvme_aio.json",
     "$.zero_optimization.offload_param.buffer_size"),
    ("deepspeedai__DeepSpeedExamples__inference__sglang__ds_offload_nvme_aio.json",
     "$.zero_optimization.stage3_max_live_parameters"),
    # removed in 0.19.8 / 0.19.7: DeepSpeedConfigError
    ("deepspeedai__DeepSpeed__tests__model__BingBertSquad__deepspeed_bsz24_fp16_eigenvalue_quantize_config.json",
     "$.eigenvalue"),
    ("deepspeedai__DeepSpeed__tests__model__BingBertSquad__deepspeed_bsz24_fp16_eigenvalue_quantize_config.json",
     "$.quantize_training"),
    # 1e-10 for an int field: DeepSpeed: int_from_float
    ("ymcui__Chinese-LLaMA-Alpaca__scripts__training__ds_zero2_no_offload.json", "$.fp16.min_loss_scale"),
]


def test_corpus_against_0_19():
    files = sorted(CORPUS.glob("*.json"))
    if not files:
        missing(f"corpus not available at {CORPUS}")
    validator = jsonschema.Draft202012Validator(load("0.19"))
    failures = set()
    parsed = 0
    for f in files:
        try:
            cfg = json.loads(f.read_text(encoding="utf-8"))
        except ValueError:
            continue  # templates / hjson-only files: not JSON
        parsed += 1
        for top in validator.iter_errors(cfg):
            for e in leaf_errors(top):
                failures.add((f.name, e.json_path))
    assert parsed >= 70
    assert sorted(failures) == sorted(EXPECTED_CORPUS_FAILURES)


# Strings a config may hold where DeepSpeed's pydantic models want a number (lax mode converts them).
NUMBER_STRINGS = ["1", " +3 ", "-0", "01", "1_000", "1__0", "_1", "1_", "1.0", "1.00", "1_0.0", "1.", "5.", "-0.",
                  ".5", "1.5", "1.01", "1.0_0", "1e0", "1e3", "0x10", "nan", "inf", "-Infinity", "\u0663", "\uff11",
                  "\t7\n", "\u00a02", "", "one"]


@pytest.mark.parametrize("integer", [True, False])
def test_string_numbers_read_as_pydantic_reads_them(integer):
    """model/schema.pydantic_number against pydantic v2 itself (DeepSpeed 0.19.8's validator): "1." is no integer
    (the parse differential found `"buffer_count": 1.`, an hjson quoteless string, called fine by ZL104)."""
    from pydantic import TypeAdapter, ValidationError

    from zerolint.model.schema import pydantic_number

    adapter = TypeAdapter(int if integer else float)
    for text in NUMBER_STRINGS:
        try:
            expected = adapter.validate_python(text)
        except ValidationError:
            expected = None
        got = pydantic_number(text, integer)
        assert (got == expected or got != got and expected != expected), (text, got, expected)  # nan == nan
