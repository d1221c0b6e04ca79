"""Does a JSON value fit one field of a vLLM config class? The rule behind ``bad-config-value`` (and
``bad-config-choice`` when the value is not among the field's choices).

A field entry (``data/vllm-<version>-config-fields.json``, measured by scripts/config_field_facts.py
with the field's own pydantic validator) says what the field takes: ``type`` (the annotation in
words), ``kinds`` (JSON kinds), ``choices`` (a Literal's values, an Enum's names), ``strings`` (the
spellings of choices it takes), ``numbers`` (the whole numbers a choice field takes), ``bounds``
(gt/ge/lt/le) and ``items`` (the kinds inside a list). ``value_problem`` applies them as pydantic's
lax mode does: a numeric string for a number, a whole float for an int, a bool for an int.
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Any

from servekit.engines.common.valuecheck import json_kind
from servekit.records import record

_SHOWN_CHOICES = 12
_BOUND_WORDS = {"gt": ("greater than", lambda v, b: v > b), "ge": ("at least", lambda v, b: v >= b),
                "lt": ("less than", lambda v, b: v < b), "le": ("at most", lambda v, b: v <= b)}


@record
class Problem:
    """What is wrong with the value (after ``key ``) and how to fix it."""

    what: str
    fix: str
    choice: bool = False
    """The value is not among the field's choices (names a release may add: ``bad-config-choice``)."""


def _takes_kind(kinds: list[str], strings: list[str], item: Any) -> bool:
    kind = json_kind(item)
    if kind in kinds or (kind == "numstr" and "str" in kinds) or (isinstance(item, str) and item in strings):
        return True
    return kind == "float" and math.isfinite(item) and float(item).is_integer() and "int" in kinds


def ranked_choices(given: Any, choices: list[Any]) -> list[str]:
    """The choices as text, the closest to ``given`` first (case does not count), the rest in order."""
    texts = [str(c) for c in choices]
    word = str(given).lower()
    score = {t: difflib.SequenceMatcher(None, word, t.lower()).ratio() for t in texts}
    close = sorted((t for t in texts if score[t] >= 0.6), key=lambda t: -score[t])
    return close + [t for t in texts if t not in close]


def _choice_problem(item: Any, choices: list[Any]) -> Problem:
    ranked = ranked_choices(item, choices)
    shown = ", ".join(ranked[:_SHOWN_CHOICES]) + (" ..." if len(ranked) > _SHOWN_CHOICES else "")
    return Problem(f"{json.dumps(item)} is not one of its choices", f"use one of: {shown}", choice=True)


def _number(item: Any) -> float | None:
    if isinstance(item, bool):
        return float(item)
    if isinstance(item, (int, float)):
        return float(item)
    try:
        return float(item)
    except (TypeError, ValueError):
        return None


def _bound_problem(key: str, item: Any, bounds: dict[str, Any]) -> Problem | None:
    value = _number(item)
    if value is None:
        return None
    for name, limit in bounds.items():
        words, holds = _BOUND_WORDS[name]
        if not holds(value, limit):
            return Problem(f"{json.dumps(item)} is not {words} {limit}", f"give {key} a value {words} {limit}")
    return None


def _items_problem(key: str, item: list[Any], items: list[str], type_text: str) -> Problem | None:
    for index, element in enumerate(item):
        if not _takes_kind(items, [], element):
            return Problem(f"item {index} ({json.dumps(element)}) is not what {key} holds ({type_text})",
                           f"give {key} a value of type {type_text}")
    return None


def value_problem(key: str, item: Any, field: dict[str, Any]) -> Problem | None:
    """None when the field takes ``item`` (or nothing is measured about it); otherwise what is wrong."""
    kinds = field.get("kinds")
    if kinds is None:
        return None
    choices = field.get("choices", [])
    type_text = field.get("type", " or ".join(kinds))
    if not _takes_kind(kinds, field.get("strings", []), item):
        if choices and not isinstance(item, (dict, list)):
            return _choice_problem(item, choices)
        return Problem(f"takes {type_text}, not {json.dumps(item)}", f"give {key} a value of type {type_text}")
    numbers = field.get("numbers")
    if numbers and json_kind(item) in ("int", "float") and float(item) not in numbers:
        return _choice_problem(item, [*choices, *numbers])
    if "bounds" in field and json_kind(item) in ("int", "float", "numstr"):
        found = _bound_problem(key, item, field["bounds"])
        if found is not None:
            return found
    if "items" in field and isinstance(item, list):
        return _items_problem(key, item, field["items"], type_text)
    return None
