"""Downloads a ModelScope repository through its HTTP API, the calls the `modelscope`
package makes (its `hub/api.py`), which is not installable here:

- `GET {endpoint}/api/v1/models/{id}/repo/files?Revision={rev}&Recursive=true`: the
  files, each with `Path`, `Size`, `Sha256` and `Type` (`blob` or `tree`);
- `GET {endpoint}/api/v1/models/{id}/repo?Revision={rev}&FilePath={path}`: one file,
  with `Range: bytes=N-` to resume a cut download.

The endpoint is `HANGAR_MODELSCOPE_ENDPOINT` (default https://www.modelscope.cn); the
revision is the spec's `model_revision`, else `master`. Files go where the modelscope
package puts them with `MODELSCOPE_CACHE=<cache>/modelscope`:
`<cache>/modelscope/models/<org>/<name>/`, which the cache routes list. A file is
written as `<file>.incomplete`, resumed from its size, checked against `Sha256` and
renamed; `.hangar-modelscope.json` beside the files records a finished download, so a
model downloaded once loads with ModelScope out of reach."""

import fnmatch
import hashlib
import json
import logging
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request

from ..errors import InvalidModel, SourceUnreachable, exception_text
from . import hub_retry
from .base import Progress

log = logging.getLogger("hangar_runtime.modelscope")

DEFAULT_ENDPOINT = "https://www.modelscope.cn"
DOWNLOAD_SHARE = 0.8  # of the load's progress, as for the Hugging Face hub
MANIFEST = ".hangar-modelscope.json"
_PROBE_TIMEOUT_S = 5.0
_READ_TIMEOUT_S = 60.0
_REPORT_EVERY_S = 0.5
_CHUNK = 1 << 20
_LOCAL_HINT = "Download the model on a machine that can reach ModelScope and launch it from a local folder with model_path."


def endpoint() -> str:
    return (os.environ.get("HANGAR_MODELSCOPE_ENDPOINT") or os.environ.get("MODELSCOPE_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def model_folder(model_id: str, revision: str | None, cache_dir: str, progress: Progress,
                 ignore_patterns: list[str] | None = None) -> str:
    """The folder holding the repository's files (those not ignored), downloaded if need be."""
    revision = revision or "master"
    folder = os.path.join(cache_dir, "modelscope", "models", *model_id.split("/"))
    where = f"{model_id} (revision {revision})"
    base = endpoint()
    progress(0.0, "download", f"Looking up {where} on {base}")
    try:
        files = _list_files(base, model_id, revision)
    except _NotFound as exc:
        raise InvalidModel(f"Cannot download {where} from {base}: {exc}. {_LOCAL_HINT}") from exc
    except (OSError, ValueError) as exc:  # refused, DNS, timeout, a body that is not the API's
        log.warning("ModelScope lookup of %s failed: %s", model_id, exception_text(exc))
        return _cached_copy(folder, where, f"ModelScope ({base}) could not be reached "
                                           f"(waited at most {_PROBE_TIMEOUT_S:g}s; {type(exc).__name__}: {exc})")
    wanted = [f for f in files if not _ignored(f["Path"], ignore_patterns)]
    os.makedirs(folder, exist_ok=True)
    missing = [f for f in wanted if not _complete(folder, f)]
    _check_disk_space(where, missing, folder)
    total = sum(f["Size"] for f in missing) or 1
    done = 0
    last_report = 0.0
    for f in missing:
        before = done

        def advance(at: int, before=before) -> None:
            """This file's bytes on disk are `at` (a retry resumes: nothing counted twice)."""
            nonlocal done, last_report
            done = before + at
            now = time.monotonic()
            if now - last_report >= _REPORT_EVERY_S:
                last_report = now
                progress(DOWNLOAD_SHARE * min(1.0, done / total), "download", f"Downloading {model_id}: {done / total:.0%}")

        try:
            # A dropped connection or a busy hub is asked again from where it stopped (hub_retry.py).
            hub_retry.with_retries(lambda f=f, advance=advance: _fetch(base, model_id, revision, folder, f, advance), where)
        except InvalidModel:
            raise
        except Exception as exc:
            failed = f"Downloading {f['Path']} of {where} from {base} failed after {_size(done)}: {type(exc).__name__}: {exc}."
            if hub_retry.transient(exc):
                raise SourceUnreachable(f"{failed} Asked {len(hub_retry.WAITS_S)} more times; launch again later to resume it.") from exc
            if isinstance(exc, (OSError, ValueError)):
                raise InvalidModel(f"{failed} Launch again to resume it.") from exc
            raise
    _write_manifest(folder, model_id, revision, wanted)
    progress(DOWNLOAD_SHARE, "download", f"Downloaded {model_id}")
    return folder


class _NotFound(Exception):
    pass


def _request(url: str, timeout: float, headers: dict | None = None):
    req = urllib.request.Request(url, headers={"User-Agent": "hangar", **(headers or {})})
    token = os.environ.get("MODELSCOPE_API_TOKEN")
    if token:
        # Unredirected: urllib copies ordinary headers onto every redirect, to any host
        # (ModelScope sends files to its CDN), and the token went with them.
        req.add_unredirected_header("Authorization", f"Bearer {token}")
    return urllib.request.urlopen(req, timeout=timeout)


def _api(base: str, model_id: str) -> str:
    return f"{base}/api/v1/models/{urllib.parse.quote(model_id, safe='/')}"


def _list_files(base: str, model_id: str, revision: str) -> list[dict]:
    url = f"{_api(base, model_id)}/repo/files?" + urllib.parse.urlencode({"Revision": revision, "Recursive": "true"})
    try:
        with _request(url, _PROBE_TIMEOUT_S) as res:
            body = json.loads(res.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403, 404):
            raise _NotFound(f"HTTP {exc.code}: no such model or revision, or it is private") from exc
        raise
    if not isinstance(body, dict) or body.get("Code", 200) != 200 or not isinstance(body.get("Data"), dict):
        message = body.get("Message") if isinstance(body, dict) else None
        raise _NotFound(f"the listing answered {message or 'no files'}")
    files = []
    for f in body["Data"].get("Files") or []:
        if not isinstance(f, dict) or f.get("Type") == "tree" or not isinstance(f.get("Path"), str):
            continue
        path = f["Path"]
        # Paths come from the server: nothing may land outside the model's folder.
        if path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"the listing names a path outside the repository: {path!r}")
        files.append({"Path": path, "Size": int(f.get("Size") or 0), "Sha256": f.get("Sha256") or None})
    return files


def _ignored(path: str, patterns: list[str] | None) -> bool:
    return bool(patterns) and any(fnmatch.fnmatch(path, p) for p in patterns)


def _complete(folder: str, f: dict) -> bool:
    target = os.path.join(folder, f["Path"])
    return os.path.isfile(target) and os.path.getsize(target) == f["Size"]


def _fetch(base: str, model_id: str, revision: str, folder: str, f: dict, advance) -> None:
    target = os.path.join(folder, f["Path"])
    partial = target + ".incomplete"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    have = os.path.getsize(partial) if os.path.isfile(partial) else 0
    if have > f["Size"]:
        os.remove(partial)
        have = 0
    url = f"{_api(base, model_id)}/repo?" + urllib.parse.urlencode({"Revision": revision, "FilePath": f["Path"]})
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        res = _request(url, _READ_TIMEOUT_S, headers)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have == f["Size"]:
            res = None
        else:
            raise
    if res is not None:
        with res:
            # A server that ignores Range sends the whole file: start again from its first byte.
            resumed = bool(have) and res.status == 206
            at = have if resumed else 0
            advance(at)
            with open(partial, "ab" if resumed else "wb") as out:
                for block in iter(lambda: res.read(_CHUNK), b""):
                    out.write(block)
                    at += len(block)
                    advance(at)
    size = os.path.getsize(partial)
    if size < f["Size"]:
        # The connection ended early (a cut): asked again from here (hub_retry.transient).
        raise ConnectionError(f"the connection ended after {size} of {f['Size']} bytes")
    if size != f["Size"]:
        raise ValueError(f"got {size} of {f['Size']} bytes")
    if f["Sha256"]:
        digest = hashlib.sha256()
        with open(partial, "rb") as data:
            for block in iter(lambda: data.read(_CHUNK), b""):
                digest.update(block)
        if digest.hexdigest() != f["Sha256"]:
            os.remove(partial)
            raise InvalidModel(f"Downloaded {f['Path']} of {model_id}, but it did not match ModelScope's sha256; the bad "
                               f"copy was removed. Launch again to fetch it anew.")
    os.replace(partial, target)


def _write_manifest(folder: str, model_id: str, revision: str, files: list[dict]) -> None:
    partial = os.path.join(folder, f"{MANIFEST}.{os.getpid()}.tmp")
    with open(partial, "w") as out:
        json.dump({"model_id": model_id, "revision": revision, "files": files}, out)
    os.replace(partial, os.path.join(folder, MANIFEST))


def _cached_copy(folder: str, where: str, why: str) -> str:
    """A download finished before (its manifest, and every file it names at its size), else the launch fails."""
    try:
        with open(os.path.join(folder, MANIFEST)) as f:
            manifest = json.load(f)
        if all(_complete(folder, entry) for entry in manifest["files"]):
            log.info("using the cached copy of %s at %s", where, folder)
            return folder
    except (OSError, ValueError, KeyError, TypeError):
        pass
    # Only called when ModelScope could not be reached: "not now" (503), not a bad model.
    raise SourceUnreachable(f"Cannot download {where}: {why}, and the model is not in the cache {folder}. {_LOCAL_HINT}")


def _check_disk_space(where: str, missing: list[dict], folder: str) -> None:
    need = 0
    for f in missing:
        partial = os.path.join(folder, f["Path"] + ".incomplete")
        need += max(0, f["Size"] - (os.path.getsize(partial) if os.path.isfile(partial) else 0))
    free = shutil.disk_usage(folder).free
    if need > free:
        raise InvalidModel(f"Cannot download {where}: it needs {_size(need)} more on disk and {folder} has "
                           f"{_size(free)} free. Free some space (DELETE /v1/cache/models removes cached models) "
                           f"or set HANGAR_HOME to a bigger disk.")


def _size(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"
