"""ZeRO-3 keeps every parameter of at most `stage3_param_persistence_threshold` elements whole on the GPU
("persistent": gathered once, never released, its partition stored on the local device), so `offload_param`
moves only the larger ones to the host (runtime/zero/partition_parameters.py:1290-1297, 1829-1834;
runtime/zero/parameter_offload.py:317-328). A threshold at or above every parameter tensor means nothing is
offloaded: the whole model stays on every GPU (unpartitioned), the opposite of what offload_param is for. The
default is 1e5 (zero/config.py:228); HF's "auto" fills 10 x hidden. `stage3_model_persistence_threshold` (default
sys.maxsize) caps the total persisted (divided by the world size under zero.Init, partition_parameters.py:1198); a
set value makes the outcome depend on parameter order and world size, so the rule says nothing then. The same
test (`param.ds_numel <= Init.param_persistence_threshold`) is in 0.16.0 (partition_parameters.py:1122).

With the model known (`--model config.json`: every tensor's size) the finding is exact. With `--params` only,
the total is exact when the threshold is at least P (every tensor is smaller than the model), and otherwise
"likely" when it is above the guessed largest tensor. Without a model the rule flags thresholds of 1e8 or more:
that is 1000x the default, above every weight matrix of a 7B or 13B llama (4096 x 11008 = 45M, 5120 x 13824 =
71M), so only embeddings (if any) would still be offloaded for the models people offload most.

Only `offload_param.device: cpu` is covered: with nvme the swapper decides by buffer size before persistence is
looked at (partition_parameters.py:1820-1826)."""

from ..rule import Rule

RULE = Rule(
    code="ZL220",
    name="param-offload-all-persistent",
    severity="warning",
    summary="offload_param with a persistence threshold above every parameter: nothing is offloaded",
    evidence="deepspeed/runtime/zero/partition_parameters.py:1290-1297, 1829-1834; "
             "deepspeed/runtime/zero/parameter_offload.py:317-328",
)

LIKELY = 10**8  # see the docstring: above every weight matrix of 7B/13B llama-style models


@RULE.check
def check(view):
    if view.zero_stage != 3 or view.offload_device("param") != "cpu":
        return
    node = view.zero_field("stage3_param_persistence_threshold")
    if node is None:
        return
    threshold = view.effective(node.pointer, "int")
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 0:
        return
    if view.zero_field("stage3_model_persistence_threshold") is not None:
        return
    spec = view.model_spec
    key = node.pointer.rsplit("/", 1)[-1]
    verdict = _verdict(threshold, spec)
    if verdict is None:
        return
    yield view.finding(
        node.pointer,
        f"{key} is {node.raw}: ZeRO-3 keeps every parameter of at most that many elements whole on the GPU and "
        f"offloads only larger ones; {verdict}, so offload_param (cpu) moves nothing to the host and every GPU "
        "holds the whole model",
        at="value",
        help="leave the threshold near its default (1e5) so that the large parameters are offloaded",
    )


def _verdict(threshold: int, spec) -> str | None:
    if spec is not None and spec.tensor_numels is not None:
        if max(spec.tensor_numels) > threshold:
            return None
        return (f"every parameter tensor of {spec.name} is at most that size (the largest has "
                f"{max(spec.tensor_numels):,} elements)")
    if spec is not None:
        if threshold >= spec.params:
            return f"the whole {spec.name}-parameter model has fewer elements, so every tensor in it does too"
        if spec.largest_tensor is not None and threshold >= spec.largest_tensor:
            return (f"likely every parameter tensor of a {spec.name}-parameter model is at most that size (the largest "
                    f"is guessed at {spec.largest_tensor:,} elements; pass --model for the real sizes)")
        return None
    if threshold >= LIKELY:
        return ("likely every parameter tensor is at most that size (every weight matrix of a 7B or 13B llama is; "
                "pass --model or --params to check)")
    return None
