"""Inputs for the differential run: every fixture config, every corpus config, the seed examples, and a seeded
stream of mutations of them.

Everything is deterministic for a seed, and stable as bases come and go: mutation i draws from its own
`random.Random(f"{seed}:{i}:{attempt}")`, and picks its base by consistent hashing on the bases' bytes (`_Ring`), so
a new rule case moves only the few mutations it wins instead of shifting every later one (an index into the list of
bases would). A mutation works either on the TEXT (keeping the author's layout, so positions and hjson
syntax are exercised) or on the parsed dict, re-serialised with `json.dumps` (so the structure can change freely).
Each mutation has a kind (the rows of the agreement table) and a one-line description of what it did.

The key lists come from the generated schema (schemas/deepspeed-0.19.json) plus hand lists of what users get wrong;
the schema only proposes inputs here, DeepSpeed itself is the judge.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "src" / "zerolint" / "data" / "rule_cases"
SEED_DIR = ROOT / "fixtures" / "examples" / "seed"
CORPUS = ROOT / "tests" / "data" / "corpus" / "real-world"


@dataclass
class Case:
    id: str  # stable: "fixture:ZL104#2", "corpus:<file>", "seed:<file>", "mut:<seed>:<n>"
    kind: str  # "fixture" | "corpus" | "seed" | a mutation kind
    data: bytes  # the config file's bytes, as DeepSpeed reads them
    source: str = ""  # for mutations: the id of the case it was made from
    what: str = ""  # for mutations: what was changed

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


# -- bases ---------------------------------------------------------------------------------------------------------
def fixture_cases() -> list[Case]:
    out = []
    for path in sorted(FIXTURES.glob("*.toml")):
        data = tomllib.loads(path.read_text("utf-8"))
        for n, case in enumerate(data.get("case", []), 1):
            out.append(Case(f"fixture:{path.stem}#{n}", "fixture", case["config"].encode("utf-8"),
                            what=f"{case.get('kind')}: {case.get('name', '')}"))
    return out


def corpus_cases() -> list[Case]:
    return [Case(f"corpus:{p.name}", "corpus", p.read_bytes()) for p in sorted(CORPUS.glob("*.json"))]


def seed_cases() -> list[Case]:
    return [Case(f"seed:{p.name}", "seed", p.read_bytes()) for p in sorted(SEED_DIR.glob("*.json"))]


def base_cases() -> list[Case]:
    return fixture_cases() + corpus_cases() + seed_cases()


def _load(text: str) -> dict | None:
    """The config as DeepSpeed's hjson reader sees it (duplicate keys: the last wins), when it is an object."""
    import hjson

    try:
        d = hjson.loads(text)
    except Exception:
        return None
    return _plain(d) if isinstance(d, dict) else None


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


# -- "auto" as the HF Trainer fills it --------------------------------------------------------------------------
# Plausible values for a 7B-class model (hidden size 4096) trained with per-device batch 4, accumulation 1, bf16,
# AdamW lr 2e-5 and 1000 steps: what HfTrainerDeepSpeedConfig.trainer_config_process/_finalize writes
# (transformers integrations/deepspeed.py). Any other "auto" is left for DeepSpeed to judge.
HF_FILLS: dict[str, Any] = {
    "/train_micro_batch_size_per_gpu": 4, "/gradient_accumulation_steps": 1, "/train_batch_size": 4,
    "/gradient_clipping": 1.0, "/fp16/enabled": False, "/bf16/enabled": True, "/amp/enabled": False,
    "/optimizer/params/lr": 2e-5, "/optimizer/params/betas": [0.9, 0.999], "/optimizer/params/eps": 1e-8,
    "/optimizer/params/weight_decay": 0.0, "/scheduler/params/warmup_min_lr": 0,
    "/scheduler/params/warmup_max_lr": 2e-5, "/scheduler/params/warmup_num_steps": 0,
    "/scheduler/params/total_num_steps": 1000, "/scheduler/params/cos_min_ratio": 0.0,
    "/zero_optimization/reduce_bucket_size": 4096 * 4096,
    "/zero_optimization/stage3_prefetch_bucket_size": int(0.9 * 4096 * 4096),
    "/zero_optimization/stage3_param_persistence_threshold": 10 * 4096,
}


def resolve_auto(d: dict) -> list[str]:
    """Replace the "auto" values the HF Trainer fills (in place); returns their pointers."""
    done = []
    for ptr, parent, key, value in _walk(d):
        if value == "auto" and ptr in HF_FILLS:
            parent[key] = copy.deepcopy(HF_FILLS[ptr])
            done.append(ptr)
    return done


# -- what the schema knows ---------------------------------------------------------------------------------------
class Keys:
    """Sections, their keys, enums, aliases, deprecated and removed keys, from the generated 0.19 schema."""

    def __init__(self) -> None:
        from zerolint.model.schema import load_schema

        s = load_schema("0.19")
        self.sections: dict[str, dict[str, Any]] = {}  # pointer -> {key: resolved property schema}
        self.removed: list[tuple[str, str]] = []  # (section pointer, key)
        self.deprecated: list[tuple[str, str, str]] = []  # (section, key, replacement)
        self.aliases: list[tuple[str, str, str]] = []  # (section, field name, alias)
        for ptr, obj in s.all_sections():
            props = {}
            for key, sub in obj.get("properties", {}).items():
                r = s.resolve(sub)
                r = r if isinstance(r, dict) else {}
                props[key] = r
                if "x-zerolint-removed-in" in r or "x-zerolint-removed-in" in sub:
                    self.removed.append((ptr, key))
                elif (r.get("deprecated") or sub.get("deprecated")) and (r.get("x-zerolint-replaced-by")
                                                                          or sub.get("x-zerolint-replaced-by")):
                    self.deprecated.append((ptr, key, r.get("x-zerolint-replaced-by") or sub["x-zerolint-replaced-by"]))
                for alias in (sub.get("x-zerolint-aliases") or r.get("x-zerolint-aliases") or ()):
                    self.aliases.append((ptr, key, alias))
            self.sections[ptr] = props
        self.schema = s

    def enum(self, prop: dict) -> list:
        vals = list(prop.get("enum", ()))
        for b in prop.get("anyOf", ()):
            b = self.schema.resolve(b)
            if isinstance(b, dict):
                vals += list(b.get("enum", ()))
                if "const" in b:
                    vals.append(b["const"])
        return vals

    def types(self, prop: dict) -> set[str]:
        out: set[str] = set()
        for p in [prop, *[self.schema.resolve(b) for b in prop.get("anyOf", ())]]:
            if isinstance(p, dict):
                t = p.get("type")
                out.update([t] if isinstance(t, str) else t or ())
                if "properties" in p or "$ref" in p:
                    out.add("object")
        return out


_KEYS: Keys | None = None


def keys() -> Keys:
    global _KEYS
    if _KEYS is None:
        _KEYS = Keys()
    return _KEYS


# -- small helpers -------------------------------------------------------------------------------------------------
SECTIONS = ("", "/zero_optimization", "/fp16", "/bf16", "/zero_optimization/offload_optimizer",
            "/zero_optimization/offload_param", "/optimizer", "/optimizer/params", "/scheduler/params",
            "/activation_checkpointing", "/aio", "/bfloat16", "/checkpoint", "/data_types")

BRITISH = [("optimization", "optimisation"), ("optimizer", "optimiser"), ("initialize", "initialise"),
           ("normalize", "normalise"), ("utilization", "utilisation"), ("partition", "partiton"),
           ("gather", "gahter"), ("bucket", "buckets"), ("threshold", "treshold")]

NUMBERS: list[Any] = [0, 1, -1, 2, 3, 4, 5, 8, 16, 0.5, 1.5, 2.0, 4.0, 8.5, -0.1, 1e-9, 10 ** 9, 5 * 10 ** 8,
                      1e20, 10 ** 20, 2 ** 31, 0.9, 1.0, 64, 1000]
STRINGS: list[Any] = ["auto", "Auto", "AUTO", " auto", "true", "false", "True", "yes", "no", "1", "0", "3", "4",
                      "5e8", "cpu", "CPU", "nvme", "none", "gpu", "cuda", "fp16", "bf16", "fp32", "float16",
                      "bfloat16", "sum", "mean", "avg", "", "bogus", "Adam", "adamw", "AdamW", "sgd", "SGD",
                      "WarmupLR", "warmuplr", "Fail", "IGNORE", "/local_nvme", "null"]
OTHERS: list[Any] = [True, False, None, [], {}, [1], ["x"], {"enabled": True}, [0.9, 0.999]]


def _walk(d: Any, ptr: str = "") -> list[tuple[str, dict, str, Any]]:
    """(pointer, parent dict, key, value) for every member at any depth (lists are not entered)."""
    out = []
    if isinstance(d, dict):
        for k, v in list(d.items()):
            p = f"{ptr}/{k}"
            out.append((p, d, k, v))
            out.extend(_walk(v, p))
    return out


def _get(d: dict, ptr: str, create: bool = False) -> dict | None:
    cur: Any = d
    for tok in [t for t in ptr.split("/") if t]:
        if not isinstance(cur, dict):
            return None
        if tok not in cur or not isinstance(cur[tok], dict):
            if not create or (tok in cur and cur[tok] is not None):
                return None
            cur[tok] = {}
        cur = cur[tok]
    return cur if isinstance(cur, dict) else None


def _typo(rnd: random.Random, key: str) -> str | None:
    ops = ["swap", "drop", "insert", "double", "british", "case", "dash", "plural", "prefix"]
    for _ in range(6):
        op = rnd.choice(ops)
        new = key
        if op == "swap" and len(key) > 2:
            i = rnd.randrange(len(key) - 1)
            new = key[:i] + key[i + 1] + key[i] + key[i + 2:]
        elif op == "drop" and len(key) > 2:
            i = rnd.randrange(len(key))
            new = key[:i] + key[i + 1:]
        elif op == "insert":
            i = rnd.randrange(len(key) + 1)
            new = key[:i] + rnd.choice("aeiourstn_") + key[i:]
        elif op == "double" and key:
            i = rnd.randrange(len(key))
            new = key[:i] + key[i] + key[i:]
        elif op == "british":
            for a, b in rnd.sample(BRITISH, len(BRITISH)):
                if a in key:
                    new = key.replace(a, b)
                    break
        elif op == "case":
            new = key.upper() if rnd.random() < 0.3 else key[:1].upper() + key[1:]
        elif op == "dash":
            new = key.replace("_", "-") if "_" in key else key + "_"
        elif op == "plural":
            new = key[:-1] if key.endswith("s") else key + "s"
        elif op == "prefix":
            new = key[len("stage3_"):] if key.startswith("stage3_") else "stage3_" + key
        if new != key:
            return new
    return None


def _value_for(rnd: random.Random, prop: dict | None, good: float = 0.5) -> Any:
    """A value for a schema property: often a valid one (an enum member, the default, the right type), else a
    random pick from the pools."""
    k = keys()
    if prop and rnd.random() < good:
        enum = k.enum(prop)
        types = k.types(prop)
        choices: list[Any] = []
        if enum:
            choices += enum + [e.upper() for e in enum if isinstance(e, str)]
        if "default" in prop and prop["default"] is not None:
            choices.append(prop["default"])
        if "boolean" in types:
            choices += [True, False, "true", 1]
        if "integer" in types:
            choices += [0, 1, 2, 8, 10 ** 6, -1, 2.0, 1.5]
        if "number" in types:
            choices += [0.0, 0.5, 1.0, 1.5, -1.0, 1e-4]
        if "string" in types:
            choices += ["x", "", "auto"]
        if "object" in types:
            choices += [{}, {"enabled": True}]
        if "array" in types:
            choices += [[], ["x"], [1]]
        if choices:
            return copy.deepcopy(rnd.choice(choices))
    return copy.deepcopy(rnd.choice(rnd.choice((NUMBERS, STRINGS, OTHERS))))


def _prop(section: str, key: str) -> dict | None:
    return keys().sections.get(section, {}).get(key)


# -- dict mutations: each changes `d` in place and returns a description, or None when it does not apply -----------
DictMutation = Callable[[random.Random, dict], "str | None"]


def m_move_key(rnd, d):
    present = [(s, k) for s in SECTIONS if (sec := _get(d, s)) is not None for k in sec]
    if present and rnd.random() < 0.75:
        src, key = rnd.choice(present)
        dst = rnd.choice([s for s in SECTIONS if s != src and not s.startswith(f"{src}/{key}")])
        sec, target = _get(d, src), _get(d, dst, create=True)
        if target is None or sec is None or key not in sec:
            return None
        target[key] = sec.pop(key)
        return f"moved {key} from {src or '/'} to {dst or '/'}"
    # a key that belongs in one section, written in another
    src = rnd.choice(SECTIONS)
    props = keys().sections.get(src) or {}
    if not props:
        return None
    key = rnd.choice(sorted(props))
    dst = rnd.choice([s for s in SECTIONS if s != src])
    target = _get(d, dst, create=True)
    if target is None:
        return None
    target[key] = _value_for(rnd, props[key], good=0.9)
    return f"put {src or '/'}'s {key} in {dst or '/'}"


def m_typo_key(rnd, d):
    members = _walk(d)
    if not members:
        return None
    ptr, parent, key, value = rnd.choice(members)
    new = _typo(rnd, key)
    if new is None or new in parent:
        return None
    items = list(parent.items())
    parent.clear()
    parent.update((new if k == key else k, v) for k, v in items)
    return f"renamed {ptr} to {new}"


def m_wrong_type(rnd, d):
    leaves = [m for m in _walk(d) if not isinstance(m[3], (dict, list))] or _walk(d)
    if not leaves:
        return None
    ptr, parent, key, value = rnd.choice(leaves)
    options: list[Any] = [None, [value], {}, "x"]
    if isinstance(value, bool):
        options += [str(value).lower(), int(value), "yes", "on", 2, "enabled"]
    elif isinstance(value, (int, float)):
        options += [str(value), json.dumps(value), True, False, f"{value}e0", [value, value]]
    elif isinstance(value, str):
        options += [1, 0, True, False, 3, [value]]
    elif value is None:
        options += [0, "null", "None", False]
    new = rnd.choice(options)
    parent[key] = new
    return f"{ptr}: {json.dumps(value)} -> {json.dumps(new)}"


AUTO_KEYS = ["/train_batch_size", "/train_micro_batch_size_per_gpu", "/gradient_accumulation_steps",
             "/gradient_clipping", "/steps_per_print", "/wall_clock_breakdown", "/communication_data_type",
             "/zero_optimization/stage", "/zero_optimization/reduce_bucket_size", "/zero_optimization/overlap_comm",
             "/zero_optimization/stage3_prefetch_bucket_size", "/zero_optimization/stage3_param_persistence_threshold",
             "/zero_optimization/stage3_gather_16bit_weights_on_model_save",
             "/zero_optimization/offload_optimizer/device",
             "/zero_optimization/offload_param/pin_memory", "/fp16/enabled", "/bf16/enabled", "/fp16/loss_scale",
             "/optimizer/type", "/optimizer/params/lr", "/optimizer/params/betas", "/scheduler/type",
             "/scheduler/params/warmup_max_lr", "/flops_profiler/enabled", "/tensorboard/enabled",
             "/checkpoint/tag_validation", "/data_types/grad_accum_dtype", "/aio/block_size"]


def m_auto(rnd, d):
    word = rnd.choice(["auto"] * 8 + ["Auto", "AUTO", " auto"])
    if rnd.random() < 0.5:
        leaves = [m for m in _walk(d) if not isinstance(m[3], dict)]
        if not leaves:
            return None
        ptr, parent, key, _ = rnd.choice(leaves)
        parent[key] = word
        return f"{ptr} = {word!r}"
    ptr = rnd.choice(AUTO_KEYS)
    parent_ptr, key = ptr.rsplit("/", 1)
    parent = _get(d, parent_ptr, create=True)
    if parent is None:
        return None
    parent[key] = word
    return f"{ptr} = {word!r}"


RANGE_KEYS = [("/zero_optimization", "stage", [4, -1, 5, 3.5, 10, 2.0, True]),
              ("/zero_optimization/offload_optimizer", "ratio", [1.5, 0.5, -0.1, 0, 1, 0.3]),
              ("/zero_optimization", "reduce_bucket_size", [0, -1, 5.5, 1e20, 2]),
              ("/zero_optimization", "allgather_bucket_size", [0, -5, 5, 5.5]),
              ("/zero_optimization", "stage3_max_live_parameters", [-1, 0, 1e9]),
              ("/zero_optimization", "sub_group_size", [0, -1, 1e12, 1e30]),
              ("/fp16", "loss_scale", [-1, 0, 128, 1.5, 1e40]),
              ("/fp16", "loss_scale_window", [0, -1, 1000, 0.5]),
              ("/fp16", "min_loss_scale", [0, -1, 0.5, 1]),
              ("/fp16", "hysteresis", [0, -1, 2]),
              ("/fp16", "initial_scale_power", [64, 16.5, -1, 0, 1000]),
              ("", "gradient_clipping", [-1.0, 0, 1e9]),
              ("", "steps_per_print", [0, -1, 10.5]),
              ("", "gradient_predivide_factor", [0, -1, 2.0]),
              ("", "sequence_parallel_size", [0, 2, -1]),
              ("/zero_optimization/zenflow", "topk_ratio", [1.5, 0, 0.5]),
              ("/aio", "block_size", [0, -1, 1.5]),
              ("/aio", "queue_depth", [0, -1]),
              ("/zero_optimization/offload_param", "buffer_count", [0, -1, 1.5]),
              ("/zero_optimization/offload_optimizer", "buffer_count", [0, -1, 1.5]),
              ("", "train_micro_batch_size_per_gpu", [0, -1, 1.5, 4.0]),
              ("/activation_checkpointing", "number_checkpoints", [0, -1, 1.5])]


def m_out_of_range(rnd, d):
    if rnd.random() < 0.5:
        nums = [m for m in _walk(d) if isinstance(m[3], (int, float)) and not isinstance(m[3], bool)]
        if not nums:
            return None
        ptr, parent, key, value = rnd.choice(nums)
        new = rnd.choice([-1, 0, -value, value + 0.5, value * 1e12, 10 ** 20, 1e300, 0.5, 2 ** 63, float(value)])
        if isinstance(new, float) and new != new:
            return None
        parent[key] = new
        return f"{ptr}: {json.dumps(value)} -> {json.dumps(new)}"
    section, key, values = rnd.choice(RANGE_KEYS)
    parent = _get(d, section, create=True)
    if parent is None:
        return None
    parent[key] = rnd.choice(values)
    return f"{section}/{key} = {json.dumps(parent[key])}"


def m_removed(rnd, d):
    removed = keys().removed
    section, key = rnd.choice(removed)
    parent = _get(d, section, create=True)
    if parent is None:
        return None
    parent[key] = rnd.choice([{"enabled": False}, {"enabled": True}, {}, True, False, None, 1, {"opt_level": "O1"}])
    return f"added removed {section}/{key} = {json.dumps(parent[key])}"


def m_precision(rnd, d):
    vals = [True, False, "auto", "true", "false", 1, 0, 2, None, "yes"]
    what = []
    for sec in rnd.sample(["/fp16", "/bf16", "/bfloat16"], rnd.randint(1, 3)):
        r = rnd.random()
        if r < 0.08:
            d[sec[1:]] = rnd.choice([True, False, None, [], "bf16", 1])
            what.append(f"{sec} = {json.dumps(d[sec[1:]])}")
            continue
        block = _get(d, sec, create=True)
        if block is None:
            continue
        block["enabled"] = rnd.choice(vals)
        what.append(f"{sec}/enabled = {json.dumps(block['enabled'])}")
        if rnd.random() < 0.4:
            k = rnd.choice(["loss_scale", "loss_scale_window", "min_loss_scale", "hysteresis", "initial_scale_power",
                            "auto_cast", "consecutive_hysteresis", "fp16_master_weights_and_grads",
                            "bf16_master_weights_and_grads", "bf16_optimizer_states", "immediate_grad_update",
                            "check_overflow", "check_grad_overflow", "type"])
            block[k] = rnd.choice([True, False, 0, 1, -1, 0.5, 16, 1000, "auto", None])
            what.append(f"{sec}/{k} = {json.dumps(block[k])}")
    if rnd.random() < 0.3:
        z = _get(d, "/zero_optimization", create=True)
        if z is not None:
            z["stage"] = rnd.choice([0, 1, 2, 3])
            what.append(f"stage {z['stage']}")
    return "; ".join(what) or None


BATCH_VALUES: list[Any] = ["absent", None, 0, -1, 1, 2, 3, 4, 4, 8, 8, 10, 16, 32, 64, "4", 4.0, 8.5, True, "auto",
                           [4]]


def m_batch(rnd, d):
    what = []
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        if rnd.random() < 0.3:
            continue  # keep what the base has
        v = rnd.choice(BATCH_VALUES)
        if v == "absent":
            d.pop(key, None)
        else:
            d[key] = v
        what.append(f"{key}={json.dumps(v) if v != 'absent' else '-'}")
    return ", ".join(what) or None


def m_deprecated(rnd, d):
    section, key, new = rnd.choice(keys().deprecated)
    parent = _get(d, section, create=True)
    if parent is None:
        return None
    parent[key] = _value_for(rnd, _prop(section, key), good=0.9)
    what = f"{section}/{key} = {json.dumps(parent[key])}"
    if rnd.random() < 0.6:
        head = new.split(".")[0]
        target_section = "" if new in ("bf16",) else section
        tp = _get(d, target_section)
        if tp is not None:
            tp[head] = _value_for(rnd, _prop(target_section, head), good=0.9)
            what += f" + {head} = {json.dumps(tp[head])}"
    return what


def m_alias(rnd, d):
    section, name, alias = rnd.choice(keys().aliases)
    parent = _get(d, section, create=True)
    if parent is None:
        return None
    prop = _prop(section, name)
    pick = rnd.random()
    if pick < 0.6:
        parent[name], parent[alias] = _value_for(rnd, prop, 0.9), _value_for(rnd, prop, 0.9)
        return f"{section}/{name} and alias {alias}"
    one = name if pick < 0.8 else alias
    parent[one] = _value_for(rnd, prop, 0.8)
    return f"{section}/{one} = {json.dumps(parent[one])}"


def m_nvme(rnd, d):
    z = _get(d, "/zero_optimization", create=True)
    if z is None:
        return None
    z["stage"] = rnd.choice([0, 1, 2, 3, 3])
    what = [f"stage {z['stage']}"]
    for which in rnd.sample(["offload_optimizer", "offload_param"], rnd.randint(1, 2)):
        block = {"device": rnd.choice(["nvme", "nvme", "cpu", "none", "NVMe", "auto"])}
        path = rnd.choice(["absent", None, "/local_nvme", "", "auto", 1])
        if path != "absent":
            block["nvme_path"] = path
        if rnd.random() < 0.3:
            block["pin_memory"] = rnd.choice([True, False, "auto"])
        if rnd.random() < 0.2:
            block[rnd.choice(["buffer_count", "buffer_size", "max_in_cpu", "ratio", "fast_init"])] = \
                rnd.choice([0, 1, 4, 0.5, 1e9, True])
        z[which] = block
        what.append(f"{which}={json.dumps(block)}")
    if rnd.random() < 0.3:
        d["aio"] = {"block_size": rnd.choice([1048576, 0, "1M"]), rnd.choice(["thread_count", "intra_op_parallelism",
                                                                               "use_gds"]): rnd.choice([1, True, 0])}
        what.append(f"aio={json.dumps(d['aio'])}")
    return "; ".join(what)


def m_shape(rnd, d):
    key = rnd.choice(["zero_optimization", "zero_optimization", "fp16", "bf16", "optimizer", "scheduler",
                      "activation_checkpointing", "aio", "checkpoint", "tensorboard", "flops_profiler", "pipeline",
                      "data_types", "compile", "comms_logger", "timers", "torch_autocast", "wandb"])
    d[key] = rnd.choice([True, False, None, [], 1, 0, "3", "yes", {}, [{"stage": 2}], 2.5])
    return f"{key} = {json.dumps(d[key])}"


def m_known_key(rnd, d):
    k = keys()
    section = rnd.choice(sorted(k.sections))
    props = k.sections[section]
    if not props:
        return None
    key = rnd.choice(sorted(props))
    parent = _get(d, section, create=True)
    if parent is None:
        return None
    parent[key] = _value_for(rnd, props[key], good=0.65)
    return f"{section}/{key} = {json.dumps(parent[key])}"


def m_delete(rnd, d):
    members = _walk(d)
    if not members:
        return None
    ptr, parent, key, _ = rnd.choice(members)
    del parent[key]
    return f"deleted {ptr}"


DICT_MUTATIONS: dict[str, DictMutation] = {
    "move-key": m_move_key, "typo-key": m_typo_key, "wrong-type": m_wrong_type, "auto": m_auto,
    "out-of-range": m_out_of_range, "removed-block": m_removed, "precision": m_precision, "batch": m_batch,
    "deprecated": m_deprecated, "alias": m_alias, "nvme": m_nvme, "section-shape": m_shape,
    "known-key": m_known_key, "delete": m_delete,
}


def m_combo(rnd, d):
    names = rnd.sample(sorted(DICT_MUTATIONS), rnd.randint(2, 3))
    done = [f"{n}: {w}" for n in names if (w := DICT_MUTATIONS[n](rnd, d))]
    return " | ".join(done) if len(done) >= 2 else None


# -- text mutations: each returns the new bytes and a description, or None ----------------------------------------
_MEMBER = re.compile(r'("(?:[^"\\\n]|\\.)*")(\s*:\s*)(-?\d[\d.eE+-]*|true|false|null|"(?:[^"\\\n]|\\.)*")')
LITERALS = ['"auto"', '"4"', "4.0", "1e9", "-1", "0", "true", "null", "[1]", "{}", '"CPU"', "5e8", "1.5", "2",
            '"true"', "1E3", "0.0", "1e400", "-0", '"3"', "3", "8.00", "1_000", "0x10", "+1", ".5", "1.", '"nvme"',
            '"Auto"', "True", "'cpu'", "16e-1"]


def _members(text: str) -> list[re.Match]:
    return list(_MEMBER.finditer(text))


def t_value(rnd, text):
    ms = _members(text)
    if not ms:
        return None
    m = rnd.choice(ms)
    new = rnd.choice(LITERALS)
    return text[:m.start(3)] + new + text[m.end(3):], f"{m.group(1)}: {m.group(3)} -> {new} (in text)"


def t_key(rnd, text):
    ms = _members(text)
    if not ms:
        return None
    m = rnd.choice(ms)
    key = json.loads(m.group(1))
    new = _typo(rnd, key)
    if new is None:
        return None
    return text[:m.start(1)] + json.dumps(new) + text[m.end(1):], f"renamed {key} to {new} (in text)"


def t_duplicate(rnd, text):
    ms = _members(text)
    if not ms:
        return None
    m = rnd.choice(ms)
    value = m.group(3) if rnd.random() < 0.5 else rnd.choice(LITERALS[:12])
    key = m.group(1)
    if rnd.random() < 0.15:
        key = key.upper()  # not a duplicate: keys are case-sensitive
    insert = f", {key}: {value}"
    return text[:m.end(3)] + insert + text[m.end(3):], f"duplicated {m.group(1)} (second = {value})"


def t_hjson(rnd, text):
    lines = text.split("\n")
    op = rnd.choice(["line-comment", "hash-comment", "block-comment", "trailing-comma", "unquote-key",
                     "quoteless", "quoteless-comment", "single-quote", "no-root-braces", "missing-comma"])
    if op in ("line-comment", "hash-comment"):
        candidates = [i for i, ln in enumerate(lines) if ln.strip()]
        if not candidates:
            return None
        i = rnd.choice(candidates)
        lines[i] += rnd.choice(["  // note", "  # note", " //", "  # stage 3: \"x\", {"])
        if op == "hash-comment":
            lines.insert(i, "# a comment line")
        return "\n".join(lines), f"{op} at line {i + 1}"
    if op == "block-comment":
        commas = [m.end() for m in re.finditer(r",", text)]
        if not commas:
            return None
        at = rnd.choice(commas)
        return text[:at] + " /* block, comment */ " + text[at:], "block comment"
    if op == "trailing-comma":
        ends = [m.start(2) for m in re.finditer(r'([^\s{\[,])(\s*)[}\]]', text)]
        if not ends:
            return None
        at = rnd.choice(ends)
        return text[:at] + "," + text[at:], "trailing comma"
    ms = _members(text)
    if op == "unquote-key":
        simple = [m for m in ms if re.fullmatch(r'"[A-Za-z_][A-Za-z0-9_]*"', m.group(1))]
        if not simple:
            return None
        m = rnd.choice(simple)
        return text[:m.start(1)] + m.group(1)[1:-1] + text[m.end(1):], f"unquoted key {m.group(1)}"
    if op in ("quoteless", "quoteless-comment"):
        strs = [m for m in ms if m.group(3).startswith('"') and re.fullmatch(r'"[A-Za-z0-9_./-]+"', m.group(3))]
        if not strs:
            return None
        m = rnd.choice(strs)
        # A quoteless value runs to the end of the line, so it needs a line of its own.
        tail = "  # fused" if op == "quoteless-comment" else ""
        return (text[:m.start(3)] + m.group(3)[1:-1] + tail + "\n" + text[m.end(3):],
                f"{op} {m.group(1)}: {m.group(3)[1:-1]}{tail}")
    if op == "single-quote":
        strs = [m for m in ms if m.group(3).startswith('"') and "'" not in m.group(3)]
        if not strs:
            return None
        m = rnd.choice(strs)
        return text[:m.start(3)] + "'" + m.group(3)[1:-1] + "'" + text[m.end(3):], f"single-quoted {m.group(1)}"
    if op == "no-root-braces":
        s, e = text.find("{"), text.rfind("}")
        if s < 0 or e <= s:
            return None
        return text[:s] + text[s + 1:e] + text[e + 1:], "root braces omitted"
    if op == "missing-comma":
        commas = [m.start() for m in re.finditer(r",\s*\n", text)]
        if not commas:
            return None
        at = rnd.choice(commas)
        return text[:at] + text[at + 1:], "missing comma at a line end"
    return None


def t_syntax(rnd, text):
    op = rnd.choice(["delete-char", "truncate", "stray-char", "nonfinite", "root", "unbalanced", "empty"])
    if op == "delete-char":
        spots = [i for i, c in enumerate(text) if c in '{}[],:"']
        if not spots:
            return None
        i = rnd.choice(spots)
        return text[:i] + text[i + 1:], f"deleted {text[i]!r} at offset {i}"
    if op == "truncate":
        if len(text) < 4:
            return None
        i = rnd.randrange(1, len(text) - 1)
        return text[:i], f"truncated at offset {i}"
    if op == "stray-char":
        i = rnd.randrange(len(text) + 1)
        c = rnd.choice(list("}]{[:,;=\\'\"x0"))
        return text[:i] + c + text[i:], f"inserted {c!r} at offset {i}"
    if op == "nonfinite":
        ms = [m for m in _members(text) if m.group(3)[0] in "-0123456789"]
        if not ms:
            return None
        m = rnd.choice(ms)
        new = rnd.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "nan", "inf"])
        return text[:m.start(3)] + new + text[m.end(3):], f"{m.group(1)}: {new}"
    if op == "root":
        new = rnd.choice(["[]", "null", '"ds_config.json"', "42", "[" + text + "]", "true", "{}", " ", "{ }", "[{}]"])
        return new, f"document replaced by {new[:20]!r}"
    if op == "unbalanced":
        return text.rstrip() + rnd.choice(["}", "]", "\n}", "{"]), "unbalanced bracket at the end"
    return "", "empty file"


def t_encoding(rnd, data: bytes) -> tuple[bytes, str] | None:
    op = rnd.choice(["bom", "bad-byte", "utf16", "control-char", "tab-in-string", "latin1", "non-ascii", "nul"])
    text = data.decode("utf-8", "replace")
    if op == "bom":
        return b"\xef\xbb\xbf" + data, "UTF-8 BOM"
    if op == "utf16":
        return text.encode("utf-16"), "UTF-16 with BOM"
    strs = [m for m in _members(text) if m.group(3).startswith('"') and len(m.group(3)) > 2]
    if not strs:
        return None
    m = rnd.choice(strs)
    at = m.start(3) + 1
    ins = {"bad-byte": b"\xff", "control-char": b"\x01", "tab-in-string": b"\t", "latin1": b"caf\xe9",
           "non-ascii": "caf\u00e9 \u2713".encode(), "nul": b"\x00"}[op]
    enc = text.encode("utf-8")
    pos = len(text[:at].encode("utf-8"))
    return enc[:pos] + ins + enc[pos:], f"{op} inside {m.group(1)}"


TEXT_MUTATIONS = {"text-value": t_value, "text-key": t_key, "duplicate-key": t_duplicate, "hjson-syntax": t_hjson,
                  "syntax-error": t_syntax}

# Relative weights: every kind gets a few hundred cases in a 5,000-case run.
WEIGHTS = {"move-key": 8, "typo-key": 7, "wrong-type": 9, "auto": 7, "out-of-range": 8, "removed-block": 4,
           "precision": 7, "batch": 7, "deprecated": 4, "alias": 4, "nvme": 4, "section-shape": 4, "known-key": 12,
           "delete": 3, "combo": 8, "text-value": 8, "text-key": 4, "duplicate-key": 4, "hjson-syntax": 6,
           "syntax-error": 4, "encoding": 3}


class _Ring:
    """Picks a base for a mutation: each base owns points on a 64-bit ring, placed by hashing its bytes (not its
    position or id: a case inserted above renumbers the ids below it), and a draw takes the next point's owner. Adding
    a base moves only the draws landing just before its points (about 1/len of them); removing one moves its own."""

    POINTS = 16  # per base: evens out the arcs' lengths

    def __init__(self, items: list, data: Callable[[Any], bytes]) -> None:
        pts = sorted((int.from_bytes(hashlib.blake2b(data(it) + b"#%d" % v, digest_size=8).digest(), "big"), n)
                     for n, it in enumerate(items) for v in range(self.POINTS))
        self.items, self.points, self.owners = items, [p for p, _ in pts], [n for _, n in pts]

    def pick(self, rnd: random.Random):
        return self.items[self.owners[bisect.bisect(self.points, rnd.getrandbits(64)) % len(self.points)]]


def mutations(count: int, seed: int, bases: list[Case] | None = None) -> list[Case]:
    """`count` distinct mutated configs, the same ones for the same seed and bases; mutation i (id "mut:SEED:i")
    stays the same when bases are added or removed, unless its base pick lands on one of them."""
    bases = bases if bases is not None else base_cases()
    parsed = [(b, d) for b in bases if (d := _load(b.text)) is not None]
    rings = (_Ring(bases, lambda b: b.data), _Ring(parsed, lambda bd: bd[0].data))
    kinds = sorted(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    seen = {b.data for b in bases}
    out: list[Case] = []
    for i in range(count):
        for attempt in range(200):
            rnd = random.Random(f"{seed}:{i}:{attempt}")  # a str seed is hashed with SHA-512: the same on every run
            kind = rnd.choices(kinds, weights)[0]
            result = _one(rnd, kind, *rings)
            if result is not None and result[0] not in seen:
                break
        else:
            raise RuntimeError("the generator keeps producing duplicates or inapplicable mutations")
        data, source, what = result
        seen.add(data)
        out.append(Case(f"mut:{seed}:{i}", kind, data, source, what))
    return out


def _one(rnd, kind, bases: _Ring, parsed: _Ring):
    if kind in DICT_MUTATIONS or kind == "combo":
        base, d = parsed.pick(rnd)
        d = copy.deepcopy(d)
        if rnd.random() < 0.7:
            resolve_auto(d)  # mostly mutate a config DeepSpeed could otherwise run, as the HF Trainer hands it over
        what = (m_combo if kind == "combo" else DICT_MUTATIONS[kind])(rnd, d)
        if what is None:
            return None
        indent = rnd.choice([None, 2, 2, 4])
        text = json.dumps(d, indent=indent, ensure_ascii=rnd.random() < 0.5) + ("\n" if indent else "")
        return text.encode("utf-8"), base.id, what
    base = bases.pick(rnd)
    if kind == "encoding":
        r = t_encoding(rnd, base.data)
        return None if r is None else (r[0], base.id, r[1])
    try:
        text = base.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    r = TEXT_MUTATIONS[kind](rnd, text)
    return None if r is None else (r[0].encode("utf-8"), base.id, r[1])
