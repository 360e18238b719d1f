"""An enabled monitor whose package is not installed. DeepSpeed builds its monitors inside `deepspeed.initialize`
(engine.py MonitorMaster, on rank 0), and each checks for its package first: tensorboard imports `tensorboard`,
wandb imports `wandb`, comet imports `comet_ml` and wants 3.41.0 or newer (monitor/utils.py:9-38); a missing one
raises ImportError (ModuleNotFoundError) out of initialize. csv_monitor needs nothing.

Whether the package is there is a fact of the machine that trains, not of the file: zerolint looks at the package
metadata of the environment it runs in (never importing the package) or at what the settings say of the training
machine, and states the condition. Installed here, nothing is reported."""

from ...model.versions import Version, package_version
from ..rule import Rule

RULE = Rule(
    code="ZL913",
    name="monitor-package-missing",
    severity="warning",
    summary="An enabled monitor (tensorboard, wandb, comet) whose package is not installed: initialize raises",
    evidence="deepspeed/monitor/utils.py:9-38; deepspeed/monitor/monitor.py:30-48",
)

# monitor section -> (the distribution to install, the module DeepSpeed imports, the oldest version it accepts)
PACKAGES = {"tensorboard": ("tensorboard", "tensorboard", None), "wandb": ("wandb", "wandb", None),
            "comet": ("comet_ml", "comet_ml", "3.41.0")}


@RULE.check
def check(view):
    for section, (dist, module, oldest) in PACKAGES.items():
        enabled = view.node(f"/{section}/enabled")
        if enabled is None or enabled.kind != "boolean" or enabled.value is not True:
            continue
        found = package_version(view.settings, dist)
        here = "" if dist in (view.settings.packages or {}) else " here"  # this environment, or the settings' word
        if found is None:
            yield view.finding(
                f"/{section}/enabled",
                f"the {section} monitor is enabled, and {dist} is not installed{here}: deepspeed.initialize imports "
                f"{module} and raises ModuleNotFoundError where it is not installed", at="value",
                help=f"pip install {dist}{'>=' + oldest if oldest else ''} where the job runs, or set "
                     f"{section}.enabled to false")
        elif oldest is not None and _older(found, oldest):
            yield view.finding(
                f"/{section}/enabled",
                f"the {section} monitor is enabled, and {dist} {found} is installed{here}: deepspeed.initialize "
                f"raises ImportError (\"`{module}` must have at least version {oldest}\") where it is older than "
                f"{oldest}", at="value", help=f"pip install '{dist}>={oldest}' where the job runs")


def _older(found: str, oldest: str) -> bool:
    try:
        return Version(found.split("+", 1)[0]) < Version(oldest)
    except ValueError:
        return False
