"""A small, in-memory, Hugging Face Hub-compatible HTTP server (test fixture only, stdlib only).

It speaks enough of the Hub protocol for the real ``huggingface_hub`` (2.x) and ``datasets``
clients (see ``/work/shared/docs/HUB_PROTOCOL.md``), one module per protocol piece:

* :mod:`.repos`: repo creation and deletion, ``repo_info``, settings, YAML validation, whoami;
* :mod:`.refs`: refs, tags, branches, the commit list;
* :mod:`.trees`: ``list_repo_tree`` (paged) and ``get_paths_info``;
* :mod:`.uploads`: preupload, the classic LFS batch API (clients need ``HF_HUB_DISABLE_XET=1``)
  and its object store, ndjson commits;
* :mod:`.downloads`: ``resolve`` (HEAD/GET, Range);
* :mod:`.routes` maps paths to them; :mod:`.store` holds the repositories; :mod:`.objects`
  the blobs, commits and answers; :mod:`.server` the server itself.

Typical use::

    with HubServer(token="hf_test") as hub:
        env = hub.client_env(tmp_path, token="hf_test")
        run_in_client(env, some_helper_function, ...)   # helpers.client

The client libraries read ``HF_ENDPOINT`` at import time: run them in a new process
(:func:`helpers.client.run_in_client`) with the environment from :meth:`HubServer.client_env`.

Fault injection (thread-safe)::

    hub.inject_fault("http500", r"/commit/", times=1)        # answer 500 once
    hub.inject_fault("drop", r"^/__lfs__/", method="PUT")    # read part of the body, close the socket
    hub.inject_fault("http409", r"/tag/")                    # any "httpNNN" works

Every request is recorded in ``hub.requests`` as ``(method, path)`` (path without the query
string) and in ``hub.log`` with more detail (query, bearer token, status).
"""

from .objects import Blob, Commit, Repo
from .server import DEFAULT_TOKEN, Fault, HubServer

__all__ = ["HubServer", "Fault", "Blob", "Commit", "Repo", "DEFAULT_TOKEN"]
