"""Old name of the loopback Hub server, now :mod:`helpers.hub` (split into its protocol pieces).

Kept importable for branches written before the move (``from hub_server import HubServer``);
new code imports ``from helpers.hub import HubServer``.
"""

from helpers.hub import DEFAULT_TOKEN, Blob, Fault, HubServer  # noqa: F401
