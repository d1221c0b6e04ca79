"""Placeholder modules for packages an engine's server imports at module level but its argument
parser never calls, and that cannot be installed beside the CPU torch of a minimal parser
environment.

SGLang 0.5.9 to 0.5.20 import ``torchvision`` while ``sglang.srt.server_args`` loads
(``sglang/srt/utils/common.py``: ``from torchvision.io import decode_jpeg``;
``sglang/srt/multimodal/internvl_utils.py``: ``import torchvision.transforms as T``). PyPI's
torchvision wheels link ``libtorch_cuda.so``, which the CPU torch lacks, so the real one cannot
load. A placeholder module answers every attribute with an inert placeholder; calling one raises.
The catalog records which modules were placeholders (``source.stubbed_modules``).

Each placeholder root carries the version it stands for (``torchvision==0.28.0``: the release
built for torch 2.13), since ``transformers`` compares it before it imports image processors.

Standard library only: it runs inside the engine's environment.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any


class _Placeholder:
    """Stands in for any class or function of a placeholder module; using it raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self._name} is a placeholder: the parser environment lacks its package")

    def __getattr__(self, attr: str) -> _Placeholder:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self._name}.{attr}")

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self.__name__}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: dict[str, str]) -> None:
        self.roots = roots

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".")[0] not in self.roots:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        if spec.name in self.roots:
            module.__version__ = self.roots[spec.name]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install(requirements: list[str]) -> list[str]:
    """Serve each ``NAME==VERSION`` (a top-level package) as placeholders where it is absent."""
    import importlib.util

    roots = dict(req.partition("==")[::2] for req in requirements)
    missing = {name: version for name, version in roots.items() if importlib.util.find_spec(name) is None}
    if missing:
        sys.meta_path.insert(0, _Finder(missing))
    return sorted(missing)


def shadow(requirements: list[str]) -> list[str]:
    """Serve each ``NAME==VERSION`` as placeholders even where a (newer, incompatible) one is installed."""
    roots = dict(req.partition("==")[::2] for req in requirements)
    sys.meta_path.insert(0, _Finder(roots))
    return sorted(roots)


def used(requirements: list[str]) -> list[str]:
    """The placeholders (``NAME==VERSION``) that something imported."""
    return sorted(req for req in requirements
                  if isinstance(sys.modules.get(req.partition("==")[0]), _PlaceholderModule))
