"""A release's inputs: its version (``X.Y.Z``, tagged ``vX.Y.Z``) and its TOML config.

::

    [release]
    org = "your-org"                  # optional Hub namespace: repos are <org>/<name> (default: your
                                      # token's own namespace, whoami; with no token a local release)
    private = false                   # optional: create new repos private
    fallback = "release-example.toml" # optional: released instead when none of the inputs below exist

    [[benchmark]]
    name = "tinyAlpacaEval"           # a registered benchmark (tinybench_builder.registry.benchmarks)
    responses = "path/read/by/ingest" # or a list of paths (anything `tinybench-builder ingest` reads)
    content = { test = "local path or upstream dataset id" }   # optional, per split
    anchors = 100                     # optional (default: the registry's)
    seed = 0                          # optional
    repo = "someone/tinyX"            # optional: override <org>/<name>
    update_from = "previous"          # optional: keep the previous release's design (or a folder path)

    [[benchmark]]
    spec = "specs/tinyX.toml"         # your own benchmark (tinybench_builder.registry.specs) instead of a registered name
    responses = "x.parquet"

    [[benchmark]]
    name = "tinyHELM"                 # a bundle: responses per config, for the configs that have data
    responses = { mmlu = "helm_mmlu.parquet", gsm = "helm_gsm.parquet" }
    allow_missing_content = true      # rows with item ids only (no instance text) may be pushed

:func:`load_config` reads and checks it into a frozen :class:`ReleaseConfig`; every problem is
a :class:`ConfigError` naming the file, the table and the key. Also the errors of a release
(:class:`ReleaseError`: the CLI prints the message, no traceback) and the version rules.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from tinybench_builder.registry import BenchmarkSpec
from tinybench_builder.dataset import BuildOptions, check_repo_id, hub_id_problem
from tinybench_builder import params
from tinybench_builder.errors import BuildError, ConfigError, ReleaseError

__all__ = [
    "ReleaseError", "ConfigError", "parse_version", "version_tag", "tag_version", "latest_release_below",
    "BenchmarkEntry", "ReleaseConfig", "load_config", "default_out_dir", "UPDATE_FROM_PREVIOUS", "version_rule",
]


# ============================================================================ versions
def parse_version(version: str) -> tuple[int, int, int]:
    """``"1.2.0"`` -> ``(1, 2, 0)``; a leading ``v`` is accepted. ConfigError otherwise (the one
    version rule, :func:`tinybench_builder.params.parse_version`, parsed by ``packaging.version``)."""
    return params.parse_version(version, error=ConfigError)


def normalize_version(version: str) -> str:
    """``"v1.02.0"`` is refused, ``"v1.2.0"`` -> ``"1.2.0"``."""
    return ".".join(map(str, parse_version(version)))


def version_tag(version: str) -> str:
    """The Hub tag of a release: ``"1.2.0"`` -> ``"v1.2.0"``."""
    return "v" + normalize_version(version)


def tag_version(tag: str) -> tuple[int, int, int] | None:
    """``"v1.2.0"`` -> ``(1, 2, 0)``; None for any other tag."""
    if not (isinstance(tag, str) and tag.startswith("v") and tag[1:2].isdigit()):
        return None
    try:
        return parse_version(tag[1:])
    except ConfigError:
        return None


def latest_release_below(tags: Iterable[str], version: str) -> str | None:
    """The highest ``vX.Y.Z`` tag strictly below ``version`` (other tags ignored), or None."""
    v = parse_version(version)
    best: tuple[tuple[int, int, int], str] | None = None
    for t in tags:
        tv = tag_version(t)
        if tv is not None and tv < v and (best is None or tv > best[0]):
            best = (tv, t)
    return best[1] if best else None


def version_rule(previous: str, version: str, changes: Sequence[str]) -> str | None:
    """Why releasing ``version`` after ``previous`` (versions or tags) with these design
    ``changes`` breaks the versioning rule, or None when it does not.

    The rule: a patch or minor version keeps the previous version's anchors (every result
    logged against it stays a result of the new one); new anchors (another design) need a new
    major version. Configs may be added in a minor version (their anchors are new rows, the
    others' are kept).
    """
    old, new = parse_version(previous), parse_version(version)
    if not changes or new[0] > old[0]:
        return None
    kind = "patch" if new[:2] == old[:2] else "minor"
    return (f"{normalize_version(version)} is a {kind} version of {normalize_version(previous)} but changes its design "
            f"({'; '.join(changes)}): a patch or minor version must keep the previous version's anchors (build it "
            f'with update_from = "previous" / --update-from); new anchors need a new major version '
            f"({new[0] + 1}.0.0)")


def default_out_dir(version: str) -> Path:
    """``build/release-X.Y.Z`` (relative to the working directory)."""
    return Path("build") / f"release-{normalize_version(version)}"


# ============================================================================ the config
@dataclass(frozen=True)
class BenchmarkEntry:
    """One ``[[benchmark]]`` table of the release config (paths already resolved)."""

    name: str
    responses: tuple[Path, ...]
    content: Mapping[str, str] | None = None
    anchors: int | None = None
    seed: int = 0
    repo: str | None = None  # full repo id override; default <org>/<name>
    spec: BenchmarkSpec | None = None  # a custom benchmark (``spec = "FILE.toml"``)
    responses_by_config: Mapping[str, tuple[Path, ...]] | None = None  # a bundle's responses per config
    allow_missing_content: bool = False  # may --push a build whose rows carry item ids only
    #: keep a previous version's design: "previous" (the previous release, fetched from the Hub)
    #: or the folder of a build of it (resolved path); None: a fresh design
    update_from: str | Path | None = None

    def repo_id(self, org: str) -> str:
        return self.repo or f"{org}/{self.name}"

    def benchmark(self) -> BenchmarkSpec:
        """The benchmark's spec: the custom one, else the registry's entry."""
        from tinybench_builder.registry import get_benchmark

        return self.spec if self.spec is not None else get_benchmark(self.name)

    def build_target(self) -> str | BenchmarkSpec:
        """What ``build_benchmark`` gets as its benchmark: the registered name, or the custom spec."""
        return self.spec if self.spec is not None else self.name

    def responses_arg(self) -> str | list[str] | dict[str, str | list[str]]:
        """What :func:`tinybench_builder.dataset.build.build_benchmark` takes: one path, a list, or (a bundle) a
        mapping config -> path(s)."""
        def arg(paths):
            return str(paths[0]) if len(paths) == 1 else [str(p) for p in paths]

        if self.responses_by_config is not None:
            return {c: arg(paths) for c, paths in self.responses_by_config.items()}
        return arg(self.responses)

    def build_options(self, org: str, version: str) -> BuildOptions:
        """This benchmark's build settings in release ``version`` (repo id and tag shown in the card)."""
        return BuildOptions(anchors=self.anchors, seed=self.seed, version=normalize_version(version),
                            repo_id=self.repo_id(org), tag=version_tag(version))


@dataclass(frozen=True)
class ReleaseConfig:
    """A parsed release config: ``org`` plus the benchmarks, in file order."""

    path: Path
    org: str
    benchmarks: tuple[BenchmarkEntry, ...]
    private: bool = False
    #: ``[release] fallback``: the config released instead when none of this one's inputs exist
    fallback: Path | None = None
    #: where ``org`` comes from: ``"config"`` (``[release] org``), ``"token"`` (the Hub token's own
    #: namespace, ``whoami``) or ``"local"`` (neither: a local release, which ``--push`` refuses)
    org_from: str = "config"
    #: the config whose inputs were missing when this one is its fallback (else None), and those inputs
    fallback_from: Path | None = None
    fallback_missing: tuple[Path, ...] = ()

    def inputs(self) -> list[Path]:
        """The local input files and folders (responses, local content), in config order, no repeats."""
        out: dict[Path, None] = {}
        for b in self.benchmarks:
            out.update(dict.fromkeys(b.responses))
            out.update(dict.fromkeys(Path(v) for v in (b.content or {}).values() if not _is_hub_value(v)))
        return list(out)

    def describe_inputs(self, cwd: str | os.PathLike | None = None) -> str:
        """One line saying which data the release reads: the folders of its inputs (relative to
        ``cwd`` when below it) and the config, and why, for a fallback."""
        base = Path(cwd or os.getcwd()).resolve()

        def show(p: Path) -> str:  # relative when that is shorter
            try:
                rel = os.path.relpath(p, base)
            except ValueError:  # another drive (Windows)
                return str(p)
            return rel if len(rel) <= len(str(p)) else str(p)

        folders = ", ".join(dict.fromkeys(show(p.parent) for p in self.inputs())) or "(no local inputs)"
        line = f"data: {folders} ({show(self.path.resolve())})"
        if self.fallback_from is not None:
            try:
                where = f" (nothing under {show(Path(os.path.commonpath(self.fallback_missing)))})"
            except ValueError:  # no inputs, or on several drives
                where = ""
            line += (f", the fallback of {show(self.fallback_from.resolve())}: none of its inputs exist here{where}")
        return line

    def select(self, names: Sequence[str] | None) -> "ReleaseConfig":
        """Only the benchmarks in ``names`` (ConfigError if one is not in the config)."""
        if not names:
            return self
        known = [b.name for b in self.benchmarks]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(f"--only {', '.join(unknown)}: not in {self.path} (it has: {', '.join(known)})")
        return dataclasses.replace(self, benchmarks=tuple(b for b in self.benchmarks if b.name in names))


#: file endings taken as local data files (not Hub dataset ids) in ``content``
_DATA_SUFFIXES = (".parquet", ".csv", ".tsv", ".json", ".jsonl", ".arrow", ".pkl", ".pickle", ".txt", ".gz", ".zip")


def _rule(rule: params.IntRule) -> Callable[[Any], bool]:
    """A config key checked by a shared parameter's one rule (tinybench_builder/params.py)."""
    return lambda value: rule.problem(value) is None


@dataclass(frozen=True)
class _Key:
    """One optional scalar key: its check and the message when the value fails it."""

    check: Callable[[Any], bool]
    message: str  # formatted with value=...


#: [release] keys (all optional: without ``org``, the token's own namespace)
_RELEASE_KEYS = {
    "org": _Key(lambda v: hub_id_problem(v, "org", (0,)) is None,
                "[release] org must be a Hub user or organization name, got {value!r}"),
    "private": _Key(lambda v: isinstance(v, bool), "[release] private must be true or false, got {value!r}"),
    "fallback": _Key(lambda v: isinstance(v, str) and bool(v.strip()),
                     "[release] fallback must be the path of another release config, got {value!r}"),
}
#: [[benchmark]] scalar keys (``name``, ``responses`` and ``content`` are checked on their own)
_BENCHMARK_KEYS = {
    "anchors": _Key(_rule(params.ANCHORS), f"anchors {params.ANCHORS.text}, got {{value!r}}"),
    "seed": _Key(_rule(params.SEED), f"seed {params.SEED.text}, got {{value!r}}"),
    "repo": _Key(lambda v: hub_id_problem(v, "repo") is None, 'repo must be "owner/name", got {value!r}'),
}
_BENCHMARK_KEYS["allow_missing_content"] = _Key(lambda v: isinstance(v, bool),
                                                "allow_missing_content must be true or false, got {value!r}")
_BENCHMARK_ALL_KEYS = {"name", "spec", "responses", "content", "update_from", *_BENCHMARK_KEYS}
#: ``update_from = "previous"``: the previous release of the repository, fetched from the Hub
UPDATE_FROM_PREVIOUS = "previous"


def _update_from(value: Any, base: Path, ctx: str, check_paths: bool) -> str | Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f'{ctx}: update_from must be "previous" (the previous release) or the folder of a build of '
                          f"it, got {value!r}")
    if value == UPDATE_FROM_PREVIOUS:
        return value
    p = _resolve(value, base)
    if check_paths and not p.is_dir():
        raise ConfigError(f'{ctx}: update_from {value!r} is not a folder (looked at {p}); use "previous" for the '
                          "previous release on the Hub")
    return p


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found") from None
    except IsADirectoryError:
        raise ConfigError(f"config {path} is a folder, not a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a release config (nested too deeply)") from None


def _checked(table: Mapping[str, Any], keys: Mapping[str, _Key], ctx: str) -> dict[str, Any]:
    """The values of ``keys`` present in ``table``, each checked."""
    out = {}
    for name, key in keys.items():
        if name in table:
            if not key.check(table[name]):
                raise ConfigError(f"{ctx}: {key.message.format(value=table[name])}")
            out[name] = table[name]
    return out


def _is_hub_value(value: str) -> bool:
    """A resolved ``content`` value that names a Hub dataset (local paths are absolute once resolved)."""
    return value.startswith("hub:") or not os.path.isabs(value)


def _is_local_path(value: str, base: Path) -> bool:
    """``content`` values: a local path, or else an upstream Hub dataset id."""
    if value.startswith("hub:"):
        return False
    if value.startswith(("/", "./", "../", "~", ".\\", "..\\")) or os.path.isabs(value):
        return True
    if value.lower().endswith(_DATA_SUFFIXES):
        return True
    return (base / value).exists()


def _resolve(value: str, base: Path) -> Path:
    p = Path(os.path.expanduser(value))
    return Path(os.path.normpath(p if p.is_absolute() else base / p))


def _responses_by_config(value: dict, spec: BenchmarkSpec, base: Path, ctx: str,
                         missing: list | None) -> dict[str, tuple[Path, ...]]:
    """``responses = { CONFIG = "path" or [paths] }``: a bundle's responses per config."""
    if len(spec.configs) < 2:
        raise ConfigError(f"{ctx}: responses per config (a table) are for bundles; {spec.name} has one config: "
                          "give a path or a list of paths")
    names = [c.name for c in spec.configs]
    bad = [k for k in value if k not in names]
    if bad:
        raise ConfigError(f"{ctx}: responses for unknown config(s) {bad}; {spec.name} has: {', '.join(names)}")
    if not value:
        raise ConfigError(f"{ctx}: responses = {{}} names no config")
    return {k: _responses(v, base, f"{ctx}: responses.{k}", missing) for k, v in value.items()}


def _responses(value: Any, base: Path, ctx: str, missing: list | None) -> tuple[Path, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(r, str) and r for r in values):
        raise ConfigError(f"{ctx}: responses must be a path or a list of paths (anything `tinybench-builder ingest` reads)"
                          ", or for a bundle a table of them per config")
    paths = tuple(_resolve(r, base) for r in values)
    if missing is not None:
        missing += [(f"{ctx}: responses {r!r} not found (looked at {p})", p)
                    for r, p in zip(values, paths) if not p.exists()]
    return paths


def _content(value: Any, base: Path, ctx: str, missing: list | None) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
        raise ConfigError(f"{ctx}: content must be a table {{ split = \"path or dataset id\" }}")
    out = {}
    for split, v in value.items():
        if _is_local_path(v, base):
            p = _resolve(v, base)
            if missing is not None and not p.exists():
                missing.append((f"{ctx}: content for split {split!r}: {v!r} not found (looked at {p})", p))
            out[split] = str(p)
        elif hub_id_problem(v.removeprefix("hub:"), "content", (0, 1)) is None:
            out[split] = v
        else:
            raise ConfigError(f"{ctx}: content for split {split!r}: {v!r} is neither an existing "
                              "path nor a Hub dataset id (owner/name)")
    return out


def _benchmark(t: Any, i: int, where: str, base: Path, registered: Iterable[str], seen: set[str],
               missing: list | None) -> BenchmarkEntry:
    ctx = f"{where}: [[benchmark]] #{i}"
    if not isinstance(t, dict):
        raise ConfigError(f"{ctx}: must be a table")
    bad = set(t) - _BENCHMARK_ALL_KEYS
    if bad:
        raise ConfigError(f"{ctx}: unknown key(s) {sorted(bad)} (known: {sorted(_BENCHMARK_ALL_KEYS)})")
    name = t.get("name")
    spec = None
    if "spec" in t:
        spec = _spec(t["spec"], base, ctx)
        if name is not None and name != spec.name:
            raise ConfigError(f"{ctx}: name {name!r} differs from the spec's name {spec.name!r} (leave name out)")
        name = spec.name
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{ctx}: missing name = \"...\" (a registered benchmark) or spec = \"FILE.toml\"")
    ctx = f"{where}: benchmark {name!r}"
    registered = sorted(registered)
    if spec is None and name not in registered:
        raise ConfigError(f"{ctx}: unknown tiny benchmark; registered: {', '.join(registered) or '(none)'} "
                          "(for your own benchmark, give spec = \"FILE.toml\")")
    if name in seen:
        raise ConfigError(f"{ctx}: listed twice")
    seen.add(name)
    responses, by_config = t.get("responses"), None
    if isinstance(responses, dict):
        from tinybench_builder.registry import get_benchmark

        by_config = _responses_by_config(responses, spec or get_benchmark(name), base, ctx, missing)
        paths = tuple(p for ps in by_config.values() for p in ps)
    else:
        paths = _responses(responses, base, ctx, missing)
    return BenchmarkEntry(name=name, responses=paths, content=_content(t.get("content"), base, ctx, missing),
                          spec=spec, responses_by_config=by_config,
                          update_from=_update_from(t.get("update_from"), base, ctx, missing is not None),
                          **_checked(t, _BENCHMARK_KEYS, ctx))


def _spec(value: Any, base: Path, ctx: str) -> BenchmarkSpec:
    """``spec = "FILE.toml"``: the custom benchmark the file describes (path relative to the config)."""
    from tinybench_builder.registry import SpecError, load_spec_file

    if not isinstance(value, str) or not value:
        raise ConfigError(f"{ctx}: spec must be the path of a spec file (TOML)")
    try:
        return load_spec_file(_resolve(value, base))
    except SpecError as exc:
        raise ConfigError(f"{ctx}: {exc}") from None


def load_config(path: str | os.PathLike, *, check_paths: bool = True) -> ReleaseConfig:
    """Read and check a release config (the format is in this module's docstring).

    Relative paths resolve against the config file's folder. ``content`` values are local
    paths when they start with ``/``, ``./``, ``../`` or ``~``, end with a data-file suffix or
    exist; anything else is an upstream Hub dataset id (``owner/name`` or ``hub:owner/name``).
    With ``check_paths`` local paths must exist: when none of them does and ``[release]
    fallback = "OTHER.toml"`` is set, OTHER (relative to this file) is loaded instead and
    returned with ``fallback_from`` set (its own inputs must exist); when some are missing the
    error names every missing one. Raises :class:`ConfigError` on any problem.
    """
    config, missing = _load_config(Path(path), check_paths)
    if not missing:
        return config
    first_seen: dict[Path, str] = {}
    for msg, p in missing:  # a path several benchmarks read (a bundle and its singles) counts once
        first_seen.setdefault(p, msg)
    missing = [(msg, p) for p, msg in first_seen.items()]
    if config.fallback is not None and {p for _, p in missing} == set(config.inputs()):
        if not config.fallback.is_file():
            raise ConfigError(f"{path}: none of its inputs exist and its fallback config {config.fallback} "
                              "is not there either")
        other, still = _load_config(config.fallback, True)
        if still:
            raise ConfigError(f"{missing[0][0]}; the fallback config has missing inputs too: {still[0][0]}")
        return dataclasses.replace(other, fallback=None, fallback_from=config.path,
                                   fallback_missing=tuple(p for _, p in missing))
    first, rest = missing[0][0], [str(p) for _, p in missing[1:]]
    more = f"; {len(rest)} more input(s) missing: {', '.join(rest[:5])}{', ...' if len(rest) > 5 else ''}" if rest else ""
    raise ConfigError(first + more)


def _load_config(path: Path, check_paths: bool) -> tuple[ReleaseConfig, list[tuple[str, Path]]]:
    """The config and (with ``check_paths``) its missing inputs: ``[(message, path), ...]``."""
    from tinybench_builder.registry import REGISTRY

    data = _load_toml(path)
    base = path.resolve().parent
    where = str(path)
    unknown_top = set(data) - {"release", "benchmark"}
    if unknown_top:
        raise ConfigError(f"{where}: unknown top-level key(s) {sorted(unknown_top)}; expected [release] and [[benchmark]]")
    rel = data.get("release")
    if not isinstance(rel, dict):
        raise ConfigError(f"{where}: missing [release] table (org = \"...\", or nothing to use your own namespace)")
    bad = set(rel) - set(_RELEASE_KEYS)
    if bad:
        raise ConfigError(f"{where}: unknown key(s) in [release]: {sorted(bad)} (known: {sorted(_RELEASE_KEYS)})")
    release = _checked(rel, _RELEASE_KEYS, where)
    if "org" in release:
        org, org_from = release["org"], "config"
    else:  # never a default organisation: the token's own namespace, or a local release
        from tinybench_builder.dataset import LOCAL_NAMESPACE, own_namespace

        mine = own_namespace()
        org, org_from = (mine, "token") if mine else (LOCAL_NAMESPACE, "local")
    tables = data.get("benchmark")
    if tables is None:
        raise ConfigError(f"{where}: no [[benchmark]] tables: nothing to release")
    if not isinstance(tables, list):
        raise ConfigError(f"{where}: write benchmarks as [[benchmark]] (an array of tables)")
    seen: set[str] = set()
    missing: list[tuple[str, Path]] | None = [] if check_paths else None
    entries = [_benchmark(t, i, where, base, REGISTRY, seen, missing) for i, t in enumerate(tables, 1)]
    if not entries:
        raise ConfigError(f"{where}: no [[benchmark]] tables: nothing to release")
    repos = [e.repo_id(org) for e in entries]
    for e, repo in zip(entries, repos):
        try:
            check_repo_id(repo, "repo" if e.repo else "the repository <org>/<name>")
        except BuildError as exc:
            raise ConfigError(f"{where}: benchmark {e.name!r}: {exc}") from None
    dup = sorted({r for r in repos if repos.count(r) > 1})
    if dup:
        raise ConfigError(f"{where}: several benchmarks publish to {', '.join(dup)}")
    fallback = _resolve(release["fallback"], base) if "fallback" in release else None
    if fallback is not None and fallback == path.resolve():
        raise ConfigError(f"{where}: [release] fallback names the config itself")
    config = ReleaseConfig(path=path, org=org, benchmarks=tuple(entries),
                           private=release.get("private", False), fallback=fallback, org_from=org_from)
    return config, list(missing or [])
