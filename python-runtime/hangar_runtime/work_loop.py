"""The work loop, on the main thread: wait for LOAD, load the engine, then run
CALLs one at a time in arrival order, or, for an engine that batches, hand them
to its scheduler and step it between checks of the inbox. It only ever talks
through the Outbox; the I/O thread owns the sockets."""

import logging
import os
import queue
import threading
from collections.abc import Iterator

from . import exit_codes, protocol
from .aborts import AbortRegistry
from .call_abort import CallAborted, running_call
from .batch_calls import BatchedCalls
from .compute_priority import lower_compute_priority
from .compute_threads import apply_cpu_threads
from .engines.base import Engine
from .engines.registry import engine_class
from .errors import InvalidModel, SourceUnreachable, exception_text
from .outbox import Outbox
from .plain_values import to_plain
from .replies import Replies
from .runtime_stats import RuntimeStats

log = logging.getLogger("hangar_runtime.work")

# Put on the inbox by a scheduler's wake(): not a message, the end of a wait.
_WAKE = (None, None)


class WorkLoop:
    def __init__(self, inbox: queue.Queue, outbox: Outbox, aborts: AbortRegistry, stopping: threading.Event,
                 stats: RuntimeStats | None = None):
        self._inbox = inbox
        self._outbox = outbox
        self._replies = Replies(outbox, stats)
        self._aborts = aborts
        self._stopping = stopping
        self._methods: dict | None = None  # set once an engine is loaded
        self._batch: BatchedCalls | None = None  # set once a batching engine is loaded
        self._engine: Engine | None = None  # closed when the loop stops

    def run(self) -> int:
        """Returns the process exit code."""
        try:
            return self._run()
        except BaseException as exc:  # anything escaping here means the loop is gone
            log.critical("work loop died", exc_info=True)
            try:
                self._outbox.control(protocol.DEAD, {"message": f"Work loop died: {exception_text(exc)}"})
            except Exception:
                log.exception("could not send DEAD")
            self._close_engine()
            return exit_codes.WORK_LOOP_DIED

    def _run(self) -> int:
        while True:
            msg_type, body = self._next_message()
            if msg_type is None:
                continue
            if msg_type == protocol.SHUTDOWN or self._stopping.is_set():
                self._close_engine()
                return exit_codes.SHUTDOWN
            if msg_type == protocol.LOAD:
                if self._methods is not None:
                    log.warning("ignoring a second LOAD: this runtime already holds a model")
                elif not self._load(body):
                    return exit_codes.LOAD_FAILED
            elif msg_type == protocol.CALL:
                self._call(body)

    def _next_message(self) -> tuple:
        """The next inbox message; (None, None) after a batch step instead."""
        if self._batch is not None and self._batch.busy():
            # Never block past the next step while calls are waiting: new ones join
            # at it. A scheduler gathering a window asks for a bounded wait instead
            # of a step now; an arriving message ends the wait at once.
            wait = self._batch.wait_before_step()
            try:
                return self._inbox.get(timeout=wait) if wait > 0 else self._inbox.get_nowait()
            except queue.Empty:
                self._batch.step()
                return None, None
        return self._inbox.get()

    def _close_engine(self) -> None:
        engine, self._engine = self._engine, None
        if engine is None:
            return
        try:
            engine.close()
        except Exception:
            log.warning("closing the engine raised", exc_info=True)

    # ---- load ----

    def _load(self, spec: dict) -> bool:
        log.info("loading %s with engine %s", spec.get("model_uid"), spec.get("engine"))
        try:
            apply_cpu_threads(spec)
            cls = engine_class(spec.get("engine"))
            # Every relaying thread has started by now (they keep the runtime's priority),
            # and the engine has not started its pools yet (they inherit the lower one).
            if cls.cpu_bound:
                nice, policy = lower_compute_priority()
                log.info("the work loop computes at nice +%d, %s policy", nice, policy)
            engine: Engine = cls()
            engine.load(spec, self._progress)
            methods = engine.methods()
            scheduler = engine.scheduler()
            abilities = [str(a) for a in engine.abilities]
            description = to_plain(engine.describe())
        except InvalidModel as exc:
            log.error("load failed: %s", exception_text(exc))
            return self._load_failed("unavailable" if isinstance(exc, SourceUnreachable) else "invalid", exception_text(exc))
        # BaseException: whatever happens, the control plane gets READY or LOAD_FAILED.
        except BaseException as exc:
            log.error("load failed", exc_info=True)
            return self._load_failed("internal", exception_text(exc))
        self._methods = methods
        self._engine = engine
        if scheduler is not None:
            self._use_scheduler(scheduler)
        self._outbox.data(protocol.READY, {
            "protocol": protocol.PROTOCOL_VERSION, "pid": os.getpid(), "engine": engine.name,
            "abilities": abilities, "description": description,
        })
        log.info("ready: engine %s, methods %s", engine.name, ", ".join(methods))
        return True

    def _use_scheduler(self, scheduler) -> None:
        self._batch = BatchedCalls(scheduler, self._replies, self._aborts)
        # The marker only ends a wait on the inbox: _run skips it and the loop steps.
        scheduler.set_wake(lambda: self._inbox.put(_WAKE))

    def _load_failed(self, kind: str, message: str) -> bool:
        self._outbox.data(protocol.LOAD_FAILED, {"kind": kind, "message": message})
        return False

    def _progress(self, fraction: float, stage: str, message: str = "") -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        self._outbox.data(protocol.PROGRESS, {"progress": fraction, "stage": stage, "message": str(message)})

    # ---- calls ----

    def _call(self, body: dict) -> None:
        call_id = body.get("id")
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            log.warning("dropping a CALL without an integer id: %r", call_id)
            return
        batched = False
        try:
            batched = self._run_call(call_id, body)
        finally:
            if not batched:  # a batched call's abort mark is kept until it is answered
                self._aborts.forget(call_id)

    def _run_call(self, call_id: int, body: dict) -> bool:
        """Runs or answers the call; True when it went to the batch scheduler instead."""
        if self._aborts.is_aborted(call_id):
            self._replies.error(call_id, "aborted", "Call aborted before it started")
            return False
        if self._methods is None:
            self._replies.error(call_id, "invalid", "No model is loaded yet")
            return False
        method = body.get("method")
        args = body.get("args") or []
        kwargs = body.get("kwargs") or {}
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            self._replies.error(call_id, "invalid", "CALL args must be a list and kwargs a map")
            return False
        if not isinstance(method, str):  # also keeps an unhashable one out of the lookups below
            self._replies.error(call_id, "unknown_method", f"its engine has no method {method!r}")
            return False
        # A scheduler's methods need no callable of their own (vllm and simulator have none).
        if self._batch is not None and method in self._batch.methods:
            self._batch.submit(call_id, method, args, kwargs, bool(body.get("stream")), body.get("alone") is True)
            return True
        fn = self._methods.get(method)
        if fn is None:
            self._replies.error(call_id, "unknown_method", f"its engine has no method {method!r}")
            return False
        try:
            with running_call(lambda: self._aborts.is_aborted(call_id)):
                result = fn(*args, **kwargs)
        except CallAborted:
            self._replies.error(call_id, "aborted", "Call aborted")
            return False
        except Exception as exc:
            self._replies.fail(call_id, exc)
            return False
        if body.get("stream"):
            self._stream(call_id, result)
        else:
            self._reply(call_id, result)
        return False

    def _reply(self, call_id: int, result) -> None:
        if isinstance(result, Iterator):
            # A non-stream call to a method that streams gets all items as one list.
            try:
                result = list(result)
            except Exception as exc:
                return self._replies.fail(call_id, exc)
        self._replies.result(call_id, result)

    def _stream(self, call_id: int, result) -> None:
        # A stream call to a method that returns one value gets it as a single CHUNK.
        items = result if isinstance(result, Iterator) else iter([result])
        try:
            while True:
                if self._aborts.is_aborted(call_id):
                    return self._replies.error(call_id, "aborted", "Call aborted")
                try:
                    item = next(items)
                except StopIteration:
                    break
                except Exception as exc:
                    return self._replies.fail(call_id, exc)
                # Checked again: the item may have taken long, and an aborted
                # stream must not send another CHUNK.
                if self._aborts.is_aborted(call_id):
                    return self._replies.error(call_id, "aborted", "Call aborted")
                if not self._replies.chunk(call_id, item):
                    return
                if self._stopping.is_set():
                    return
            self._replies.end(call_id)
        finally:
            _close_quietly(items)


def _close_quietly(items) -> None:
    close = getattr(items, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:
        log.warning("closing a result stream raised", exc_info=True)
