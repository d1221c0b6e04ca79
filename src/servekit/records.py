"""``record``: servekit's immutable data type, a frozen dataclass whose ``__repr__``, ``__eq__`` and
``__hash__`` are shared functions rather than methods compiled for each class.

``dataclasses`` writes the source of every generated method of every class and compiles it when
the class is created; for the hundred-odd frozen types a cold ``servekit plan`` imports, that
compiling is close to half of the process's CPU. A ``record`` is the same dataclass (fields,
``replace``, ``asdict``, ``__init__``, frozen assignment, ``__match_args__``) with the three
methods that need no per-class code read from the class's fields through one ``attrgetter``,
with the meaning ``dataclass(frozen=True)`` gives them:

- ``repr``: ``QualName(field=value!r, ...)`` over the fields with ``repr=True``, guarded against
  recursion as ``dataclasses`` guards it;
- ``==``: instances of the very same class compare their ``compare=True`` fields as a tuple;
  anything else is ``NotImplemented``;
- ``hash``: the hash of the tuple of the fields ``dataclasses`` hashes (``hash=`` when given,
  else ``compare=``).

A method the class body defines itself is kept, as ``dataclasses`` keeps it (a body that
defines ``__eq__`` alone gets the record hash, as a frozen dataclass would).
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Callable, TypeVar

T = TypeVar("T", bound=type)

_GETTERS = "__record_getters__"


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """A function from an instance to the tuple of these fields (``attrgetter`` returns a bare
    value for one name and needs at least one)."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


@reprlib.recursive_repr()
def _repr(self) -> str:
    names = getattr(type(self), _GETTERS)[0]
    return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


def _eq(self, other: object) -> Any:
    if other.__class__ is self.__class__:
        values = getattr(type(self), _GETTERS)[1]
        return values(self) == values(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(getattr(type(self), _GETTERS)[2](self))


def _explicit_hash(cls: type) -> bool:
    """Whether the class body set ``__hash__`` itself (not the ``None`` Python sets beside a
    body's own ``__eq__``)."""
    own = cls.__dict__.get("__hash__", None)
    return "__hash__" in cls.__dict__ and not (own is None and "__eq__" in cls.__dict__)


def record(cls: T) -> T:
    """``cls`` as a frozen dataclass with shared ``__repr__``, ``__eq__`` and ``__hash__``."""
    explicit_hash = _explicit_hash(cls)
    own = {name for name in ("__repr__", "__eq__") if name in cls.__dict__}
    cls = dataclass(frozen=True, repr=False, eq=False)(cls)
    declared = fields(cls)
    shown = tuple(f.name for f in declared if f.repr)
    compared = tuple(f.name for f in declared if f.compare)
    hashed = tuple(f.name for f in declared if (f.compare if f.hash is None else f.hash))
    setattr(cls, _GETTERS, (shown, _getter(compared), _getter(hashed)))
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if "__eq__" not in own:
        cls.__eq__ = _eq
    if not explicit_hash:
        cls.__hash__ = _hash
    return cls
