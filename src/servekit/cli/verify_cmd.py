"""``servekit verify RUN|URL``: probe a running server, compare its startup facts with the fit
prediction, record the evidence; exit 1 (with the log tail) when a probe fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def _text(result) -> str:
    lines = [f"verify {result.run or result.url}: {'ok' if result.ok else 'FAILED'}"]
    lines += [f"  {'ok  ' if p.ok else 'FAIL'} {p.name}: {p.detail}" for p in result.probes]
    for key, pair in result.to_dict()["compared"].items():
        lines.append(f"  {key}: measured {pair['measured']}, predicted {pair['predicted']}")
    if result.evidence:
        lines.append(f"  evidence: {result.evidence}")
    return "\n".join(lines)


def verify_command(target: str, output_format: str, write_verified: str | None, timeout: float) -> int:
    from servekit.launch.evidence import read_evidence, summary
    from servekit.launch.records import load
    from servekit.launch.verify import verify_run, verify_url

    if target.startswith(("http://", "https://")):
        result = verify_url(target, timeout)
    else:
        result = verify_run(load(target), timeout)
    if output_format == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(_text(result))
    if not result.ok:
        print(f"error: verify failed; log tail:\n{result.log_tail}", file=sys.stderr)
        return 1
    if write_verified and result.evidence:
        from servekit.launch.recipe_verified import add_verified

        add_verified(Path(write_verified), summary(read_evidence(Path(result.evidence))))
    return 0


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def _verify(
        target: str = typer.Argument(..., help="Run id (servekit ps) or the server's URL."),
        output_format: str = typer.Option("text", "--format", help="text or json"),
        write_verified: str = typer.Option(None, "--write-verified", help="Add the summary to this recipe YAML."),
        timeout: float = typer.Option(120.0, "--timeout", help="Seconds per request."),
    ) -> None:
        """Check that a running server serves: health, models, chat, streaming, features, metrics, facts."""
        code = verify_command(target, output_format, write_verified, timeout)
        if code:
            raise SystemExit(code)
