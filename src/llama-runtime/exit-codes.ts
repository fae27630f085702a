/** The runtime's exit codes (docs/runtime-protocol.md, "Exit codes"), the Python runtime's. */
export const ExitCode = {
  SHUTDOWN: 0,
  BAD_COMMAND_LINE: 2,
  LOAD_FAILED: 3,
  CONTROL_PLANE_GONE: 4,
  WORK_LOOP_DIED: 5,
} as const;
