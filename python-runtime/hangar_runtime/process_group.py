"""A runtime started by the control plane leads its own process group, so whatever
an engine starts (vLLM's EngineCore process, a user launcher's helpers) is in it.
When the control plane is gone nobody else will end those children, so the runtime
ends its group itself on the way out; otherwise the control plane ends the group."""

import logging
import os
import signal

log = logging.getLogger("hangar_runtime.watchdog")


def end_own_group() -> None:
    """SIGKILL our whole group, ourselves included (we are exiting anyway), if we
    lead one; never a group we only joined (a runtime run by hand or by a test shares
    its caller's). Returns only when there is no group of ours to end."""
    try:
        if os.getpgrp() != os.getpid():
            return
        logging.shutdown()  # the last lines out before the signal
        os.killpg(os.getpid(), signal.SIGKILL)
    except Exception as exc:  # the caller must still get to exit
        log.warning("could not end the runtime's process group: %s", exc)
