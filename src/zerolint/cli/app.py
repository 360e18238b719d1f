"""The `zerolint` click group and its commands. Heavy modules (rich, pydantic, torch, deepspeed) are imported
inside the commands that need them, never at import time: `zerolint check` must start fast (and the console script
reads a plain `check` without importing this module at all: cli/fast.py)."""

from __future__ import annotations

import os
import sys

import click

from ..base.version import __version__
from ..report.output import EXIT_INTERRUPTED, EXIT_USAGE
from .check_cmd import check
from .options import TARGETS, _split_codes
from .process import as_cli_process
from .server_cmd import server


class _Main(click.Group):
    def main(self, *args, **kwargs):
        """The entry point (the console script, python -m zerolint, CliRunner, main([...]) in-process): the GC
        thresholds hold for this call only, and a real `zerolint` process leaves without the interpreter's teardown.
        """
        return as_cli_process(lambda: super(_Main, self).main(*args, **kwargs))

    def invoke(self, ctx):
        """Ctrl-C in any command exits 130 (128 + SIGINT), as shells and CI expect of an interrupted program; click
        alone would print "Aborted!" and exit 1, which reads like findings. verify stops its processes first."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(err=True)
            click.echo("zerolint: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, "-V", "--version", prog_name="zerolint")
def main() -> None:
    """zerolint: find the mistakes in a DeepSpeed config before the job starts."""
    try:  # every command resolves paths against it; a deleted working directory is a usage error, not a traceback
        os.getcwd()
    except OSError as e:
        click.echo(f"zerolint: error: the working directory is not accessible ({e.strerror or e}); cd to an "
                   "existing directory", err=True)
        sys.exit(EXIT_USAGE)


main.add_command(check)
main.add_command(server)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def rules_cmd(fmt) -> None:
    """List every rule: code, name, default severity, fix, summary."""
    from ..rules.ruleset import RuleSet

    rules = RuleSet.builtin().known()  # the rules plus the engine-level codes (ZL090, ZL520, ...)
    if fmt == "json":
        import json

        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary, "versions": r.versions,
             "targets": list(r.targets), "fixable": r.fixable, "url": r.url} for r in rules], indent=2))
        return
    if fmt == "markdown":
        click.echo("| code | name | severity | fix | summary |\n| --- | --- | --- | --- | --- |")
        for r in rules:
            link = f"{r.code}.md" if r.url.endswith(f"/{r.code}.md") else r.url  # engine-level codes: their docs
            click.echo(f"| [{r.code}]({link}) | `{r.name}` | {r.severity} | {r.fixable or ''} | {r.summary} |")
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        fix = {"safe": "fix", "unsafe": "fix*", "alternatives": "fix?"}.get(r.fixable or "", "")
        click.echo(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {fix:<4}  {r.summary}")


@main.command("rule")
@click.argument("code_or_name")
def rule_cmd(code_or_name) -> None:
    """Explain one rule: summary, rationale, bad and good examples, versions, evidence."""
    from ..rules.docs import render_rule
    from ..rules.ruleset import RuleSet

    ruleset = RuleSet.builtin()
    rule = ruleset.find(code_or_name)
    if rule is None:
        from ..base.suggest import closest

        rules = ruleset.rules
        hint = closest(code_or_name, [r.code for r in rules] + [r.name for r in rules])
        raise click.UsageError(f"no rule {code_or_name!r}" + (f"; did you mean {hint}?" if hint else ""))
    click.echo(render_rule(rule, terminal=True), nl=False)


@main.command("estimate")
@click.argument("config")
@click.option("--params", default=None, metavar="N", help="Model size: 125M, 1.1B, 7B, 70e9.")
@click.option("--model", "model_config", default=None, metavar="CONFIG.JSON",
              help="A Hugging Face config.json (llama, mistral, qwen2, gpt2, gpt_neox, t5): exact P, largest layer "
                   "and shape. No weights, no download.")
@click.option("--largest-layer", default=None, metavar="N", help="Parameters of the largest layer (ZeRO-3).")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--gpu-memory", default=None, metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB).")
@click.option("--host-memory", default=None, metavar="SIZE", help="Host memory per node, e.g. 1TB.")
@click.option("--seq-len", type=click.IntRange(min=1), default=None, help="Sequence length (activation term).")
@click.option("--micro-batch", type=click.IntRange(min=1), default=None,
              help="Micro-batch per GPU [default: the config's train_micro_batch_size_per_gpu].")
@click.option("--hidden", type=click.IntRange(min=1), default=None, help="Hidden size (without --model).")
@click.option("--layers", type=click.IntRange(min=1), default=None, help="Number of layers (without --model).")
@click.option("--vocab", type=click.IntRange(min=1), default=None, help="Vocabulary size (without --model).")
@click.option("--checkpointing", is_flag=True, help="The model uses activation (gradient) checkpointing.")
@click.option("--zero-init/--no-zero-init", default=None,
              help="The model is built under deepspeed.zero.Init [default: yes for HF/Accelerate at stage 3].")
@click.option("--compare", default=None, metavar="OTHER.JSON", help="A second config, shown side by side.")
@click.option("--target", type=click.Choice(TARGETS), default="auto", show_default=True)
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--explain", is_flag=True, help="Show the formula of every row.")
@click.option("--no-color", is_flag=True, help="Plain text even on a terminal.")
def estimate_cmd(config, params, model_config, largest_layer, gpus_per_node, nodes, gpu_memory, host_memory, seq_len,
                 micro_batch, hidden, layers, vocab, checkpointing, zero_init, compare, target, deepspeed_version, fmt,
                 explain, no_color) -> None:
    """Per-GPU and per-node host memory of CONFIG for a model, component by component; what would make it fit."""
    from ..estimate.memory import Cluster, Workload, parse_bytes
    from ..estimate.modelspec import ModelSpecError, resolve
    from ..report.estimate import UsageError, run

    if params is None and model_config is None:
        raise click.UsageError("give the model: --params 7B or --model config.json")
    try:
        model = resolve(params=params, model=model_config, largest_layer=largest_layer, hidden=hidden, layers=layers,
                        vocab=vocab)
    except ModelSpecError as e:
        raise click.BadParameter(str(e), param_hint="--model" if model_config else "--params") from None
    mem = {}
    for name, value in (("gpu_memory", gpu_memory), ("host_memory", host_memory)):
        try:
            mem[name] = None if value is None else parse_bytes(value)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--" + name.replace("_", "-")) from None
    try:
        code = run(config, compare, model=model, cluster=Cluster(nodes=nodes, gpus_per_node=gpus_per_node),
                   workload=Workload(seq_len=seq_len, micro_batch=micro_batch, checkpointing=checkpointing),
                   zero_init=zero_init, target=target, deepspeed_version=deepspeed_version, fmt=fmt,
                   explain=explain, color=not no_color, **mem)
    except UsageError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(code)


@main.command("plan")
@click.option("--model", "model_config", default=None, metavar="CONFIG.JSON",
              help="A Hugging Face config.json (llama, mistral, qwen2, gpt2, gpt_neox, t5): exact parameters and "
                   "shape. No weights, no download.")
@click.option("--params", default=None, metavar="N", help="Model size without --model: 125M, 1.1B, 7B.")
@click.option("--hidden", type=click.IntRange(min=1), default=None, help="Hidden size (without --model).")
@click.option("--layers", type=click.IntRange(min=1), default=None, help="Number of layers (without --model).")
@click.option("--vocab", type=click.IntRange(min=1), default=None, help="Vocabulary size (without --model).")
@click.option("--gpu", "gpu_name", default=None, metavar="NAME",
              help="A GPU preset for memory, throughput and links: h200, h100, a100-80gb, a100-40gb, l40s, l4, "
                   "rtx4090, v100-32gb (the flags below override it).")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--gpu-memory", default=None, metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB).")
@click.option("--host-memory", default=None, metavar="SIZE",
              help="Host memory per node, e.g. 512GB [default: not limited; the plan says so].")
@click.option("--nvme", default=None, metavar="SIZE", help="NVMe space per node: adds NVMe offload candidates.")
@click.option("--gpu-tflops", type=click.FloatRange(min=0.1), default=None,
              help="Dense 16-bit TFLOPS per GPU [default: the preset's, else 989 (H100)].")
@click.option("--mfu", type=click.FloatRange(min=0.01, max=1.0), default=0.45, show_default=True,
              help="The fraction of peak a large micro batch reaches.")
@click.option("--intra-gbps", type=click.FloatRange(min=0.1), default=None, help="GB/s per GPU inside a node.")
@click.option("--network-gbps", type=click.FloatRange(min=0.1), default=None, help="GB/s per GPU between nodes.")
@click.option("--pcie-gbps", type=click.FloatRange(min=0.1), default=None, help="Host <-> GPU GB/s per GPU.")
@click.option("--cpu-adam-rate", type=click.FloatRange(min=1e6), default=None, metavar="PARAMS_PER_S",
              help="DeepSpeedCPUAdam parameters updated per second on one node [default: 4e9, a 2-socket server; "
                   "2.1e9 was measured on a 16-core host].")
@click.option("--global-batch", type=click.IntRange(min=1), default=None,
              help="Sequences per optimizer step, all GPUs together: the plan splits it into micro batch x "
                   "accumulation.")
@click.option("--micro-batch", type=click.IntRange(min=1), default=None, help="A fixed micro batch per GPU.")
@click.option("--seq-len", type=click.IntRange(min=1), default=2048, show_default=True)
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp32"]), default="bf16", show_default=True)
@click.option("--lora-rank", type=click.IntRange(min=1), default=None,
              help="Adapter training: rank-r adapters on every attention and MLP projection, the base frozen.")
@click.option("--checkpointing", type=click.Choice(["allowed", "never", "always"]), default="allowed",
              show_default=True, help="Activation checkpointing: a candidate, never, or always on.")
@click.option("--target", type=click.Choice(["deepspeed", "hf", "accelerate"]), default="deepspeed",
              show_default=True, help="Who reads the written config.")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=1e-5, show_default=True,
              help="The learning rate written where the consumer does not fill it (--target deepspeed).")
@click.option("--from", "start_from", default=None, metavar="DS.JSON",
              help="Start from this config: does it fit, and the smallest change that makes it fit.")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True, help="Candidates shown.")
@click.option("--write", default=None, metavar="FILE", help="Write the pick as a config for --target, then check it.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--verify", "verify", is_flag=True,
              help="Run the top candidates on this machine (real DeepSpeed, the model's shape with random weights) "
                   "and pick the fastest measured one that fits (needs zerolint[verify] and --model).")
@click.option("--verify-top", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --verify: how many candidates run (the pick and the best of each kind of alternative).")
@click.option("--steps", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --verify: timed optimizer steps per candidate, after one warm-up step.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600, show_default=True,
              help="With --verify: seconds per candidate.")
@click.option("--cpu", is_flag=True, help="With --verify: run on the CPU (step times only; no GPU memory measured).")
@click.option("--op-cache", default=None, metavar="DIR", help="With --verify: where DeepSpeed's op builds are kept.")
@click.option("--quiet", "-q", is_flag=True, help="With --verify: no progress lines on stderr.")
def plan_cmd(model_config, params, hidden, layers, vocab, gpu_name, gpus_per_node, nodes, gpu_memory, host_memory,
             nvme, gpu_tflops, mfu, intra_gbps, network_gbps, pcie_gbps, cpu_adam_rate, global_batch, micro_batch,
             seq_len, precision, lora_rank, checkpointing, target, lr, start_from, top, write, fmt, verify,
             verify_top, steps, timeout, cpu, op_cache, quiet) -> None:
    """The fastest config that fits a model on given GPUs: candidates estimated and ranked by a step-time model
    (with --verify: measured on this machine)."""
    from ..estimate.memory import parse_bytes
    from ..estimate.modelspec import ModelSpecError, resolve
    from ..plan.hardware import Hardware, preset
    from ..plan.job import Job, PlanError
    from ..plan.measure import MeasureOptions
    from ..plan.run import fail, run

    if params is None and model_config is None:
        raise click.UsageError("give the model: --model config.json or --params 7B")
    try:
        model = resolve(params=params, model=model_config, hidden=hidden, layers=layers, vocab=vocab)
    except ModelSpecError as e:
        raise click.BadParameter(str(e), param_hint="--model" if model_config else "--params") from None
    hw: dict = {}
    if gpu_name is not None:
        try:
            hw.update(preset(gpu_name))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--gpu") from None
    for name, value in (("gpu_memory", gpu_memory), ("host_memory", host_memory), ("nvme", nvme)):
        if value is not None:
            try:
                hw[name] = parse_bytes(value)
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint="--" + name.replace("_", "-")) from None
    if "gpu_memory" not in hw:
        raise click.UsageError("give the GPU: --gpu h100 (a preset) or --gpu-memory 80GB")
    for name, value in (("tflops", gpu_tflops), ("intra_gbps", intra_gbps), ("network_gbps", network_gbps),
                        ("pcie_gbps", pcie_gbps), ("cpu_adam_params_per_s", cpu_adam_rate)):
        if value is not None:
            hw[name] = value
    hardware = Hardware(gpus_per_node=gpus_per_node, nodes=nodes, mfu=mfu, **hw)
    assert model is not None  # resolve() is None only without params and model_config (refused above)
    job = Job(model=model, seq_len=seq_len, global_batch=global_batch, micro_batch=micro_batch, precision=precision,
              lora_rank=lora_rank, checkpointing=checkpointing, target=target, lr=lr)
    ctx = click.get_current_context()
    given = [name for name in ("verify_top", "steps", "timeout", "cpu", "op_cache", "quiet")
             if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
    if given and not verify:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise click.UsageError(f"{flags}: only with --verify")
    measure = None
    if verify:
        if model_config is None:
            raise click.UsageError("--verify builds the model from its config.json: give --model config.json")
        measure = MeasureOptions(model_config=model_config, top=verify_top, steps=steps, timeout=timeout, cpu=cpu,
                                 quiet=quiet, op_cache=op_cache)
    try:
        sys.exit(run(job, hardware, top=top, fmt=fmt, write=write, start_from=start_from, verify=measure))
    except PlanError as e:
        fail(str(e))
    except KeyboardInterrupt as e:  # --verify: Ctrl-C, SIGTERM, SIGHUP; the runs are already stopped
        from ..verify.runner import exit_code

        click.echo("zerolint plan: interrupted; every process of the run was stopped", err=True)
        sys.exit(exit_code(e))


@main.command("verify")
@click.argument("configs", metavar="CONFIG...", nargs=-1, required=True)
@click.option("--gpus", "--ranks", "gpus", type=click.IntRange(min=1), default=1, show_default=True,
              help="Ranks to run: GPUs, or CPU processes with --cpu (or on a machine without GPUs).")
@click.option("--cpu", is_flag=True, help="Run on the CPU (DS_ACCELERATOR=cpu, gloo) even when GPUs are present.")
@click.option("--compare-fix", is_flag=True, help="Also run zerolint's fixed config and show both side by side.")
@click.option("--unsafe-fixes", is_flag=True, help="With --compare-fix: apply unsafe fixes too.")
@click.option("--prefer", multiple=True, metavar="CHOICE", help="With --compare-fix: the alternative to apply.")
@click.option("--params", default=None, metavar="N", help="A bigger synthetic model (125M, 350M, 1.3B) for memory "
                                                          "figures [default: a 0.17 M-parameter model].")
@click.option("--seq-len", type=click.IntRange(min=1, max=65536), default=None,
              help="Sequence length [default: 32; 256 with --params].")
@click.option("--steps", type=click.IntRange(min=1, max=100), default=3, show_default=True,
              help="Optimizer steps (some errors only fire at the first step).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=300.0, show_default=True,
              help="Seconds before the run and every process it started are killed (the run only, not op builds).")
@click.option("--build-timeout", type=click.FloatRange(min=0.1), default=1800.0, show_default=True,
              help="Seconds for building the DeepSpeed ops the run needs (a phase before the run).")
@click.option("--prepare", is_flag=True, help="Only build the DeepSpeed ops these CONFIGs need (Docker images, CI "
                                              "setup steps); exit 0 when they are ready, 2 otherwise.")
@click.option("--dry-run", is_flag=True, help="With --prepare: print the ops each CONFIG needs (--format json: "
                                              "each config with its ops) and build nothing.")
@click.option("--op-cache", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Keep the DeepSpeed op builds under DIR (one subdirectory per installation and toolchain): the "
                   "directory a CI cache step keeps between runs [default: TORCH_EXTENSIONS_DIR when set, else "
                   "zerolint's cache].")
@click.option("--target", type=click.Choice(TARGETS), default=None,
              help='Who reads the config; hf/accelerate fill "auto" as the HF Trainer does (docs/verify.md) '
                   "[default: the zerolint config's target, else auto].")
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp32"]), default="bf16", show_default=True,
              help='What fp16/bf16 "enabled": "auto" become for hf/accelerate (TrainingArguments --bf16/--fp16).')
@click.option("--training-args", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="TrainingArguments fields (JSON or YAML) that hf/accelerate fill \"auto\" from and compare with.")
@click.option("--hf", "hf_mode", type=click.Choice(["auto", "replay"]), default="auto", show_default=True,
              help="hf/accelerate: run the real HF Trainer / Accelerate when zerolint[hf] is installed (auto), or "
                   "zerolint's replay of their fill (replay).")
@click.option("--client-optimizer", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="Without an optimizer section, pass the one HF/Accelerate would (auto) or none.")
@click.option("--launcher", type=click.Choice(["torchrun", "deepspeed", "slurm", "srun"]), default=None,
              help="How several ranks are started: torchrun, the deepspeed launcher, one rank per task of an srun step "
                   "(slurm), or srun called by zerolint [default: torchrun; slurm inside an srun step].")
@click.option("--nnodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Nodes of a multi-node run (torchrun, with --rdzv-endpoint; srun); --gpus is ranks per node.")
@click.option("--node-rank", type=click.IntRange(min=0), default=None, metavar="R", help="torchrun: this node's rank.")
@click.option("--rdzv-endpoint", default=None, metavar="HOST:PORT", help="torchrun: where the nodes meet.")
@click.option("--rdzv-backend", type=click.Choice(["c10d", "static"]), default=None,
              help="torchrun's rendezvous backend [default: c10d].")
@click.option("--rdzv-id", default=None, metavar="ID", help="torchrun: the job id, the same on every node.")
@click.option("--hostfile", type=click.Path(), default=None, metavar="FILE",
              help="--launcher deepspeed: DeepSpeed's hostfile ('HOST slots=N' lines); it ssh-es to the hosts.")
@click.option("--num-nodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="--launcher deepspeed: use the first N hosts of --hostfile.")
@click.option("--master-addr", default=None, metavar="HOST", help="--launcher deepspeed: rank 0's address.")
@click.option("--master-port", type=click.IntRange(min=1, max=65535), default=None, metavar="PORT",
              help="deepspeed, slurm, srun: the port rank 0 listens on [default: a free one; Slurm: from the job id].")
@click.option("--no-cache", is_flag=True, help="Run even if this config was verified here before.")
@click.option("--format", "formats", multiple=True, type=click.Choice(["text", "json", "sarif"]),
              help="Output format (repeatable).")
@click.option("--output", "-o", "outputs", multiple=True, type=click.Path(dir_okay=False, writable=True),
              help="Write the last format(s) to FILE (repeatable).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding at or above this severity is reported [default: the zerolint config's "
                   "fail-on, else error].")
@click.option("--select", multiple=True, help="Rules to report (codes, prefixes, names; comma-separated).")
@click.option("--ignore", multiple=True, help="Rules to skip (codes, prefixes, names; comma-separated).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Use this zerolint config (.zerolint.toml or pyproject.toml) instead of the nearest one above "
                   "CONFIG (as for check).")
@click.option("--isolated", is_flag=True, help="Ignore every zerolint config file in the tree (as for check).")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=64), default=1, show_default=True,
              help="With several CONFIGs: run this many single-rank configs side by side (warm runner).")
@click.option("--keep", default=None, metavar="DIR", help="Keep the run's spec, log and results under DIR.")
@click.option("--quiet", "-q", is_flag=True, help="No progress and only the findings.")
@click.option("--no-color", is_flag=True, help="Plain text even on a terminal.")
def verify_cmd(configs, gpus, cpu, compare_fix, unsafe_fixes, prefer, params, seq_len, steps, timeout, build_timeout,
               prepare, dry_run, op_cache, target, precision, training_args, hf_mode, client_optimizer, launcher,
               nnodes, node_rank, rdzv_endpoint, rdzv_backend, rdzv_id, hostfile, num_nodes, master_addr, master_port,
               no_cache, formats, outputs, fail_on, select, ignore, config_file, isolated, jobs, keep, quiet,
               no_color) -> None:
    """Prove CONFIG with a real DeepSpeed init and optimizer steps on a tiny model (docs/verify.md).

    Several CONFIGs (files, directories, quoted globs) run through one warm runner, with a table of verdicts.
    With --prepare, only build the DeepSpeed ops that the CONFIGs need."""
    from ..verify.options import UsageError, VerifyOptions
    from ..verify.runner import exit_code
    from ..verify.session import expand_configs, run, run_several
    from ..verify.session import prepare as prepare_ops

    select_codes, ignore_codes = tuple(_split_codes(select)), tuple(_split_codes(ignore))  # () : the project's
    opts = VerifyOptions(gpus=gpus, cpu=cpu, compare_fix=compare_fix, params=params, seq_len=seq_len, steps=steps,
                         timeout=timeout, build_timeout=build_timeout, target=target, formats=formats,
                         outputs=outputs, no_cache=no_cache, launcher=launcher, precision=precision,
                         client_optimizer=client_optimizer, unsafe_fixes=unsafe_fixes, prefer=prefer,
                         fail_on=fail_on, select=select_codes, ignore=ignore_codes, isolated=isolated,
                         config_file=config_file, quiet=quiet, color=not no_color, keep=keep,
                         training_args=training_args, hf=hf_mode, nnodes=nnodes, node_rank=node_rank,
                         rdzv_endpoint=rdzv_endpoint, rdzv_backend=rdzv_backend, rdzv_id=rdzv_id, hostfile=hostfile,
                         num_nodes=num_nodes, master_addr=master_addr, master_port=master_port,
                         op_cache=op_cache, dry_run=dry_run)
    try:
        if dry_run and not prepare:
            raise UsageError("--dry-run goes with --prepare (list the ops the CONFIGs need, build nothing)")
        if prepare:
            code = prepare_ops(list(configs), opts)
        elif len(configs) == 1 and not (os.path.isdir(configs[0]) or (any(ch in configs[0] for ch in "*?[")
                                                                       and not os.path.exists(configs[0]))):
            # one file: the single-config report, as before
            code = run(configs[0], opts)
        else:
            code = run_several(expand_configs(list(configs)), opts, jobs=jobs)
    except UsageError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM, SIGHUP: the run is already stopped and cleaned up
        click.echo("zerolint verify: interrupted; every process of the run was stopped", err=True)
        sys.exit(exit_code(e))
    sys.exit(code)


@main.command("schema")
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None,
              help="Print the schema of this DeepSpeed version [default: the installed one, else 0.19.8].")
def schema_cmd(deepspeed_version) -> None:
    """Print the JSON Schema of the DeepSpeed config (for editors and other validators)."""
    from importlib import resources

    from ..model.versions import Version, coverage_note, schema_line
    from ..model.view import default_deepspeed_version

    try:
        version = Version(deepspeed_version or default_deepspeed_version())
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--deepspeed-version") from None
    note = coverage_note(version, uses="prints the {line} line's schema")
    if note:
        click.echo(f"zerolint: note: {note}", err=True)
    name = f"deepspeed-{schema_line(version)}.json"
    click.echo(resources.files("zerolint").joinpath("data", "schemas", name).read_text("utf-8"), nl=False)


@main.command("upgrade")
@click.argument("files", nargs=-1, required=True)
@click.option("--to", "to", metavar="X.Y.Z", default=None,
              help="DeepSpeed version to upgrade the config for [default: the installed one, else 0.19.8].")
@click.option("--diff", is_flag=True, help="Print the rewrites as a unified diff and write nothing (exit 1 if any).")
@click.option("--remove-removed", is_flag=True,
              help="Also delete blocks the target version removed (amp, sparse_attention, elasticity, ...); without "
                   "it they are only reported, with what replaces them.")
@click.option("--target", type=click.Choice(TARGETS), default="auto", show_default=True,
              help="Who reads the config (as for check).")
@click.option("--no-color", is_flag=True, help="Never colour the text output.")
def upgrade_cmd(files, to, diff, remove_removed, target, no_color) -> None:
    """Rewrite deprecated and renamed keys of FILES for DeepSpeed --to VERSION (cpu_offload, bfloat16,
    stage3_gather_fp16_weights_on_model_save, aio.thread_count, ...), from DeepSpeed's own deprecation metadata."""
    from ..fix.upgrade import upgrade_text
    from ..model.versions import Version
    from ..pipeline import Options, Pipeline
    from .fix import report_fixes

    if to is not None:
        try:
            Version(to)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--to") from None

    def fixer(path):
        return lambda text: upgrade_text(text, path, to=to, remove_removed=remove_removed, target=target)

    options = Options(files=tuple(files), target=target, deepspeed_version=to, isolated=True, select=("ALL",),
                      fix="diff" if diff else "fix", formats=("text",), color=not no_color, fixer=fixer)
    pipeline = Pipeline(options)
    sys.exit(report_fixes(pipeline, pipeline.fix(), verb="Upgraded", show_applied=True))


if __name__ == "__main__":  # pragma: no cover
    main()
