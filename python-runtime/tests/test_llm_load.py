"""Loading the `transformers` engine: what fails, how fast, and how it is named."""

import time

import pytest

from harness import LOAD_FAILED, load_spec

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


HUB_ID = "hangar-tests/not-a-cached-model"


def hub_spec(cache_dir, **extra) -> dict:
    spec = load_spec("transformers", None, model_type="LLM", model_id=HUB_ID, model_hub="huggingface",
                     cache_dir=str(cache_dir), model_ability=["chat"])
    del spec["model_uri"]
    spec.update(extra)
    return spec


def load_fails_fast(runtime, spec, within: float = 5.0) -> dict:
    runtime.hello()
    started = time.monotonic()
    progress, msg_type, body = runtime.load(spec)
    elapsed = time.monotonic() - started
    assert msg_type == LOAD_FAILED, f"got {msg_type:#x} {body}\n{runtime.stderr()}"
    assert elapsed < within, f"LOAD_FAILED took {elapsed:.1f}s"
    assert runtime.wait_exit() == 3
    assert all(p["stage"] == "download" for p in progress)
    return body


@pytest.mark.parametrize("env", [
    {"HF_HUB_OFFLINE": "1"},
    # Not offline, but nothing listens there: the lookup fails at once.
    {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9"},
], ids=["offline", "unreachable"])
def test_hub_model_not_in_cache_fails_fast_and_says_what_to_do(spawn, workdir, env):
    body = load_fails_fast(spawn(env=env), hub_spec(workdir))
    # Offline is the user's own setting (the model cannot load here); an unreachable hub is "not now".
    assert body["kind"] == ("invalid" if env["HF_HUB_OFFLINE"] == "1" else "unavailable")
    assert HUB_ID in body["message"]
    assert "model_path" in body["message"]
    assert str(workdir / "huggingface") in body["message"]  # where it looked


def test_other_hubs_are_refused(spawn, workdir):
    body = load_fails_fast(spawn(), hub_spec(workdir, model_hub="modelscope"))
    # ModelScope is not reachable from here: "not now", with the way to load from a folder.
    assert body["kind"] == "unavailable" and "modelscope" in body["message"] and "model_path" in body["message"]


@pytest.mark.parametrize("extra, fragment", [
    ({"model_uri": "/nonexistent/model/folder"}, "does not exist"),
    ({"model_uri": "relative/folder"}, "absolute"),
    ({"engine_kwargs": {"max_batch_size": 0}}, "max_batch_size"),
])
def test_bad_load_specs_fail_before_loading_anything(spawn, workdir, extra, fragment):
    spec = load_spec("transformers", "/nonexistent/model/folder", model_type="LLM")
    spec.update(extra)
    body = load_fails_fast(spawn(), spec)
    assert body["kind"] == "invalid" and fragment in body["message"]


def test_a_file_or_a_folder_without_config_json_is_named_as_such(spawn, workdir):
    (workdir / "model.gguf").write_bytes(b"GGUF")
    body = load_fails_fast(spawn(), load_spec("transformers", str(workdir / "model.gguf"), model_type="LLM"))
    assert body["kind"] == "invalid" and "is a file, not a model folder" in body["message"], body
    (workdir / "folder").mkdir()
    (workdir / "folder" / "tokenizer.json").write_text("{}")
    body = load_fails_fast(spawn(), load_spec("transformers", str(workdir / "folder"), model_type="LLM"))
    assert body["kind"] == "invalid" and "has no config.json" in body["message"], body


def test_folder_that_is_no_model_is_invalid(workdir):
    from hangar_runtime.engines.transformers_llm.loaded_model import load_model
    from hangar_runtime.errors import InvalidModel

    (workdir / "notes.txt").write_text("not a model")
    with pytest.raises(InvalidModel, match="Cannot load"):
        load_model(str(workdir), {}, {})


def test_download_reports_progress_from_the_loading_thread(monkeypatch, workdir):
    """The hub's progress bars tick on download workers; PROGRESS goes out from
    the thread that called load, rising from 0 to 0.8."""
    import threading

    import huggingface_hub

    from hangar_runtime.engines import hub_download as download

    class Info:
        sha = "0" * 40

    def fake_snapshot_download(repo_id, *, revision, cache_dir, tqdm_class, ignore_patterns=None):
        assert (repo_id, revision, cache_dir) == (HUB_ID, Info.sha, str(workdir / "huggingface"))
        files = tqdm_class(total=2)
        data = tqdm_class(total=1000, unit="B")
        for _ in range(4):
            time.sleep(0.3)
            data.update(250)
        files.update(2)
        return "/fake/snapshot"

    monkeypatch.setattr(download, "_PROBE_TIMEOUT_S", 1.0)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, *a, **k: Info())
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    calls = []

    def progress(fraction, stage, message=""):
        calls.append((fraction, stage, threading.current_thread()))

    spec = hub_spec(workdir)
    assert download.model_folder(spec, progress) == "/fake/snapshot"
    fractions = [f for f, _, _ in calls]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 0.8
    assert len(set(fractions)) >= 3  # it moved in between, not just start and end
    assert {stage for _, stage, _ in calls} == {"download"}
    assert {thread for _, _, thread in calls} == {threading.current_thread()}
