"""A bound on every request huggingface_hub sends (issue 21): its HTTP client waits forever.

Used by the readers of Hub models (``ingest --hub-models``, on every worker) and by the release
stage (``release --push``): a Hub that accepts connections and never answers failed nothing and
hung the run with no message. :func:`bound_hub_requests` gives the client of this process a
timeout of :func:`hub_timeout` seconds (``TINYBENCH_HUB_TIMEOUT``, default 60); calls that take
a ``timeout`` argument get it too (``HfApi.repo_info`` passes its own, None by default, over the
client's). :func:`hub_timed_out` tells such a failure from the others, for the message.

This kernel module imports only :mod:`tinybench_builder.params` (huggingface_hub and its HTTP
client lazily).
"""

from __future__ import annotations


from tinybench_builder.params import env_seconds

__all__ = ["HUB_TIMEOUT_ENV", "DEFAULT_HUB_TIMEOUT", "hub_timeout", "bound_hub_requests", "hub_timed_out",
           "hub_endpoint"]

#: seconds one Hub request may wait for the server (to connect, send or answer) before it fails;
#: huggingface_hub's own default is no bound at all. Environment: TINYBENCH_HUB_TIMEOUT.
HUB_TIMEOUT_ENV = "TINYBENCH_HUB_TIMEOUT"
DEFAULT_HUB_TIMEOUT = 60.0


def hub_timeout() -> float:
    """The bound of one Hub request, in seconds (:data:`HUB_TIMEOUT_ENV`, default 60)."""
    return env_seconds(HUB_TIMEOUT_ENV, DEFAULT_HUB_TIMEOUT)


_CONFIGURED: list[float] = []


def bound_hub_requests() -> float:
    """Make every request huggingface_hub sends in this process wait at most :func:`hub_timeout`
    seconds for the server (connect, send, each read): its HTTP client has no timeout by
    default, so a Hub that accepts and never answers hung a push (and an ingest of Hub models)
    with no message. Per-request timeouts the library passes itself (metadata requests:
    ``HF_HUB_ETAG_TIMEOUT``, 10 s) still apply. Returns the bound."""
    bound = hub_timeout()
    if _CONFIGURED and _CONFIGURED[-1] == bound:
        return bound
    from huggingface_hub.utils import _http

    if not hasattr(_http, "set_client_factory"):  # pragma: no cover - huggingface_hub < 1.0 (requests)
        return bound
    try:
        import httpx2 as httpx
    except ImportError:  # pragma: no cover - the backend's older name
        import httpx  # type: ignore[no-redef]

    def factory():
        return httpx.Client(event_hooks={"request": [_http.hf_request_event_hook]}, follow_redirects=True,
                            timeout=httpx.Timeout(bound, connect=min(bound, 10.0)))

    _http.set_client_factory(factory)
    _CONFIGURED.append(bound)
    return bound


def hub_timed_out(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a timeout of the HTTP client or the network."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def hub_endpoint() -> str:
    """The Hub's address, as messages name it (``HF_ENDPOINT``, else huggingface.co)."""
    from huggingface_hub import constants

    return constants.ENDPOINT
