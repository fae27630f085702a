"""Where a LOAD's model_uri points on this machine. Only local files exist in this
version: a plain absolute path or a file:// URI."""

import os
from urllib.parse import unquote, urlparse

from ..errors import InvalidModel


def local_path(model_uri) -> str:
    if not isinstance(model_uri, str) or not model_uri:
        raise InvalidModel("The load spec has no model_uri")
    if model_uri.startswith("file://"):
        parsed = urlparse(model_uri)
        if parsed.netloc not in ("", "localhost"):
            raise InvalidModel(f"file:// URIs naming another host are not supported: {model_uri}")
        path = unquote(parsed.path)
    elif "://" in model_uri:
        raise InvalidModel(f"Unsupported model_uri (use an absolute path or a file:// URI): {model_uri}")
    else:
        path = model_uri
    # The runtime's working directory is the control plane's choice, so a relative
    # path would point somewhere nobody meant.
    if not os.path.isabs(path):
        raise InvalidModel(f"model_uri must be an absolute path: {model_uri}")
    return os.path.normpath(path)
