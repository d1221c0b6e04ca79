"""Help-text helpers shared by the flag extraction scripts (standard library only: they run in
engine environments where servekit is not importable; the scripts' folder is on sys.path)."""

from __future__ import annotations


def first_sentence(text: str | None) -> str:
    """The first sentence of a help text, whitespace folded; 'e.g. ' / 'i.e. ' do not end it."""
    flat = " ".join((text or "").split())
    guarded = flat.replace("e.g. ", "e.g.\0").replace("i.e. ", "i.e.\0")
    head = guarded.split(". ", 1)[0]
    head = head if head.endswith(".") or head == guarded else head + "."
    return head.replace("\0", " ")
