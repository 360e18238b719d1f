"""The DeepSpeed side of the runtime differential: every config through verify's warm runner
(zerolint/verify/warm.py: one server imports torch and DeepSpeed once and forks an isolated child per config, which
runs verify's job body, zerolint/verify/child.py `Child`: zero.Init at stage 3, the tiny model,
`deepspeed.initialize`, 3 steps, `engine_facts`).

What each child is given:
  - the config FILE as written (`deepspeed.initialize(config=path)` reads it with `load_ds_config`: hjson, duplicate
    keys rejected, deepspeed/__init__.py:534-535), except when it names paths or modules or turns a monitor on:
    then the dict DeepSpeed's reader gives, with those keys pointed into the run's temp dir or dropped (verify's
    `resolve.neutralise`) and monitors off, listed in `Run.neutralised`;
  - a client `torch.optim.AdamW` (lr 5e-5, weight decay 0) when the config has no optimizer section, as a raw
    training script passes one;
  - world size 1 (env:// on a free port), the accelerator named (cpu here, cuda on a GPU host).
The phase reached: "parse" when the exception went through DeepSpeed's config reading (load_ds_config,
DeepSpeedConfig, the tensor-parallel merge and autotp check before it), else "initialize" (the model under zero.Init, or
`deepspeed.initialize`), "step" (forward, backward or step of steps 1-3), or "ran". "timeout" and "crash" are the
harness's, not DeepSpeed's verdicts.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PHASES = ("parse", "initialize", "step", "ran")  # in order; "timeout" / "crash" are the harness's
STEPS = 3
CLIENT_OPTIMIZER = ("AdamW", {"lr": 5e-5, "weight_decay": 0.0})
# The ops the configs reach on each accelerator, built before the timed runs; one the plan names but these lack is
# built when a run stops at it (opguard.py) and that config runs again (`Run.op_stops`).
OPS = {"cpu": ["deepspeed_shm_comm", "cpu_adam", "fused_adam", "cpu_adagrad", "cpu_lion", "pin_memory"],
       "cuda": ["cpu_adam", "fused_adam", "cpu_adagrad", "cpu_lion", "pin_memory", "fused_lamb", "fused_lion"]}
# Code of a frame through which a failure is DeepSpeed's config reading (deepspeed/__init__.py:534-554: the file,
# the tensor-parallel merge and autotp check, DeepSpeedConfig; runtime/zero/partition_parameters.py:1077).
PARSE_FRAMES = ("load_ds_config(", "DeepSpeedConfig(", "merge_tp_model_init_into_config(",
                'config.get("tensor_parallel"', "autotp_size and autotp_size > 0")


@dataclass
class Run:
    """What DeepSpeed did with one config."""

    phase: str  # "parse" | "initialize" | "step" | "ran" | "timeout" | "crash"
    step: int | None = None  # the step that failed, for phase "step"
    error: dict[str, Any] = field(default_factory=dict)  # type, message, where (the innermost DeepSpeed frame)
    facts: dict[str, Any] = field(default_factory=dict)  # verify/child.py engine_facts, when it ran
    client_optimizer: str | None = None
    neutralised: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped_steps: int | None = None
    ops_loaded: list[str] = field(default_factory=list)  # every op builder's load() the run called (opguard.py)
    ops_planned: list[str] = field(default_factory=list)  # verify's op plan for it (opplan.py)
    op_stops: list[str] = field(default_factory=list)  # ops the run stopped at, built outside its clock

    @property
    def failed(self) -> bool:
        return self.phase != "ran"

    def short(self) -> str:
        if self.phase == "ran":
            return "ran 3 steps"
        at = f"step {self.step}" if self.phase == "step" else self.phase
        return (f"fails at {at}: {self.error.get('type', '')}: {self.error.get('message', '')[:240]} "
                f"[{self.error.get('where', '')}]")

    def to_json(self) -> dict:
        return {"phase": self.phase, "step": self.step, "error": self.error, "facts": self.facts,
                "client_optimizer": self.client_optimizer, "neutralised": self.neutralised, "seconds": self.seconds,
                "skipped_steps": self.skipped_steps, "ops_loaded": self.ops_loaded, "ops_planned": self.ops_planned,
                "op_stops": self.op_stops}

    @classmethod
    def from_json(cls, d: dict) -> "Run":
        run = cls(**{k: d.get(k) for k in ("phase", "step", "error", "facts", "client_optimizer", "neutralised",
                                           "seconds", "skipped_steps")})
        run.ops_loaded, run.ops_planned = list(d.get("ops_loaded") or []), list(d.get("ops_planned") or [])
        run.op_stops = list(d.get("op_stops") or [])
        return run


def _short_error(err: dict) -> dict:
    frames = err.get("frames") or []
    ds = [f for f in frames if str(f.get("file", "")).startswith("deepspeed/")]
    at = (ds or frames or [{}])[-1]  # the DeepSpeed line that raised (or let pydantic/hjson/torch raise)
    return {"type": err.get("type", ""), "message": " ".join(str(err.get("message", "")).split())[:800],
            "where": f"{at.get('file', '')}:{at.get('line', '')}"}


def phase_of(result: dict) -> tuple[str, int | None]:
    """The phase a child's result (child.py result-rank0.json, or warm.py's crash/timeout one) reached."""
    status = result.get("status")
    if status == "pass":
        return "ran", None
    if status in ("timeout", "crash"):
        return status, None
    err = result.get("error") or {}
    if any(any(p in str(f.get("code", "")) for p in PARSE_FRAMES) for f in err.get("frames") or []):
        return "parse", None
    where = str(result.get("phase") or "")
    if where.startswith("step"):
        return "step", int(where.split()[1])
    if where in ("model", "initialize"):
        return "initialize", None
    return "crash", None  # import or inspect: the harness, not the config


def prepare(data: bytes, work: str) -> tuple[str, dict | None, list[str]]:
    """The config path the child gets, the dict DeepSpeed reads (None when it does not read one), and the
    pointers neutralised."""
    from zerolint.verify import resolve

    path = os.path.join(work, "ds_config.json")
    with open(path, "wb") as f:
        f.write(data)
    cfg = _hjson_dict(data)
    if cfg is None:
        return path, None, []
    changes: list = []
    safe = copy.deepcopy(cfg)
    resolve.neutralise(safe, os.path.join(work, "scratch"), changes)
    for mon in resolve.MONITORS:
        sec = safe.get(mon)
        if isinstance(sec, dict) and sec.get("enabled") not in (False, None):
            sec["enabled"] = False
            changes.append(resolve.Change(f"/{mon}/enabled", f"{mon} switched off", True, False))
    if changes:
        path = os.path.join(work, "ds_config.neutralised.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(safe, f)
    return path, safe, [c.pointer for c in changes]


def _hjson_dict(data: bytes) -> dict | None:
    """The object DeepSpeed's load_ds_config returns (hjson), or None when it would fail (duplicate keys, syntax):
    then the file goes to DeepSpeed as it is, whose own parse decides."""
    import hjson

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate keys")
        return dict(pairs)

    try:
        value = hjson.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except Exception:  # noqa: BLE001 - DeepSpeed judges what it cannot read
        return None
    return value if isinstance(value, dict) else None


def spec_for(path: str, cfg: dict | None, accelerator: str) -> tuple[dict, str | None]:
    from zerolint.verify import resolve
    from zerolint.verify.runner import spec_of

    plan = resolve.Plan(config=cfg if cfg is not None else {}, target="deepspeed", world_size=1,
                        model=resolve.model_spec(), steps=STEPS)
    client = None
    if cfg is not None and cfg.get("optimizer") is None:
        client = plan.client_optimizer = CLIENT_OPTIMIZER[0]
        plan.client_optimizer_args = dict(CLIENT_OPTIMIZER[1])
    spec = spec_of(plan, accelerator)
    spec["config"] = path  # DeepSpeed reads the file itself
    spec["fp16"] = False  # never skip fp16 on a CPU without it: DeepSpeed's own verdict, allowlisted by its message
    if not isinstance(spec["zero_stage"], int):
        spec["zero_stage"] = None
    return spec, client


def extensions_dir() -> str:
    return os.environ.get("TORCH_EXTENSIONS_DIR") or str(ROOT / ".cache" / "torch_extensions")


class RuntimeRunner:
    """The warm server, its op builds, and a temp dir for the config files."""

    def __init__(self, accelerator: str = "cpu", timeout: float = 180.0, build_timeout: float = 1800.0) -> None:
        self.accelerator, self.timeout, self.build_timeout = accelerator, timeout, build_timeout
        self.server = None
        self.info: dict = {}
        self.build: dict = {}
        self.tmp = ""

    def __enter__(self) -> "RuntimeRunner":
        from zerolint.verify.ops import build_ops
        from zerolint.verify.warm import WarmServer

        self.tmp = tempfile.mkdtemp(prefix="zl-rtdiff-")
        ext = extensions_dir()
        self.build = build_ops(OPS[self.accelerator], ext, self.accelerator, self.build_timeout,
                               say=lambda _m: None)
        if self.build.get("status") != "ok":
            raise RuntimeError(f"building DeepSpeed's ops failed: {json.dumps(self.build)[:2000]}")
        self.server = WarmServer(self.accelerator, ext, cleanup=(self.tmp,))
        self.info = self.server.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.server is not None:
            self.server.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_all(self, datas: list[bytes], while_waiting: Callable[[], None] | None = None,
                progress: Callable[[int], None] | None = None, jobs: int = 1) -> list[Run]:
        """Every config's run, in input order. `jobs` configs run side by side (each its own fork of the warm
        server, its own port and directory; the CI run uses 1). `while_waiting` runs once the first config is
        submitted (the zerolint side, so that the two use both cores)."""
        import time

        from zerolint.verify.opplan import planned_ops
        from zerolint.verify.ops import build_stopped

        runs: list[Run | None] = [None] * len(datas)
        running: dict[str, tuple] = {}  # job id -> (index, job, work dir, client, neutralised, start, cfg)
        stops: dict[int, list[dict]] = {}
        todo = list(range(len(datas)))
        finished = 0
        waited = False
        while finished < len(datas):
            while todo and len(running) < max(1, jobs):
                i = todo.pop(0)
                work = tempfile.mkdtemp(prefix=f"c{i}-", dir=self.tmp)
                path, cfg, neutralised = prepare(datas[i], work)
                spec, client = spec_for(path, cfg, self.accelerator)
                job = self.server.submit(spec, self.timeout)
                running[job.id] = (i, job, work, client, neutralised, time.monotonic(), cfg)
            if not waited and while_waiting is not None:
                while_waiting()
                waited = True
            for job in self.server.poll():
                if job.id not in running:
                    continue
                i, _, work, client, neutralised, t, cfg = running.pop(job.id)
                result = self.server.result(job)
                self.server.forget(job)
                shutil.rmtree(work, ignore_errors=True)
                if result.get("status") == "needs-op":  # an op the builds above lack: built, then run again
                    stop = build_stopped(result, extensions_dir(), self.accelerator, self.build_timeout,
                                         lambda _m: None, earlier=stops.get(i))
                    stops.setdefault(i, []).append(stop)
                    if stop["rerun"]:
                        todo.insert(0, i)
                        continue
                phase, step = phase_of(result)
                runs[i] = Run(phase, step, _short_error(result.get("error") or {}) if phase != "ran" else {},
                              result.get("facts") or {}, client, neutralised, round(time.monotonic() - t, 3),
                              result.get("skipped_steps"), list(result.get("ops_loaded") or []),
                              planned_ops(cfg or {}, self.accelerator, client), [s["op"] for s in stops.get(i, [])])
                finished += 1
                if progress:
                    progress(finished)
        if not datas and while_waiting is not None:
            while_waiting()
        return [r for r in runs if r is not None]


if __name__ == "__main__":  # python tests/runtime_differential/runner.py CONFIG... : what DeepSpeed does with each
    sys.path.insert(0, str(ROOT / "src"))
    with RuntimeRunner(os.environ.get("DS_ACCELERATOR", "cpu")) as r:
        for name, run in zip(sys.argv[1:], r.run_all([Path(p).read_bytes() for p in sys.argv[1:]])):
            print(f"{name}: {run.short()}\n  {json.dumps(run.facts)}")
