"""Kubernetes quantities as numbers: CPU in cores, memory in bytes."""

from __future__ import annotations

import re
from typing import Any

_UNITS = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$")


def parse_quantity(value: Any) -> float | None:
    """``"500m"`` -> 0.5, ``"16Gi"`` -> 17179869184.0, ``4`` -> 4.0; None when not a quantity."""
    if isinstance(value, bool):
        return None
    match = _QUANTITY.match(str(value).strip())  # digits only: inf and nan never match
    if not match or match.group(2) not in _UNITS:
        return None
    return float(match.group(1)) * _UNITS[match.group(2)]


def format_bytes(amount: float) -> str:
    """Bytes as the largest binary unit that keeps a short number: ``64Gi``, ``1.5Ti``."""
    for unit in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        size = _UNITS[unit]
        if amount >= size:
            return f"{amount / size:.4g}{unit}"
    return f"{amount:g}"
