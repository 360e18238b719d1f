"""`zerolint verify`: prove a config with a real DeepSpeed init-and-step in a child process.

Modules:
- `resolve`: turn the user's config into a runnable tiny job ("auto" as the HF Trainer fills it, batch sizes capped
  with the batch equation kept for the world size, nvme paths, monitors, a client optimizer where HF would pass one).
- `runner`: the parent side: launch the child (one rank, `torch.distributed.run` or the `deepspeed` launcher), own
  process group, timeout, cleanup, progress, cache.
- `child`: the only module that imports torch and deepspeed (`python -m zerolint.verify.child`).
- `model`: the pure-torch tiny transformer the child trains (imported by the child only).
- `intent`: what the config apparently asks for vs what the engine built.
- `mapping`: DeepSpeed's exception -> the JSON pointer (and so the line) of the key responsible.
- `report`: verify findings as diagnostics (codes ZL990-ZL999, rules/engine_rules.py) and the text / json / sarif
  output.

Nothing here imports torch or deepspeed except `child` and `model`.
"""
