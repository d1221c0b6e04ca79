"""Flag catalogs and config-class fields of past vLLM releases, for the upgrade checks.

Run with servekit's own interpreter from the repository root, after
scripts/install_parser_envs.sh has built the vLLM 0.33.0 parser environment::

    .venv/bin/python scripts/extract_vllm_releases.py [--cache DIR] [--out DIR] [VERSION ...]

Without versions it does every release in RELEASES (the first and the last patch of each minor
release from 0.7 on and 0.6.6.post1, as ``pip index versions vllm`` lists them, plus the patches
in between where the first and last catalogs differ: ``servekit engine diff vllm A B``; a release
with no catalog is checked with the nearest stored one below it, so a minor's first release must
be stored for its own flags to be checked; 0.32.0 and 0.33.0 are extracted by
scripts/extract_vllm_flags.py directly). For each release:

1. fetch: ``pip download vllm==V --no-deps --only-binary :all:`` (one wheel, 200-400 MB) into
   ``<cache>/wheels``; its Python files and ``.dist-info`` are unpacked into ``<cache>/src/V``
   (compiled libraries left out: the argument parser needs none of them) and the wheel deleted.
2. extract: scripts/extract_vllm_flags.py and scripts/extract_vllm_config_fields.py run with the
   interpreter of the vLLM 0.33.0 minimal parser environment (CPU torch 2.13.0, the packages the
   parser imports), ``VLLM_TARGET_DEVICE=cpu`` and ``PYTHONPATH=<cache>/src/V:<overlay>``: the
   release's own modules are imported first, so its own ``make_arg_parser`` builds the parser.
   The overlay (``<cache>/overlay/<era>``, ``pip install --target --no-deps``) holds the few
   packages an older release imports that 0.33 no longer does, or imports at another version
   (ERAS below). The catalog's ``source.method`` is "parser".
   Every release from 0.6.6.post1 on builds its parser this way (ERAS names what each needed);
   one that does not stops the run with what it lacks. The config-class fields are extracted
   where the release's modules allow (a release without them keeps its catalog alone).
3. writes ``<out>/vllm-V.json.gz`` and ``<out>/vllm-V-config-fields.json.gz`` (gzip with no time
   stamp: the bytes depend only on the content), through servekit's atomic writer.
   ``--out`` defaults to src/servekit/engines/vllm/data.

A release takes about a minute here (the download a few seconds, importing vLLM most of the rest).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.version import Version

from servekit.atomic import write_bytes_atomic

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"
DATA = REPO / "src" / "servekit" / "engines" / "vllm" / "data"
DEFAULT_CACHE = Path(os.environ.get("SERVEKIT_VLLM_RELEASES_DIR") or REPO / ".servekit-ci" / "vllm-releases")
PARSERS = Path(os.environ.get("SERVEKIT_PARSERS_DIR") or REPO / ".servekit-ci" / "parsers")
PARSER_ENV = "vllm-0.33.0"
# The first and last patch of each minor release and the patches between them where flags changed
# (pip index versions vllm, 2026-12; pip finds no x86_64 Linux wheel of 0.21.0). 0.20 ships
# manylinux_2_35 wheels only.
RELEASES = ("0.6.6.post1", "0.7.0", "0.7.1", "0.7.2", "0.7.3", "0.8.0", "0.8.2", "0.8.3", "0.8.4", "0.8.5",
            "0.8.5.post1", "0.9.0", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0",
            "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1", "0.16.0",
            "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.2", "0.22.0",
            "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1", "0.28.0",
            "0.29.0", "0.30.0", "0.31.0")
PLATFORMS = ("manylinux1_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_31_x86_64",
             "manylinux_2_35_x86_64", "manylinux_2_39_x86_64")
# (first release, last release, packages): imported by those releases' argument modules but missing
# from (or too new in) the 0.33 parser environment; installed with --no-deps into an overlay.
ERAS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # vllm/multimodal/hasher.py (blake3), transformers_utils/gguf_utils.py (gguf),
    # v1/structured_output/utils.py (diskcache): imported while the parser's modules load
    ("0.6.0", "0.23.0", ("blake3==1.0.11", "gguf==0.19.0", "diskcache==5.6.3")),
    # the structured-output modules of 0.11-0.14 import lm-format-enforcer (and it interegular)
    ("0.11.0", "0.14.1", ("lm-format-enforcer==0.11.3", "interegular==0.3.3")),
    # before 0.10 the positional model is added by the `vllm` command line itself, whose modules
    # import these (the api server, the multimodal image code); 0.10 imports setproctitle
    ("0.6.0", "0.10.2", ("setproctitle==1.3.8", "opencv-python-headless==5.0.0.93", "python-multipart==0.0.34",
                         "prometheus-fastapi-instrumentator==8.1.0")),
    # 0.11.0's vllm/utils/__init__.py still imports setproctitle at the top (0.11.1 moved it into
    # vllm/utils/system_utils.py, which the parser's modules do not load)
    ("0.11.0", "0.11.0", ("setproctitle==1.3.8",)),
    # transformers 4: 5 refuses the config classes these releases register; 0.9 registers "aimv2",
    # which transformers itself defines from 4.54
    ("0.6.0", "0.8.5.post1", ("transformers==4.57.6", "tokenizers==0.22.2", "huggingface-hub==0.36.2")),
    ("0.9.0", "0.9.2", ("transformers==4.51.3", "tokenizers==0.21.4", "huggingface-hub==0.36.2")),
    ("0.10.0", "0.10.2", ("transformers==4.57.6", "tokenizers==0.22.2", "huggingface-hub==0.36.2")),
)
LEFT_OUT_SUFFIXES = (".so", ".cubin", ".fatbin")


def pip_download(version: str, wheels: Path) -> Path:
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps", "--only-binary", ":all:",
           "-q", "-d", str(wheels), "--python-version", "3.11"]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    subprocess.run(cmd, check=True)
    found = sorted(wheels.glob(f"vllm-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip downloaded no wheel for vllm {version}")
    return found[0]


def release_tree(version: str, cache: Path) -> Path:
    """``<cache>/src/V``: the release's Python files and metadata, unpacked from its wheel once."""
    tree = cache / "src" / version
    if (tree / "vllm" / "__init__.py").is_file():
        return tree
    wheel = pip_download(version, cache / "wheels")
    partial = tree.with_name(version + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if ".so" not in Path(member).suffixes and not member.endswith(LEFT_OUT_SUFFIXES):
                archive.extract(member, partial)
    partial.rename(tree)
    wheel.unlink()
    return tree


def overlay(version: str, cache: Path) -> list[Path]:
    """The overlay folders (packages an older release needs beside the parser environment's)."""
    out = []
    for first, last, packages in ERAS:
        if not Version(first) <= Version(version) <= Version(last):
            continue
        folder = cache / "overlay" / f"{first}-{last}"
        stamp = folder / ".stamp"
        if not stamp.is_file() or stamp.read_text() != " ".join(packages):
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(folder),
                            *packages], check=True)
            stamp.write_text(" ".join(packages))
        out.append(folder)
    return out


def run_extractor(python: Path, script: str, tree: Path, extra: list[Path], *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu",
           "PYTHONPATH": os.pathsep.join(str(p) for p in (tree, *extra))}
    return subprocess.run([str(python), str(SCRIPTS / script), *args], env=env, capture_output=True, text=True,
                          timeout=900)


def write_gz(path: Path, data: object) -> None:
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    write_bytes_atomic(path, gzip.compress(text.encode("utf-8"), mtime=0))


def extract(version: str, cache: Path, out: Path, python: Path) -> str:
    """Write the release's catalog and, where they extract, its config-class fields; say which."""
    tree = release_tree(version, cache)
    extra = overlay(version, cache)
    flags = run_extractor(python, "extract_vllm_flags.py", tree, extra)
    if flags.returncode != 0:
        raise SystemExit(f"{version}: the parser does not build here (add what it lacks to ERAS):\n"
                         f"{flags.stderr[-2000:]}")
    catalog = json.loads(flags.stdout)
    fields = run_extractor(python, "extract_vllm_config_fields.py", tree, extra, "--stdout")
    if fields.returncode == 0:
        write_gz(out / f"vllm-{version}-config-fields.json.gz", json.loads(fields.stdout))
    else:
        print(f"{version}: config fields not extracted:\n{fields.stderr[-1500:]}", file=sys.stderr)
    if catalog["version"] != version:
        raise SystemExit(f"{version}: the catalog says version {catalog['version']} (wrong tree imported?)")
    write_gz(out / f"vllm-{version}.json.gz", catalog)
    return "catalog and config fields" if fields.returncode == 0 else "catalog only"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="releases (default: all of RELEASES)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="wheels, release trees, overlays")
    parser.add_argument("--out", type=Path, default=DATA, help="where the .json.gz files go")
    parser.add_argument("--python", type=Path, default=PARSERS / PARSER_ENV / "bin" / "python",
                        help="the parser environment's interpreter")
    args = parser.parse_args()
    if not args.python.is_file():
        raise SystemExit(f"no parser environment at {args.python}: run scripts/install_parser_envs.sh")
    for version in args.versions or RELEASES:
        print(f"{version}: {extract(version, args.cache, args.out, args.python)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
