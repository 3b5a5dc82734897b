"""The per-model map of ``ingest`` on a Dask cluster (``dask.distributed``), reduced on the client.

Optional: needs the ``distributed`` extra (``pip install -e ".[distributed]"`` in a checkout).
:func:`dask_client` connects to a running scheduler or starts a ``LocalCluster``;
:func:`reduce_on_dask` runs the slots of an ingest on it:

1. map: one task per unit, :func:`read_unit` on a worker (downloading Hub files first for Hub
   units). Its parts stay in the worker's memory (Dask spills them to disk when memory runs
   short). A second small task per unit sends only the item *keys* to the client
   (:func:`~tinybench_builder.read.sources.reduce.unit_keys`), streamed with ``as_completed`` into the
   :class:`~tinybench_builder.read.sources.reduce.MatrixReducer`; each keys future is released at once.
2. reduce: once every key is in, the client allocates the matrix and gathers the parts a few at
   a time, in slot order, filling the matrix and releasing each future as it goes. The client
   holds the item index, the matrix and a batch of parts, never all the parts.

Failures follow the rule of :func:`~tinybench_builder.read.sources._common.read_unit_retrying`: bad input
(:class:`SourceError`) stops the run at once with the same message as a local run; a model that
cannot be had (:class:`ModelUnavailable`) fails at once; anything else, including a worker that
died, is retried by Dask (``retries``; the scheduler reruns the tasks of a lost worker, up to
``distributed.scheduler.allowed-failures`` times, then raises ``KilledWorker``). What still
fails is returned as :class:`UnitFailure` s, never dropped silently.

Every wait is bounded (Dask's own waits are not): a ``--scheduler`` address is probed first, so
that a port where something other than a Dask scheduler listens fails within the connect timeout
(``distributed.comm.timeouts.connect``, 30 s) instead of hanging on the handshake; once every
worker is gone, the run stops after :data:`WORKER_WAIT_ENV` seconds (default 120) without one
(:class:`~tinybench_builder.errors.WaitTimeout`, exit status 5), where Dask would wait forever.
A bounded gather that runs out leaves distributed's own per-key waits behind; they end when the
client closes and would print a traceback of their own (:func:`_quiet_abandoned_waits`): the
run's error stays one line.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
import uuid
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence, cast

from tinybench_builder.errors import ClusterError, WaitTimeout, nested_too_deeply
from tinybench_builder.params import env_seconds
from tinybench_builder.progress import get_logger
from tinybench_builder.read.sources import ModelUnavailable, SourceError
from tinybench_builder.read.sources._common import ModelPart, ReadFailed, Unit, UnitFailure, describe_error, read_unit
from tinybench_builder.read.sources.reduce import MatrixReducer, UnitKeys, unit_keys

__all__ = ["ClusterError", "dask_client", "reduce_on_dask", "describe_client"]

_log = get_logger(__name__)

#: parts gathered to the client at a time in the reduce (bounded client memory, few round trips)
GATHER_BATCH = 16
#: how long a run waits, once every worker is gone, for one to join again (seconds); environment
#: TINYBENCH_WORKER_WAIT (Dask itself would wait forever for a worker to run the tasks)
WORKER_WAIT_ENV = "TINYBENCH_WORKER_WAIT"
DEFAULT_WORKER_WAIT = 120.0
_POLL = 0.2  # seconds between looks at the finished key tasks
_ASK_EVERY = 1.0  # seconds between questions to the scheduler about its workers
_MAX_HANDSHAKE = 1 << 20  # bytes: a Dask handshake is a few hundred (its length comes first)


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(
            "--workers/--scheduler run on Dask, which is not installed: install the package with its "
            "distributed extra (pip install -e '.[distributed]' in a checkout, or pip install distributed)"
        ) from exc
    return distributed


@contextlib.contextmanager
def dask_client(scheduler: Any = None, workers: int | None = None, timeout: float | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: an existing one, one connected to ``scheduler``
    (``tcp://host:8786``), or one on a new ``LocalCluster`` of ``workers`` processes on
    127.0.0.1 (one thread each: reading JSON holds the GIL). What is started here is closed on exit.

    ``timeout`` (seconds) bounds the connection and the wait for a first worker; default: Dask's
    ``distributed.comm.timeouts.connect`` (30 s; ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``).
    """
    distributed = _import_distributed()
    if timeout is None:
        import dask
        from dask.utils import parse_timedelta

        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s")
    if isinstance(scheduler, distributed.Client):
        _quiet_abandoned_waits(scheduler)
        yield scheduler
        return
    if scheduler is not None:
        _probe_scheduler(str(scheduler), timeout)
        try:
            client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {describe_error(exc)}") from exc
        _quiet_abandoned_waits(client)
        with client, _quiet_distributed_logs():
            _check_workers(client, scheduler, timeout)
            yield client
        return
    if workers is None or workers < 1:
        raise ClusterError(f"--workers must be at least 1, got {workers}")
    import logging

    with distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
        # failed tasks are reported by ingest itself; worker logs would repeat them with tracebacks
        dashboard_address=None, silence_logs=logging.CRITICAL,
    ) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        _quiet_abandoned_waits(client)
        _check_workers(client, "the local cluster", timeout)
        yield client


@contextlib.contextmanager
def _quiet_distributed_logs() -> Iterator[None]:
    """distributed's own log lines off stderr while a client of ours runs on a ``--scheduler``, as
    ``silence_logs`` keeps them for the local cluster: a lost worker's "Couldn't gather N keys,
    rescheduling" came before the run's one error line, which says what happened. ``-v`` (the
    package's logger at DEBUG) keeps them."""
    import logging

    from distributed.utils import silence_logging_cmgr

    if _log.isEnabledFor(logging.DEBUG):
        yield
        return
    with silence_logging_cmgr(logging.CRITICAL):
        yield


def _quiet_abandoned_waits(client: Any) -> None:
    """Keep distributed's abandoned gather waits off stderr (a debug message instead).

    ``Client._gather`` waits on each key in a task of its own (under ``distributed.utils.All``).
    Our gathers are bounded (:func:`_gather`: ``callback_timeout``), and a bound that runs out
    cancels ``All`` from outside, which leaves those tasks behind; when the client closes, their
    futures are cancelled, they raise distributed's ``AllExit``, and asyncio reports each one
    ("Task exception was never retrieved", a traceback) through the ``asyncio`` logger, which
    prints on stderr where no logging is set up: the run's one-line error came with tracebacks.
    ``AllExit`` is distributed's own signal to stop waiting (its ``All`` treats it as quiet), so
    this handler on the client's event loop logs exactly those at DEBUG (``-v``) and passes
    everything else to the handler there was. Installed once per loop.
    """
    try:
        from distributed.client import AllExit
    except ImportError:  # pragma: no cover - another distributed: nothing known to quiet
        return
    loop = getattr(getattr(client, "loop", None), "asyncio_loop", None)
    if loop is None:
        return
    previous = loop.get_exception_handler()
    if getattr(previous, "_tinybench_quiet", False):
        return

    def handler(event_loop: Any, context: dict) -> None:
        if isinstance(context.get("exception"), AllExit):
            _log.debug(f"Dask: a wait of a gather stopped at its bound ended with the client ({context.get('message')})")
            return
        if previous is not None:
            previous(event_loop, context)
        else:
            event_loop.default_exception_handler(context)

    handler._tinybench_quiet = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


def _probe_scheduler(address: str, timeout: float) -> None:
    """Refuse, within ``timeout``, an address where something other than a Dask scheduler listens.

    Dask's client connects, then waits for the server's handshake with no bound: a port where an
    HTTP server (or anything that waits for the client to speak first) listens hung ``ingest``
    forever, whatever the connect timeout; a server that speaks first (an SSH banner) is read as
    the length of a message, a huge one. A Dask server sends its handshake as soon as it accepts:
    a small message whose first 8 bytes are its length, so that length, read within ``timeout``,
    tells them apart (plain TCP addresses only; Dask itself checks the others).
    """
    scheme, _, loc = address.rpartition("://")
    if scheme not in ("", "tcp") or ":" not in loc:
        return
    host, _, port = loc.rpartition(":")
    try:
        port_number = int(port)
    except ValueError:
        return  # Dask will say what is wrong with it
    deadline = time.monotonic() + timeout
    head = b""
    try:
        with socket.create_connection((host.strip("[]"), port_number), timeout=timeout) as sock:
            while len(head) < 8:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                got = sock.recv(8 - len(head))
                if not got:
                    break
                head += got
    except socket.timeout:
        raise WaitTimeout(f"the server at {address} accepts connections but sent no Dask handshake within "
                          f"{timeout:g} s: it is not a Dask scheduler (the scheduler's port is 8786 by default; "
                          "the bound is distributed.comm.timeouts.connect, "
                          "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)") from None
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {describe_error(exc)}") from exc
    if len(head) < 8:
        raise ClusterError(f"the server at {address} closed the connection at once: it is not a Dask scheduler")
    (length,) = struct.unpack("<Q", head)
    if not 0 < length <= _MAX_HANDSHAKE:
        raise ClusterError(f"the server at {address} does not speak Dask's protocol (it sent {head!r}): "
                           "it is not a Dask scheduler (the scheduler's port is 8786 by default)")


def worker_wait() -> float:
    """How long to wait for a worker once every worker is gone (:data:`WORKER_WAIT_ENV`, default 120 s)."""
    return env_seconds(WORKER_WAIT_ENV, DEFAULT_WORKER_WAIT, ClusterError)


class _WorkerWatch:
    """Counts the time without any worker; past :func:`worker_wait` the run stops (WaitTimeout).

    Dask keeps the tasks of a cluster without workers waiting ("no-worker") and a client waiting
    on them waits forever; every wait of :func:`reduce_on_dask` goes through :meth:`check`.
    """

    def __init__(self, client: Any):
        self.client = client
        self.bound = worker_wait()
        self.since: float | None = None
        self._asked = -1e9
        self._workers = 1

    def check(self, waiting_for: str) -> None:
        now = time.monotonic()
        if now - self._asked >= _ASK_EVERY:  # one round trip to the scheduler a second at most
            self._asked = now
            try:
                self._workers = len(self.client.scheduler_info().get("workers", {}))
            except Exception:  # noqa: BLE001 - a scheduler that cannot answer has no usable worker either
                self._workers = 0
        if self._workers:
            self.since = None
            return
        self.since = self.since if self.since is not None else now
        if now - self.since > self.bound:
            address = getattr(getattr(self.client, "scheduler", None), "address", "the cluster")
            raise WaitTimeout(f"every Dask worker of {address} is gone and none joined within {self.bound:g} s "
                              f"({waiting_for}); start workers and re-run (the bound: {WORKER_WAIT_ENV})")


def _gather_bounded(client: Any, distributed: Any, futures: list, watch: _WorkerWatch, waiting_for: str) -> list:
    """The results of ``futures`` (an erred one gives its exception), every wait bounded by ``watch``.

    Waits (polling the workers) until the futures are done, then gathers them; a result lost with
    its worker between the two makes the gather wait for its rerun, so the gather itself is bounded
    too (by the watch's bound) and then the wait starts again.
    """
    while True:
        while True:
            try:
                with client.as_current():  # wait() takes the default client; ours is not
                    distributed.wait(futures, timeout=_ASK_EVERY)
                break
            except TimeoutError:  # distributed.TimeoutError is the builtin one
                watch.check(waiting_for)
        try:
            return _gather(client, futures, watch.bound)
        except TimeoutError:
            watch.check(waiting_for)


def _check_workers(client: Any, where: str, timeout: float) -> None:
    """At least one worker, and every worker runs this version of the package."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError as exc:
        raise ClusterError(f"no Dask worker joined the scheduler at {where} within {timeout:.0f} s "
                           "(start some with `dask worker ADDRESS`)") from exc
    from tinybench_builder import __version__

    try:
        versions = client.run(_worker_version)
    except Exception as exc:  # the worker cannot even load the function
        raise ClusterError(
            f"the Dask workers cannot run tinybench-builder ({describe_error(exc)}); "
            "install the same version on every worker machine"
        ) from exc
    wrong = {w: v for w, v in versions.items() if v != __version__}
    if wrong:
        w, v = next(iter(wrong.items()))
        raise ClusterError(f"{len(wrong)} Dask worker(s) run tinybench-builder {v} (e.g. {w}), "
                           f"this client {__version__}: install the same version everywhere")


def _worker_version() -> str:
    from tinybench_builder import __version__

    return __version__


def describe_client(client: Any) -> str:
    """``Dask cluster tcp://..., N workers`` for summaries."""
    try:
        n = len(client.scheduler_info().get("workers", {}))
        address = client.scheduler.address
    except Exception:  # noqa: BLE001 - a description only
        return "Dask cluster"
    return f"Dask cluster {address}, {n} worker{'s' if n != 1 else ''}"


# --------------------------------------------------------------------------- tasks (run on workers)
@dataclass
class _InputError:
    """Bad input found on a worker, returned as a value so that Dask does not retry it."""

    message: str


def _read_task(unit: Unit) -> list[ModelPart] | _InputError | UnitFailure:
    try:
        with nested_too_deeply(unit.source, SourceError):  # bad input (a structure too deep), named
            return read_unit(unit)
    except SourceError as exc:
        return _InputError(str(exc))
    except ModelUnavailable as exc:
        return UnitFailure(unit.model, unit.source, describe_error(exc), 1)
    except Exception as exc:  # noqa: BLE001 - raised again, so that Dask retries the task
        raise ReadFailed(describe_error(exc)) from None


def _keys_task(result: Any) -> UnitKeys | _InputError | UnitFailure:
    if isinstance(result, (_InputError, UnitFailure)):
        return result
    try:
        return unit_keys(result)
    except SourceError as exc:
        return _InputError(str(exc))


# --------------------------------------------------------------------------- client side
def reduce_on_dask(
    client: Any,
    slots: Sequence[Unit | list[ModelPart]],
    reducer: MatrixReducer,
    *,
    retries: int = 2,
    on_result: Callable[[Any], None] | None = None,
    before_fill: Callable[[int], None] | None = None,
) -> list[UnitFailure]:
    """Run the units of ``slots`` on the cluster and reduce every slot into ``reducer``.

    Slots that are lists of parts (score tables, read on the client) are reduced in place.
    Progress hooks, called on the client: ``on_result`` after each unit (with its keys or its
    :class:`UnitFailure`) and ``before_fill`` with the number of slots to fill once the item
    index is complete. Returns the failures, in slot order.
    Unless no slot holds any score (``reducer.has_scores`` is false: the caller reports it), the
    reducer is left ready for :meth:`~MatrixReducer.finish`.
    """
    distributed = _import_distributed()
    failures: dict[int, UnitFailure] = {}
    for i, slot in enumerate(slots):
        if not isinstance(slot, Unit):
            reducer.add_keys(i, unit_keys(slot))
    remote = [i for i, slot in enumerate(slots) if isinstance(slot, Unit)]
    run = uuid.uuid4().hex[:8]
    with warnings.catch_warnings():
        # the units carry their file lists (~15 kB a model): thousands of models make a "large
        # graph" in Dask's eyes, which is expected here and sent once
        warnings.filterwarnings("ignore", message="Sending large graph")
        part_futs = client.map(_read_task, [slots[i] for i in remote],
                               key=[f"ingest-read-{run}-{i}" for i in remote], retries=retries, pure=False)
    key_futs = client.map(_keys_task, part_futs, key=[f"ingest-keys-{run}-{i}" for i in remote],
                          retries=retries, pure=False)
    parts: dict[int, Any] = dict(zip(remote, part_futs))
    slot_of = {f.key: i for i, f in zip(remote, key_futs)}
    del part_futs
    watch = _WorkerWatch(client)
    try:
        done = distributed.as_completed(key_futs, loop=client.loop)
        del key_futs
        while not done.is_empty():
            if not done.has_ready():  # nothing new: are there still workers to run the rest?
                watch.check(f"{len(slot_of)} of {len(remote)} models still to read")
                time.sleep(_POLL)
                continue
            batch = done.next_batch(block=False)  # whatever finished since the last batch: one round trip
            results = _gather_bounded(client, distributed, batch, watch,
                                      f"the item keys of {len(batch)} model(s), {len(slot_of)} still to read")
            for fut, result in zip(batch, results):
                i = slot_of.pop(fut.key)
                fut.release()
                if isinstance(result, _InputError):
                    raise SourceError(result.message)
                if isinstance(result, BaseException):  # retries exhausted, or the worker died too often
                    unit = cast(Unit, slots[i])  # only the remote slots (Units) have futures
                    result = UnitFailure(unit.model, unit.source, describe_error(result), retries + 1)
                if isinstance(result, UnitFailure):
                    failures[i] = result
                    parts.pop(i).release()
                else:
                    reducer.add_keys(i, result)
                if on_result is not None:
                    on_result(result)
        if not reducer.has_scores:
            return [failures[i] for i in sorted(failures)]
        reducer.build_index()
        if before_fill is not None:
            before_fill(len(slots) - len(failures))
        remote_order = sorted(parts)
        next_batch = 0
        fetched: dict[int, Any] = {}
        for i, slot in enumerate(slots):  # in slot order, as a local run: the same conflict messages
            if i in failures:
                continue
            if not isinstance(slot, Unit):
                reducer.fill(i, slot)
                continue
            if i not in fetched:  # the next few models' parts, in one round trip
                batch = remote_order[next_batch:next_batch + GATHER_BATCH]
                next_batch += GATHER_BATCH
                futs = [parts[k] for k in batch]
                fetched.update(zip(batch, _gather_bounded(client, distributed, futs, watch,
                                                          f"the scores of {len(futs)} model(s), to fill the matrix")))
            got = fetched.pop(i)
            parts.pop(i).release()
            if isinstance(got, BaseException):  # lost with its worker and could not be rerun
                failures[i] = UnitFailure(slot.model, slot.source, describe_error(got), retries + 1)
                reducer.drop(i)
            else:
                reducer.fill(i, got)
    finally:
        if parts:  # stopped early (bad input, interrupt): leave nothing running on the cluster
            with contextlib.suppress(Exception):
                client.cancel(list(parts.values()))
    return [failures[i] for i in sorted(failures)]


def _gather(client: Any, futures: list, timeout: float) -> list:
    """Results of ``futures``; an erred one gives its exception instead of raising.

    Raises :class:`TimeoutError` past ``timeout`` seconds: ``Client.gather`` has no bound, so the
    gather runs through ``Client.sync`` with the ``callback_timeout`` that ``Future.result`` uses.
    """
    try:
        return client.sync(client._gather, futures, errors="raise", callback_timeout=timeout)
    except TimeoutError:
        raise
    except Exception:  # noqa: BLE001 - find which one failed
        out = []
        for f in futures:
            try:
                out.append(f.result(timeout=timeout))
            except TimeoutError:
                raise
            except Exception as exc:  # noqa: BLE001
                out.append(exc)
        return out
