"""Run records under servekit's home: atomic JSON, lookup by id or prefix, listing."""

from __future__ import annotations

import json

import pytest

from servekit.errors import ServekitError
from servekit.launch import records


def _record(run: str = "20260101-000000-abcdef") -> records.RunRecord:
    proc = records.ProcessRecord("serve", ("python", "-m", "x"), {"A": "1"}, "/tmp/serve.log", 123, 123)
    return records.RunRecord(run=run, engine="e", engine_version="1", model="m", served_name="m",
                             url="http://127.0.0.1:1", plan={"engine": "e"}, plan_hash="sha256:0",
                             hardware={"name": "local"}, processes=(proc,), times={"started": 1.0})


def test_a_record_round_trips_through_its_json_file():
    record = _record()
    path = records.save(record)
    assert path == records.runs_dir() / record.run / "run.json"
    assert json.loads(path.read_text())["record_version"] == records.RECORD_VERSION
    assert records.load(record.run) == record
    assert records.load(record.run).pids == [123]


def test_no_temp_file_is_left_beside_the_record():
    path = records.save(_record())
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.json"]


def test_a_unique_prefix_names_a_run_and_list_is_sorted():
    records.save(_record("20260101-000000-aaaaaa"))
    records.save(_record("20260102-000000-bbbbbb"))
    assert records.load("20260102").run == "20260102-000000-bbbbbb"
    assert records.list_ids() == ["20260101-000000-aaaaaa", "20260102-000000-bbbbbb"]
    assert [r.run for r in records.all_records()] == records.list_ids()


def test_an_unknown_run_is_an_error_with_the_fix():
    with pytest.raises(ServekitError, match="no run 'nope'") as err:
        records.load("nope")
    assert "servekit ps" in str(err.value)


def test_new_run_ids_differ():
    assert records.new_run_id() != records.new_run_id()
