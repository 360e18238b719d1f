"""The optimizer and scheduler tables in model/dsfacts/optimizers.py against the installed torch and DeepSpeed:
every class's keyword arguments from `inspect.signature` of its `__init__`, and the name lists from the modules
that DeepSpeed looks names up in. torch and deepspeed are oracles: missing under CI=true, these tests fail."""

from __future__ import annotations

import inspect

import pytest
from conftest import require

from zerolint.model import dsfacts

torch = require("torch")
deepspeed = require("deepspeed")
lr_schedules = require("deepspeed.runtime.lr_schedules")


def _signature(cls, skip: set[str]) -> tuple[set[str], set[str]]:
    """(required, optional) keyword arguments of cls.__init__, without `skip`."""
    params = [p for n, p in inspect.signature(cls.__init__).parameters.items()
              if n not in skip and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return ({p.name for p in params if p.default is p.empty}, {p.name for p in params if p.default is not p.empty})


@pytest.mark.parametrize("name", sorted(dsfacts.DEEPSPEED_SCHEDULERS))
def test_deepspeed_scheduler_arguments(name):
    required, optional = dsfacts.DEEPSPEED_SCHEDULERS[name]
    assert _signature(getattr(lr_schedules, name), {"self", "optimizer"}) == (set(required), set(optional))


def test_deepspeed_scheduler_names():
    # VALID_LR_SCHEDULES is DeepSpeed's own list of its schedulers (runtime/lr_schedules.py).
    assert set(dsfacts.DEEPSPEED_SCHEDULERS) == set(lr_schedules.VALID_LR_SCHEDULES)


@pytest.mark.parametrize("name", sorted(dsfacts.TORCH_SCHEDULERS))
def test_torch_scheduler_arguments(name):
    required, optional = dsfacts.TORCH_SCHEDULERS[name]
    skip = {"self", "optimizer", *dsfacts.TORCH_SCHEDULER_ALWAYS_OK}
    assert _signature(getattr(torch.optim.lr_scheduler, name), skip) == (set(required), set(optional))


def test_every_torch_scheduler_is_in_a_table():
    module = torch.optim.lr_scheduler
    classes = {n for n, c in vars(module).items() if inspect.isclass(c)
               and (issubclass(c, module.LRScheduler) or c is module.ReduceLROnPlateau)}
    tabled = set(dsfacts.TORCH_SCHEDULERS) | set(dsfacts.TORCH_SCHEDULERS_NOT_FROM_JSON)
    assert classes == tabled


@pytest.mark.parametrize("name", sorted(dsfacts.TORCH_OPTIMIZER_KWARGS))
def test_torch_optimizer_arguments(name):
    required, optional = _signature(getattr(torch.optim, name), {"self", "params"})
    assert required == set()
    assert optional == set(dsfacts.TORCH_OPTIMIZER_KWARGS[name])


def test_every_torch_optimizer_is_in_a_table():
    # Names that lower-case to one of DeepSpeed's own (Muon) never reach torch.optim (config.py:519-520).
    classes = {n for n, c in vars(torch.optim).items() if inspect.isclass(c) and issubclass(c, torch.optim.Optimizer)
               and n.lower() not in dsfacts.DEEPSPEED_OPTIMIZERS}
    assert classes - set(dsfacts.TORCH_OPTIM_NOT_BUILDABLE) == set(dsfacts.TORCH_OPTIMIZER_KWARGS) - {
        n for n in dsfacts.TORCH_OPTIMIZER_KWARGS if n.lower() in dsfacts.DEEPSPEED_OPTIMIZERS}


def test_deepspeed_optimizer_names():
    config = require("deepspeed.runtime.config")
    assert tuple(config.DEEPSPEED_OPTIMIZERS) == dsfacts.DEEPSPEED_OPTIMIZERS


def _deepspeed_optimizer_classes():
    adam, lamb, lion, adagrad = (require(f"deepspeed.ops.{m}") for m in ("adam", "lamb", "lion", "adagrad"))
    return {"FusedAdam": adam.FusedAdam, "DeepSpeedCPUAdam": adam.DeepSpeedCPUAdam,
            "ZenFlowCPUAdam": adam.ZenFlowCPUAdam, "FusedLamb": lamb.FusedLamb, "FusedLion": lion.FusedLion,
            "DeepSpeedCPULion": lion.DeepSpeedCPULion, "DeepSpeedCPUAdagrad": adagrad.DeepSpeedCPUAdagrad}


@pytest.mark.parametrize("name", ["FusedAdam", "DeepSpeedCPUAdam", "ZenFlowCPUAdam", "FusedLamb", "FusedLion",
                                  "DeepSpeedCPULion", "DeepSpeedCPUAdagrad"])
def test_deepspeed_optimizer_arguments(name):
    # The parameters and the adam(w) mode are passed by DeepSpeed itself (engine.py:2396-2406).
    classes = _deepspeed_optimizer_classes()
    skip = {"self", "params", "model_params", "adam_w_mode", "adamw_mode"}
    cls = classes[name]
    if name == "ZenFlowCPUAdam":
        # ZenFlowCPUAdam(*args, overlap_step=False, **kwargs) forwards the rest to DeepSpeedCPUAdam; DeepSpeed
        # passes overlap_step itself (engine.py:2398-2399), so a user's would be a duplicate keyword.
        assert _signature(cls, skip) == (set(), {"overlap_step"})
        assert issubclass(cls, classes["DeepSpeedCPUAdam"])
        cls = classes["DeepSpeedCPUAdam"]
    required, optional = _signature(cls, skip)
    assert required == set()
    assert optional == set(dsfacts.OPTIMIZER_KWARGS[name])


def test_zero_supported_classes():
    utils = require("deepspeed.runtime.zero.utils")
    names = {f"torch.optim.{c.__name__}" if c.__module__.startswith("torch.") else c.__name__
             for c in utils.ZERO_SUPPORTED_OPTIMIZERS}
    # MuonWithAuxAdam is accepted by a separate isinstance check (zero/utils.py is_zero_supported_optimizer).
    assert names | {"MuonWithAuxAdam"} == set(dsfacts.ZERO_SUPPORTED_CLASSES)
