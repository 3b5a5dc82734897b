"""The command line (``tinybench-builder``, ``python -m builder``): thin commands over the stages' libraries.

One module per command, each with a ``register(subparsers)`` that adds its subparser and a
handler wrapped by :func:`builder.cli._run.command` (the one place where an error becomes one
``error:`` line and an exit status): :mod:`~builder.cli.ingest`, :mod:`~builder.cli.fit`,
:mod:`~builder.cli.estimate`, :mod:`~builder.cli.build`, :mod:`~builder.cli.original`
(``import-original``), :mod:`~builder.cli.release` and :mod:`~builder.cli.simulate`.
:func:`builder.cli.main.main` assembles them; :func:`builder.cli.main.release_main` is
``release.py``. No later stage uses the command line, so it exports nothing.
"""

__all__: list[str] = []
