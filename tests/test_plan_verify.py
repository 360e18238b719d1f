"""`zerolint plan --verify`: the plan's candidates run for real (DeepSpeed 0.19.8 on the CPU here, an H200 in
docs/plan.md) with the model's real shape. The shapes are checked against the estimate's parameter counts in torch;
the command end to end through verify's warm runner; what a run's record means (a pass, an out-of-memory that is the
estimate's error, a pass on a GPU larger than the planned one) from records in the runner's shape."""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import oracle

from zerolint.estimate.modelspec import load_hf_config
from zerolint.plan.hardware import Hardware, preset
from zerolint.plan.job import Job
from zerolint.plan.measure import Measured, Verification, to_measure
from zerolint.plan.search import plan
from zerolint.plan.write import config_text

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "fixtures" / "models"
TINY = ROOT / "tests" / "data" / "models"
GiB = 2**30
EXT_DIR = os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
needs_torch = oracle(importlib.util.find_spec("torch") is None, "needs torch (pip install '.[verify]')")
needs_deepspeed = oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
                         "needs torch and deepspeed (pip install '.[verify]')")


# -- the real shapes --------------------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name", ["gpt2", "qwen2-0.5b", "tinyllama-1.1b", "llama-2-7b", "mistral-7b", "llama-3-8b",
                                  "pythia-160m"])
def test_the_built_model_has_the_estimates_parameters(name):
    """verify's child builds exactly the tensors the estimate counts (on the meta device: no memory), and an adapter
    run trains exactly the adapters the plan counts."""
    import torch

    from zerolint.verify.archs import build
    from zerolint.verify.realshape import from_hf_config

    cfg = json.loads((MODELS / f"{name}.json").read_text())
    spec = load_hf_config(str(MODELS / f"{name}.json"))
    for rank in (0, 8):
        job = Job(model=spec, lora_rank=rank or None)
        shape = from_hf_config(cfg, seq=16, lora_rank=rank, params=spec.params + job.adapter_params())
        with torch.device("meta"):
            model = build(shape.to_json())
        built = sum(p.numel() for p in model.parameters())
        trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
        assert built == spec.params + job.adapter_params() == shape.params
        assert trained == job.trainable_params()


TINY_CONFIGS = {
    "llama": {"model_type": "llama", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128},
    "qwen2": {"model_type": "qwen2", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
              "tie_word_embeddings": True},
    "gpt2": {"model_type": "gpt2", "vocab_size": 256, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64},
    "gpt_neox": {"model_type": "gpt_neox", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "intermediate_size": 256, "use_parallel_residual": False},
}


@needs_torch
@pytest.mark.parametrize("arch", sorted(TINY_CONFIGS))
@pytest.mark.parametrize("rank,checkpointing", [(0, False), (4, True)])
def test_each_architecture_trains_what_it_should(arch, rank, checkpointing):
    """A forward and backward of each built architecture (bf16, on the CPU): a finite loss, and gradients on exactly
    the parameters that train (every one; with adapters, the adapters only), checkpointing or not."""
    import torch

    from zerolint.verify.archs import build
    from zerolint.verify.realshape import from_hf_config

    torch.manual_seed(0)
    model = build(from_hf_config(TINY_CONFIGS[arch], seq=32, lora_rank=rank,
                                 checkpointing=checkpointing).to_json()).to(torch.bfloat16)
    ids = torch.randint(0, 256, (2, 33))
    loss = model(ids[:, :-1], ids[:, 1:])
    loss.backward()
    assert torch.isfinite(loss.detach())
    got = {n for n, p in model.named_parameters() if p.grad is not None}
    want = {n for n, p in model.named_parameters() if (not rank) or "lora_" in n}
    assert got == want and got


def test_a_model_verify_does_not_build_is_a_located_error():
    from zerolint.verify.realshape import ShapeError, from_hf_config

    with pytest.raises(ShapeError, match=r"model_type 't5' is not built by verify \(built: llama, mistral, qwen2, "
                                         r"gpt2, gpt_neox\)"):
        from_hf_config(json.loads((MODELS / "t5-small.json").read_text()), seq=128)
    with pytest.raises(ShapeError, match=r"--seq-len 2048 is longer than gpt2's 1024 positions"):
        from_hf_config(json.loads((MODELS / "gpt2.json").read_text()), seq=2048)


# -- which candidates run ---------------------------------------------------------------------------------------

def test_the_pick_then_one_of_each_kind_of_alternative():
    job = Job(model=load_hf_config(str(MODELS / "tinyllama-1.1b.json")), global_batch=16, seq_len=2048)
    hw = Hardware(host_memory=120 * GiB, **preset("h200"))
    chosen = to_measure(plan(job, hw).ranked, 5)
    assert [s.candidate.describe() for s in chosen] == [
        "ZeRO-0, no offload, micro 16 x accum 1",
        "ZeRO-0, no offload, micro 8 x accum 2",
        "ZeRO-0, no offload, micro 16 x accum 1, checkpointing",
        "ZeRO-2, offload optimizer->cpu, micro 16 x accum 1",
        "ZeRO-3, no offload, micro 16 x accum 1",
    ]
    assert [s.candidate.describe() for s in to_measure(plan(job, hw).ranked, 2)] == chosen_first(chosen, 2)


def chosen_first(chosen, k):
    return [s.candidate.describe() for s in chosen[:k]]


# -- what a record means ----------------------------------------------------------------------------------------

def _scored():
    job = Job(model=load_hf_config(str(MODELS / "tinyllama-1.1b.json")), global_batch=16, seq_len=2048)
    return plan(job, Hardware(host_memory=120 * GiB, **preset("h200"))).ranked[:3]


def _record(status="pass", steps=(1.0, 0.5, 0.7, 0.6), alloc=80 * GiB, reserved=90 * GiB, error=None):
    rec = {"status": status, "timings": {"step_s": list(steps)},
           "memory": {"peak_allocated_bytes": alloc, "peak_reserved_bytes": reserved,
                      "host_rss_peak_bytes": 5 * GiB}}
    if error:
        rec.update(phase="step 1", error=error)
    return rec


def test_a_pass_an_out_of_memory_and_a_pass_on_a_larger_gpu():
    a, b, c = _scored()
    hw = Hardware(host_memory=120 * GiB, **preset("h200"))
    ok = Measured(a, _record(), hw, "cuda")
    assert (ok.status, ok.fits, ok.step_seconds, ok.verdict) == ("pass", True, 0.6, "fits")  # median after warm-up
    oom = Measured(b, _record("fail", error={"type": "OutOfMemoryError", "message": "CUDA out of memory. Tried to "
                                                                                     "allocate 2.00 GiB"}), hw, "cuda")
    assert (oom.status, oom.fits, oom.step_seconds) == ("oom", False, None)
    assert oom.verdict == (f"out of memory: the estimate said it fits ({b.per_gpu_bytes / GiB:.1f} GiB with its "
                           "margin): the estimate's error")
    assert not ok.above_estimate  # 90 GiB reserved + the context, under the estimate's need
    above = Measured(a, _record(reserved=a.per_gpu_bytes), hw, "cuda")
    assert above.above_estimate and above.fits  # it fits the H200, but reserved more than the estimate said
    small = Hardware(host_memory=120 * GiB, gpu_memory=80 * GiB)  # planned for 80 GiB, run on the 139 GiB H200
    big = Measured(c, _record(reserved=85 * GiB), small, "cuda")
    assert (big.status, big.fits) == ("pass", False)
    assert big.verdict == "ran, but reserved 85.0 GiB: more than the planned 80 GiB GPU"
    v = Verification("cuda:NVIDIA H200", "cuda", [ok, oom, big])
    assert v.pick is ok and v.pick_ratio() == 1.0 and v.spearman() is None  # two ran: no ranking to judge
    a2 = Measured(c, _record(steps=(1.0, 0.595, 0.59, 0.59), reserved=60 * GiB), hw, "cuda")
    assert Verification("d", "cuda", [ok, a2]).pick is ok  # 0.59 s is within 2 % of 0.6: the plan's pick stays
    a3 = Measured(c, _record(steps=(1.0, 0.5, 0.5, 0.5), reserved=60 * GiB), hw, "cuda")
    v = Verification("d", "cuda", [ok, a3])
    assert v.pick is a3 and v.pick_ratio() == pytest.approx(1.2)


def test_a_failed_run_says_where_and_why():
    (a, *_), hw = _scored(), Hardware(**preset("h200"))
    m = Measured(a, _record("fail", error={"type": "ValueError", "message": "bad\nmore"}), hw, "cuda")
    assert (m.status, m.verdict) == ("fail", "fail at step 1: ValueError: bad")


# -- end to end on the CPU --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ops_built(tmp_path_factory):
    """The op the tiny plans' configs load on the CPU, built before any run's clock (as tests/test_verify_cpu.py)."""
    d = tmp_path_factory.mktemp("prepare")
    cfg = d / "fused.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW",
                                                                                  "params": {"lr": 1e-4}}}))
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", "--cpu", str(cfg)],
                       capture_output=True, text=True, env={**os.environ, "TORCH_EXTENSIONS_DIR": EXT_DIR}, cwd=ROOT,
                       timeout=1700)
    assert p.returncode == 0, p.stderr[-4000:]
    return EXT_DIR


def plan_verify(ops_built, tmp_path, model, *args):
    env = {**os.environ, "NO_COLOR": "1", "TORCH_EXTENSIONS_DIR": ops_built,
           "ZEROLINT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "zerolint", "plan", "--model", str(TINY / model), "--gpu-memory",
                           "8GB", "--host-memory", "64GB", "--global-batch", "4", "--seq-len", "64", "--verify",
                           "--cpu", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)


@pytest.mark.slow
@pytest.mark.deepspeed
@needs_deepspeed
def test_plan_verify_runs_the_candidates_and_writes_the_measured_pick(ops_built, tmp_path):
    out = tmp_path / "ds.json"
    p = plan_verify(ops_built, tmp_path, "tiny-llama.json", "--verify-top", "3", "--format", "json", "--write",
                    str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    v = json.loads(p.stdout)["verify"]
    assert v["accelerator"] == "cpu" and v["device"].startswith("cpu:")
    got = [(c["rank_in_plan"], c["summary"], c["status"], c["fits"], c["verdict"]) for c in v["candidates"]]
    assert got == [(1, "ZeRO-0, no offload, micro 4 x accum 1", "pass", True, "fits"),
                   (31, "ZeRO-0, no offload, micro 2 x accum 2", "pass", True, "fits"),
                   (4, "ZeRO-0, no offload, micro 4 x accum 1, checkpointing", "pass", True, "fits")]
    params = load_hf_config(str(TINY / "tiny-llama.json")).params
    for c in v["candidates"]:
        m = c["measured"]
        assert m["params_built"] == m["params_trained"] == params == 250_432
        assert len(m["step_s"]) == 4 and m["step_seconds"] == statistics.median(m["step_s"][1:])
        assert m["peak_allocated_bytes"] is None and c["estimate"]["allocated_vs_covered"] is None  # no GPU
    # the fastest measured, or within 2 % of it (a tie) the one measured first
    best = min(c["measured"]["step_seconds"] for c in v["candidates"])
    fastest = next(c for c in v["candidates"] if c["measured"]["step_seconds"] <= best * 1.02)
    assert v["pick"]["summary"] == fastest["summary"]
    assert v["plans_pick_vs_fastest"] == round(v["candidates"][0]["measured"]["step_seconds"]
                                               / v["pick"]["measured"]["step_seconds"], 4)
    assert v["spearman"] is not None and v["estimate_errors"] == [] and v["above_estimate"] == []
    # --write writes the measured pick, in the consumer's form, and checks it
    job = Job(model=load_hf_config(str(TINY / "tiny-llama.json")), global_batch=4, seq_len=64)
    pick = next(s for s in plan(job, Hardware(gpu_memory=8 * GiB, host_memory=64 * GiB)).ranked
                if s.candidate.describe() == fastest["summary"])
    assert out.read_text() == config_text(pick.candidate, job, 1)
    assert f"zerolint: wrote {out} (deepspeed); zerolint check: no errors or warnings" in p.stderr


@pytest.mark.slow
@pytest.mark.deepspeed
@needs_deepspeed
def test_plan_verify_of_an_adapter_run_trains_only_the_adapters(ops_built, tmp_path):
    p = plan_verify(ops_built, tmp_path, "tiny-gpt2.json", "--lora-rank", "4", "--verify-top", "2", "-q")
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr == ""  # -q: no progress lines
    lines = p.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("Measured on ")))
    assert lines[at].endswith("(2 candidates, the median of the timed steps after a warm-up step):")
    assert lines[at + 1].split() == ["#", "config", "need", "GiB", "alloc", "reserved", "vs", "est", "model", "s",
                                     "step", "s", "verdict"]
    assert [x.split()[0] for x in lines[at + 2:at + 4]] == ["1", "31"] and all(x.endswith("  fits")
                                                                            for x in lines[at + 2:at + 4])
    assert any(x.startswith("Pick (measured): ZeRO-0, no offload, ") for x in lines)
    assert "On the CPU: step times only; no GPU memory was measured." in lines


def test_verify_needs_a_config_json_and_one_node(tmp_path):
    def plan_cli(*args):
        return subprocess.run([sys.executable, "-m", "zerolint", "plan", "--gpu", "h200", "--global-batch", "8",
                               *args], capture_output=True, text=True, cwd=tmp_path, timeout=120)

    p = plan_cli("--params", "1B", "--verify")
    assert p.returncode == 2
    assert "--verify builds the model from its config.json: give --model config.json" in p.stderr
    p = plan_cli("--model", str(MODELS / "gpt2.json"), "--nodes", "2", "--verify")
    assert (p.returncode, p.stderr) == (2, "zerolint: error: --verify runs on this machine: a plan for 2 nodes "
                                           "cannot be run here\n")


def test_the_measured_tables_in_docs_plan_md_are_the_benchmarks_output():
    if str(ROOT / "benchmarks") not in sys.path:  # a benchmark module (dataclasses need it importable by name)
        sys.path.insert(0, str(ROOT / "benchmarks"))
    module = importlib.import_module("plan_measured")
    doc = (ROOT / "docs" / "plan.md").read_text()
    between = doc.split("<!-- plan_measured -->\n", 1)[1].split("\n<!-- /plan_measured -->", 1)[0]
    assert between + "\n" == module.markdown(module.load()), "run python benchmarks/plan_measured.py"


def test_the_verify_options_need_verify(tmp_path):
    p = subprocess.run([sys.executable, "-m", "zerolint", "plan", "--params", "1B", "--gpu", "h200", "--global-batch",
                        "8", "--steps", "4", "--cpu"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 2
    assert "Error: --steps, --cpu: only with --verify" in p.stderr


@pytest.mark.slow
@pytest.mark.deepspeed
@needs_deepspeed
def test_ctrl_c_during_plan_verify_exits_130_and_leaves_nothing(ops_built, tmp_path):
    from test_verify_cpu import interrupt_once_forked, processes_marked

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "NO_COLOR": "1", "TORCH_EXTENSIONS_DIR": ops_built, "TMPDIR": str(tmp),
           "ZEROLINT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "zerolint", "plan", "--model", str(TINY / "tiny-llama.json"),
                             "--gpu-memory", "8GB", "--global-batch", "4", "--seq-len", "64", "--verify", "--cpu",
                             "--steps", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    out, err = interrupt_once_forked(proc)
    assert (proc.returncode, out) == (130, ""), err[-3000:]
    assert "zerolint plan: interrupted; every process of the run was stopped" in err
    assert processes_marked(proc.pid) == []
    assert list(tmp.iterdir()) == []
