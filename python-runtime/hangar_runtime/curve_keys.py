"""CURVE keys for a runtime that reaches its control plane over the network
(cluster mode, docs/runtime-protocol.md "Transport and security").

The control plane hands them over in the environment, never on the command line
(which any user of the node can read with ps). They are removed from the
environment at once, so a user's launcher and any process it starts never see
the cluster's secret."""

import os
from dataclasses import dataclass

import zmq

SERVER_KEY_ENV = "HANGAR_CURVE_SERVER_KEY"
PUBLIC_KEY_ENV = "HANGAR_CURVE_PUBLIC_KEY"
SECRET_KEY_ENV = "HANGAR_CURVE_SECRET_KEY"
_NAMES = (SERVER_KEY_ENV, PUBLIC_KEY_ENV, SECRET_KEY_ENV)


class BadCurveKeys(ValueError):
    """The keys are half given or not Z85 keys: a launch error, not a runtime one."""


@dataclass(frozen=True)
class CurveKeys:
    server_public: bytes
    public: bytes
    secret: bytes

    def apply(self, sock: zmq.Socket) -> None:
        """Makes `sock` a CURVE client of the control plane; call before connect."""
        sock.curve_serverkey = self.server_public
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret


def take_from_environment(environ=os.environ) -> CurveKeys | None:
    """The keys, removed from `environ`; None when none is set (local mode, plain ipc://)."""
    values = {name: environ.pop(name, "") for name in _NAMES}
    given = [name for name, value in values.items() if value]
    if not given:
        return None
    if len(given) != len(_NAMES):
        missing = ", ".join(name for name in _NAMES if name not in given)
        raise BadCurveKeys(f"CURVE keys are incomplete: {missing} not set")
    for name, value in values.items():
        if len(value) != 40:
            raise BadCurveKeys(f"{name} must be a 40-character Z85 key, got {len(value)} characters")
    if not zmq.has("curve"):
        raise BadCurveKeys("this libzmq was built without CURVE; cluster mode needs it")
    return CurveKeys(*(values[name].encode("ascii") for name in _NAMES))
