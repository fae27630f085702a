"""Hangar's Python runtime: one process per model replica, driven by the control
plane over ZeroMQ. The wire agreement is docs/runtime-protocol.md."""
