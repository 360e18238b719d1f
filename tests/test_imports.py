"""`zerolint check` must stay light: it never imports torch or deepspeed (and no other heavy module)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("torch", "deepspeed", "transformers", "numpy", "pydantic", "jsonschema")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return set(out.split())


def test_check_path_imports_no_heavy_module():
    mods = _modules_after(
        "import sys\n"
        "from zerolint.cli import main\n"
        "try:\n"
        "    main(['check', '-q', 'fixtures/examples/seed/ds_zero3_offload.json',\n"
        "          'fixtures/examples/seed/ds_fp16_bf16.json'])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    assert not {m for m in mods if m.split(".")[0] in HEAVY}
    assert "rich" not in mods  # plain text when stdout is not a terminal


def test_cli_module_import_is_light():
    mods = _modules_after("import zerolint.cli")
    assert not {m for m in mods if m.split(".")[0] in HEAVY + ("rich",)}
