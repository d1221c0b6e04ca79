"""Where an engine environment's torch comes from: the package index its recipe names (the
PyTorch CPU index by default), or pip's own configured sources (``local``: a wheel on disk
through find-links, else pip's index).

An index given on purpose is used as it is. The default index degrades: when it cannot be
reached (no network, a closed proxy), torch comes from pip's configured sources instead and the
install says so.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable

from servekit.engines.common.install import TORCH_LOCAL, InstallSpec
from servekit.records import record

PROBE_TIMEOUT_S = 10.0


@record
class TorchSource:
    source: str  # the index URL, or ``local``
    note: str | None = None  # why it is not the index the spec names


def unreachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None when ``url`` answers at all (any HTTP status); else why it cannot be reached."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/", timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))


def torch_source(spec: InstallSpec, probe: Callable[[str], str | None] | None = None) -> TorchSource:
    """The torch source ``spec`` installs from on this machine (``probe``: :func:`unreachable`)."""
    if spec.torch_step is None or spec.torch_index == TORCH_LOCAL:
        return TorchSource(TORCH_LOCAL)
    if spec.torch_index_required:
        return TorchSource(spec.torch_index)
    reason = (probe or unreachable)(spec.torch_index)
    if reason is None:
        return TorchSource(spec.torch_index)
    torch = " ".join(spec.steps[spec.torch_step])
    return TorchSource(TORCH_LOCAL, (
        f"the PyTorch index {spec.torch_index} cannot be reached ({reason}); installing {torch} from "
        f"pip's configured sources instead (a wheel on disk through find-links, else pip's index). "
        f"To require the index: servekit engine install {spec.requirement} --torch-index {spec.torch_index}"
    ))
