"""The two messages the agent sends before it serves requests (docs/cluster.md)."""

import json


def ready(out, ray_version: str, node_ip: str) -> None:
    out.write(json.dumps({"event": "ready", "ray_version": ray_version, "node_ip": node_ip}) + "\n")
    out.flush()


def fatal(out, message: str) -> None:
    out.write(json.dumps({"event": "fatal", "message": message}) + "\n")
    out.flush()
