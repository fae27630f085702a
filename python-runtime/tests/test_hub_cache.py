"""The hub download path against a loopback stand-in for the hub
(test/fixtures/hub_standin.py): a model downloaded once is found again with the hub
gone and with HF_HUB_OFFLINE set; an interrupted download resumes; a file that does
not match the hub's hash is never handed to a loader; a download that cannot fit on
the disk is refused before it starts."""

import os
from collections import namedtuple

import pytest

from conftest import fixture_module
from hangar_runtime.engines import hub_download
from hangar_runtime.errors import InvalidModel, SourceUnreachable

REPO_ID = "test-org/tiny-llm"


@pytest.fixture
def hub(monkeypatch, tiny_llm):
    from huggingface_hub import constants

    standins = []

    def start(**options):
        standin = fixture_module("hub_standin").HubStandin({REPO_ID: tiny_llm["path"]}, **options).start()
        standins.append(standin)
        # What HF_ENDPOINT sets when huggingface_hub is imported (it already is, here).
        monkeypatch.setattr(constants, "ENDPOINT", standin.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", standin.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        return standin

    yield start
    for standin in standins:
        standin.stop()


def fetch(cache_dir, revision=None) -> str:
    return hub_download.download(REPO_ID, revision, str(cache_dir), lambda *a: None)


def same_files(a: str, b: str) -> bool:
    names = sorted(os.listdir(a))
    return names == sorted(os.listdir(b)) and all(
        open(os.path.join(a, n), "rb").read() == open(os.path.join(b, n), "rb").read() for n in names)


def test_a_download_is_found_again_with_the_hub_gone_and_offline(hub, workdir, monkeypatch, tiny_llm):
    from huggingface_hub import constants

    standin = hub()
    path = fetch(workdir)
    assert same_files(path, tiny_llm["path"])
    repo = standin.repos[REPO_ID]
    # The download was by commit; the ref a later "main" lookup reads is written too.
    assert (workdir / "models--test-org--tiny-llm" / "refs" / "main").read_text() == repo.sha
    standin.stop()
    assert fetch(workdir) == path  # unreachable: the cached copy
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert fetch(workdir) == path


def test_a_named_revision_is_remembered_under_its_name(hub, workdir, monkeypatch):
    from huggingface_hub import constants

    standin = hub()
    repo = standin.repos[REPO_ID]
    fetch(workdir, revision=repo.sha)
    standin.stop()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert fetch(workdir, revision=repo.sha).endswith(repo.sha)
    # "main" was never asked for: offline, it is honestly not in the cache.
    with pytest.raises(InvalidModel, match="not in the cache"):
        fetch(workdir)


def test_an_interrupted_download_resumes_where_it_stopped(hub, workdir, tiny_llm, monkeypatch):
    from huggingface_hub import constants

    # huggingface_hub writes what it receives in chunks of DOWNLOAD_CHUNK_SIZE (10 MiB),
    # and resumes from the last whole chunk: the tiny model's file is smaller than one.
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)
    weights = "model.safetensors"
    size = os.path.getsize(os.path.join(tiny_llm["path"], weights))
    cut = 16 * 1024 * 10  # whole chunks, so all of it is kept
    assert cut < size
    standin = hub(cut_once={weights: cut})
    try:
        path = fetch(workdir)
    except InvalidModel:
        # Whether huggingface_hub retries within the call or the launch is made again,
        # the bytes already received are kept and only the rest is asked for.
        path = fetch(workdir)
    assert same_files(path, tiny_llm["path"])
    gets = [r for r in standin.requests if r[0] == "GET" and r[1].endswith(weights)]
    assert len(gets) == 2, gets
    assert gets[1][2] == f"bytes={cut}-", gets


def test_a_busy_hub_is_asked_again_and_one_that_stays_busy_fails_as_unreachable_not_invalid(hub, workdir, tiny_llm):
    weights = "model.safetensors"
    standin = hub(busy={weights: 2})
    path = fetch(workdir / "a")
    assert same_files(path, tiny_llm["path"])
    gets = [r for r in standin.requests if r[0] == "GET" and r[1].endswith(weights)]
    assert len(gets) == 3, gets
    # Busy past the retries: 503 ("try again later"), not 400 ("fix the request").
    standin = hub(busy={weights: 10})
    with pytest.raises(SourceUnreachable, match=r"503 Service Unavailable.*Asked 3 more times; launch again later"):
        fetch(workdir / "b")
    assert len([r for r in standin.requests if r[0] == "GET" and r[1].endswith(weights)]) == 4


def test_a_file_that_does_not_match_the_hubs_hash_is_removed_not_loaded(hub, workdir, tiny_llm, monkeypatch):
    standin = hub()
    repo = standin.repos[REPO_ID]
    # The hub says one thing, the bytes say another (a proxy that mangled the file).
    entry = repo.files["config.json"]
    entry["blob_id"] = "0" * 40
    with pytest.raises(InvalidModel, match="config.json did not match the hub's hash"):
        fetch(workdir)
    snapshot = workdir / "models--test-org--tiny-llm" / "snapshots" / repo.sha
    assert not (snapshot / "config.json").exists()
    assert not (workdir / "models--test-org--tiny-llm" / "refs" / "main").exists()


def test_a_download_that_cannot_fit_is_refused_before_it_starts(hub, workdir, monkeypatch):
    standin = hub()
    Usage = namedtuple("Usage", "total used free")
    # Failure injection: a disk with 1 KiB free is not something a test can make.
    monkeypatch.setattr(hub_download.shutil, "disk_usage", lambda path: Usage(1 << 40, (1 << 40) - 1024, 1024))
    with pytest.raises(InvalidModel, match=r"it needs [\d.]+ MiB more on disk") as err:
        fetch(workdir)
    assert not any(r[0] == "GET" and "/resolve/" in r[1] for r in standin.requests)


def test_a_copy_in_the_hf_home_layout_is_found_offline(hub, workdir, monkeypatch, tiny_llm):
    # `<cache>/huggingface/hub/models--...`: what huggingface_hub writes with
    # HF_HOME=<cache>/huggingface, and what the listing counts as cached. The launch
    # looked only in `<cache>/huggingface/` and, offline, said "not in the cache".
    from huggingface_hub import constants

    standin = hub()
    hf_home_cache = workdir / "huggingface" / "hub"
    path = fetch(hf_home_cache)
    standin.stop()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    spec = {"model_id": REPO_ID, "model_hub": "huggingface", "cache_dir": str(workdir)}
    assert hub_download.model_folder(spec, lambda *a: None) == path
    assert same_files(path, tiny_llm["path"])


def test_a_hub_etag_that_is_a_path_writes_nothing_outside_the_cache(hub, workdir, tmp_path):
    standin = hub()
    outside = tmp_path / "outside" / "written-by-the-hub"
    outside.parent.mkdir()
    # huggingface_hub names a blob by the ETag: a hostile hub's `../..` wrote anywhere.
    standin.repos[REPO_ID].files["config.json"]["etag"] = os.path.relpath(outside, workdir / "models--test-org--tiny-llm" / "blobs")
    with pytest.raises(InvalidModel, match="ETag that is not a file hash"):
        fetch(workdir)
    assert not outside.exists() and not os.path.exists(f"{outside}.lock")


def test_a_listing_with_a_path_outside_the_repository_is_refused_and_removes_nothing(hub, workdir, tmp_path):
    standin = hub()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for name in (str(victim), "../" * 12 + str(victim).lstrip("/"), "a/../../b", "c\\d"):
        standin.repos[REPO_ID].extra_siblings = [{"rfilename": name, "size": 8, "blobId": "0" * 40}]
        with pytest.raises(InvalidModel, match="not paths inside the repository"):
            fetch(workdir)
    assert victim.read_text() == "precious"


def test_a_blob_a_failed_download_left_is_checked_by_the_next_launch_online_and_offline(hub, workdir, tiny_llm, monkeypatch):
    from huggingface_hub import constants

    standin = hub()
    repo = standin.repos[REPO_ID]
    weights = next(n for n in repo.files if n.endswith(".safetensors"))
    blob = workdir / "models--test-org--tiny-llm" / "blobs" / repo.files[weights]["sha256"]
    # What a launch that failed or was cancelled after this file arrived leaves: the blob,
    # complete in size but wrong in content, and never checked (the marker of checked
    # blobs was made when that download began, without it).
    blob.parent.mkdir(parents=True)
    (blob.parent / ".hangar-verified").write_text("")
    blob.write_bytes(b"\0" * repo.files[weights]["size"])
    with pytest.raises(InvalidModel, match=f"{weights} did not match the hub's hash"):
        fetch(workdir)
    assert not blob.exists()
    path = fetch(workdir)
    assert same_files(path, tiny_llm["path"])
    # Checked once: the next launch reads it no more (the check is kept beside the blobs).
    assert repo.files[weights]["sha256"] in (blob.parent / ".hangar-verified").read_text().split()
    # Offline, the blobs are checked by the hash they are named by.
    blob.write_bytes(b"\0" * repo.files[weights]["size"])
    marker = blob.parent / ".hangar-verified"
    marker.write_text("".join(f"{n}\n" for n in marker.read_text().split() if n != repo.files[weights]["sha256"]))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(InvalidModel, match="do not match their hash"):
        fetch(workdir)
    assert not blob.exists()


def test_progress_counts_bytes_against_the_listing_and_a_hub_that_sends_more_is_stopped():
    tracker = hub_download._ProgressTracker(expected_bytes=100 << 20)
    Bar = tracker.bar_class()
    files, data = Bar(total=7), Bar(total=0, unit="B")
    files.update(6)
    assert tracker.fraction() == pytest.approx(6 / 7)
    data.update(90 << 20)
    assert tracker.fraction() == pytest.approx(0.9) and tracker.bytes_done() == 90 << 20
    with pytest.raises(OSError, match="more than the 100.0 MiB its listing declared"):
        data.update(30 << 20)


def test_a_partial_blob_no_download_writes_to_is_removed_and_a_live_one_kept(hub, workdir):
    hub()
    blobs = workdir / "models--test-org--tiny-llm" / "blobs"
    blobs.mkdir(parents=True)
    dead, live = blobs / ("a" * 64 + ".1234abcd.incomplete"), blobs / ("b" * 64 + ".5678ef01.incomplete")
    dead.write_bytes(b"\0" * 1024)
    live.write_bytes(b"\0" * 1024)
    # What a runtime ended mid-download leaves: untouched for longer than any live download.
    old = os.path.getmtime(dead) - hub_download._DEAD_PARTIAL_S - 60
    os.utime(dead, (old, old))
    fetch(workdir)
    assert not dead.exists()
    assert live.exists()


def test_an_llm_download_leaves_what_its_engines_never_read_on_the_hub(monkeypatch, tiny_llm, workdir, tmp_path):
    import shutil

    from huggingface_hub import constants

    folder = tmp_path / "repo"
    shutil.copytree(tiny_llm["path"], folder)
    (folder / "original").mkdir()
    (folder / "original" / "consolidated.00.pth").write_bytes(b"\0" * 4096)
    (folder / "model-q8_0.gguf").write_bytes(b"GGUF" + b"\0" * 4096)
    # Beside the safetensors: the pickle older repos carry too, Mistral's consolidated copy, a training checkpoint.
    (folder / "pytorch_model.bin").write_bytes(b"\0" * 4096)
    shutil.copy(next(folder.glob("*.safetensors")), folder / "consolidated.safetensors")
    (folder / "checkpoint-500").mkdir()
    (folder / "checkpoint-500" / "optimizer.pt").write_bytes(b"\0" * 4096)
    standin = fixture_module("hub_standin").HubStandin({REPO_ID: str(folder)}).start()
    try:
        monkeypatch.setattr(constants, "ENDPOINT", standin.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", standin.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        path = hub_download.download(REPO_ID, None, str(workdir), lambda *a: None, hub_download.LLM_NOT_DOWNLOADED,
                                     prefer_safetensors=True)
    finally:
        standin.stop()
    assert not os.path.exists(os.path.join(path, "original")) and not os.path.exists(os.path.join(path, "model-q8_0.gguf"))
    assert same_files(path, tiny_llm["path"])
    fetched = [r[1] for r in standin.requests if r[0] == "GET" and "/resolve/" in r[1]]
    assert not any(n in f for f in fetched for n in ("/original/", ".gguf", ".bin", "consolidated", "checkpoint-")), fetched


def test_a_cache_from_before_the_marker_is_adopted_not_re_hashed(hub, workdir, tiny_llm):
    standin = hub()
    path = fetch(workdir)
    blobs = workdir / "models--test-org--tiny-llm" / "blobs"
    # A cache kept by an earlier version: no marker. Its blobs are trusted as they were
    # then (hashing every cached model at its next launch could pass the stall timeout).
    (blobs / ".hangar-verified").unlink()
    gets = len([r for r in standin.requests if r[0] == "GET" and "/resolve/" in r[1]])
    assert fetch(workdir) == path
    assert len([r for r in standin.requests if r[0] == "GET" and "/resolve/" in r[1]]) == gets
    assert (blobs / ".hangar-verified").read_text().split()

