"""Stage 5, release: every benchmark of a release config built, validated and published.

:func:`load_config` reads the release config (:mod:`tinybench_builder.release.config`); :func:`run_release`
builds each benchmark, validates each folder (:mod:`tinybench_builder.release.validate`: manifest hashes,
card, ``load_dataset`` round trip, side files) and, with ``push``, publishes it
(:mod:`tinybench_builder.release.hub_sync`): one atomic commit per repository, then the tag ``vX.Y.Z``.
"""

from tinybench_builder.release.config import ConfigError, ReleaseError, default_out_dir, load_config, normalize_version
from tinybench_builder.release.hub_sync import describe_error
from tinybench_builder.release.publish import run_release

__all__ = ["load_config", "run_release", "default_out_dir", "normalize_version", "describe_error",
           "ReleaseError", "ConfigError"]
