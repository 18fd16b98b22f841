"""The crash labs, each from one run: provider-counted charges without and with effectd."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

LABS = Path(__file__).resolve().parents[1] / "labs"


def test_crash_labs_charge_once_through_effectd() -> None:
    # Both labs side by side, each with its own simulator and effectd.
    procs = {name: subprocess.Popen([sys.executable, str(LABS / f"{name}_lab.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("langgraph", "openai_agents")}
    outputs = {name: proc.communicate(timeout=300) for name, proc in procs.items()}
    for name, (out, err) in outputs.items():
        print(out)
        assert procs[name].returncode == 0, f"{name} lab: {out}\n{err[-3000:]}"
    summary = [line for out, _ in outputs.values() for line in out.splitlines() if " charges without effectd, " in line]
    assert len(summary) == 2
    for line in summary:
        match = re.search(r": (\d+) charges without effectd, (\d+) with, over 2 crashes", line)
        assert match, line
        # Two crashes of one charge each: through effectd one charge per crash; without, the resumed agent charges again.
        assert (int(match.group(1)), int(match.group(2))) == (4, 2), line
