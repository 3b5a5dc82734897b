"""One rule per shared parameter: k (anchors), seed, IRT dimension, design, item order, binarize, version;
and one rule for the seeds of the random streams derived from the user's seed (:func:`derived_seed`).

Each rule is checked in one place and used by every way in: the command line (argparse
``type=`` callables, :meth:`IntRule.arg`), a release config, a spec file, the option
dataclasses and the Python API (:func:`tinybench_builder.fit_estimator`, :class:`tinybench_builder.dataset.BuildOptions`).
A value that breaks a rule raises :class:`~tinybench_builder.errors.InputError` (a ``ValueError``; the
caller may ask for its own subclass: ``error=BuildError``, ``SpecError``, ``ConfigError``), so it
is exit status 2 on the command line wherever it comes from, with the same words::

    SEED.check(2**40)        # InputError: seed must be an integer from 0 to 2**32 - 1 (4294967295), got 1099511627776
    ANCHORS.check(0, "anchors", error=SpecError)
    check_version("1.02.0")  # InputError: invalid version '1.02.0': use MAJOR.MINOR.PATCH with plain numbers, e.g. 1.0.0

The choice lists (:data:`DESIGNS`, :data:`ITEM_ORDERS`) are defined here once. (The standalone
``estimator.py`` keeps its own list of the designs it can load, ``"original"`` included: it
imports nothing of the package.)

This kernel module imports only :mod:`tinybench_builder.errors` (``packaging`` lazily, for versions).
"""

from __future__ import annotations

import argparse
import math
import numbers
import os
from dataclasses import dataclass
from typing import Any

from tinybench_builder.errors import InputError

__all__ = [
    "IntRule", "ChoiceRule", "ANCHORS", "SEED", "DIMS", "N_SEEDS", "DESIGN", "ITEM_ORDER",
    "DESIGNS", "ITEM_ORDERS", "SEED_MAX", "check_binarize", "binarize_arg", "parse_version", "check_version",
    "VERSION_HELP", "env_seconds", "SeedStream", "SEED_STREAMS", "derived_seed",
]

#: the largest seed (numpy's legacy seeding and many libraries take 32-bit seeds)
SEED_MAX = 2**32 - 1
#: anchor designs of a fit: a stratified random sample (default), or the original k-means anchors
DESIGNS = ("stratified", "kmeans")
#: how response item ids index the content rows: upstream row ids, or positions in the v0.3 harness order
ITEM_ORDERS = ("upstream", "harness_v1")
VERSION_HELP = "use MAJOR.MINOR.PATCH with plain numbers, e.g. 1.0.0"


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


@dataclass(frozen=True)
class IntRule:
    """An integer parameter in ``[low, high]`` (``high`` None: no upper bound)."""

    name: str
    low: int
    high: int | None = None
    #: the bound as the message shows it (``"2**32 - 1 (4294967295)"``)
    high_text: str | None = None

    @property
    def text(self) -> str:
        """The rule in words, without the parameter's name: ``must be a positive integer``."""
        if self.high is None:
            return "must be a positive integer" if self.low == 1 else f"must be an integer of at least {self.low}"
        return f"must be an integer from {self.low} to {self.high_text or self.high}"

    def check(self, value: Any, what: str | None = None, error: type[InputError] = InputError) -> int:
        """``value`` as an ``int`` if it keeps the rule, else ``error`` naming ``what`` (default: the name)."""
        if _is_integer(value) and value >= self.low and (self.high is None or value <= self.high):
            return int(value)
        raise error(f"{what or self.name} {self.text}, got {value!r}")

    def problem(self, value: Any, what: str | None = None) -> str | None:
        """What is wrong with ``value`` (the message :meth:`check` would raise), or None."""
        try:
            self.check(value, what)
        except InputError as exc:
            return str(exc)
        return None

    def arg(self, text: str) -> int:
        """An argparse ``type=``: the text as an integer keeping the rule (argparse names the option)."""
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value >= self.low and (self.high is None or value <= self.high):
            return value
        raise argparse.ArgumentTypeError(f"{self.text}, got {value}")

    def optional(self, value: Any, what: str | None = None, error: type[InputError] = InputError) -> int | None:
        """:meth:`check`, with None allowed (the default: chosen elsewhere)."""
        return None if value is None else self.check(value, what, error)


@dataclass(frozen=True)
class ChoiceRule:
    """A parameter taking one of a few names (``choices`` is also the argparse ``choices=``)."""

    name: str
    choices: tuple[str, ...]

    def check(self, value: Any, what: str | None = None, error: type[InputError] = InputError) -> str:
        if isinstance(value, str) and value in self.choices:
            return value
        raise error(f"{what or self.name} must be one of {', '.join(self.choices)}, got {value!r}")


#: k, the number of anchors (per config of a bundle)
ANCHORS = IntRule("anchors", 1)
#: the seed of a fit, a build, a simulation
SEED = IntRule("seed", 0, SEED_MAX, "2**32 - 1 (4294967295)")
#: the IRT dimension D (None: chosen by validation)
DIMS = IntRule("n_dims", 1)
#: k-means seeds tried by ``design="kmeans"``
N_SEEDS = IntRule("n_seeds", 1)
DESIGN = ChoiceRule("design", DESIGNS)
ITEM_ORDER = ChoiceRule("item_order", ITEM_ORDERS)


# ----------------------------------------------------------------------------- binarize
_BINARIZE_TEXT = "must be true, false or a threshold strictly between 0 and 1"


def check_binarize(value: Any, what: str = "binarize", error: type[InputError] = InputError) -> bool | float:
    """``binarize``: False (soft scores as soft labels), True (the mean-preserving threshold) or a
    threshold strictly between 0 and 1 (any other number makes every score 0, or every score 1)."""
    if value is True or value is False:
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_":
        if math.isfinite(value) and 0.0 < float(value) < 1.0:
            return float(value)
    raise error(f"{what} {_BINARIZE_TEXT}, got {value!r}")


def binarize_arg(text: str) -> str | float:
    """``--binarize``: 'auto' or a threshold keeping :func:`check_binarize` (an argparse ``type=``)."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes 'auto' or a threshold number, got {text!r}") from None
    try:
        return check_binarize(value)
    except InputError:
        raise argparse.ArgumentTypeError(
            f"the threshold must lie strictly between 0 and 1 (a score >= it counts as 1), got {text}: "
            "any other threshold makes every score 0 or every score 1") from None


# ----------------------------------------------------------------------------- versions
def parse_version(version: Any, error: type[InputError] = InputError) -> tuple[int, int, int]:
    """``"1.2.0"`` -> ``(1, 2, 0)``; a leading ``v`` is accepted. Parsed by ``packaging.version``;
    only a plain release ``MAJOR.MINOR.PATCH`` in canonical form is one (no ``1.02.0``, no
    pre-release, post-release, local or epoch part)."""
    from packaging.version import InvalidVersion, Version

    text = str(version).strip()
    text = text[1:] if text.startswith("v") else text
    try:
        parsed = Version(text)
    except InvalidVersion:
        parsed = None
    if (parsed is None or len(parsed.release) != 3 or parsed.epoch or parsed.pre or parsed.post is not None
            or parsed.dev is not None or parsed.local or str(parsed) != text):
        raise error(f"invalid version {version!r}: {VERSION_HELP}")
    major, minor, patch = parsed.release
    return major, minor, patch


def check_version(version: Any, error: type[InputError] = InputError) -> str:
    """The canonical ``"X.Y.Z"`` of ``version`` (``"v1.2.0"`` -> ``"1.2.0"``), see :func:`parse_version`."""
    return ".".join(map(str, parse_version(version, error)))


def env_seconds(name: str, default: float, error: type[Exception] = InputError) -> float:
    """A bound in seconds from the environment variable ``name`` (``default`` when unset or empty):
    a positive number, else ``error`` naming the variable (the waits of the Hub and of Dask)."""
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        raise error(f"{name}={text!r}: give a number of seconds") from None
    if not value > 0:
        raise error(f"{name}={text!r}: give a positive number of seconds")
    return value


# ----------------------------------------------------------------------------- derived seeds
@dataclass(frozen=True)
class SeedStream:
    """How the seed of one random stream derives from the user's ``seed``:
    ``scale * seed + offset + sum(step_i * index_i)``, and why it is apart from the others."""

    scale: int
    offset: int
    steps: tuple[int, ...]
    why: str

    def seed(self, seed: int, index: tuple[int, ...]) -> int:
        return self.scale * seed + self.offset + sum(s * i for s, i in zip(self.steps, index))


#: every random stream seeded from the user's seed other than the fit's own generator (``default_rng(seed)``:
#: the folds, and the anchors' draw), by purpose. Two generators seeded alike draw the same numbers, so each
#: stream has its own seed; the values are those the code always used (changing one changes the outputs:
#: the fit's validation report, the benchmark tables), so they are kept, and said here once.
SEED_STREAMS: dict[str, SeedStream] = {
    "partial_masks": SeedStream(1, 0, (1,), (
        "model/fitting.py: the partial-run masks of out-of-fold fold r, seed + r: each fold draws its own "
        "(model.partial_masks adds its own tag to the generator, [seed + r, 15], so they are not the fit's draws)")),
    "random_baseline": SeedStream(1, 7919, (), (
        "model/report.py: the validation report's random-k baseline, seed + 7919 (the 1,000th prime): the "
        "baseline's item draws must not replay the fit's own stream, default_rng(seed), which shuffles the folds")),
    "bench_random_k": SeedStream(1, 1000, (), (
        "benchmarks (accuracy, peers, adaptive, versions): the random-k baseline's item draws, 1000 + seed: "
        "apart from the protocol's split of the models, default_rng(seed)")),
    "bench_versions_half": SeedStream(1, 1000, (), (
        "benchmarks/versions.py: the half of the training models v1.0 is fitted on, 1000 + seed: apart from the "
        "split, default_rng(seed); the same number as bench_random_k, which draws items, not models")),
    "bench_partial_random": SeedStream(1, 2000, (), (
        "benchmarks/partial.py: the random-n baseline's item draws, 2000 + seed: apart from the split "
        "(seed) and from the random-k baseline (1000 + seed)")),
    "bench_dev_split": SeedStream(100, 10, (1,), (
        "benchmarks/protocols.py: nested dev split r of the training models, 100 * seed + 10 + r: the seeds "
        "of seed s (100 s + 10 ...) never meet another seed's nor a test split's (the seeds 0, 1, 2 ...)")),
    "bench_adaptive_session": SeedStream(100_003, 0, (1_009, 1), (
        "benchmarks/adaptive.py: the session of test model i on split d (0: the test split, r + 1: dev "
        "split r), 100003 * seed + 1009 * d + i: the primes keep every (seed, d, i) apart for i < 1009, d < 99")),
    "bench_adaptive_draw": SeedStream(100_003, 2**31, (1_009, 1, 2**32), (
        "benchmarks/adaptive.py --sessions K: the k-th extra session (k >= 1) of test model i on split d, "
        "2^31 + 100003 * seed + 1009 * d + i + 2^32 k: above every bench_adaptive_session seed (seeds < 21,000), "
        "apart per (seed, d, i) as that stream and per k")),
    "bench_faq_tune": SeedStream(10, 0, (1,), (
        "benchmarks/adaptive.py: FAQ's tuning split of the training models and its tuning draws on split d "
        "(as bench_adaptive_session), 10 * seed + d: apart per (seed, d) for d < 10; FAQ's own sessions use "
        "bench_adaptive_session, the same seeds as the adaptive session's, so both methods meet the same models")),
}


def derived_seed(seed: int, purpose: str, *index: int) -> int:
    """The seed of the random stream ``purpose`` (:data:`SEED_STREAMS` says what each is and why it is
    apart) for the user's ``seed`` and the stream's ``index`` (a fold, a split, a model).

    ``derived_seed(seed, "random_baseline") == seed + 7919``. Not bounded by :data:`SEED_MAX`: numpy's
    generators take any non-negative integer.
    """
    stream = SEED_STREAMS.get(purpose)
    if stream is None:
        raise ValueError(f"no seed stream {purpose!r}; known: {', '.join(SEED_STREAMS)}")
    if len(index) != len(stream.steps):
        raise ValueError(f"seed stream {purpose!r} takes {len(stream.steps)} index(es), got {len(index)}")
    return stream.seed(int(seed), tuple(int(i) for i in index))
