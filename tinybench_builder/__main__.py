"""``python -m tinybench_builder``: the command line (:mod:`tinybench_builder.cli.main`)."""
from tinybench_builder.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
