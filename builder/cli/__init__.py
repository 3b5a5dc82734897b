"""The command line (``tinybench``, ``python -m builder``): argument parsing over the stages' libraries.

:func:`builder.cli.main.main` is the program and :func:`builder.cli.main.release_main` is
``release.py`` (the ``release`` command); :mod:`builder.cli.ingest` is the ``ingest`` command.
No later stage uses the command line, so it exports nothing.
"""

__all__: list[str] = []
