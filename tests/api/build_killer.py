"""Run one ``build_api`` and SIGKILL this process just before its N-th change to the files
beside ``--out`` (not a test module: ``test_atomic_build.py`` runs it as a subprocess).

Usage: python build_killer.py OUT CATALOG KILL_AT [full|incremental] [native|renames]

Every call that changes a file or directory under OUT's parent (but the catalog) counts:
``mkdir``, ``rmdir``, ``unlink``, ``link``, ``rename``, ``replace``, ``open`` with ``O_CREAT``
and the one-step directory exchange, as well as the unlinks and rmdirs ``shutil.rmtree`` makes
relative to a directory descriptor. The process kills itself with SIGKILL before the KILL_AT-th
one runs, so nothing of the build's own clean-up runs. With KILL_AT 0 the build completes and
prints {"changes": N, "exchanges": [indices of the exchange calls]} as JSON. The build runs in
this one process (``jobs=1``), so a forked worker never kills itself instead.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def main() -> int:
    out, catalog, kill_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    full = sys.argv[4:5] == ["full"]
    from servekit.api import manifest, swap
    from servekit.api.publish import build_api

    # servekit's own files may change while the suite runs (an editable install); the parent
    # test holds the environment digest at the same value
    manifest.environment_digest = lambda: "steady"
    if sys.argv[5:6] == ["renames"]:
        swap.native_exchange = lambda new, current: False
    root, skip = str(out.parent), str(catalog)
    seen = {"changes": 0, "exchanges": []}

    def counts(args: tuple, kwargs: dict) -> bool:
        if "dir_fd" in kwargs and kwargs["dir_fd"] is not None:
            return True
        paths = [str(a) for a in args if isinstance(a, (str, os.PathLike))]
        return any(p.startswith(root) and not p.startswith(skip) for p in paths)

    def watched(real, name):
        def call(*args, **kwargs):
            if name == "open" and not args[1] & os.O_CREAT:
                return real(*args, **kwargs)
            if counts(args, kwargs):
                seen["changes"] += 1
                if name == "exchange":
                    seen["exchanges"].append(seen["changes"])
                if seen["changes"] == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    for name in ("mkdir", "rmdir", "unlink", "link", "rename", "replace", "open"):
        setattr(os, name, watched(getattr(os, name), name))
    swap.native_exchange = watched(swap.native_exchange, "exchange")
    build_api(out, catalog, jobs=1, full=full)
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
