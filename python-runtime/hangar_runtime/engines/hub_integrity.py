"""What a hub download may trust: file names inside the repository, ETags that are
hashes, and blobs that match the hash they are named by (docs/on-demand.md, "The
weights cache without the hub"). A hub is not trusted with paths: huggingface_hub
joins the names and ETags it sends to the cache folder."""

import hashlib
import os
import re

from ..errors import InvalidModel

# huggingface_hub names a file's blob by the ETag the hub sends (the sha256 of an LFS
# file, else the git blob id) and does not check it: `../../x` wrote outside the cache.
SAFE_ETAG = re.compile(r"^[A-Za-z0-9_-]{1,128}$", re.ASCII)
# Blobs checked against their hash, by name, kept beside them: a blob that arrived
# during a launch that then failed or was cancelled is checked by the next one.
_VERIFIED_FILE = ".hangar-verified"


def check_listing(where: str, siblings: list) -> None:
    """Refuses a listing with a file name that is no path inside the repository
    (absolute, `..`, a backslash) or a hash that is no file name: the hash check joins
    names to the snapshot's folder, and removed what such a name pointed at outside it."""
    unsafe = [s.rfilename for s in siblings if not inside_repository(s.rfilename)]
    if unsafe:
        raise InvalidModel(f"Cannot download {where}: the hub listed file names that are not paths inside the "
                           f"repository: {', '.join(repr(n)[:80] for n in unsafe[:3])}")
    bad_hash = [s.rfilename for s in siblings if blob_name(s) is not None and not SAFE_ETAG.match(blob_name(s))]
    if bad_hash:
        raise InvalidModel(f"Cannot download {where}: the hub gave {', '.join(bad_hash[:3])} a hash that is no file name")


def inside_repository(name) -> bool:
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def guard_etags() -> None:
    """Refuses an ETag that is not one path component before huggingface_hub names a
    blob by it. Installed once, around the one function every download's metadata
    comes through (HEAD, or the tree listing for Xet files); a huggingface_hub without
    it fails here, loudly, rather than download unguarded."""
    from huggingface_hub import file_download

    original = file_download._get_metadata_or_catch_error
    if getattr(original, "hangar_guarded", False):
        return

    def guarded(*args, **kwargs):
        result = original(*args, **kwargs)
        etag = result[1]
        if etag is not None and not (isinstance(etag, str) and SAFE_ETAG.match(etag)):
            raise ValueError(f"the hub answered an ETag that is not a file hash: {str(etag)[:80]!r}")
        return result

    guarded.hangar_guarded = True
    file_download._get_metadata_or_catch_error = guarded


def verified_blobs(repo_folder: str) -> set[str]:
    """The blobs known good. A cache kept before the marker existed has none: its blobs
    are adopted as they are, as they were trusted then (re-hashing every cached model
    at its next launch, with no progress, could run past the load's stall timeout);
    the marker is written at a download's start from then on, so what a launch that
    fails leaves behind is checked by the next."""
    known = _read_marker(repo_folder)
    if known is not None:
        return known
    present = [n for n in _listdir(os.path.join(repo_folder, "blobs")) if SAFE_ETAG.match(n)]
    mark_verified(repo_folder, present, create=True)
    return set(present)


def _read_marker(repo_folder: str) -> set[str] | None:
    """The names the marker holds; None where there is no marker (a cache from before it)."""
    try:
        with open(os.path.join(repo_folder, "blobs", _VERIFIED_FILE)) as f:
            return {line.strip() for line in f if line.strip()}
    except FileNotFoundError:
        return None
    except OSError:
        return set()


def mark_verified(repo_folder: str, names: list, create: bool = False) -> None:
    """Best effort: a cache that cannot be written (full, read-only) costs a hash at the
    next launch, never this one."""
    blobs = os.path.join(repo_folder, "blobs")
    marker = os.path.join(blobs, _VERIFIED_FILE)
    known = _read_marker(repo_folder) or set()
    new = {n for n in names if n} - known
    if (not new and not create) or not os.path.isdir(blobs):
        return
    # Written whole and renamed: two runtimes of one model may finish at once (the
    # loser's names are checked again next time, which costs a hash, not a mistake).
    partial = os.path.join(blobs, f"{_VERIFIED_FILE}.{os.getpid()}.tmp")
    try:
        with open(partial, "w") as f:
            f.write("".join(f"{n}\n" for n in sorted(known | new)))
        os.replace(partial, marker)
    except OSError:
        pass


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def blob_name(sibling) -> str | None:
    """The name huggingface_hub stores a file's blob under: the LFS sha256, else the git blob id."""
    lfs = getattr(sibling, "lfs", None)
    sha256 = getattr(lfs, "sha256", None) if lfs is not None else None
    return sha256 or getattr(sibling, "blob_id", None)


def blob_present(repo_folder: str, sibling) -> bool:
    name = blob_name(sibling)
    return bool(name) and os.path.isfile(os.path.join(repo_folder, "blobs", name))


def verify(where: str, snapshot: str, wanted: list, repo_folder: str) -> None:
    """Checks every file against the hub's hash (sha256 for LFS files, the git blob id
    for the rest). A file that does not match is removed, so it is fetched again
    rather than loaded, and the launch fails naming it."""
    bad = []
    blobs = os.path.realpath(os.path.join(repo_folder, "blobs"))
    for sibling in wanted:
        path = os.path.join(snapshot, sibling.rfilename)
        if not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if os.path.dirname(real) != blobs:
            # Not one of the cache's blobs (a copy laid out by hand): checked, never removed.
            real = None
        lfs = getattr(sibling, "lfs", None)
        sha256 = getattr(lfs, "sha256", None) if lfs is not None else None
        expected = sha256 or getattr(sibling, "blob_id", None)
        if not expected:
            continue
        if _content_hash(path, git_blob=not sha256) != expected:
            bad.append(sibling.rfilename)
            _remove(path, real)
    if bad:
        raise InvalidModel(f"Downloaded {where}, but {', '.join(bad)} did not match the hub's hash; the bad "
                           f"copies were removed. Launch again to fetch them anew.")


def _content_hash(path: str, git_blob: bool) -> str:
    """A file's sha256 (an LFS file's name on the hub), or its git blob id."""
    digest = hashlib.sha1(b"blob %d\0" % os.path.getsize(path)) if git_blob else hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _remove(*paths: str | None) -> None:
    for path in paths:
        try:
            if path is not None:
                os.remove(path)
        except OSError:
            pass


def verify_by_blob_names(where: str, snapshot: str, repo_folder: str) -> None:
    """The cached copy's blobs not yet checked, against the hash each is named by (the
    sha256 of an LFS file, else its git blob id): with no hub to list them, a blob a
    failed download left must still not be loaded."""
    verified = verified_blobs(repo_folder)
    blobs = os.path.realpath(os.path.join(repo_folder, "blobs"))
    good, bad = [], []
    for root, _dirs, names in os.walk(snapshot):
        for name in names:
            path = os.path.join(root, name)
            real = os.path.realpath(path)
            blob = os.path.basename(real)
            if os.path.dirname(real) != blobs or blob in verified or not os.path.isfile(real):
                continue
            if len(blob) not in (40, 64):
                continue
            if _content_hash(real, git_blob=len(blob) == 40) == blob:
                good.append(blob)
                continue
            bad.append(os.path.relpath(path, snapshot))
            _remove(path, real)
    mark_verified(repo_folder, good)
    if bad:
        raise InvalidModel(f"The cached copy of {where} has files that do not match their hash: {', '.join(bad)}; "
                           f"they were removed. Launch again with the hub reachable to fetch them anew.")
