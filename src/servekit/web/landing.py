"""The landing page: models to start from, a search with suggestions, and what runs on a device.

"What runs on my hardware" is ``servekit fit --all --hardware HW --gpus N`` for the served
catalog (``servekit.app.fit_all``): its rows, written for people. The query names the device
``runs_on`` and the device count ``gpus``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from servekit.app.fit_all import FitAllOptions, fit_all
from servekit.errors import ServekitError
from servekit.records import record
from servekit.web.site import Site, short_names

MAX_GPUS = 64


@record
class FitRow:
    """One ``fit --all`` row as the landing page shows it."""

    recipe: str
    variant: str
    fits: bool | None
    layout: str
    context: str
    pool: str
    concurrency: str
    reason: str
    link: str


def _count(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, int) else "–"


def _row(row: dict[str, Any], hardware: str) -> FitRow:
    query = {"model": row["recipe"], "hardware": hardware}
    if row["variant"] != "default":
        query["variant"] = row["variant"]
    concurrency = row.get("concurrency")
    return FitRow(
        recipe=row["recipe"], variant=row["variant"], fits=row["fits"], layout=str(row.get("strategy") or "–"),
        context=_count(row.get("longest_context")), pool=_count(row.get("kv_tokens")),
        concurrency=f"{concurrency:,.2f}" if isinstance(concurrency, (int, float)) else "–",
        reason=str(row.get("reason") or ""), link="/?" + urlencode(query),
    )


def _gpus(raw: str, problems: list[str]) -> int | None:
    if not raw:
        return None
    if raw.isdigit() and 0 < int(raw) <= MAX_GPUS:
        return int(raw)
    problems.append(f"gpus must be a whole number from 1 to {MAX_GPUS}, not {raw!r}")
    return None


def runs_on(site: Site, hardware: str, gpus_text: str) -> tuple[list[FitRow], str]:
    """The ``fit --all`` rows for a device and count (or the error that says why there are none)."""
    problems: list[str] = []
    gpus = _gpus(gpus_text, problems)
    if problems:
        return [], problems[0]
    try:
        rows = fit_all(FitAllOptions(hardware=hardware, gpus=gpus, catalog=site.catalog))
    except ServekitError as exc:
        return [], str(exc)
    return [_row(row, hardware) for row in rows], ""


def hardware_options(site: Site) -> list[dict[str, str]]:
    out = []
    for hw, profile in site.hardware.items():
        profile = profile or {}
        name = profile.get("display_name") or hw
        count = profile.get("gpu_count")
        out.append({"id": hw, "label": f"{name} ({hw})" + (f", {count} per node" if count else "")})
    return out


def landing_context(site: Site, items: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    query = {key: value.strip()[:200] for key, value in items}
    hardware = query.get("runs_on", "")
    rows, error = runs_on(site, hardware, query.get("gpus", "")) if hardware else ([], "")
    names = short_names(site.hardware)
    return {"models": site.models, "hardware": hardware_options(site), "hardware_names": names,
            "runs_on": hardware, "gpus": query.get("gpus", ""), "rows": rows, "fit_error": error,
            "fitting": sum(1 for r in rows if r.fits), "canonical": "/?" + urlencode(items) if items else "/"}
