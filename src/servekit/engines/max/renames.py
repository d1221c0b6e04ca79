"""MAX options that older releases had and the current one spells differently or no longer has.

Each entry names the release that made the change and where that is stated. Where Modular's
changelog could not be found to confirm the release, ``release`` is "before 26.7" and
``verified`` is False: MAX 26.7's own parser lacks the old spelling (its stored catalog) and has
the new one, which is all that entry asserts.
"""

from __future__ import annotations

from servekit.records import record

REMOVED = "removed"
_NOT_IN_26_7 = "MAX 26.7 `max serve --help` lacks the old spelling and lists the new one"
_GONE_IN_26_7 = "MAX 26.7 `max serve --help` lacks the option and has no successor"


@record
class Rename:
    """``old`` became ``new`` (an option name, or ``REMOVED``) in ``release``."""

    old: str
    new: str
    release: str
    source: str
    verified: bool = False
    value_hint: str = ""  # how the value moves when the new spelling takes a different form

    @property
    def removed(self) -> bool:
        return self.new == REMOVED

    def fix(self) -> str:
        if self.removed:
            return f"drop {self.old}{'; ' + self.value_hint if self.value_hint else ''}"
        return f"use {self.new}{' (' + self.value_hint + ')' if self.value_hint else ''}"


_TP_HINT = "tensor parallelism follows the device list: --devices gpu:0,1,2,3 shards over four GPUs"
_CACHE_HINT = "MAX 26.7 always uses its paged KV cache"
_SWAP_HINT = "MAX 26.7 has no host swap space for the KV cache"

RENAMES: dict[str, Rename] = {
    r.old: r
    for r in (
        Rename("--max-cache-batch-size", "--max-batch-size", "before 26.7", _NOT_IN_26_7),
        Rename("--max-ce-batch-size", "--max-batch-size", "before 26.7", _NOT_IN_26_7,
               value_hint="one batch size now bounds context encoding and generation"),
        Rename("--prefill-chunk-size", "--max-batch-input-tokens", "before 26.7", _NOT_IN_26_7),
        Rename("--max-batch-context-length", "--max-batch-total-tokens", "before 26.7", _NOT_IN_26_7),
        Rename("--huggingface-repo-id", "--model", "before 26.7", _NOT_IN_26_7),
        Rename("--use-gpu", "--devices", "before 26.7", _NOT_IN_26_7, value_hint="--devices gpu or gpu:0,1"),
        Rename("--kv-cache-strategy", REMOVED, "before 26.7", _GONE_IN_26_7, value_hint=_CACHE_HINT),
        Rename("--cache-strategy", REMOVED, "before 26.7", _GONE_IN_26_7, value_hint=_CACHE_HINT),
        Rename("--enable-kvcache-swapping-to-host", REMOVED, "before 26.7", _GONE_IN_26_7, value_hint=_SWAP_HINT),
        Rename("--host-kvcache-swap-space-gb", REMOVED, "before 26.7", _GONE_IN_26_7, value_hint=_SWAP_HINT),
        Rename("--tensor-parallel-degree", REMOVED, "before 26.7", _GONE_IN_26_7, value_hint=_TP_HINT),
        Rename("--max-num-steps", REMOVED, "before 26.7", _GONE_IN_26_7),
    )
}


def rename_for(option: str) -> Rename | None:
    """The entry for an option spelling (``--flag`` or ``--flag=value``), if an older MAX had it."""
    return RENAMES.get(option.split("=", 1)[0].replace("_", "-"))
