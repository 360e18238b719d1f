"""`gradient_clipping` omitted means different things on different DeepSpeed versions: 0.0 (no clipping) until
0.19.2, 1.0 (clip the global gradient norm to 1) from 0.19.3 (PR deepspeedai/DeepSpeed#8068; constants.py:202-203,
0.18.9 constants.py:254). A config that relied on "no clipping" silently starts clipping after an upgrade, and one
written for a new version does not clip on an older one. Frameworks were caught by it
(EleutherAI/gpt-neox#1432). The HF Trainer and Accelerate fill `gradient_clipping` only when it is "auto"; an
omitted key gets DeepSpeed's default, whatever `max_grad_norm` says.

This info says which default applies to the target version (`--deepspeed-version`). With
`compute_grad_norm: false` the omitted default is an error reported by ZL208, so this rule stays quiet there.

Fix (unsafe, so `--fix` alone leaves the file alone): add `"gradient_clipping": <default>`. It keeps what the
target version does, but it changes what the config means on DeepSpeed versions with the other default, and a finding of
severity info should not rewrite every config a pre-commit `--fix` hook sees."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL705",
    name="gradient-clipping-default",
    severity="info",
    summary="gradient_clipping omitted: no clipping before DeepSpeed 0.19.3, clipping at 1.0 from 0.19.3",
    evidence="deepspeed/runtime/constants.py:202-203; https://github.com/deepspeedai/DeepSpeed/pull/8068; "
             "https://github.com/EleutherAI/gpt-neox/issues/1432",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if view.root is None or view.has("/gradient_clipping"):
        return
    if view.node("/zero_optimization/compute_grad_norm") is not None and \
            view.effective("/zero_optimization/compute_grad_norm", "bool") is False:
        return  # ZL208
    new = view.since(">=0.19.3")
    if new:
        msg = (f"gradient_clipping is not set: DeepSpeed {view.version} clips gradients to a global norm of 1.0, "
               "the default since 0.19.3 (before 0.19.3 the default was 0.0: no clipping)")
    else:
        msg = (f"gradient_clipping is not set: DeepSpeed {view.version} does not clip (default 0.0); from 0.19.3 "
               "the default is 1.0, so upgrading DeepSpeed turns clipping on")
    value = "1.0" if new else "0.0"
    yield view.finding(
        "", msg, span=(view.root.start, view.root.start + 1),
        help=f"write \"gradient_clipping\": {value} (or the value you want) to pin it",
        fixes=edits.fixes(edits.make_fix(f"add \"gradient_clipping\": {value} (the current default)",
                                         edits.insert_member(view.doc, "", "gradient_clipping", value), safe=False)),
        fails_at=None
    )
