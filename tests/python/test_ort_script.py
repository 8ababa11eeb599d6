"""An onnxruntime script runs with only its import lines changed."""

import os
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).with_name("ort_script.py")

# The only edits a user makes.
REPLACEMENTS = {
    "import onnxruntime as ort": "import switchyard as ort",
    "from onnxruntime.capi.onnxruntime_pybind11_state import": "from switchyard.capi.onnxruntime_pybind11_state import",
}


def test_onnxruntime_script_runs_unchanged(tmp_path):
    original = SCRIPT.read_text().splitlines(keepends=True)
    edited = []
    changed = 0
    for line in original:
        for old, new in REPLACEMENTS.items():
            if line.startswith(old):
                line = line.replace(old, new, 1)
                changed += 1
        edited.append(line)
    assert changed == 2
    assert not any(line.startswith(("import onnxruntime", "from onnxruntime")) for line in edited)
    script = tmp_path / "switchyard_script.py"
    script.write_text("".join(edited))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("OK"), result.stdout
    assert "wrong type: [Switchyard] : 2 : INVALID_ARGUMENT : input 'features': expected tensor(float), got tensor(double)" \
        in result.stdout
