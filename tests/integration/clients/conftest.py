"""The generated Python client (clients/python), importable as ``ocrgw_client`` from the checkout, uninstalled."""

from __future__ import annotations

import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[3] / "clients" / "python"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))
