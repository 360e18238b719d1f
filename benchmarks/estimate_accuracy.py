#!/usr/bin/env python3
"""How close `zerolint estimate` is to measured GPU peaks: the table of docs/estimate-accuracy.md.

    python benchmarks/estimate_accuracy.py                                  # print the markdown
    python benchmarks/estimate_accuracy.py --write docs/estimate-accuracy.md  # regenerate the doc
    python benchmarks/estimate_accuracy.py --json                           # one JSON row per case
    python benchmarks/estimate_accuracy.py OUT/estimate-gpu-h200.json        # a GPU probe's output alone

The cases of benchmarks/estimate_gpu_probe.py's default matrix that no data file holds yet are listed under
"Awaiting measurement" with their estimate.

Inputs (all of them by default): docs/data/verify-feasibility-h200.json (the H200 measurements of the verify
feasibility note, transcribed), docs/data/verify-gpu-*.json (written by `zerolint verify --params ...` GPU runs)
and docs/data/estimate-gpu-*.json (benchmarks/estimate_gpu_probe.py runs). Pass files to use only those.

A data file is a JSON list of cases, or an object holding one under "cases", "results" or "runs". A case is read
leniently (nested objects are flattened; the first key found wins):

  params           params | total_params | num_params | model_params            (required)
  largest layer    largest_layer_params | largest_layer | L
  stage            stage | zero_stage                                            (required unless config)
  precision        precision | dtype                    (default bf16)
  offload          offload_optimizer / offload_param ("none"|"cpu"|"nvme"), or offload: "optimizer",
                   "optimizer+param", "param", "none", true
  world size       world_size | gpus | num_gpus | nproc (default 1); gpus_per_node (default: world size)
  batch            micro_batch | micro_batch_size | train_micro_batch_size_per_gpu; seq_len | seq | sequence_length
  shape            hidden | hidden_size, layers | num_layers, vocab | vocab_size, heads, intermediate,
                   gated_mlp (default false: the 4h GELU MLP of zerolint verify's model), dropout (default false)
  optimizer        optimizer (text), torch_adam (bool)
  config           config | ds_config: the DeepSpeed config actually run (used as is when present)
  measured         peak_allocated*, peak_reserved*, host_rss_peak* / rss*: *_gib or *_gb in GiB, *_bytes or
                   *_mib; a bare number above 1e6 is bytes, else GiB
  DeepSpeed's      ds_estimate_gpu* / ds_estimate_cpu* (GiB or bytes, as above)

Target (issue 7): the covered estimate within +-10 % of the measured peak allocated, and the estimate plus the
documented margin at or above the measured peak reserved.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import statistics
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))  # plan_measured (the real-shapes section)

from zerolint.estimate import memory as E  # noqa: E402
from zerolint.estimate.modelspec import Shape, from_params  # noqa: E402
from zerolint.model.document import parse  # noqa: E402
from zerolint.model.view import Settings, View  # noqa: E402

DATA = os.path.join(ROOT, "docs", "data")
COMMAND = "python benchmarks/estimate_accuracy.py --write docs/estimate-accuracy.md"


def default_files() -> list[str]:
    """docs/data/verify-feasibility-h200.json, then every verify-gpu-*.json and estimate-gpu-*.json."""
    return sorted(glob.glob(os.path.join(DATA, "verify-feasibility-h200.json"))) + sorted(
        glob.glob(os.path.join(DATA, "verify-gpu-*.json")) + glob.glob(os.path.join(DATA, "estimate-gpu-*.json")))


# -- reading cases ------------------------------------------------------------------------------------------------

def load_files(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict):
            items = next((data[k] for k in ("cases", "results", "runs") if isinstance(data.get(k), list)), [data])
        else:
            items = data
        for item in items:
            if isinstance(item, dict):
                out.append((os.path.basename(path), item))
    return out


def _flat(d: dict[str, Any], out: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {} if out is None else out
    for k, v in d.items():
        if k in ("config", "ds_config") and isinstance(v, dict):
            out.setdefault(k, v)
        elif isinstance(v, dict):
            _flat(v, out)
        else:
            out.setdefault(k, v)
    return out


def _get(d: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return default


def _mem(d: dict[str, Any], *stems: str) -> int | None:
    """A memory figure in bytes from the first key that starts with one of the stems."""
    for stem in stems:
        for k, v in d.items():
            if not k.lower().startswith(stem) or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            kl = k.lower()
            if kl.endswith(("_bytes", "_b")):
                return int(v)
            if kl.endswith("_mib") or kl.endswith("_mb"):
                return int(v * 2**20)
            if kl.endswith(("_gib", "_gb")):
                return int(v * 2**30)
            return int(v) if v > 1e6 else int(v * 2**30)
    return None


def _offloads(d: dict[str, Any]) -> tuple[str, str]:
    oo = _get(d, "offload_optimizer", "offload_optimizer_device")
    op = _get(d, "offload_param", "offload_param_device")
    off = d.get("offload")
    if oo is None and op is None and off is not None:
        text = str(off).lower()
        if off is True:
            text = "optimizer"
        oo = "cpu" if "opt" in text or text in ("cpu", "true", "both") else "none"
        op = "cpu" if "param" in text or text == "both" else "none"
    norm = lambda v: "none" if v in (None, False, "", "none") else ("cpu" if v is True else str(v))  # noqa: E731
    return norm(oo), norm(op)


def case_config(d: dict[str, Any]) -> dict[str, Any]:
    cfg = _get(d, "config", "ds_config")
    if isinstance(cfg, dict):
        return cfg
    precision = str(_get(d, "precision", "dtype", default="bf16")).lower()
    oo, op = _offloads(d)
    z: dict[str, Any] = {"stage": int(_get(d, "stage", "zero_stage"))}
    if oo != "none":
        z["offload_optimizer"] = {"device": oo}
    if op != "none":
        z["offload_param"] = {"device": op}
    cfg = {"train_micro_batch_size_per_gpu": int(_get(d, "micro_batch", "micro_batch_size",
                                                       "train_micro_batch_size_per_gpu", default=1)),
           "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "zero_optimization": z}
    if d.get("torch_adam"):
        cfg["optimizer"]["params"]["torch_adam"] = True
    if precision in ("bf16", "bfloat16"):
        cfg["bf16"] = {"enabled": True}
    elif precision in ("fp16", "float16"):
        cfg["fp16"] = {"enabled": True}
    return cfg


def estimate_case(d: dict[str, Any]) -> tuple[E.Estimate, dict[str, Any]]:
    cfg = case_config(d)
    model = from_params(int(_get(d, "params", "total_params", "num_params", "model_params")),
                        _get(d, "largest_layer_params", "largest_layer", "L"))
    model.shape = Shape(hidden=_get(d, "hidden", "hidden_size"), layers=_get(d, "layers", "num_layers"),
                        heads=_get(d, "heads", "num_heads"), kv_heads=_get(d, "kv_heads"),
                        intermediate=_get(d, "intermediate", "intermediate_size"),
                        vocab=_get(d, "vocab", "vocab_size"), gated_mlp=bool(_get(d, "gated_mlp", default=False)),
                        dropout=bool(_get(d, "dropout", default=False)))
    world = int(_get(d, "world_size", "gpus", "num_gpus", "nproc", default=1))
    gpn = int(_get(d, "gpus_per_node", default=world))
    cluster = E.Cluster(nodes=max(1, world // gpn), gpus_per_node=gpn)
    workload = E.Workload(seq_len=_get(d, "seq_len", "seq", "sequence_length"),
                          micro_batch=_get(d, "micro_batch", "micro_batch_size"))
    view = View(parse(json.dumps(cfg), "case.json"), Settings(target="deepspeed", world_size=world))
    est = E.estimate_view(view, model, cluster, workload, zero_init=bool(_get(d, "zero_init", default=False)),
                          suggest=False)
    return est, cfg


def probe_cases() -> list[dict[str, Any]]:
    """The cases benchmarks/estimate_gpu_probe.py measures by default (its NEW matrix): the doc lists those not yet
    in the data under "Awaiting measurement", with the estimate they will be held to."""
    spec = importlib.util.spec_from_file_location("estimate_gpu_probe",
                                                  os.path.join(ROOT, "benchmarks", "estimate_gpu_probe.py"))
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    return probe.cases(probe.NEW, 512, 2)


def pending_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    measured = {r["case"] for r in rows if r["alloc"] is not None}
    return [row("estimate_gpu_probe.py", c) for c in probe_cases() if c["name"] not in measured]


def row(source: str, raw: dict[str, Any]) -> dict[str, Any]:
    d = _flat(raw)
    est, cfg = estimate_case(d)
    alloc = _mem(d, "peak_allocated", "gpu_peak_allocated", "max_memory_allocated", "peak_alloc")
    reserved = _mem(d, "peak_reserved", "gpu_peak_reserved", "max_memory_reserved")
    rss = _mem(d, "host_rss_peak", "rss_peak", "host_rss", "rss")
    ds_gpu = _mem(d, "ds_estimate_gpu", "deepspeed_estimate_gpu", "estimator_gpu")
    covered, total = est.per_gpu_covered_bytes, est.per_gpu_bytes
    host_cov = est.per_process_host_covered_bytes
    host_total = est.per_node_host_bytes // est.cluster.gpus_per_node
    oo, op = _offloads(d) if not isinstance(_get(d, "config", "ds_config"), dict) else (
        est.plan.offload_optimizer, est.plan.offload_param)
    return {
        "source": source,
        "case": str(_get(d, "name", "case", "id", default="?")),
        "params": est.model.params, "stage": est.plan.stage, "precision": est.plan.precision,
        "offload": "+".join(x for x, v in (("opt", oo), ("param", op)) if v != "none") or "-",
        "world": est.cluster.world, "optimizer": str(_get(d, "optimizer", default="")),
        "concurrent": bool(_get(d, "concurrent", default=False)),
        "activations": est.activations_known,
        "est_covered": covered, "est_total": total, "peak_moment": est.gpu_peak_moment,
        "alloc": alloc, "reserved": reserved,
        "ratio": alloc / covered if alloc and covered else None,
        "within_10": alloc is not None and covered > 0 and abs(alloc / covered - 1) <= 0.10,
        "margin_covers": (total >= reserved) if reserved else (total >= alloc if alloc else None),
        "headroom": (total - (reserved or alloc)) if (reserved or alloc) else None,
        "ds_gpu": ds_gpu, "ds_ratio": alloc / ds_gpu if alloc and ds_gpu else None,
        "host_covered": host_cov, "host_total": host_total, "rss": rss,
        "host_ratio": rss / host_cov if rss and host_cov else None,
        "host_margin_covers": host_total >= rss if rss else None,
    }


# -- the document -----------------------------------------------------------------------------------------------------

# What is known about a case that stays outside +-10 % (printed under "Outside +-10 %" while it does).
RESIDUALS: dict[str, str] = {}


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def concurrency_note(rows: list[dict[str, Any]]) -> list[str]:
    """Did running several cases on one GPU inflate peak reserved? Reserved/allocated of the concurrent runs against
    the others, for models of 1e9 parameters or more (where the buffers dwarf the runtime), offload or not."""
    out = []
    for label, off in (("with offload", True), ("without offload", False)):
        groups = {}
        for conc in (True, False):
            xs = [r["reserved"] / r["alloc"] for r in rows if r["reserved"] and r["alloc"] and r["params"] >= 1e9
                  and (r["offload"] != "-") == off and r["concurrent"] == conc]
            groups[conc] = xs
        if groups[True] and groups[False]:
            out.append(f"{label}: concurrent runs {min(groups[True]):.2f}-{max(groups[True]):.2f} (median "
                       f"{_median(groups[True]):.2f}, {len(groups[True])} runs), the others "
                       f"{min(groups[False]):.2f}-{max(groups[False]):.2f} (median {_median(groups[False]):.2f}, "
                       f"{len(groups[False])} runs)")
    return out


def _g(n: int | None) -> str:
    return "" if n is None else f"{n / 2**30:.2f}"


def _r(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}"


def describe(path: str) -> str:
    """A data file's own account of where it comes from (its "source", "job", "device" fields)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict):
        return ""
    cases = data.get("cases") or []
    device = data.get("device") or next((c.get("device") for c in cases if isinstance(c, dict) and c.get("device")),
                                        "")
    parts = [str(data[k]) for k in ("source", "job") if data.get(k)]
    if device:
        parts.append(f"device: {device}")
    if data.get("date"):
        parts.append(f"date: {data['date']}")
    return "; ".join(parts)


def markdown(rows: list[dict[str, Any]], sources: list[str], descriptions: dict[str, str] | None = None,
             pending: list[dict[str, Any]] | None = None) -> str:
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    within = sum(1 for r in rows if r["within_10"])
    covers = [r for r in rows if r["margin_covers"] is not None]
    covered_ok = sum(1 for r in covers if r["margin_covers"])
    ds = [r["ds_ratio"] for r in rows if r["ds_ratio"] is not None]
    host = [r for r in rows if r["rss"]]
    host_ok = sum(1 for r in host if r["host_margin_covers"])
    host_ratios = [r["host_ratio"] for r in host if r["host_ratio"]]
    errs = [abs(x - 1) for x in ratios]
    lines = [
        "# `zerolint estimate` against measured GPU peaks",
        "",
        "Regenerate with one command (after new `docs/data/verify-gpu-*.json` files land):",
        "",
        f"    {COMMAND}",
        "",
        "Generated by benchmarks/estimate_accuracy.py from: " + ", ".join(f"`docs/data/{s}`" for s in sources) + ".",
        "Do not edit by hand. How the estimate works: docs/estimate.md.",
        "",
        "## Summary",
        "",
        f"- cases: {len(rows)} ({len(ratios)} with a measured peak allocated)",
        f"- covered estimate vs measured peak allocated (`torch.cuda.max_memory_allocated`, after 3 steps): "
        f"**{within}/{len(ratios)} within +-10 %**; median |error| {statistics.median(errs) * 100:.1f} %, "
        f"worst {max(errs) * 100:.1f} %; measured/estimate {min(ratios):.2f}-{max(ratios):.2f}" if ratios else
        "- no measured peaks",
        f"- estimate + margin >= measured peak reserved (or allocated where reserved was not reported): "
        f"**{covered_ok}/{len(covers)}**",
        (f"- DeepSpeed's own estimators on the same cases: measured/estimate {min(ds):.2f}-{max(ds):.2f} "
         f"({len(ds)} cases)") if ds else "- DeepSpeed's estimator numbers: none in the data",
        (f"- host: estimate + margin >= measured RSS peak per process in **{host_ok}/{len(host)}** cases; "
         f"RSS/covered {min(host_ratios):.2f}-{max(host_ratios):.2f}") if host else "- host: no RSS data",
        "",
        "The margin (zerolint/estimate/memory.py): GPU = CUDA context "
        f"{E.CUDA_CONTEXT_BYTES / 2**30:.1f} GiB (+ {E.NCCL_BYTES / 2**30:.1f} GiB NCCL when world > 1) + the "
        "caching allocator's blocks of the other moments of the step (every buffer minus the peak moment; with the "
        "peak at initialize, the step's buffers larger than the largest tensor initialize frees) + at ZeRO-1/2 "
        "with overlap_comm and optimizer offload, the reduction stream's own pool (its fp64 norm copy of the "
        "largest gradient, rounded to 2 MiB, + one 2 MiB segment) + "
        f"{E.GPU_ALLOCATOR_FRACTION:.0%} of the covered peak for fragmentation "
        f"({E.GPU_ALLOCATOR_FRACTION_OFFLOAD:.0%} with offload); host = "
        f"{E.HOST_RUNTIME_BYTES / 2**30:.1f} GiB runtime per process (+ {E.HOST_OFFLOAD_RUNTIME_BYTES / 2**30:.1f} GiB "
        f"with offload) + {E.HOST_ALLOCATOR_FRACTION:.0%} of the covered host peak. The CUDA context is not in "
        "`max_memory_reserved`, so the reserved check below leaves it as "
        "headroom.",
        "",
        "## Per case (GiB per GPU)",
        "",
        "`est` = covered estimate at its peak moment; `+margin` = what `zerolint estimate` reports as needed; "
        "`alloc`/`reserved` = measured peaks; `ratio` = alloc / est; `ok` = within +-10 %; `covers` = est+margin >= "
        "reserved (allocated where reserved is missing); `DS` = DeepSpeed's estimator and alloc/DS.",
        "",
        "| source | case | stage | offload | N | act | est | peak moment | alloc | ratio | ok | +margin | reserved "
        "| covers | DS | alloc/DS | host est+margin | RSS |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['source'].replace('.json', '')} | {r['case']} | {r['stage']} | {r['offload']} | {r['world']} | "
            f"{'yes' if r['activations'] else 'no'} | {_g(r['est_covered'])} | {r['peak_moment']} | {_g(r['alloc'])} "
            f"| {_r(r['ratio'])} | {'yes' if r['within_10'] else 'NO'} | {_g(r['est_total'])} | {_g(r['reserved'])} "
            f"| {'yes' if r['margin_covers'] else 'NO' if r['margin_covers'] is not None else ''} | {_g(r['ds_gpu'])} "
            f"| {_r(r['ds_ratio'])} | {_g(r['host_total'])} | {_g(r['rss'])} |")
    if pending:
        lines += ["", "## Awaiting measurement", "",
                  "The shapes of issue 14 section 5 in benchmarks/estimate_gpu_probe.py's default matrix that the data "
                  "do not hold yet (GiB per GPU; host per process). Each needs two GPUs of one host: the probe's "
                  "2026-12-01 run had one H200 (a 2-GPU machine was not lent), so these wait for a run of "
                  "`benchmarks/estimate_gpu_probe.py` on one. What they check that the one-GPU data cannot: the "
                  "partitioned states (Pn = P/2), NCCL's buffers in the margin, the bucket flattening of a "
                  "reduction across ranks, and (ZeRO-3) gathering that no longer aliases the partition:", "",
                  "| case | stage | offload | N | est | peak moment | +margin | host est+margin |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        lines += [f"| {r['case']} | {r['stage']} | {r['offload']} | {r['world']} | {_g(r['est_covered'])} | "
                  f"{r['peak_moment']} | {_g(r['est_total'])} | {_g(r['host_total'])} |" for r in pending]
    misses = [r for r in rows if r["ratio"] is not None and not r["within_10"]]
    if misses:
        lines += ["", "## Outside +-10 %", ""]
        for r in misses:
            lines.append(f"- {r['case']} ({r['source']}): measured {_g(r['alloc'])} GiB vs {_g(r['est_covered'])} "
                         f"estimated (ratio {r['ratio']:.2f}); the margin "
                         f"{'covers' if r['margin_covers'] else 'does NOT cover'} it."
                         + (f" {RESIDUALS[r['case']]}" if r["case"] in RESIDUALS else ""))
    if descriptions:
        lines += ["", "## Data", ""]
        lines += [f"- `docs/data/{name}`: {text}" for name, text in descriptions.items() if text]
    lines += ["", "## Notes", "",
              "- `act = no`: the data gives no model shape or sequence length, so activations are not in `est` "
              "(they are part of what the margin must cover).",
              "- The H200 feasibility runs used `\"torch_adam\": true` (torch AdamW) for most cases; its foreach "
              "temporaries are part of the estimate for those cases (`optimizer step temporaries`).",
              "- Host RSS includes the Python/torch/CUDA runtime, which the estimate puts in the margin "
              "(`process runtime`).",
              "- Where the reserved memory goes (a `torch.cuda.memory._snapshot()` segment trace of the probe's "
              "1.3B-z2-offopt-short cases on one H200, 2026-12-01): the default stream held 7.60 GiB with and "
              "without `overlap_comm`: the per-tensor blocks of the model moved at initialize (D x P), the flat "
              "16-bit group (stage_1_and_2.py:505) and the transient clone of the master partition "
              "(:558-560, D x Pn), into whose freed segment both reduce buckets and the fp64 norm copies fit. "
              "With `overlap_comm` a second pool of 0.49 GiB (500 + 2 MiB) on DeepSpeed's reduction stream held "
              "the fp64 norm copies (set_norm_for_param_grad_in_gpu, :1886, under the stream of :2239-2240): the "
              "whole difference in peak reserved (8.09 vs 7.60 GiB), modelled as the `reduction stream pool` row.",
              "- fp32 training at ZeRO-3 keeps an fp32 master copy of the partition (4 B x Pn): stage3.py:1162 "
              "would let it alias the fp32 partition, but compares the partition's torch.device with "
              "`self.device`, a str (:333), never equal, so :1170 clones it (tests/test_estimate_deepspeed.py "
              "counts DeepSpeed's live partition-sized buffers on the CPU). The measured \"GPU after init\" of "
              "125M z3 fp32 shows it: 3.25 GiB = partition, gradient partition and 4-byte reduce bucket (2.79 GiB) "
              "+ 4 B x P (0.46 GiB). Before this row the case was 11 % above the estimate."]
    conc = concurrency_note(rows)
    if conc:
        lines += ["- Concurrent runs (several cases sharing a GPU, `concurrent` in the data) measure memory per "
                  "process; sharing cannot change peak allocated, and the data show it did not inflate peak reserved "
                  "either. Reserved/allocated, models of 1e9+ parameters: " + "; ".join(conc) + ". No miss is "
                  "put down to measurement noise."]
    lines += real_shapes_section()
    return "\n".join(lines) + "\n"


def real_shapes_section() -> list[str]:
    """The runs of `zerolint plan --verify`'s candidates on real architectures (benchmarks/plan_measured.py reads
    docs/data/plan-verify-*.json and the first set's plan-gpu-*.json), held to the same standard as the cases above:
    the covered estimate against the measured peak allocated, the estimate with its margin against peak reserved."""
    from plan_measured import load, memory_rows

    rows = memory_rows(load())
    if not rows:
        return []
    within = sum(abs(r["ratio"] - 1) <= 0.10 for r in rows)
    covers = sum(r["covers"] for r in rows)
    ratios = [r["ratio"] for r in rows]
    out = ["", "## Real shapes, through `zerolint plan --verify` (2026-12-02)", "",
           "Five architectures from 124M to 8B parameters (GPT-2, Qwen2-0.5B, TinyLlama-1.1B, Llama-3.2-3B, and a "
           "rank-16 adapter run of Llama-3-8B), each built from its config.json with random weights as transformers "
           "lays it out (RMSNorm in fp32, GQA, SwiGLU, tied or untied heads, large vocabularies), run on one H200 "
           "with the configs `zerolint plan` picked and their alternatives (a smaller micro batch, checkpointing, "
           "optimizer offload, ZeRO-3). Set A: a probe before `plan --verify` that kept the 16-bit logits across "
           "backward (D x V bytes per token added to the estimate for it); sets B and C: `plan --verify`, the loss "
           "computed in the forward as transformers' models do. Sets B and C ran after the estimate's activation "
           "terms were fitted to set A (the fp32 norm copies, 12 V bytes of logits per token), so they are out of "
           "sample for it. Table and data: docs/plan.md, \"Measured\" (`python benchmarks/plan_measured.py`).", "",
           f"- cases: {len(rows)}; covered estimate vs measured peak allocated: **{within}/{len(rows)} within "
           f"+-10 %**; measured/estimate {min(ratios):.2f}-{max(ratios):.2f}",
           f"- estimate + margin >= measured peak reserved: **{covers}/{len(rows)}**"
           + ("; under: " + ", ".join(f"{r['set']} {r['model']} {r['summary']} ({r['need'] / r['reserved'] - 1:+.1%})"
                                      for r in rows if not r["covers"]) if covers < len(rows) else "")]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="data files [default: docs/data/verify-*.json]")
    ap.add_argument("--write", metavar="PATH", help="write the markdown to PATH instead of printing it")
    ap.add_argument("--json", action="store_true", help="print one JSON object per case")
    args = ap.parse_args(argv)
    files = args.files or default_files()
    if not files:
        print("no data files", file=sys.stderr)
        return 2
    rows = []
    for source, raw in load_files(files):
        try:
            rows.append(row(source, raw))
        except (KeyError, TypeError, ValueError, E.EstimateError) as e:
            print(f"{source}: skipped a case ({type(e).__name__}: {e}): {json.dumps(raw)[:200]}", file=sys.stderr)
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    text = markdown(rows, [os.path.basename(f) for f in files], {os.path.basename(f): describe(f) for f in files},
                    pending_rows(rows))
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
