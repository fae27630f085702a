"""The agent's requests (start, stop, info) and the watch over every actor it
started. One thread per request, so a start waiting for Ray to place an actor
never holds up a stop; one monitor thread reports actors and runtimes that end."""

import json
import logging
import threading
import time
from dataclasses import dataclass

import ray
from ray.exceptions import RayActorError

from . import placement
from .runtime_actor import RuntimeActor

log = logging.getLogger("hangar_cluster")

# Actor methods that may run at once: start or wait, plus stop while wait blocks.
_ACTOR_CONCURRENCY = 4
_MONITOR_POLL_S = 0.5
_FIT_SETTLE_S = 3.0
# How long a replica's resources stay held after its actor is asked of Ray: Ray's free
# counts show an actor scheduled at once within about a second.
_HOLD_AFTER_S = 2.0


@dataclass
class Placed:
    actor: object
    wait_ref: object
    info: dict


class Agent:
    def __init__(self, out, runtime_root: str, placement_timeout_s: float):
        self._out = out
        self._out_lock = threading.Lock()
        self._runtime_root = runtime_root
        self._placement_timeout_s = placement_timeout_s
        self._placed: dict[str, Placed] = {}
        self._lock = threading.Lock()
        # Resources promised to replicas being placed: [ask, held until (None: not yet asked of Ray)].
        self._holds: list[list] = []
        self._remote_actor = ray.remote(RuntimeActor)

    # ---- stdout, one JSON object per line ----

    def emit(self, message: dict) -> None:
        line = json.dumps(message, separators=(",", ":"))
        with self._out_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def serve(self, lines) -> None:
        threading.Thread(target=self._monitor, name="hangar-monitor", daemon=True).start()
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
            except json.JSONDecodeError as exc:
                self.emit({"event": "bad_request", "message": f"not JSON: {exc}"})
                continue
            threading.Thread(target=self._handle, args=(request,), daemon=True).start()
        # stdin closed: the control plane is gone or stopping. Our actors go with us
        # (Ray ends a driver's actors when it disconnects); killing them first is faster.
        self.stop_all()

    def _handle(self, request: dict) -> None:
        rid = request.get("id")
        op = request.get("op")
        handler = {"start": self._start, "stop": self._stop, "info": self._info}.get(op)
        try:
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            self.emit({"id": rid, "ok": True, "result": handler(request)})
        except placement.NoFit as exc:
            self.emit({"id": rid, "ok": False, "kind": "no_fit", "message": str(exc)})
        except Exception as exc:  # every failure is an answer, never a dead agent
            log.exception("request %s failed", op)
            self.emit({"id": rid, "ok": False, "kind": "failed", "message": f"{type(exc).__name__}: {exc}"})

    # ---- requests ----

    def _info(self, _request: dict) -> dict:
        return {"nodes": placement.nodes()}

    def _start(self, request: dict) -> dict:
        replica = str(request["replica"])
        ask = placement.Ask(float(request.get("num_cpus", 1)), float(request.get("num_gpus", 0)),
                            request.get("worker_ip") or None)
        strategy, hold = self._strategy(ask)
        try:
            return self._place(replica, request, ask, strategy, hold)
        except BaseException:
            self._release(hold, 0.0)  # nothing of it is Ray's now
            raise

    def _release(self, hold: list, after_s: float) -> None:
        """Ends a hold `after_s` from now (or sooner, if it already ends sooner)."""
        with self._lock:
            until = time.monotonic() + after_s
            hold[1] = until if hold[1] is None else min(hold[1], until)

    def _place(self, replica: str, request: dict, ask: placement.Ask, strategy, hold: list) -> dict:
        actor = self._remote_actor.options(
            num_cpus=ask.num_cpus, num_gpus=ask.num_gpus, scheduling_strategy=strategy,
            max_concurrency=_ACTOR_CONCURRENCY, max_restarts=0,
        ).remote()
        # Ray takes the actor's resources as it schedules it, at once when they are free;
        # its free counts show that within a second or so: the hold lasts that long.
        self._release(hold, _HOLD_AFTER_S)
        started = actor.start.remote(self._runtime_root, list(request["args"]), dict(request.get("env", {})),
                                     ask.num_gpus == 0, list(request.get("command") or []))
        done, _ = ray.wait([started], timeout=self._placement_timeout_s)
        if not done:
            ray.kill(actor)
            free = "; ".join(placement.describe_free(n) for n in placement.nodes())
            raise placement.NoFit(f"asked for {ask.describe()}; Ray could not place it within "
                                  f"{self._placement_timeout_s:g} s; free: {free}")
        try:
            info = ray.get(started)
        except BaseException:
            ray.kill(actor)
            raise
        with self._lock:
            previous = self._placed.pop(replica, None)
            self._placed[replica] = Placed(actor, actor.wait.remote(), info)
        if previous is not None:  # a restart that came before we saw the old one end
            ray.kill(previous.actor)
        return info

    def _strategy(self, ask: placement.Ask):
        """The strategy, and a hold on the ask's resources ([ask, until]) that later
        checks count as taken until Ray's own counts show them."""
        # Ray's view of free resources trails by up to a second or so (a replica just
        # stopped still looks busy): only a shortage that lasts is a NoFit.
        deadline = time.monotonic() + _FIT_SETTLE_S
        while True:
            try:
                live = placement.nodes()
                # Checked and held at once: two replicas cannot both take the last CPU.
                with self._lock:
                    now = time.monotonic()
                    self._holds = [h for h in self._holds if h[1] is None or h[1] > now]
                    strategy = placement.strategy_for(ask, live, [h[0] for h in self._holds])
                    hold = [ask, None]
                    self._holds.append(hold)
                return strategy, hold
            except placement.NoFit:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.25)

    def _stop(self, request: dict) -> dict:
        replica = str(request["replica"])
        grace = float(request.get("grace_s", 3.0))
        with self._lock:
            placed = self._placed.pop(replica, None)
        if placed is None:
            return {"stopped": False}
        try:
            ray.get(placed.actor.stop.remote(grace), timeout=grace + 5)
        except Exception:  # the actor or its node is already gone
            pass
        ray.kill(placed.actor)
        return {"stopped": True}

    def stop_all(self) -> None:
        with self._lock:
            placed = list(self._placed.values())
            self._placed.clear()
        for p in placed:
            try:
                ray.kill(p.actor)
            except Exception:
                pass

    # ---- the watch ----

    def _monitor(self) -> None:
        while True:
            with self._lock:
                watched = {p.wait_ref: (replica, p) for replica, p in self._placed.items()}
            if not watched:
                time.sleep(_MONITOR_POLL_S)
                continue
            done, _ = ray.wait(list(watched), num_returns=1, timeout=_MONITOR_POLL_S)
            for ref in done:
                replica, placed = watched[ref]
                with self._lock:
                    current = self._placed.get(replica)
                    if current is not placed:
                        continue  # stopped on purpose, or already replaced by a restart
                    del self._placed[replica]
                self.emit({"event": "exited", "replica": replica, "reason": _why(ref, placed.info)})
                try:
                    ray.kill(placed.actor)  # the runtime ended but the actor still holds its resources
                except Exception:
                    pass


def _why(ref, info: dict) -> str:
    where = f"on Ray node {info.get('node_ip')} ({str(info.get('node_id', ''))[:8]})"
    try:
        code = ray.get(ref)
    except RayActorError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"its Ray actor {where} died (node lost or worker killed): {first}"
    except Exception as exc:
        return f"its Ray actor {where} failed: {type(exc).__name__}"
    return f"the runtime process {where} ended (exit code {code})"
