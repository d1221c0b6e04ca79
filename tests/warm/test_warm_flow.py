"""The whole warm-cache flow against a real loopback hub and the real huggingface_hub client."""

from __future__ import annotations

import json
from pathlib import Path

from warm_repos import DRAFT, MODEL

from servekit.warm.engine_steps import EngineTarget
from servekit.warm.fetch_plan import plan_fetch
from servekit.warm.hub import HubSettings, snapshot_path, storage_folder
from servekit.warm.runner import WarmOptions, warm_cache
from servekit.warm.verify import verify_repo

EXPECTED = {
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "model.safetensors.index.json",
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
}
SPEC = json.dumps({"method": "dflash", "model": DRAFT, "num_speculative_tokens": 7})
TARGET = EngineTarget("vllm", ("vllm", "serve", MODEL, "--speculative-config", SPEC))


def _warm(settings: HubSettings, **kw):
    return warm_cache([TARGET], settings, WarmOptions(**kw))


def _blob_of(settings: HubSettings, repo: str, path: str) -> Path:
    report_commit = (storage_folder(settings, repo) / "refs" / "main").read_text()
    return snapshot_path(settings, repo, report_commit, path).resolve()


def test_dry_run_lists_exact_files_and_bytes_and_writes_nothing(settings, hub, repo_folders):
    report = _warm(settings, dry_run=True)
    doc = report.to_dict()
    model, draft = doc["repos"]
    assert (model["repo_id"], draft["repo_id"]) == (MODEL, DRAFT)
    assert {f["path"] for f in model["files"]} == EXPECTED
    sizes = {f["path"]: f["size"] for f in model["files"]}
    assert (
        sizes["model-00001-of-00002.safetensors"]
        == (repo_folders[MODEL] / "model-00001-of-00002.safetensors").stat().st_size
    )
    assert "pytorch_model.bin" in model["skipped"] and "original/consolidated.00.pth" in model["skipped"]
    assert doc["bytes_to_download"] == doc["bytes"] > 0
    assert not settings.cache_dir.exists()  # the weight index was read into a scratch folder
    assert hub.downloaded_files(MODEL) == ["model.safetensors.index.json"]


def test_full_warm_fetches_only_what_the_engine_loads(settings, hub):
    report = _warm(settings)
    assert report.ok, report.missing
    assert set(hub.downloaded_files(MODEL)) == EXPECTED
    assert sorted(hub.downloaded_files(MODEL)) == sorted(EXPECTED)  # each once
    assert {"model.safetensors", "config.json"} <= set(hub.downloaded_files(DRAFT))
    model_report = report.repos[0]
    assert model_report.verification.ok and model_report.verification.hashed == len(EXPECTED)
    assert model_report.download.bytes_fetched == model_report.fetch.total_bytes
    refs = storage_folder(settings, MODEL) / "refs" / "main"
    assert refs.read_text() == model_report.fetch.commit  # an offline engine finds the snapshot from the repo id


def test_second_run_downloads_nothing(settings, hub):
    assert _warm(settings).ok
    before = len(hub.downloads())
    again = _warm(settings)
    assert again.ok and again.bytes_downloaded == 0 and len(hub.downloads()) == before


def test_verify_catches_a_truncated_and_a_corrupted_shard(settings, hub):
    assert _warm(settings).ok
    fetch = plan_fetch(settings, warm_cache.__globals__["artifacts_of"]([TARGET])[0])
    shard1 = _blob_of(settings, MODEL, "model-00001-of-00002.safetensors")
    shard2 = _blob_of(settings, MODEL, "model-00002-of-00002.safetensors")
    shard1.write_bytes(shard1.read_bytes()[:-100])
    data = bytearray(shard2.read_bytes())
    data[-1] ^= 0xFF
    shard2.write_bytes(bytes(data))
    problems = {p.path: p.problem for p in verify_repo(settings, fetch).problems}
    assert problems == {"model-00001-of-00002.safetensors": "size", "model-00002-of-00002.safetensors": "sha256"}


def test_a_broken_shard_is_dropped_and_fetched_again(settings, hub):
    assert _warm(settings).ok
    shard = _blob_of(settings, MODEL, "model-00002-of-00002.safetensors")
    shard.write_bytes(shard.read_bytes()[:10])
    report = _warm(settings)
    assert report.ok and report.repos[0].repaired == ("model-00002-of-00002.safetensors",)
    assert hub.downloaded_files(MODEL).count("model-00002-of-00002.safetensors") == 2


def test_dropped_connection_is_resumed_and_finished_files_are_not_fetched_again(settings, hub):
    hub.drop_connection_once(MODEL, "model-00001-of-00002.safetensors", after_bytes=50_000)
    report = _warm(settings)
    assert report.ok and report.repos[0].verification.ok
    fetched = hub.downloaded_files(MODEL)
    assert fetched.count("model-00001-of-00002.safetensors") == 2  # the dropped attempt and its retry
    assert all(fetched.count(f) == 1 for f in EXPECTED - {"model-00001-of-00002.safetensors"})


def test_interrupted_run_resumes_without_refetching_finished_files(settings, hub):
    hub.fail_with_status(MODEL, "model-00002-of-00002.safetensors", 500)
    try:
        _warm(settings, precompile=False)
        raise AssertionError("the failing shard should stop the run")
    except Exception as exc:  # noqa: BLE001 - the hub's error surfaces as the run's failure
        assert "500" in str(exc) or "error" in str(exc).lower()
    first = hub.downloaded_files(MODEL)
    hub.clear_faults()
    report = _warm(settings)
    assert report.ok
    second = hub.downloaded_files(MODEL)[len(first) :]
    finished_before = {f for f in first if f != "model-00002-of-00002.safetensors"}
    assert "model-00002-of-00002.safetensors" in second
    assert not finished_before & set(second), f"re-fetched {finished_before & set(second)}"


def test_offline_with_a_complete_cache_verifies_from_the_manifest(settings, hub):
    assert _warm(settings).ok
    offline = HubSettings(settings.endpoint, settings.cache_dir, offline=True)
    report = warm_cache([TARGET], offline, WarmOptions())
    assert report.ok and report.offline
    assert report.repos[0].fetch.listing_source == "manifest"
    assert report.repos[0].verification.checked == len(EXPECTED)
    assert report.repos[0].verification.hashed == 0  # unchanged since their hashes were checked


def test_files_changed_since_their_hash_was_checked_are_hashed_again(settings, hub):
    assert _warm(settings).ok
    shard = _blob_of(settings, MODEL, "model-00002-of-00002.safetensors")
    data = bytearray(shard.read_bytes())
    data[100] ^= 0x01
    shard.write_bytes(bytes(data))
    offline = HubSettings(settings.endpoint, settings.cache_dir, offline=True)
    report = warm_cache([TARGET], offline, WarmOptions())
    assert report.repos[0].verification.hashed == 1
    assert report.missing == (
        f"{MODEL}: model-00002-of-00002.safetensors: sha256 is "
        f"{report.repos[0].verification.problems[0].actual}, expected "
        f"{report.repos[0].verification.problems[0].expected}",
    )


def test_offline_lists_exactly_what_is_missing(settings, hub):
    assert _warm(settings).ok
    commit = (storage_folder(settings, MODEL) / "refs" / "main").read_text()
    snapshot_path(settings, MODEL, commit, "tokenizer.json").unlink()
    _blob_of(settings, MODEL, "model-00001-of-00002.safetensors").unlink()
    report = warm_cache([TARGET], HubSettings(settings.endpoint, settings.cache_dir, offline=True), WarmOptions())
    assert not report.ok
    assert sorted(report.missing) == [
        f"{MODEL}: model-00001-of-00002.safetensors: missing",
        f"{MODEL}: tokenizer.json: missing",
    ]


def test_unreachable_hub_with_an_empty_cache_lists_every_repo(tmp_path):
    closed = HubSettings("http://127.0.0.1:9", tmp_path / "cache", offline=False)
    report = warm_cache([TARGET], closed, WarmOptions())
    assert not report.ok and report.offline
    assert [line.split(":")[0] for line in report.missing] == [f"{MODEL}@main", f"{DRAFT}@main"]
    assert "*.safetensors" in report.missing[0]


def test_progress_receives_every_downloaded_byte(settings, hub):
    seen: dict[str, list[int]] = {}

    def progress(repo_id: str, total: int):
        seen[repo_id] = [total, 0]
        return lambda n: seen[repo_id].__setitem__(1, seen[repo_id][1] + n)

    report = warm_cache([TARGET], settings, WarmOptions(), progress=progress)
    assert report.ok
    for repo in report.repos:
        total, received = seen[repo.fetch.artifact.repo_id]
        assert received == total == repo.fetch.missing_bytes > 0


def test_offline_check_of_a_snapshot_another_tool_fetched_finds_the_missing_shard(settings, hub):
    from huggingface_hub import hf_hub_download

    for name in ("config.json", "tokenizer.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors"):
        hf_hub_download(MODEL, name, cache_dir=settings.cache_dir, endpoint=settings.endpoint)
    model_only = EngineTarget("vllm", ("vllm", "serve", MODEL))
    report = warm_cache([model_only], HubSettings(settings.endpoint, settings.cache_dir, offline=True), WarmOptions())
    assert report.repos[0].fetch.listing_source == "snapshot"
    assert report.missing == (f"{MODEL}: model-00002-of-00002.safetensors: missing",)
