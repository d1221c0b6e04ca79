"""The ``servekit`` command: parse, dispatch to one library function, render. Nothing else."""

from servekit.cli.app import main, run

__all__ = ["main", "run"]
