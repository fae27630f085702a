"""A runtime started by the control plane leads its own process group, so whatever
an engine starts (vLLM's EngineCore process, a user launcher's helpers) is in it.
When the control plane is gone nobody else will end those children, so the runtime
ends its group itself on the way out; otherwise the control plane ends the group.

The runtime makes the group itself (`--process-group`): a runtime whose engine
computes on the CPU is started in the control plane's session, because a new
session (Node's `detached`) is a new autogroup on Linux and the scheduler would weigh
its threads against the control plane's as two equal groups, whatever priority the
engine runs at (compute_priority.py). One started with a session of its own leads
its group already."""

import logging
import os
import signal

log = logging.getLogger("hangar_runtime.watchdog")


def lead_own_group() -> None:
    """Become the leader of a new process group (pgid = our pid), in the same session."""
    try:
        os.setpgid(0, 0)
    except OSError as exc:  # already a session leader (started detached): it leads a group
        if os.getpgrp() != os.getpid():
            log.warning("could not start the runtime's own process group: %s", exc)


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
