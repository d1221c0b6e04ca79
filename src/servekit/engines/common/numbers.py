"""Human-readable integers as engines read them: decimal k/m/g/t, binary K/M/G/T."""

from __future__ import annotations

import re

_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_readable_int(text: str) -> int:
    """``1k`` = 1000, ``1K`` = 1024, ``25.6k`` = 25600; plain integers as themselves."""
    value = text.strip()
    match = _HUMAN.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffix {suffix}")
        return int(number) * _BINARY[suffix]
    return int(value)
