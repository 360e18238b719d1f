"""A few plain-dict sections assert, while DeepSpeed parses the config, that a feature which is switched on has the
setting it cannot work without (found by the differential run against DeepSpeed 0.19.8, tests/differential):

- `data_efficiency.data_sampling.curriculum_learning.enabled` without `curriculum_metrics`: "Curriculum learning
  is enabled, curriculum_metrics must be specified" (runtime/data_pipeline/config.py:79-89);
- `data_efficiency.data_sampling.dynamic_batching.enabled` without `max_tokens`: "Dynamic batching is enabled, so
  max_tokens must be specified" (runtime/data_pipeline/config.py:95-110);
- `autotuning.results_dir` or `autotuning.exps_dir` set to an empty value: "results_dir cannot be empty"
  (autotuning/config.py:37-41). These asserts run whether or not autotuning is enabled;
- `elasticity.enabled` without `max_train_batch_size` or `micro_batch_sizes`, before DeepSpeed 0.19.8 (which
  removed elasticity): "Elasticity config missing ..." (0.18.9 elasticity/config.py:48-58; found by the parse
  differential against 0.16.9);
- an `amp`, `progressive_layer_drop` or top-level (legacy) `curriculum_learning` block without `enabled`, before
  DeepSpeed 0.19.8 (which removed the three: ZL701): their params getters pop `enabled` without a default, so the
  parse raises KeyError: 'enabled' (0.18.9 config.py:136-156, data_pipeline/config.py:140-146; found by the parse
  differentials against 0.18.9 and 0.16.9).

"Switched on" is Python truthiness, as DeepSpeed tests it: `"enabled": "false"` is a non-empty string, so it is on.
These blocks are read even when `data_efficiency.enabled` is false."""

from ..rule import Rule

RULE = Rule(
    code="ZL909",
    name="required-setting-missing",
    severity="error",
    summary="An enabled data-efficiency feature without its required setting, or an empty autotuning directory",
    evidence="deepspeed/runtime/data_pipeline/config.py:79-110; deepspeed/autotuning/config.py:37-41",
)

SAMPLING = "/data_efficiency/data_sampling"
# Blocks whose params getter pops `enabled` without a default until 0.19.8 removed them (get_amp_params,
# get_pld_params, data_pipeline/config.py get_curriculum_params_legacy)
POPS_ENABLED = ("amp", "progressive_layer_drop", "curriculum_learning")
REQUIRED = (  # (block, key, what DeepSpeed raises, the versions that read the block)
    (f"{SAMPLING}/curriculum_learning", "curriculum_metrics",
     "AssertionError: Curriculum learning is enabled, curriculum_metrics must be specified", "*"),
    # dynamic batching arrived in 0.16.0 (0.15.4 data_pipeline/config.py has no such block)
    (f"{SAMPLING}/dynamic_batching", "max_tokens",
     "AssertionError: Dynamic batching is enabled, so max_tokens must be specified", ">=0.16.0"),
    ("/elasticity", "max_train_batch_size", "ElasticityConfigError: Elasticity config missing max_train_batch_size",
     "<0.19.8"),
    ("/elasticity", "micro_batch_sizes", "ElasticityConfigError: Elasticity config missing micro_batch_sizes",
     "<0.19.8"),
)


def _truthy(view, node) -> bool:
    if node.kind == "number":
        return bool(view.number(node))
    return bool(node.to_python())


@RULE.check
def check(view):
    for block, key, said, versions in REQUIRED:
        if not view.since(versions):
            continue  # no code of this version reads the block (removed there: ZL701)
        node = view.node(block)
        enabled = node.get("enabled") if node is not None and node.kind == "object" else None
        if enabled is None or not _truthy(view, enabled):
            continue
        given = node.get(key)
        if given is None:
            yield view.finding(enabled.pointer,
                               f"{view.path(block)} is enabled ({enabled.raw}) but {key} is not set: DeepSpeed fails "
                               f"at parse ({said})", at="member", fails_at="parse",
                               help=f"add \"{key}\" to {view.path(block)}, or set enabled to false")
        elif given.kind == "null" and key == "max_tokens":  # present, so the assert passes; then int(None)
            yield view.finding(given.pointer,
                               f"{view.path(block)} is enabled ({enabled.raw}) but {key} is null: DeepSpeed fails at "
                               "parse (TypeError from int(None))", at="value", fails_at="parse",
                               help="set max_tokens to the token budget of a batch")
    for name in POPS_ENABLED:
        block = view.node(f"/{name}")
        if block is None or block.kind != "object" or block.get("enabled") is not None or view.since(">=0.19.8"):
            continue
        yield view.finding(f"/{name}", f"{name} has no enabled: DeepSpeed {view.version} pops it without a default "
                                       "and fails at parse (KeyError: 'enabled')", fails_at="parse",
                           help=f"add \"enabled\": false (or true) to {name}, or delete the block (DeepSpeed "
                                "0.19.8 removed it)")
    auto = view.node("/autotuning")
    for key in ("results_dir", "exps_dir"):
        node = auto.get(key) if auto is not None and auto.kind == "object" else None
        if node is None or _truthy(view, node):
            continue
        yield view.finding(node.pointer,
                           f"autotuning.{key} is {node.raw or 'empty'}: DeepSpeed fails at parse (AssertionError: "
                           f"{key} cannot be empty), even when autotuning is not enabled", at="value",
                           fails_at="parse", help=f"delete {key} to use the default directory, or name one")
