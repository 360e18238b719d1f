"""A value in the DeepSpeed config differs from the `TrainingArguments` the HF Trainer runs with. The Trainer
fills `"auto"` values from its arguments and compares every other value at the same keys
(`HfTrainerDeepSpeedConfig.fill_match`): micro batch size (`per_device_train_batch_size`), gradient accumulation,
`train_batch_size` (= world size x micro batch x accumulation), `gradient_clipping` (`max_grad_norm`), the
optimizer's `lr`, `betas`, `eps`, `weight_decay`, the scheduler's `warmup_max_lr`, `warmup_num_steps` and
`total_num_steps` (known before training only with `max_steps`), `fp16.enabled` and `bf16.enabled`. Any
difference raises, once training starts, `ValueError: Please correct the following DeepSpeed config values that
mismatch TrainingArguments values: - ds optimizer.params.lr=0.0001 vs hf learning_rate=2e-05 ...`, after the
model has been loaded onto the GPUs.

The warm-up is compared with what the Trainer fills: `max(1, warm-up steps)` from transformers 5.18.0 (5.24.0
integrations/deepspeed.py:250-256; before it the warm-up steps as they are, 5.17.0 :247-251), so a hard-coded
`warmup_num_steps: 1` matches no warm-up on 5.18+; the message names the transformers version it assumes (the
installed one, else the newest known).

A hard-coded `train_batch_size` is compared with world size x micro batch x accumulation, so it fits one world size
only: without `--world-size` the finding (info) names it, or says (error) that no world size fits.

Active when zerolint is given the arguments: `zerolint check ds.json --training-args args.json` (a dump from
`args.to_json_string()`; missing fields take the TrainingArguments defaults), or
`zerolint.lint(..., training_args=args)` / `zerolint.check_or_raise(args)` in the training script. The fix
replaces the value with `"auto"`, the HF docs' "easiest method": the Trainer then uses its own argument."""

from ...model.diagnostics import Edit, Fix
from ..rule import Rule

RULE = Rule(
    code="ZL523",
    name="training-args-mismatch",
    severity="error",
    summary="A DeepSpeed value that differs from the TrainingArguments the HF Trainer compares it with",
    targets=("hf", "accelerate"),
    evidence="transformers/integrations/deepspeed.py HfTrainerDeepSpeedConfig.fill_match, trainer_config_process, "
             "trainer_config_finalize",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if not getattr(view.settings, "training_args", None):
        return  # (what mismatches() says too; zerolint.hf is only imported when there is something to compare)
    from ...model.trainer import WARMUP_POINTER, clamps_warmup, ds_key, known_source, mismatches, transformers_version

    for compared, ds_val, hf_val in mismatches(view):
        node = view.node(compared.pointer)
        assumed = ""
        if compared.pointer == WARMUP_POINTER:
            how = "max(1, warm-up steps)" if clamps_warmup(view.settings) else "the warm-up steps as they are"
            assumed = f" (transformers {transformers_version(view.settings)} fills {how})"
        source = known_source(view.settings.training_args, compared.pointer)
        if source is not None:
            assumed += f" (TrainingArguments as {source} writes it)"
        yield view.finding(
            compared.pointer,
            f"ds {ds_key(compared.pointer)}={ds_val} vs hf {compared.hf_key}={hf_val}{assumed}: the HF Trainer raises "
            "\"Please correct the following DeepSpeed config values that mismatch TrainingArguments values\" when "
            "training starts",
            at="value",
            help=f'set it to "auto" (the Trainer fills in {hf_val}) or change the training argument',
            fixes=[Fix(f'replace {ds_val!r} with "auto"', (Edit(node.start, node.end, '"auto"'),), safe=False)],
        )
    yield from _one_world_size(view)


def _one_world_size(view):
    """A hard-coded train_batch_size equals world x micro x accumulation at one world size only."""
    from ...model.trainer import known_source

    args = view.settings.training_args
    try:
        known_source(args, "/train_batch_size")
    except KeyError:
        return  # the batch fields were not written where the repository was read
    node = view.node("/train_batch_size")
    tbs = view.number(node)
    if view.world_size or args.get("world_size") or args["auto_find_batch_size"] or not isinstance(tbs, int) \
            or isinstance(tbs, bool) or tbs <= 0:
        return
    per_rank = args["per_device_train_batch_size"] * args["gradient_accumulation_steps"]
    if per_rank <= 0:
        return
    shown = (f"per_device_train_batch_size {args['per_device_train_batch_size']} x gradient_accumulation_steps "
             f"{args['gradient_accumulation_steps']}")
    if tbs % per_rank:
        yield view.finding(node.pointer, f"train_batch_size {tbs} is not a multiple of {shown} = {per_rank}: at every "
                                         "world size the HF Trainer raises \"Please correct the following DeepSpeed "
                                         "config values that mismatch TrainingArguments values\" when training starts",
                           at="value", help='set it to "auto" (the Trainer computes it for the world size it runs on)')
        return
    world = tbs // per_rank
    yield view.finding(node.pointer, f"train_batch_size {tbs} = world size x {shown} only at world size {world}: at "
                                     "any other the HF Trainer raises \"Please correct the following DeepSpeed config "
                                     "values that mismatch TrainingArguments values\"",
                       at="value", severity="info",
                       help=f'set it to "auto" to train at any world size, or pass --world-size {world} to check it')
