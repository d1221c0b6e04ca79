"""A flag and its value written as one argument (``"--max-model-len auto"`` as one list item).

vLLM reads such an item as one unknown option. ``catalog validate`` warns where one is written;
synthesis splits it into the flag and its value. Both read it through ``split_spaced_flag``.
"""

from __future__ import annotations

import re
from typing import Any

_SPACED_FLAG = re.compile(r"(--?[A-Za-z][A-Za-z0-9_.-]*)\s+(\S.*)", re.S)


def split_spaced_flag(token: Any) -> tuple[str, str] | None:
    """``(flag, value)`` when ``token`` is one string holding a flag, whitespace and a value."""
    if type(token) is not str:
        return None
    match = _SPACED_FLAG.fullmatch(token.strip())
    return (match.group(1), match.group(2).strip()) if match else None
