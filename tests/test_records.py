"""``servekit.records.record`` means what ``dataclass(frozen=True)`` means: each case declares the
same class both ways and compares what the two do."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, asdict, dataclass, field, fields, replace

import pytest

from servekit.records import record


def both(body: dict):
    """The class ``body`` declares, once as a frozen dataclass and once as a record."""
    made = []
    for decorate in (dataclass(frozen=True), record):
        namespace = dict(body)
        made.append(decorate(type("Shape", (), namespace)))
    return made


PLAIN = {"__annotations__": {"a": "int", "b": "str"}, "b": "x"}
OPTIONS = {"__annotations__": {"a": "int", "hidden": "int", "loose": "int", "keyed": "int"},
           "hidden": field(default=0, repr=False), "loose": field(default=0, compare=False),
           "keyed": field(default=0, compare=False, hash=True)}
EMPTY = {"__annotations__": {}}
ONE = {"__annotations__": {"only": "tuple"}}


@pytest.mark.parametrize("body, values", [
    (PLAIN, [(1, "x"), (1, "y"), (2, "x")]),
    (OPTIONS, [(1, 2, 3, 4), (1, 9, 3, 4), (1, 2, 9, 4), (1, 2, 3, 9)]),
    (EMPTY, [()]),
    (ONE, [((1, 2),), ((1, 3),)]),
])
def test_repr_eq_and_hash_match_a_frozen_dataclass(body, values):
    plain, rec = both(body)
    for left in values:
        for right in values:
            assert (plain(*left) == plain(*right)) == (rec(*left) == rec(*right))
            assert (plain(*left) != plain(*right)) == (rec(*left) != rec(*right))
        assert repr(plain(*left)) == repr(rec(*left))
        assert hash(plain(*left)) == hash(rec(*left))
    assert [f.name for f in fields(plain)] == [f.name for f in fields(rec)]
    assert plain.__match_args__ == rec.__match_args__


def test_other_classes_never_compare_equal():
    plain, rec = both(PLAIN)
    other = record(type("Other", (), dict(PLAIN)))
    assert rec(1) != other(1) and rec(1) != (1, "x") and rec(1) != plain(1)
    assert rec(1).__eq__((1, "x")) is NotImplemented


def test_frozen_replace_asdict_and_pickle_behave_as_a_dataclass():
    shape = record(type("Shape", (), dict(PLAIN)))
    globals()["Shape"] = shape  # pickle finds a class by its module and name
    shape.__qualname__ = "Shape"
    one = shape(1)
    with pytest.raises(FrozenInstanceError):
        one.a = 2
    assert replace(one, b="z") == shape(1, "z") and asdict(one) == {"a": 1, "b": "x"}
    assert pickle.loads(pickle.dumps(one)) == one
    assert {one: 1}[shape(1)] == 1


def test_methods_the_body_defines_are_kept():
    own = {"__annotations__": {"a": "int"},
           "__repr__": lambda self: "mine", "__eq__": lambda self, other: True}
    plain, rec = both(own)
    assert repr(rec(1)) == repr(plain(1)) == "mine"
    assert (rec(1) == rec(2)) is (plain(1) == plain(2)) is True
    # a body's own __eq__ alone: the frozen dataclass still hashes its fields
    assert hash(rec(1)) == hash(plain(1))
    hashed = {"__annotations__": {"a": "int"}, "__hash__": lambda self: 7}
    plain, rec = both(hashed)
    assert hash(rec(1)) == hash(plain(1)) == 7


def test_a_record_holding_itself_prints_as_a_dataclass_does():
    plain, rec = both({"__annotations__": {"items": "list"}})
    loops = [rec([]), plain([])]
    for obj in loops:
        obj.items.append(obj)
    assert repr(loops[0]) == repr(loops[1])


def test_a_subclass_record_compares_its_own_fields():
    base = record(type("Base", (), dict(PLAIN)))
    child = record(type("Child", (base,), {"__annotations__": {"c": "int"}, "c": 0}))
    assert child(1, "x", 2) != child(1, "x", 3) and child(1, "x", 2) == child(1, "x", 2)
    assert child(1, "x", 2) != base(1, "x")
    assert repr(child(1)) == "Child(a=1, b='x', c=0)"
