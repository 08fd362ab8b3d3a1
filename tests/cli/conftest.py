"""The command-line tests, through the real `scriptorium` executable. Test modules here
share test_cli.py's helpers (the executable, a draft, the one-line error check)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
