"""Facts shipped with servekit for the checkpoints of the bundled recipes (offline planning).

One JSON file per checkpoint under ``servekit/facts/data``, named ``ORG__NAME.json``; each says
where its figures come from in its ``source`` field.
"""

from __future__ import annotations

import json
from functools import lru_cache

from servekit.facts.model import ModelFacts
from servekit.facts.shipped_index import file_for, shipped_model_ids


@lru_cache(maxsize=None)
def _load(model_id: str) -> ModelFacts | None:
    path = file_for(model_id)
    if not path.is_file():
        return None
    return ModelFacts.from_json(json.loads(path.read_text(encoding="utf-8")), where=str(path))


def shipped_facts(model_id: str) -> ModelFacts | None:
    """The shipped facts of a checkpoint (Hugging Face id), or None when none ship."""
    found = _load(model_id)
    if found is None:
        for candidate in shipped_model_ids():  # ids are case-insensitive on the Hub
            if candidate.lower() == model_id.lower():
                return _load(candidate)
    return found
