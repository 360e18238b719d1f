"""Reading the files of other tools (Accelerate config YAMLs); their semantics live in model/trainer.py."""
