"""Puts bench/, the tool's folder, on sys.path right after the probe's own: a probe runs
as a script from bench/probes/ and imports the tool's modules (procs, settings, targets,
wire) by bare name, as bench.py does. A probe that uses them imports this first,
`import _tool`, which isort keeps above every `from procs import ...` (a plain import
sorts before the `from` ones, and `_` before any letter). Nothing else changes: the
checkout is not put on the path, so `PYTHONPATH=other/tree` still picks the n8n_a2a."""

from __future__ import annotations

import sys
from pathlib import Path

TOOL = str(Path(__file__).resolve().parents[1])
if TOOL not in sys.path:
    sys.path.insert(1, TOOL)
