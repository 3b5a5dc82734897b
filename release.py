#!/usr/bin/env python
"""Build, validate and (with --push) publish a versioned release of the tiny benchmarks.

    python release.py --config release-local.toml --version 1.0.0          # build + validate
    python release.py --config release.toml --version 1.1.0 --push         # + publish to the Hub

Run ``python release.py --help`` for the options; docs/RELEASE.md explains the config file,
the publishing guarantees and how consumers pin a release. The work is done by
``builder.publish``; this file only calls it.
"""

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # a fresh clone without `pip install -e .`
    from builder.publish import main

    sys.exit(main())
