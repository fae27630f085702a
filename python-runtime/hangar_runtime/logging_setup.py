"""Log lines for the control plane, which forwards each stderr line to its own
JSON log: one human-readable line per record, prefixed with the replica uid."""

import logging
import os
import sys

# The runtime's own level (its loggers are all under "hangar_runtime"), e.g.
# DEBUG to see each batch an engine runs; libraries stay at INFO either way.
LEVEL_ENV = "HANGAR_RUNTIME_LOG_LEVEL"


class _OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        # A traceback spread over many lines would reach the control plane as many
        # unrelated records; escaped newlines keep it one record, still readable.
        return super().format(record).replace("\r\n", "\n").replace("\n", "\\n")


def setup_logging(replica: str, level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.__stderr__)
    prefix = replica.replace("%", "%%")
    handler.setFormatter(_OneLineFormatter(f"[{prefix}] %(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    own = os.environ.get(LEVEL_ENV, "").upper()
    if own:
        if isinstance(logging.getLevelName(own), int):
            logging.getLogger("hangar_runtime").setLevel(own)
        else:
            logging.getLogger("hangar_runtime").warning("ignoring %s=%s: not a log level", LEVEL_ENV, own)
