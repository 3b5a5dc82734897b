"""``python -m builder``: the command line (:mod:`builder.cli.main`)."""
from builder.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
