"""Where the model files are: a local folder (`model_uri`), or a Hugging Face hub
repository (`model_id`) downloaded into `<cache_dir>/huggingface` with PROGRESS
0-0.8 on the way (a ModelScope one by modelscope_download.py). Shared by the engines that load from the hub (transformers LLMs,
sentence-transformers).

A hub that cannot be reached must fail the launch in seconds, not after minutes
of retries, and say how to get going anyway (launch from a local folder with
`model_path`). So before downloading, one short request asks the hub which commit
the revision is; if that fails, only a complete copy already in the cache will do."""

import logging
import os
import re
import shutil
import threading
import time

from ..errors import InvalidModel, SourceUnreachable, exception_text
from . import hub_integrity, hub_retry
from .base import Progress
from .model_uri import local_path

log = logging.getLogger("hangar_runtime.hub")

DOWNLOAD_SHARE = 0.8  # of the load's progress; loading the weights is the rest
_PROBE_TIMEOUT_S = 5.0
# A partial blob untouched this long belongs to no live download: a live one writes as
# bytes arrive, and a load that receives nothing is ended long before (the control
# plane's HANGAR_LOAD_STALL_TIMEOUT_MS, 15 minutes).
_DEAD_PARTIAL_S = 30 * 60
_REPORT_EVERY_S = 0.5
# What an LLM repository may carry that Transformers and vLLM do not load: Meta's
# original checkpoints (`original/consolidated.*.pth`, as large as the model again),
# GGUF files, and other frameworks' and runtimes' exports. Not fetched.
LLM_NOT_DOWNLOADED = ["original/*", "checkpoint-*/*", "*.gguf", "onnx/*", "openvino/*", "*.onnx", "*.h5", "*.msgpack",
                      "*.ot", "tf_model*", "flax_model*", "rust_model*", "coreml/*"]
# Where a repository has safetensors shards, what Transformers and vLLM then do not read:
# the PyTorch pickles beside them (older repos carry both) and Mistral's consolidated copy.
_BESIDE_SAFETENSORS = ["pytorch_model*.bin", "consolidated*.safetensors"]
_LOCAL_HINT = "Download the model on a machine that can reach the hub and launch it from a local folder with model_path."
# The id, revision and commit become folders in the cache (models--org--name/refs/<revision>,
# modelscope/models/org/name): the control plane's registration rules, checked again here.
_REPO_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$", re.ASCII)
_REVISION = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)*$", re.ASCII)
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# Bytes past the listing's sizes before a download is stopped (a hub that sends more
# than it declared would fill the disk before huggingface_hub's check at the end).
_OVERRUN_SLACK = 16 << 20


def model_folder(spec: dict, progress: Progress, ignore_patterns: list[str] | None = None,
                 prefer_safetensors: bool = False) -> str:
    """ignore_patterns: files of the repository the engine cannot use (other
    frameworks' weights), left on the hub rather than downloaded; prefer_safetensors:
    also the pickles and consolidated copy beside safetensors shards (download())."""
    if spec.get("model_uri"):
        path = local_path(spec["model_uri"])
        if os.path.isfile(path):
            raise InvalidModel(f"Model path {path} is a file, not a model folder (a GGUF file is launched with the llama.cpp engine)")
        if not os.path.isdir(path):
            raise InvalidModel(f"Model folder does not exist: {path}")
        return path
    model_id = spec.get("model_id")
    if not isinstance(model_id, str) or not model_id:
        raise InvalidModel("The load spec has neither model_uri nor model_id")
    if not _REPO_ID.match(model_id) or ".." in model_id:
        raise InvalidModel(f"{model_id!r} is not a hub repository id such as org/name")
    revision = spec.get("model_revision")
    if revision and (not isinstance(revision, str) or not _REVISION.match(revision) or ".." in revision):
        raise InvalidModel(f"{revision!r} is not a branch, tag or commit of a hub repository")
    hub = spec.get("model_hub") or "huggingface"
    if hub == "modelscope":
        from . import modelscope_download

        if not spec.get("cache_dir"):
            raise InvalidModel(f"Cannot download {model_id} from ModelScope: the load spec has no cache_dir")
        return modelscope_download.model_folder(model_id, spec.get("model_revision") or None, spec["cache_dir"],
                                                progress, ignore_patterns)
    if hub != "huggingface":
        raise InvalidModel(f"Cannot download {model_id}: this runtime downloads from huggingface and modelscope, "
                           f"not {hub}. {_LOCAL_HINT}")
    cache_dir = os.path.join(spec["cache_dir"], "huggingface") if spec.get("cache_dir") else None
    return download(model_id, spec.get("model_revision") or None, _hf_cache_holding(cache_dir, model_id), progress,
                    ignore_patterns, prefer_safetensors)


def _hf_cache_holding(cache_dir: str | None, model_id: str) -> str | None:
    """`<cache>/huggingface`, or `<cache>/huggingface/hub` when the repository is only
    there: the layout huggingface_hub writes with HF_HOME=<cache>/huggingface (a cache
    copied from another machine, `huggingface-cli download` with HF_HOME set), which
    the listing and cache_status count (registry/cache-status.ts). Before, such a copy
    showed as cached and the launch looked elsewhere: offline, "not in the cache"."""
    if cache_dir is None:
        return None
    from huggingface_hub.file_download import repo_folder_name
    name = repo_folder_name(repo_id=model_id, repo_type="model")
    hub = os.path.join(cache_dir, "hub")
    if not os.path.isdir(os.path.join(cache_dir, name)) and os.path.isdir(os.path.join(hub, name)):
        return hub
    return cache_dir


def download(model_id: str, revision: str | None, cache_dir: str | None, progress: Progress,
             ignore_patterns: list[str] | None = None, prefer_safetensors: bool = False) -> str:
    """prefer_safetensors: where the repository has safetensors shards, leave the other
    copies of the weights on the hub (an LLM's engines read the shards alone)."""
    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    where = f"{model_id}" + (f" (revision {revision})" if revision else "")
    progress(0.0, "download", f"Looking up {where} on {constants.ENDPOINT}")
    if constants.HF_HUB_OFFLINE:
        return _cached_copy(model_id, revision, cache_dir,
                            f"Cannot download {where}: offline mode is on (HF_HUB_OFFLINE) and the model is not "
                            f"in the cache {_cache_name(cache_dir)}.")
    try:
        # files_metadata: each file's size and hash, to check the disk and the download.
        info = HfApi().model_info(model_id, revision=revision, timeout=_PROBE_TIMEOUT_S, files_metadata=True)
    except (RepositoryNotFoundError, GatedRepoError, RevisionNotFoundError) as exc:
        raise InvalidModel(f"Cannot download {where} from {constants.ENDPOINT}: {_first_line(exc)}. "
                           f"{_LOCAL_HINT}") from exc
    except Exception as exc:  # connection refused, DNS, timeout, hub errors: all mean "not now"
        log.warning("hub lookup of %s failed: %s", model_id, exception_text(exc))
        return _cached_copy(model_id, revision, cache_dir,
                            f"Cannot download {where}: the hub {constants.ENDPOINT} could not be reached "
                            f"(waited at most {_PROBE_TIMEOUT_S:g}s; {type(exc).__name__}: {_first_line(exc)}), and the model "
                            f"is not in the cache {_cache_name(cache_dir)}.", unreachable=True)
    if not isinstance(info.sha, str) or not _COMMIT.match(info.sha):
        raise InvalidModel(f"The hub {constants.ENDPOINT} gave {where} a commit id that is not 40 hex digits: {str(info.sha)[:80]!r}")
    if prefer_safetensors and _has_shards(info):
        ignore_patterns = [*(ignore_patterns or []), *_BESIDE_SAFETENSORS]
    wanted = _wanted_files(where, info, ignore_patterns)
    repo_folder = _repo_folder(model_id, cache_dir)
    _remove_dead_partials(repo_folder)
    _check_disk_space(where, wanted, repo_folder)
    # Only what is not known good is checked: a model already in the cache and checked
    # is not read again at every launch (each wake of an on-demand model would re-hash
    # its weights); a blob left by a launch that failed or was cancelled is.
    # The blobs folder (and in it the marker of checked blobs) exists before a byte is
    # fetched: a download that fails leaves blobs the next launch then checks.
    try:
        os.makedirs(os.path.join(repo_folder, "blobs"), exist_ok=True)
    except OSError:
        pass
    verified = hub_integrity.verified_blobs(repo_folder)
    fetched = [s for s in wanted if hub_integrity.blob_name(s) not in verified]
    missing = [s for s in wanted if not hub_integrity.blob_present(repo_folder, s)]
    tracker = _ProgressTracker(sum(s.size or 0 for s in missing))
    outcome: dict = {}
    hub_integrity.guard_etags()

    def run():
        try:
            outcome["path"] = hub_retry.with_retries(
                lambda: snapshot_download(model_id, revision=info.sha, cache_dir=cache_dir,
                                          tqdm_class=tracker.bar_class(), ignore_patterns=ignore_patterns), where)
        except BaseException as exc:  # handed to the load thread, which reports it
            outcome["error"] = exc

    # In a thread: the hub's progress bars update from download workers, while
    # PROGRESS may only be sent from this (the work loop's) thread.
    worker = threading.Thread(target=run, name="hangar-download", daemon=True)
    worker.start()
    reported, received = -1.0, -1
    while worker.is_alive():
        worker.join(_REPORT_EVERY_S)
        done = tracker.fraction()
        # Every change of the bytes received is news, though the fraction may not move:
        # the control plane ends a load that sends nothing for HANGAR_LOAD_STALL_TIMEOUT_MS.
        if done > reported or tracker.bytes_done() != received:
            reported, received = max(done, reported), tracker.bytes_done()
            progress(DOWNLOAD_SHARE * reported, "download", f"Downloading {model_id}: {reported:.0%} ({_size(received)})")
    if "error" in outcome:
        exc = outcome["error"]
        # A hub that failed (busy, down, a connection dropped) after the retries: not the request's fault.
        failed = f"Downloading {where} from {constants.ENDPOINT} failed: {type(exc).__name__}: {_first_line(exc)}."
        if hub_retry.transient(exc):
            raise SourceUnreachable(f"{failed} Asked {len(hub_retry.WAITS_S)} more times; launch again later to resume "
                                    f"it (the files received are kept). {_LOCAL_HINT}") from exc
        raise InvalidModel(f"{failed} {_LOCAL_HINT}") from exc
    hub_integrity.verify(where, outcome["path"], fetched, repo_folder)
    hub_integrity.mark_verified(repo_folder, [hub_integrity.blob_name(s) for s in wanted if hub_integrity.blob_present(repo_folder, s)])
    # Downloading by commit writes no ref; without one the cache cannot answer "main"
    # (or the revision asked for) when the hub is out of reach or HF_HUB_OFFLINE is set.
    _remember_ref(repo_folder, revision or "main", info.sha)
    progress(DOWNLOAD_SHARE, "download", f"Downloaded {model_id}")
    return outcome["path"]


def _repo_folder(model_id: str, cache_dir: str | None) -> str:
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return os.path.join(cache_dir or constants.HF_HUB_CACHE, repo_folder_name(repo_id=model_id, repo_type="model"))


def _has_shards(info) -> bool:
    """Whether the repository's own weights are in safetensors: `model.safetensors`, its
    shards or their index, at the top (an adapter's or a projector's file elsewhere says
    nothing of the model's)."""
    names = [s.rfilename for s in (getattr(info, "siblings", None) or [])]
    return any("/" not in n and n.startswith("model") and (n.endswith(".safetensors") or n == "model.safetensors.index.json")
               for n in names)


def _wanted_files(where: str, info, ignore_patterns: list[str] | None) -> list:
    """The repository's files that snapshot_download will fetch (ignore_patterns applied),
    once the listing's names and hashes are found safe to use as paths."""
    from huggingface_hub.utils import filter_repo_objects

    # A mirror may leave the listing out: then nothing can be checked, and nothing is refused.
    siblings = list(getattr(info, "siblings", None) or [])
    hub_integrity.check_listing(where, siblings)
    names = set(filter_repo_objects([s.rfilename for s in siblings], ignore_patterns=ignore_patterns))
    return [s for s in siblings if s.rfilename in names]


def _remove_dead_partials(repo_folder: str) -> None:
    """Removes partial blobs no download has written to for _DEAD_PARTIAL_S.
    huggingface_hub (1.x) downloads each file to `<blob>.<random>.incomplete`, resumes it
    only within its own call, and removes it when that call fails; a runtime ended in
    the middle (a cancelled or stalled launch) leaves it, and nothing ever used or
    removed it: gigabytes per failed launch of a large model."""
    blobs = os.path.join(repo_folder, "blobs")
    try:
        names = os.listdir(blobs)
    except OSError:
        return
    now = time.time()
    for name in names:
        if not name.endswith(".incomplete"):
            continue
        path = os.path.join(blobs, name)
        try:
            idle = now - os.path.getmtime(path)
            if idle > _DEAD_PARTIAL_S:
                os.remove(path)
                log.info("removed %s, a partial download nobody had written to for %.0f s", path, idle)
        except OSError:
            pass


def _check_disk_space(where: str, wanted: list, repo_folder: str) -> None:
    """Refuses, before a byte is fetched, a download that cannot fit on the cache's disk.
    Blobs already in the cache need no room; a partial one does (huggingface_hub 1.x
    starts each file's download anew)."""
    blobs = os.path.join(repo_folder, "blobs")
    need = 0
    for sibling in wanted:
        name = hub_integrity.blob_name(sibling)
        if name and os.path.isfile(os.path.join(blobs, name)):
            continue
        need += max(0, sibling.size or 0)
    probe = repo_folder
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    free = shutil.disk_usage(probe).free
    if need > free:
        raise InvalidModel(f"Cannot download {where}: it needs {_size(need)} more on disk and {probe} has "
                           f"{_size(free)} free. Free some space (DELETE /v1/cache/models removes cached models) "
                           f"or set HANGAR_HOME to a bigger disk.")


def _remember_ref(repo_folder: str, ref: str, sha: str) -> None:
    if ref == sha:
        return
    target = os.path.join(repo_folder, "refs", ref)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = f"{target}.{os.getpid()}.tmp"
    with open(partial, "w") as f:
        f.write(sha)
    os.replace(partial, target)


def _size(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _cached_copy(model_id: str, revision: str | None, cache_dir: str | None, why: str,
                 unreachable: bool = False) -> str:
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(model_id, revision=revision, cache_dir=cache_dir, local_files_only=True)
    except Exception as exc:
        # The hub out of reach is "not now" (503); offline mode is the user's own setting (400).
        raise (SourceUnreachable if unreachable else InvalidModel)(f"{why} {_LOCAL_HINT}") from exc
    hub_integrity.verify_by_blob_names(f"{model_id}" + (f" (revision {revision})" if revision else ""), path,
                          _repo_folder(model_id, cache_dir))
    log.info("using the cached copy of %s at %s", model_id, path)
    return path


class _ProgressTracker:
    """Counts what snapshot_download's progress bars report, from any thread.

    It makes a byte bar (total grows as files start) and a bar counting finished
    files; either alone can mislead (one big file; bytes totals not known yet), so
    the larger of the two fractions is reported, and it never goes backwards."""

    def __init__(self, expected_bytes: int = 0):
        """expected_bytes: what the listing says is left to fetch (0: unknown). The
        bytes bar's own total grows as files start, so it cannot tell alone; and more
        than this (and some slack) stops the download: a hub that sends past what it
        declared would otherwise fill the disk before the size check at the end."""
        self._lock = threading.Lock()
        self._bars: list[_Bar] = []
        self._best = 0.0
        self._expected = expected_bytes

    def bar_class(self) -> type:
        tracker = self

        class Bar(_Bar):
            def __init__(self, *args, **kwargs):
                super().__init__(**kwargs)
                with tracker._lock:
                    tracker._bars.append(self)

            def update(self, n=1):
                with tracker._lock:  # download workers update bars concurrently
                    super().update(n)
                    over = tracker._expected > 0 and self.unit == "B" and self.n > tracker._expected + _OVERRUN_SLACK
                if over:
                    # Raised in the download worker: huggingface_hub ends that file's download.
                    raise OSError(f"the hub sent {_size(self.n)}, more than the {_size(tracker._expected)} its listing declared")

        return Bar

    def bytes_done(self) -> int:
        with self._lock:
            return int(max((bar.n for bar in self._bars if bar.unit == "B"), default=0))

    def fraction(self) -> float:
        with self._lock:
            for bar in self._bars:
                total = self._expected if bar.unit == "B" and self._expected > 0 else (bar.total or 0)
                if total > 0:
                    self._best = max(self._best, min(1.0, bar.n / total))
            return self._best


class _Bar:
    """Just enough of tqdm's interface for huggingface_hub, drawing nothing."""

    def __init__(self, total=None, initial=0, unit=None, **_ignored):
        self.total = total
        self.n = initial
        self.unit = unit
        self.format_dict = {"rate": None}

    def update(self, n=1):
        self.n += n or 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _ignore(self, *args, **kwargs):
        pass

    close = refresh = set_description = set_description_str = set_postfix = set_postfix_str = _ignore


def _cache_name(cache_dir: str | None) -> str:
    from huggingface_hub import constants

    return cache_dir or constants.HF_HUB_CACHE


def _first_line(exc: BaseException) -> str:
    return exception_text(exc).strip().splitlines()[0]
