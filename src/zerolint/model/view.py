"""What a consumer really sees in a config: the one place that knows DeepSpeed's semantics.

Rules ask the view (effective ZeRO stage, precision, offload devices, what "auto" means here, which
sections are strict, which defaults apply to this DeepSpeed version); they never re-derive them.

Facts encoded here are from the DeepSpeed 0.19.8 source unless a version gate says otherwise:
- "auto" in a strict (pydantic) section is deleted before validation: the default applies
  (runtime/config_utils.py:54-56). fp16/bf16 became strict in 0.17.1; before that "auto" was truthy
  (v0.17.0 runtime/config.py: `get_fp16_enabled` returned the raw value).
- `bfloat16` is read only when `bf16` is absent or null (runtime/precision_config.py:34-38).
- `zero_optimization` may be a bool (legacy: true means stage 1, zero/config.py:60-75).
- Deprecated `cpu_offload`/`cpu_offload_param` set the offload blocks to cpu (zero/config.py:188-220).
- Offload blocks default to device "none" (zero/offload_config.py:24, 58).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from ..base import pointer as jp
from . import consumers, dsfacts
from .diagnostics import Finding, Severity
from .document import ARRAY, BOOL, NULL, NUMBER, OBJECT, STRING, Document, Node
from .dsfacts import DTYPE_NAMES, placeholder_text
from .schema import _FALSE as PYDANTIC_FALSE
from .schema import _TRUE as PYDANTIC_TRUE
from .schema import Schema, SchemaIssue, load_schema, pydantic_number
from .versions import DEFAULT_DEEPSPEED_VERSION, Version, installed_deepspeed, matches, schema_line

MISSING: Any = object()

# Defaults that changed inside a schema line (the schema carries the line's newest default).
# pointer pattern -> list of (first version with the new default, old default, new default)
DEFAULT_DRIFT: dict[str, list[tuple[str, Any, Any]]] = {
    "/gradient_clipping": [("0.19.3", 0.0, 1.0)],  # PR #8068
    "/zero_optimization/offload_optimizer/pin_memory": [("0.19.5", False, True)],  # PR #8207
    "/zero_optimization/offload_param/pin_memory": [("0.19.5", False, True)],
}

ZERO = "/zero_optimization"

# zero_optimization keys that only ZeRO stage 3 reads (engine.py:2655-2708 passes none of them to the stage 1/2
# optimizer). Both spellings of aliased keys are listed.
STAGE3_ONLY = (
    "stage3_prefetch_bucket_size", "prefetch_bucket_size", "stage3_param_persistence_threshold",
    "param_persistence_threshold", "stage3_model_persistence_threshold", "model_persistence_threshold",
    "stage3_max_live_parameters", "max_live_parameters", "stage3_max_reuse_distance", "max_reuse_distance",
    "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save", "stage3_module_granularity_threshold",
    "module_granularity_threshold", "stage3_use_all_reduce_for_fetch_params", "use_all_reduce_for_fetch_params",
    "stage3_allgather_sequential", "allgather_sequential", "sub_group_size", "zero_hpz_partition_size",
    "zero_quantized_weights", "zero_quantized_nontrainable_weights", "zero_quantized_gradients",
)


@dataclass
class Settings:
    """What the user asked for; the view resolves it against the document."""

    target: str = "auto"  # deepspeed | hf | accelerate | auto
    deepspeed_version: str | None = None  # None: installed deepspeed, else DEFAULT_DEEPSPEED_VERSION
    world_size: int | None = None
    # What the HF Trainer / Accelerate bring besides the config (zerolint/integrations/hf.py): a TrainingArguments dump
    # (`--training-args`, a dict with defaults filled) and the Accelerate config YAML that names this file.
    training_args: dict | None = None
    accelerate: Any = None
    # Model size and hardware for the memory rules (ZL801, zerolint/estimate/memory.py); None: unknown, those rules stay
    # quiet. `params` is a count or "7B"; `model` a Hugging Face config.json path; memory "80GB" or bytes.
    params: int | str | None = None
    model: str | None = None
    gpu_memory: int | str | None = None
    host_memory: int | str | None = None
    gpus_per_node: int | None = None


class View:
    def __init__(self, doc: Document, settings: Settings | None = None) -> None:
        self.doc = doc
        self.settings = settings or Settings()
        self.version = Version(self.settings.deepspeed_version or default_deepspeed_version())
        self.world_size = self.settings.world_size
        self.target_requested = self.settings.target
        self.target = self._resolve_target()

    # -- who is reading ---------------------------------------------------------------------------------------
    def _resolve_target(self) -> str:
        if self.target_requested != "auto":
            return self.target_requested
        return "hf" if self.auto_nodes else "deepspeed"

    @property
    def consumer(self) -> str:
        """Display name of the target: 'DeepSpeed', 'the HF Trainer', 'Accelerate'."""
        return consumers.DISPLAY[self.target]

    @property
    def raw_deepspeed(self) -> bool:
        return self.target == "deepspeed"

    def since(self, spec: str) -> bool:
        """True when the target DeepSpeed version matches `spec` (e.g. '>=0.19.7')."""
        return matches(self.version, spec)

    # -- the document -----------------------------------------------------------------------------------------
    @property
    def root(self) -> Node | None:
        r = self.doc.root
        return r if r is not None and r.kind == OBJECT else None

    def node(self, pointer: str) -> Node | None:
        return self.doc.node(pointer) if self.root is not None else None

    def has(self, pointer: str) -> bool:
        return self.node(pointer) is not None

    def value(self, pointer: str, default: Any = None) -> Any:
        n = self.node(pointer)
        return default if n is None else n.to_python()

    def members(self, pointer: str) -> list:
        n = self.node(pointer)
        return list(n.members or ()) if n is not None and n.kind == OBJECT else []

    @cached_property
    def auto_nodes(self) -> list[Node]:
        """Every value that is the string "auto" (any case) — placeholders for HF/Accelerate to fill."""
        if self.doc.root is None:
            return []
        return [n for n in self.doc.root.walk() if n.kind == STRING and isinstance(n.value, str)
                and n.value.strip().lower() == "auto"]

    @staticmethod
    def is_auto(node: Node | None) -> bool:
        return node is not None and node.kind == STRING and node.value == "auto"

    def fills_auto(self, pointer: str) -> bool:
        """Whether the target consumer replaces an "auto" at this pointer before DeepSpeed sees it."""
        if pointer in consumers.ZERO3_ONLY_FILLS and self.target == "hf" and self.zero_stage not in (3, None):
            return False
        return consumers.fills_auto(self.target, pointer)

    def number(self, node: Node | None) -> int | float | None:
        """A numeric value as this consumer gets it: hjson (DeepSpeed reading a file) makes an integral
        `5e8` or `2.0` an int; json (HF, Accelerate) keeps it a float."""
        if node is None or node.kind != NUMBER or isinstance(node.value, bool):
            return None
        v = node.value
        if self.raw_deepspeed and isinstance(v, float) and v.is_integer() and abs(v) < 1e10:
            return int(v)
        return v

    # -- schema -----------------------------------------------------------------------------------------------
    @cached_property
    def schema(self) -> Schema:
        return load_schema(schema_line(self.version))

    def strictness(self, pointer: str) -> str | None:
        """'rejected' (strict: unknown keys fail at parse), 'ignored' (lax), 'rejected_at_init', or None."""
        if self.unread(pointer):
            return "ignored"
        return self.schema.unknown_policy(pointer)

    def is_strict(self, pointer: str) -> bool:
        return self.strictness(pointer) == "rejected"

    def unread(self, pointer: str) -> bool:
        """True for what DeepSpeed never reads, so never validates: the legacy `bfloat16` block (and everything in
        it) when `bf16` is also given (precision_config.py:34-38)."""
        return jp.split(pointer)[:1] == ["bfloat16"] and self.bf16_section != "/bfloat16"

    @cached_property
    def schema_issues(self) -> list[SchemaIssue]:
        if self.root is None:
            return []
        issues = self.schema.walk(self.root, skip_value=lambda n: n.kind == STRING and n.value.lower() == "auto")
        for issue in issues:
            # A strict (pydantic) section drops every member whose value is exactly "auto" before validating
            # (config_utils.py:54-56), an unknown key included; and a block DeepSpeed never reads is never checked.
            if issue.kind == "unknown-key" and issue.unknown == "rejected" and (
                    self.is_auto(issue.node) or self.unread(issue.pointer)):
                issue.unknown = "ignored"
        return issues

    def issues(self, kind: str) -> list[SchemaIssue]:
        return [i for i in self.schema_issues if i.kind == kind]

    def prop_schema(self, pointer: str) -> dict[str, Any] | None:
        return self.schema.at(pointer)

    def default(self, pointer: str) -> Any:
        for since, old, new in DEFAULT_DRIFT.get(pointer, ()):
            return new if self.since(f">={since}") else old
        s = self.schema.at(pointer)
        return s.get("default", MISSING) if isinstance(s, dict) else MISSING

    # -- ZeRO -------------------------------------------------------------------------------------------------
    @property
    def zero(self) -> Node | None:
        n = self.node(ZERO)
        return n if n is not None and n.kind == OBJECT else None

    def zero_field(self, name: str) -> Node | None:
        """A zero_optimization field under either of its names (e.g. `stage3_prefetch_bucket_size` or
        `prefetch_bucket_size`); the alias wins when both are given, as in pydantic."""
        z = self.zero
        if z is None:
            return None
        props = (self.schema.section(ZERO) or {}).get("properties", {})
        canonical = props.get(name, {}).get("x-zerolint-alias-of", name)
        aliases = props.get(canonical, {}).get("x-zerolint-aliases", [])
        for key in [*aliases, canonical]:  # pydantic reads the alias first
            if z.get(key) is not None:
                return z.get(key)
        return None

    @cached_property
    def zero_stage(self) -> int | None:
        """The ZeRO stage DeepSpeed will run, or None when it is decided at run time (filled "auto") or the value
        is invalid (a structural rule reports that)."""
        z = self.node(ZERO)
        if z is None:
            return 0
        if z.kind == "boolean":
            return 1 if z.value else 0
        if z.kind != OBJECT:
            return None
        stage = z.get("stage")
        if stage is None:
            return 0
        if self.is_auto(stage):
            return None if self.fills_auto(stage.pointer) else 0
        return coerce_stage(stage)

    # -- model and hardware (memory rules) ----------------------------------------------------------------------
    @cached_property
    def model_spec(self):
        """The model (a `zerolint.modelspec.ModelSpec`) from settings.model / settings.params, or None."""
        if not self.settings.model and self.settings.params is None:
            return None  # (what resolve() says too, without importing modelspec on every run)
        from ..estimate.modelspec import resolve

        return resolve(params=self.settings.params, model=self.settings.model)

    @cached_property
    def gpu_memory(self) -> int | None:
        """Bytes per GPU the job may use (settings.gpu_memory), or None."""
        if self.settings.gpu_memory is None:
            return None
        from ..estimate.memory import parse_bytes

        return parse_bytes(self.settings.gpu_memory)

    @cached_property
    def host_memory(self) -> int | None:
        """Bytes of host memory per node (settings.host_memory), or None."""
        if self.settings.host_memory is None:
            return None
        from ..estimate.memory import parse_bytes

        return parse_bytes(self.settings.host_memory)

    def offload_device(self, which: str) -> str | None:
        """'none' | 'cpu' | 'nvme' for which in ('optimizer', 'param'); None when filled at run time or invalid."""
        block = self.node(f"{ZERO}/offload_{which}")
        legacy = self.node(f"{ZERO}/cpu_offload" if which == "optimizer" else f"{ZERO}/cpu_offload_param")
        if (block is None or block.kind == "null") and legacy is not None and legacy.value is True:
            return "cpu"
        if block is None or block.kind == "null":
            return "none"
        if block.kind != OBJECT:
            return None
        dev = block.get("device")
        if dev is None:
            return "none"
        if self.is_auto(dev):
            return None if self.fills_auto(dev.pointer) else "none"
        return dev.value if dev.value in ("none", "cpu", "nvme") else None

    def offloads(self, which: str) -> bool:
        return self.offload_device(which) in ("cpu", "nvme")

    # -- precision ----------------------------------------------------------------------------------------------
    def _enabled(self, section: str) -> bool | None:
        node = self.node(section)
        if node is None or node.kind != OBJECT:
            return False
        en = node.get("enabled")
        if en is None:
            return False
        if self.is_auto(en):
            if self.fills_auto(en.pointer):
                return None
            # Strict since 0.17.1: "auto" is dropped, so the section is off; before that the raw string was
            # truthy and switched it on.
            return not self.since(">=0.17.1")
        if en.kind == "boolean":
            return en.value
        if en.kind == NUMBER:
            return bool(en.value)
        if en.kind == STRING:
            if not self.since(">=0.17.1"):
                return bool(en.value)  # a plain dict before 0.17.1: any non-empty string is truthy
            word = en.value.strip().lower()  # pydantic's lax bool parsing (schema.py _TRUE/_FALSE)
            return True if word in PYDANTIC_TRUE else False if word in PYDANTIC_FALSE else None
        return None

    @property
    def bf16_section(self) -> str:
        """Which key DeepSpeed reads bf16 settings from: `bf16`, or the legacy `bfloat16` when `bf16` is absent."""
        b = self.node("/bf16")
        if (b is None or b.kind == "null") and self.has("/bfloat16"):
            return "/bfloat16"
        return "/bf16"

    @property
    def fp16_enabled(self) -> bool | None:
        return self._enabled("/fp16")

    @property
    def bf16_enabled(self) -> bool | None:
        return self._enabled(self.bf16_section)

    @property
    def precision(self) -> str | None:
        """'fp16' | 'bf16' | 'fp32', or None when decided at run time."""
        fp16, bf16 = self.fp16_enabled, self.bf16_enabled
        if fp16 is None or bf16 is None:
            return None
        return "fp16" if fp16 else "bf16" if bf16 else "fp32"

    # -- effective values (ZeRO combination and memory rules) ----------------------------------------------------
    @staticmethod
    def is_placeholder(node: Node | None) -> bool:
        """A whole value that is a template placeholder (`${stage}`, `{{ bs }}`, `$STAGE`, or an hjson quoteless
        `CONFIG_BATCH_SIZE`): the file is a template, and type rules have nothing to say about it."""
        return placeholder_of(node) is not None

    def effective(self, pointer: str, kind: str = "bool") -> Any:
        """The value DeepSpeed ends up with at `pointer` ("bool" | "int" | "number" | "str"): the default when the
        key is absent (or an "auto" that a strict section drops), None when it is decided at run time (filled
        "auto", a template placeholder), MISSING when the value is invalid (structural rules report it)."""
        n = self.node(pointer)
        strict = self.is_strict(jp.parent(pointer))
        if n is None or (n.kind == "null" and kind != "str" and self.default(pointer) is None):
            return self.default(pointer)
        if self.is_auto(n):
            if self.fills_auto(pointer):
                return None
            return self.default(pointer) if strict else MISSING
        if self.is_placeholder(n):
            return None
        v = n.value
        if kind == "bool":
            if n.kind == "boolean":
                return v
            if n.kind == NUMBER and v in (0, 1):
                return bool(v)
            if strict and n.kind == STRING and v.strip().lower() in _PYDANTIC_BOOL:
                return _PYDANTIC_BOOL[v.strip().lower()]
            return MISSING
        if kind in ("int", "number"):
            num = self.number(n)
            if num is None and strict and n.kind == STRING:
                num = pydantic_number(v, integer=kind == "int")  # "3", "1_000", "0.3": pydantic's lax parsing
            if num is None:
                return MISSING
            if kind == "int":
                if not (isinstance(num, int) or float(num).is_integer()):  # no float() of a 400-digit int
                    return MISSING
                return int(num) if strict else num  # pydantic makes an int; a lax key keeps what the reader gave
            return num
        return v if n.kind == STRING else MISSING

    @property
    def overlap_comm(self) -> bool | None:
        """zero_optimization.overlap_comm as DeepSpeed resolves it: unset/null/dropped "auto" means True for
        stage 3 and False below (zero/config.py:383-387); None when unknown."""
        n = self.node(f"{ZERO}/overlap_comm")
        if n is None or n.kind == "null" or (self.is_auto(n) and not self.fills_auto(n.pointer)):
            return None if self.zero_stage is None else self.zero_stage == 3
        v = self.effective(f"{ZERO}/overlap_comm", "bool")
        return v if isinstance(v, bool) else None

    @property
    def model_dtype(self) -> str | None:
        """'fp16' | 'bf16' | 'fp32': the dtype DeepSpeed trains the model in (engine.py:1799-1804)."""
        return self.precision

    @property
    def grad_accum_dtype(self) -> str | None:
        """data_types.grad_accum_dtype as a canonical name; the model dtype when unset (engine.py:1806-1809);
        None when unknown or not a dtype DeepSpeed knows."""
        n = self.node("/data_types/grad_accum_dtype")
        if n is None or n.kind == "null":
            return self.model_dtype
        return DTYPE_NAMES.get(n.value) if n.kind == STRING else None

    def zero12_reduce_buffer(self) -> tuple[int, str] | None:
        """(elements, dtype) of ONE ZeRO-1/2 gradient reduce bucket (stage_1_and_2.py:3255-3279): reduce_bucket_size
        elements of the grad-accumulation dtype for stage 1 when it differs from the model dtype
        (stage_1_and_2.py:397-404, 1253-1254), else of the model dtype. overlap_comm allocates a second one. None
        when the stage is not 1/2, a value is unknown, or stage 1 + bf16 + fp32 accumulation without CPU
        offload selects the BF16_Optimizer, which has no such buckets (engine.py:2305-2310)."""
        if self.zero_stage not in (1, 2):
            return None
        size = self.effective(f"{ZERO}/reduce_bucket_size", "int")
        model, accum = self.model_dtype, self.grad_accum_dtype
        if not isinstance(size, int) or size <= 0 or model is None or accum is None:
            return None
        if self.zero_stage == 1 and model == "bf16" and accum == "fp32" and self.offload_device("optimizer") != "cpu":
            return None
        dtype = accum if self.zero_stage == 1 and accum != model else model
        return size, dtype

    # -- optimizer and scheduler (ZL6xx; the tables live in dsfacts) ----------------------------------------------
    def plain_string(self, pointer: str) -> str | None:
        """A string value as DeepSpeed would use it, or None when absent, not a string, "auto" (the "auto" rules
        report it), a template placeholder, or an hjson quoteless value that swallowed a comment (ZL004)."""
        n = self.node(pointer)
        if n is None or n.kind != STRING or not isinstance(n.value, str):
            return None
        if n.value.strip().lower() == "auto" or dsfacts.placeholder_text(n.value, n.quoteless) is not None:
            return None
        if n.quoteless and any(m in n.value for m in ("#", "//", "/*")):
            return None
        return n.value

    @property
    def optimizer_type(self) -> str | None:
        """optimizer.type as written (see plain_string); None when there is no optimizer in the config."""
        if self.node("/optimizer") is None or self.node("/optimizer").kind != OBJECT:
            return None
        return self.plain_string("/optimizer/type")

    @property
    def optimizer_name(self) -> str | None:
        """The name DeepSpeed dispatches on: lower-cased when it is one of DeepSpeed's own optimizers (for the
        target version, so OneBitAdam only before 0.19.7), else as written (config.py:519-520)."""
        t = self.optimizer_type
        if t is None:
            return None
        native = set(dsfacts.DEEPSPEED_OPTIMIZERS)
        native |= {k for k, (_, gone) in dsfacts.REMOVED_OPTIMIZERS.items() if not self.since(f">={gone}")}
        return t.lower() if t.lower() in native else t

    def optimizer_param(self, key: str) -> Node | None:
        params = self.node("/optimizer/params")
        return params.get(key) if params is not None and params.kind == OBJECT else None

    @property
    def zenflow(self) -> bool:
        z = self.node(f"{ZERO}/zenflow")
        return z is not None and z.kind != "null"

    @cached_property
    def optimizer_class(self) -> str | None:
        """The class `deepspeed.initialize` builds from the optimizer section (engine.py:2476-2545 and
        get_optimizer_configuration, 2375-2408): "FusedAdam", "DeepSpeedCPUAdam" (Adam/AdamW whenever
        offload_optimizer is cpu/nvme, at any ZeRO stage), "ZenFlowCPUAdam", "torch.optim.AdamW" (torch_adam),
        "torch.optim.Adagrad", "DeepSpeedCPUAdagrad", "FusedLamb", "FusedLion", "DeepSpeedCPULion",
        "mup.MuAdam"/"mup.MuAdamW"/"mup.MuSGD", "MuonWithAuxAdam", "OneBitAdam"... (before 0.19.7), or
        "torch.optim.<Name>". None when there is no optimizer, the name is unknown, or it depends on a value
        filled at run time."""
        name = self.optimizer_name
        if name is None:
            return None
        offload = self.offload_device("optimizer")
        cpu = None if offload is None else offload in ("cpu", "nvme")
        if name in ("adam", "adamw"):
            torch_adam = self.optimizer_param("torch_adam")
            if torch_adam is not None and self.is_auto(torch_adam):
                return None
            if torch_adam is not None and torch_adam.to_python():
                mode = self.optimizer_param("adam_w_mode")
                adamw = name == "adamw" or mode is None or bool(mode.to_python())
                return "torch.optim.AdamW" if adamw else "torch.optim.Adam"
            if cpu is None:
                return None
            return ("ZenFlowCPUAdam" if self.zenflow else "DeepSpeedCPUAdam") if cpu else "FusedAdam"
        if name == "adagrad":
            return None if cpu is None else "DeepSpeedCPUAdagrad" if cpu else "torch.optim.Adagrad"
        if name == "lion":
            return None if cpu is None else "DeepSpeedCPULion" if cpu else "FusedLion"
        fixed = {"lamb": "FusedLamb", "muadam": "mup.MuAdam", "muadamw": "mup.MuAdamW", "musgd": "mup.MuSGD",
                 "muon": "MuonWithAuxAdam"}
        if name in fixed:
            return fixed[name]
        if name in dsfacts.REMOVED_OPTIMIZERS:
            return dsfacts.REMOVED_OPTIMIZERS[name][0]
        return f"torch.optim.{name}" if name in dsfacts.TORCH_OPTIMIZER_KWARGS else None

    @property
    def scheduler_type(self) -> str | None:
        """scheduler.type as written (see plain_string); None when there is no scheduler in the config."""
        if self.node("/scheduler") is None or self.node("/scheduler").kind != OBJECT:
            return None
        return self.plain_string("/scheduler/type")

    # -- batch --------------------------------------------------------------------------------------------------
    def batch_value(self, pointer: str) -> int | None:
        """A batch key as DeepSpeed reads it: None when absent or null; the number when it is one (integral
        floats pass DeepSpeed's arithmetic); MISSING when it is something else ("auto", a string, a bool)."""
        n = self.node(pointer)
        if n is None or n.kind == "null":
            return None
        v = self.number(n)
        if v is None:
            return MISSING
        return int(v) if isinstance(v, int) or float(v).is_integer() else MISSING  # (huge ints overflow float())

    # -- what "auto" turns into ---------------------------------------------------------------------------------
    def auto_outcome(self, node: Node) -> "AutoOutcome":
        """What raw DeepSpeed does with an unfilled "auto" at this node."""
        ptr = node.pointer
        parent = jp.parent(ptr)
        strict = self.is_strict(parent)
        if parent in ("/fp16", "/bf16", "/bfloat16") and not self.since(">=0.17.1"):
            strict = False
            if jp.last(ptr) == "enabled":
                return AutoOutcome(None, "a non-empty string is truthy to DeepSpeed < 0.17.1, so this turns "
                                         f"{parent[1:]} ON", turns_off=False, turns_on=True)
        if strict:
            default = self.default(ptr)
            shown = "unset" if default is MISSING else json_text(default)
            name = jp.last(ptr)
            effect = {
                "stage": "ZeRO is off (stage 0)",
                "enabled": f"{self.path(parent)} is off",
                "device": "nothing is offloaded (device 'none')",
                "overlap_comm": "overlap_comm follows the stage (on for stage 3, off below)",
            }.get(name, f"the default {shown} applies")
            return AutoOutcome(None, f"DeepSpeed silently drops it: {effect}",
                               turns_off=name in ("stage", "enabled", "device"))
        for prefix, when, how in AUTO_CRASHES:
            if ptr == prefix or (prefix.endswith("/") and ptr.startswith(prefix)):
                return AutoOutcome(when, how)
        # Elsewhere in a plain-dict section the string is kept: it fails wherever any invalid value fails.
        s = self.schema.at(ptr)
        bad = self.schema.mismatch(node, s) if s is not None else None
        if bad is not None:
            out = self.invalid_value(ptr)
            if out.fails_at is not None:
                return AutoOutcome({"step": "the first step"}.get(out.fails_at, out.fails_at),
                                   f"{self.path(ptr)} must be {bad[1]}")
        return AutoOutcome(None, "DeepSpeed keeps the string \"auto\" here")

    def keys_present(self, pointer: str) -> frozenset[str]:
        """The keys an object section holds (cached per section: the unknown-key rules ask once per finding, and a
        big config has many)."""
        cache = self.__dict__.setdefault("_keys_present", {})
        if pointer not in cache:
            node = self.node(pointer)
            cache[pointer] = frozenset(node.keys()) if node is not None and node.kind == OBJECT else frozenset()
        return cache[pointer]

    def home_of(self, pointer: str) -> str | None:
        """For a key that is unknown where it stands but belongs to exactly one other section (a top-level
        `offload_optimizer`, `stage` or `overlap_comm`), that section's pointer."""
        key, here = jp.last(pointer), jp.parent(pointer)
        homes = [p for p in self.schema.key_index().get(key, ()) if p != here and "/" + key not in p]
        # Keys every section has ("enabled", "type", "params", ...) say nothing about where they belong.
        if len(homes) != 1 or key in GENERIC_KEYS:
            return None
        return homes[0]

    def _general_outcome(self, pointer: str) -> tuple[str, str]:
        """(severity, what DeepSpeed does) for a value of the wrong type or out of range at `pointer`."""
        special = _value_outcome(self, pointer)
        if special is not None:
            return special
        parent = jp.parent(pointer)
        if self.is_strict(parent):
            return "error", "DeepSpeed rejects the config at parse (pydantic ValidationError)"
        for prefix, when in LAX_CHECKED:
            if pointer == prefix or (prefix.endswith("/") and pointer.startswith(prefix)):
                return "error", f"DeepSpeed fails at {when}"
        return "warning", "DeepSpeed does not check this value; the code that reads it will misbehave"

    def invalid_value(self, pointer: str) -> "ValueOutcome":
        """`_general_outcome` plus when DeepSpeed fails on it ("parse" | "initialize" | "step" | None), for
        `Finding.fails_at`; first the cases where the failure depends on the value and its neighbours, checked
        against DeepSpeed 0.19.8's own parse (tests/differential)."""
        # An item of a list is judged where the list stands (compile.passes[0] is in a strict section).
        while pointer and (owner := self.node(jp.parent(pointer))) is not None and owner.kind == ARRAY:
            pointer = owner.pointer
        special = self._shape_outcome(pointer) or self._batch_outcome(pointer) or self._lenient_outcome(pointer)
        if special is not None:
            return special
        checked = LAX_PARSE_CHECKED.get(pointer)
        node = self.node(pointer)
        if checked is not None and node is not None and checked[0](self, node):
            return ValueOutcome("error", f"DeepSpeed fails at parse ({checked[1]})", "parse")
        severity, text = self._general_outcome(pointer)
        return ValueOutcome(severity, text, fails_at_of(text))

    def _shape_outcome(self, pointer: str) -> "ValueOutcome | None":
        """A section that is not an object, in a plain-dict parent (the top level, checkpoint, data_efficiency,
        timers, ...): DeepSpeed calls .get()/.keys() on it or splats it into its model (`**value`), which fails at
        parse, except for the few values it tolerates (SECTION_NON_OBJECT_OK). Strict parents are pydantic's
        business; optimizer/scheduler params are splatted only at initialize."""
        node = self.node(pointer)
        if node is None or node.kind == OBJECT or not pointer or self.unread(pointer):
            return None
        opt_type = self.node("/optimizer/type")
        if pointer == "/optimizer/params" and node.kind != NULL and opt_type is not None and opt_type.kind != NULL:
            # config.py:295-307, 723-724: with a type, the gradient-clipping lookup and the max_grad_norm warning
            # check call `optimizer.params.keys()` at parse
            return ValueOutcome("error", "DeepSpeed fails at parse: its max_grad_norm check calls "
                                         "optimizer.params.keys() (AttributeError)", "parse")
        if self.is_strict(jp.parent(pointer)) or self.strictness(pointer) in ("rejected_at_init", None):
            return None
        if self.schema.object_schema(self.schema.at(pointer) or {}) is None:
            return None  # not a section
        tolerated = SECTION_NON_OBJECT_OK.get(pointer)
        if tolerated is not None and tolerated(node):
            return None
        return ValueOutcome("error", f"DeepSpeed fails at parse: it reads {self.path(pointer)} as a dict "
                                     "(TypeError/AttributeError, or a ValidationError for the monitor sections)",
                            "parse")

    def batch_replay(self) -> str | None:
        """Replay DeepSpeed's batch inference and assertions (config.py:590-656) for this world size, on the values
        as DeepSpeed's reader gives them (true counts as 1, fractions stay fractions, strings raise): None when the
        parse passes or the world size is unknown, else DeepSpeed's error."""
        if self.world_size is None:
            return None
        vals: list[Any] = []
        for p in BATCH_KEYS:
            n = self.node(p)
            if n is None or n.kind == NULL:
                vals.append(None)
            elif n.kind == BOOL:
                vals.append(n.value)
            elif n.kind == NUMBER:
                vals.append(self.number(n))
            else:
                return f"TypeError: {self.path(p)} is {n.kind}"
        try:
            return derive_batch(*vals, self.data_parallel_size()).error
        except (TypeError, ZeroDivisionError, OverflowError) as exc:
            return f"{type(exc).__name__}: {exc}"

    def data_parallel_size(self) -> Any:
        """The world size DeepSpeed's batch arithmetic uses: `--world-size`, divided by `sequence_parallel_size`
        when the key is present (config.py:466-469) — a float, or TypeError for null and strings,
        ZeroDivisionError for 0, as in DeepSpeed. None when the world size is unknown."""
        world: Any = self.world_size
        sp = self.node(SEQUENCE_PARALLEL)
        if world is not None and sp is not None and self.since(">=0.17.0"):
            world = world / (self.number(sp) if sp.kind == NUMBER else sp.to_python())
            if isinstance(world, float) and world.is_integer():
                world = int(world)
        return world

    def _batch_outcome(self, pointer: str) -> "ValueOutcome | None":
        node = self.node(pointer)
        if pointer not in (*BATCH_KEYS, SEQUENCE_PARALLEL) or node is None or self.world_size is None:
            return None
        if pointer in BATCH_KEYS and node.kind not in (NUMBER, BOOL):
            return None  # a string, list or object: always a TypeError at parse (LAX_CHECKED)
        error = self.batch_replay()
        if error is not None:
            return ValueOutcome("error", f"DeepSpeed fails at parse ({error})", "parse")
        if pointer == SEQUENCE_PARALLEL:
            return None
        if node.kind == BOOL:
            return ValueOutcome("warning", "DeepSpeed's batch arithmetic counts true as 1", None)
        return ValueOutcome("error", "DeepSpeed's parse accepts it (its batch arithmetic works in floats), but a "
                                     "fractional batch size breaks the data loader and the gradient accumulation "
                                     "boundaries later", None)

    def _lenient_outcome(self, pointer: str) -> "ValueOutcome | None":
        lenient = LAX_LENIENT.get(pointer)
        node = self.node(pointer)
        if lenient is None or node is None or not lenient[0](node):
            return None
        return ValueOutcome("warning", lenient[1], None)

    # -- building findings --------------------------------------------------------------------------------------
    def finding(self, pointer: str, message: str, *, help: str | None = None, at: str = "key",
                severity: Severity | str | None = None, fixes: list | None = None,
                related: list | None = None, span: tuple[int, int] | None = None,
                fails_at: str | None = None) -> Finding:
        return Finding(pointer=pointer, message=message, help=help, at=at, span=span,
                       severity=Severity.parse(severity) if severity is not None else None,
                       fixes=list(fixes or ()), related=list(related or ()), fails_at=fails_at)

    def path(self, pointer: str) -> str:
        """A pointer as people write config paths: '/zero_optimization/stage' -> 'zero_optimization.stage'."""
        return ".".join(jp.split(pointer)) or "(top level)"


@lru_cache(maxsize=1)
def default_deepspeed_version() -> str:
    """The installed deepspeed's version (package metadata, no import), else the newest we know."""
    return installed_deepspeed() or DEFAULT_DEEPSPEED_VERSION


# pydantic's lax bool parsing of strings (strict sections)
_PYDANTIC_BOOL = {"true": True, "false": False, "yes": True, "no": False, "on": True, "off": False, "1": True,
                  "0": False, "t": True, "f": False, "y": True, "n": False}


def placeholder_of(node: Node | None) -> str | None:
    """The template placeholder a string value is (see dsfacts.placeholder_text), or None."""
    if node is None or node.kind != STRING or not isinstance(node.value, str):
        return None
    quoteless = bool(node.raw) and node.raw[:1] not in ('"', "'")
    return placeholder_text(node.value, quoteless)


def coerce_stage(node: Node) -> int | None:
    """The stage pydantic would accept: 0-3 as int, integral float, numeric string, or bool (True -> 1)."""
    v = node.value
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)) and (isinstance(v, int) or v.is_integer()) and 0 <= v <= 3:
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("+").isdigit() and 0 <= int(v) <= 3:
        return int(v)
    return None


# -- batch sizes -----------------------------------------------------------------------------------------------
BATCH_KEYS = ("/train_batch_size", "/train_micro_batch_size_per_gpu", "/gradient_accumulation_steps")


@dataclass
class Batch:
    """DeepSpeed's batch triple after its own inference, for one world size, and its assertion's verdict."""

    train_batch_size: Any
    micro_batch: Any
    grad_accum: Any
    world_size: Any
    inferred: tuple[str, ...]  # which of the three DeepSpeed derived (by floor division)
    error: str | None  # DeepSpeed's AssertionError text, or None when its batch checks pass

    @property
    def consistent(self) -> bool:
        return self.error is None


SEQUENCE_PARALLEL = "/sequence_parallel_size"


def derive_batch(tbs: Any, micro: Any, gas: Any, world: Any) -> Batch:
    """`_set_batch_related_parameters` then `_batch_assertion` (runtime/config.py:590-656), on the values as
    DeepSpeed gets them (None = absent). Raises what DeepSpeed raises for values it cannot compute with (TypeError
    for strings). The one copy of this arithmetic: the batch rules, the differential test and verify use it."""
    inferred: tuple[str, ...] = ()
    if tbs is not None and micro is not None and gas is not None:
        pass
    elif tbs is not None and micro is not None:
        gas, inferred = tbs // micro // world, ("gradient_accumulation_steps",)
    elif tbs is not None and gas is not None:
        micro, inferred = tbs // world // gas, ("train_micro_batch_size_per_gpu",)
    elif micro is not None and gas is not None:
        tbs, inferred = micro * gas * world, ("train_batch_size",)
    elif tbs is not None:
        micro, gas = tbs // world, 1
        inferred = ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    elif micro is not None:
        tbs, gas = micro * world, 1
        inferred = ("train_batch_size", "gradient_accumulation_steps")
    else:
        return Batch(tbs, micro, gas, world, (), "AssertionError: Either train_batch_size or "
                                               "train_micro_batch_size_per_gpu needs to be provided")
    error = None
    for name, v in (("Train batch size", tbs), ("Micro batch size per gpu", micro),
                    ("Gradient accumulation steps", gas)):
        if not v > 0:
            error = f"AssertionError: {name}: {v} has to be greater than 0"
            break
    if error is None and tbs != micro * gas * world:
        error = (f"AssertionError: train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * "
                 f"world_size {tbs} != {micro} * {gas} * {world}")
    return Batch(tbs, micro, gas, world, inferred, error)


@dataclass
class ValueOutcome:
    """What DeepSpeed does with an invalid value: severity, the words, and when it fails (Finding.fails_at)."""

    severity: str
    text: str
    fails_at: str | None


def fails_at_of(text: str) -> str | None:
    """The failure a message of ours claims: "... at parse" / "at initialize" / "at the first step"."""
    import re

    m = re.search(r"\b(?:fails|rejects|refuses)\b[^;.]*?\bat (parse|initialize|the first step)\b", text)
    return None if m is None else {"the first step": "step"}.get(m.group(1), m.group(1))


# Top-level sections and the non-object values DeepSpeed 0.19.8's parse tolerates there (every other non-object
# value fails at parse; probed with tests/differential): `bf16: null` and `aio: null` mean "absent"
# (precision_config.py:34-38, aio_config.py), expert_parallel is only read when truthy (auto_ep_config.py:45-48),
# timers is only asked `"throughput" in timers` (utils/config.py:27-29), datastates_ckpt only for presence.
SECTION_NON_OBJECT_OK = {
    "/bf16": lambda n: n.kind == NULL,
    "/aio": lambda n: n.kind == NULL,
    "/expert_parallel": lambda n: not n.to_python(),
    "/timers": lambda n: n.kind in (STRING, ARRAY) and "throughput" not in n.to_python(),
    "/datastates_ckpt": lambda n: True,
    "/zero_optimization": lambda n: n.kind == BOOL,
    "/checkpoint/writer": lambda n: n.kind == NULL,  # model_checkpointing/config.py: `if writer_dict is None`
    "/autotuning/model_info": lambda n: n.kind == NULL,
    "/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics": lambda n: True,  # copied verbatim
}

# Lax keys whose every invalid value fails at parse, beyond LAX_CHECKED: pointer -> what DeepSpeed raises.
def _int_fails(view: "View", node: Node) -> bool:
    """Whether Python's int() fails on the value as DeepSpeed's reader gives it."""
    try:
        int(view.number(node) if node.kind == NUMBER else node.to_python())
    except (TypeError, ValueError, OverflowError):
        return True
    return False


_DYNAMIC_BATCHING = "/data_efficiency/data_sampling/dynamic_batching"

# pointer -> (fails(view, node), what DeepSpeed raises)
LAX_PARSE_CHECKED = {
    "/expert_parallel/load_balance_coeff": (
        lambda v, n: n.kind != NULL, "ValueError: load_balance_coeff is not supported in this AutoEP build; only "
                                     "null is accepted (module_inject/auto_ep_config.py:73-76)"),
    # config.py:716-721 `if vocabulary_size and vocabulary_size % 8 != 0`: a non-empty string, list or object
    "/vocabulary_size": (
        lambda v, n: n.kind in (STRING, ARRAY, OBJECT) and bool(n.to_python()),
        "TypeError from `vocabulary_size % 8` in the tensor-core alignment check"),
    # zero/config.py:60-78: with the legacy `zero_optimization: true`, it is validated as allgather_bucket_size
    "/allgather_size": (
        lambda v, n: (z := v.node("/zero_optimization")) is not None and z.kind == BOOL and z.value is True,
        "pydantic ValidationError: with \"zero_optimization\": true it is zero_optimization.allgather_bucket_size"),
    # data_pipeline/config.py:95-110: int() of the value whenever the key is present (max_tokens: when enabled)
    f"{_DYNAMIC_BATCHING}/min_batch_size": (_int_fails, "int() of the value raises TypeError/ValueError"),
    f"{_DYNAMIC_BATCHING}/max_batch_size": (_int_fails, "int() of the value raises TypeError/ValueError"),
    f"{_DYNAMIC_BATCHING}/max_tokens": (
        lambda v, n: _int_fails(v, n) and bool((v.value(f"{_DYNAMIC_BATCHING}/enabled") or False)),
        "dynamic batching is enabled and int() of max_tokens raises TypeError/ValueError"),
}

# Lax keys whose parse-time use lets some wrongly typed values through: (accepted(node), what DeepSpeed does).
_INT_FLAG = (lambda n: n.kind == NUMBER and (isinstance(n.value, int) or (  # hjson makes 1.0 the int 1
                 float(n.value).is_integer() and abs(n.value) < 1e10)),
             "DeepSpeed uses the integer as a flag (`x | bool` at config.py:533): 0 is off, anything else on")
LAX_LENIENT = {
    "/wall_clock_breakdown": _INT_FLAG,
    "/flops_profiler/enabled": _INT_FLAG,
    # config.py:398-406 checks `value in [True, False]`, which 0 and 1 pass.
    "/checkpoint/parallel_write/pipeline_stage": (
        lambda n: n.kind == NUMBER and n.value in (0, 1), "DeepSpeed accepts 0 and 1 as false and true"),
    # config.py:197-205 only asks `all(isinstance(m, str) for m in value)`: a string passes (one module name per
    # character), and so does an object (its keys).
    "/torch_autocast/lower_precision_safe_modules": (
        lambda n: n.kind in (STRING, OBJECT), "DeepSpeed iterates over it and takes each character (or key) as a "
                                              "module name"),
    # aio_config.py:38-39 asserts CUDA only for a truthy value: which machine runs it decides, not the config.
    "/aio/use_gds": (lambda n: True, "DeepSpeed reads it by truthiness: a truthy value turns GDS on, which needs a "
                                     "CUDA machine (elsewhere DeepSpeed's parse asserts)"),
}


@dataclass
class AutoOutcome:
    crashes_at: str | None  # "parse" | "initialize" | "the first step" | None
    effect: str
    turns_off: bool = False
    turns_on: bool = False


GENERIC_KEYS = frozenset({"enabled", "type", "params", "device", "output_path", "job_name", "verbose", "debug",
                          "dtype", "name", "path", "mode"})

# Lax (plain-dict) keys whose value DeepSpeed uses in a way that fails when it has the wrong type or range.
LAX_CHECKED: tuple[tuple[str, str], ...] = (
    ("/train_batch_size", "parse"), ("/train_micro_batch_size_per_gpu", "parse"),
    ("/gradient_accumulation_steps", "parse"), ("/wall_clock_breakdown", "parse"),
    ("/flops_profiler/enabled", "parse"), ("/communication_data_type", "parse"),
    ("/seq_parallel_communication_data_type", "parse"), ("/gradient_allreduce_op", "parse"),
    ("/checkpoint/tag_validation", "parse"), ("/checkpoint/parallel_write/pipeline_stage", "parse"),
    ("/checkpoint/writer/type", "parse"), ("/checkpoint/writer/data_parallel", "parse"),
    ("/data_types/keep_in_fp32_modules", "parse"), ("/torch_autocast/dtype", "parse"),
    ("/torch_autocast/lower_precision_safe_modules", "parse"), ("/aio/use_gds", "parse"),
    ("/gradient_clipping", "the first step"), ("/steps_per_print", "the first step"),
    ("/pipeline/pipe_partitioned", "initialize"), ("/pipeline/grad_partitioned", "initialize"),
    ("/optimizer/params/", "initialize"), ("/scheduler/params/", "initialize"),
    ("/optimizer/type", "parse"), ("/scheduler/type", "initialize"),
)

def _value_outcome(view: "View", pointer: str) -> tuple[str, str] | None:
    """Where what DeepSpeed does with a bad value depends on the value, not just the place."""
    node = view.node(pointer)
    num = view.number(node)
    if pointer == "/gradient_clipping" and num is not None and num < 0:
        # engine.py:3506, stage_1_and_2.py:3199, stage3.py:2982, bf16_optimizer.py:408: clip only when > 0
        return "warning", "DeepSpeed clips only when gradient_clipping > 0, so it silently never clips"
    if pointer == "/steps_per_print" and num is not None:
        if num == 0:  # engine.py:3552-3555 and utils/timer.py:242-244: `step % steps_per_print`
            return "error", ("DeepSpeed fails at the first step (ZeroDivisionError: integer modulo by zero; "
                             "deepspeedai/DeepSpeed#7838)")
        if num < 0:
            return "warning", "DeepSpeed does not reject it: Python's modulo makes it report every |n| steps"
    if pointer == "/scheduler/params/warmup_type" and node is not None and node.kind == STRING:
        # lr_schedules.py:746-750, 884-888: an unknown warmup_type logs a warning and falls back to "log"
        return "warning", "DeepSpeed logs \"Using unknown warmup_type\" and uses the log warmup curve instead"
    return None


# Lax (plain-dict) places where a literal "auto" reaches code that needs a number or a name.
AUTO_CRASHES: tuple[tuple[str, str, str], ...] = (
    ("/train_batch_size", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/train_micro_batch_size_per_gpu", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/gradient_accumulation_steps", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/wall_clock_breakdown", "parse", "TypeError: unsupported operand type(s) for |"),
    ("/flops_profiler/enabled", "parse", "TypeError: unsupported operand type(s) for |"),
    ("/communication_data_type", "parse", "ValueError: not one of fp32, fp16, bf16"),
    ("/seq_parallel_communication_data_type", "parse", "ValueError: not one of fp32, fp16, bf16"),
    ("/gradient_clipping", "the first step", "TypeError: '>' not supported between instances of 'str' and 'float'"),
    ("/steps_per_print", "the first step", "TypeError: unsupported operand type(s) for %: 'int' and 'str'"),
    ("/optimizer/type", "initialize", "AssertionError: auto is not a supported DeepSpeed Optimizer"),
    ("/optimizer/params/", "initialize or the first step", "the optimizer receives the string 'auto' as a number"),
    ("/scheduler/type", "initialize", "AssertionError: DeepSpeed does not recognize LR scheduler auto"),
    ("/scheduler/params/", "initialize", "the scheduler receives the string 'auto' as a number"),
)


def json_text(value: Any) -> str:
    import json

    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1e6 <= abs(value) < 1e300 \
            and float(value).is_integer() and float(f"{value:.0e}") == value:
        return f"{value:.0e}".replace("+0", "").replace("+", "")
    return json.dumps(value)
