#!/usr/bin/env python
"""Build, validate and (with --push) publish a versioned release of the tiny benchmarks.

    python release.py --config release-local.toml --release-version 1.0.0          # build + validate
    python release.py --config release.toml --release-version 1.1.0 --push         # + publish to the Hub

The same as ``tinybench-builder release ...`` / ``python -m tinybench_builder release ...``: run
``python release.py --help`` for the options; docs/RELEASE.md explains the config file, the
publishing guarantees and how consumers pin a release. This file only calls the CLI.
"""

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # a fresh clone without `pip install -e .`
    from tinybench_builder.cli.main import release_main

    sys.exit(release_main())
