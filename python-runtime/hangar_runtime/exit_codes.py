"""Process exit codes; the control plane reads them to tell why a runtime went away."""

SHUTDOWN = 0
BAD_COMMAND_LINE = 2
LOAD_FAILED = 3
CONTROL_PLANE_GONE = 4
WORK_LOOP_DIED = 5
