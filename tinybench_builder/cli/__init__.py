"""The command line (``tinybench-builder``, ``python -m tinybench_builder``): thin commands over the stages' libraries.

One module per command, each with a ``register(subparsers)`` that adds its subparser and a
handler wrapped by :func:`tinybench_builder.cli._run.command` (the one place where an error becomes one
``error:`` line and an exit status): :mod:`~tinybench_builder.cli.ingest`, :mod:`~tinybench_builder.cli.fit`,
:mod:`~tinybench_builder.cli.estimate`, :mod:`~tinybench_builder.cli.build`, :mod:`~tinybench_builder.cli.original`
(``import-original``), :mod:`~tinybench_builder.cli.release` and :mod:`~tinybench_builder.cli.simulate`.
:func:`tinybench_builder.cli.main.main` assembles them; :func:`tinybench_builder.cli.main.release_main` is
``release.py``. No later stage uses the command line, so it exports nothing.
"""

__all__: list[str] = []
