"""Estimate a model's full-benchmark score from its results on a tiny benchmark.

This file is standalone: it needs only numpy and scipy, and is uploaded as-is next to
the tiny dataset together with its side files::

    estimator.json          item ids, anchor ids, gp-IRT lambdas, interval calibration
    irt_parameters.npz      IRT item parameters and per-item weights (no pickle)

Usage::

    from estimator import TinyEstimator
    est = TinyEstimator.load("path/to/tinyMMLU")        # or TinyEstimator.from_hub(...)
    est.estimate([1, 0, 1, ...])                        # k scores in est.anchor_ids order
    est.estimate({"abstract_algebra.12": 1.0, ...})     # any subset of the anchors
    est.estimate(matrix)                                 # 2-D: one result per row

Each result maps ``irt`` (anchor-weighted mean), ``pirt`` (observed anchors plus IRT
predictions for every other item), ``gpirt`` (their calibrated blend), ``ci_low`` and
``ci_high`` (a calibrated 95% interval around ``gpirt``), ``n_answered`` and, for
bundles of several benchmarks, ``scenarios`` with the same keys per benchmark.

How the estimates are computed (Maia Polo et al. 2024, with an interval added):

* the ability ``theta`` is the MAP under the 2PL model on the answered anchors, with
  the fitted abilities of the training models as a Gaussian prior; its Laplace
  covariance ``S`` gives the uncertainty;
* unseen item ``j`` is predicted by the posterior-averaged probability
  ``sigmoid(m_j / sqrt(1 + pi/8 * a_j' S a_j))``, ``m_j = theta . a_j - b_j``;
* ``pirt = sum_seen w_j y_j + sum_unseen w_j p_j`` (``w`` = balance weights);
* ``gpirt = lambda * irt + (1 - lambda) * pirt`` with lambda chosen on held-out
  training models;
* the standard error combines the sampling error of the anchors (per cluster), the
  Bernoulli noise of the unseen items and the uncertainty of theta (delta method), and is
  scaled by a factor fitted so that the interval covers held-out training models.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from scipy.special import expit
from scipy.stats import norm

FORMAT = "tinybenchmarks-estimator"
SCHEMA_VERSION = 1
JSON_NAME = "estimator.json"
NPZ_NAME = "irt_parameters.npz"
MANIFEST_NAME = "manifest.json"
SIDE_FILES = (JSON_NAME, NPZ_NAME)
#: Hub organisation of the released tiny benchmarks (the default source of :func:`evaluate`)
HUB_ORG = "tinyBenchmarks"
#: the original package's ``evaluate(y, bench)`` names -> tiny dataset repository
#: (kept equal to ``BenchmarkSpec.original_bench`` in builder/benchmarks.py by a test)
ORIGINAL_BENCHMARKS = {
    "mmlu": "tinyMMLU", "arc": "tinyAI2_arc", "hellaswag": "tinyHellaswag", "winogrande": "tinyWinogrande",
    "truthfulqa": "tinyTruthfulQA", "gsm8k": "tinyGSM8k", "alpaca": "tinyAlpacaEval", "helm_lite": "tinyHELM",
    "lb": "tinyOpenLLMLeaderboard",
}
_NPZ_KEYS = ("A", "b", "balance", "scenario", "cluster", "anchor_positions", "anchor_weights")


class TinyEstimator:
    """Full-score estimates (irt, p-IRT, gp-IRT, 95% interval) from anchor results.

    Build one with :meth:`load` (a folder of side files) or :meth:`from_hub`; the
    builder creates them with the constructor and :meth:`save`.

    Attributes
    ----------
    item_ids : list of str
        Every item of the full benchmark, in order (N).
    anchor_ids : list of str
        The k anchor item ids, in the order a positional input follows (the tiny
        dataset's row order).
    scenarios : list of str
        Benchmark names (one for a single benchmark; several for a bundle).
    lambdas : dict
        gp-IRT weight of ``irt`` per scenario.
    precision_weights : dict
        For scenarios listed here, gp-IRT weighs ``irt`` per model by inverse variance
        with these calibrated standard-error scales ``(c_irt, c_pirt)`` instead of lambda.
    interval_scale : dict
        Factor applied to the model-based standard error, per scenario.
    metadata : dict
        Free-form build information (benchmark name, version, validation table).
    """

    def __init__(
        self,
        item_ids: Sequence[str],
        anchor_positions: Sequence[int],
        anchor_weights: Sequence[float],
        A: np.ndarray,
        b: np.ndarray,
        balance: np.ndarray,
        scenario_index: np.ndarray,
        scenario_names: Sequence[str],
        cluster: np.ndarray,
        prior_mean: np.ndarray,
        prior_cov: np.ndarray,
        lambdas: Mapping[str, float] | None = None,
        interval_scale: Mapping[str, float] | None = None,
        confidence: float = 0.95,
        metadata: Mapping[str, Any] | None = None,
        precision_weights: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        self.item_ids = [str(i) for i in item_ids]
        N = len(self.item_ids)
        self.A = np.atleast_2d(np.asarray(A, dtype=np.float64))
        self.b = np.asarray(b, dtype=np.float64).reshape(-1)
        if self.A.shape[0] != N or self.b.shape != (N,):
            raise ValueError(f"A must be ({N}, D) and b ({N},), got {self.A.shape} and {self.b.shape}")
        self.n_dims = self.A.shape[1]
        self.balance = np.asarray(balance, dtype=np.float64).reshape(-1)
        self.scenario_index = np.asarray(scenario_index, dtype=np.int64).reshape(-1)
        self.cluster = np.asarray(cluster, dtype=np.int64).reshape(-1)
        for name, arr in (("balance", self.balance), ("scenario_index", self.scenario_index), ("cluster", self.cluster)):
            if arr.shape != (N,):
                raise ValueError(f"{name} must have shape ({N},), got {arr.shape}")
        self.scenarios = [str(s) for s in scenario_names]
        if self.scenario_index.min() < 0 or self.scenario_index.max() >= len(self.scenarios):
            raise ValueError("scenario_index out of range of scenario_names")
        self.anchor_positions = np.asarray(anchor_positions, dtype=np.int64).reshape(-1)
        self.anchor_weights = np.asarray(anchor_weights, dtype=np.float64).reshape(-1)
        k = self.anchor_positions.shape[0]
        if self.anchor_weights.shape != (k,):
            raise ValueError(f"{k} anchors but {self.anchor_weights.shape[0]} anchor weights")
        if k == 0 or self.anchor_positions.min() < 0 or self.anchor_positions.max() >= N:
            raise ValueError("anchor positions out of range")
        if len(set(self.anchor_positions.tolist())) != k:
            raise ValueError("anchor positions must be distinct")
        if self.cluster.min() < 0 or self.cluster.max() >= k:
            raise ValueError("cluster labels must index the anchors")
        self.prior_mean = np.asarray(prior_mean, dtype=np.float64).reshape(-1)
        self.prior_cov = np.atleast_2d(np.asarray(prior_cov, dtype=np.float64))
        if self.prior_mean.shape != (self.n_dims,) or self.prior_cov.shape != (self.n_dims, self.n_dims):
            raise ValueError("prior mean/cov do not match the IRT dimension")
        self.lambdas = {s: float((lambdas or {}).get(s, 0.5)) for s in self.scenarios}
        self.interval_scale = {s: float((interval_scale or {}).get(s, 1.0)) for s in self.scenarios}
        # scenarios whose gp-IRT weights irt and p-IRT per model by calibrated precision
        self.precision_weights = {
            str(s): (float(v[0]), float(v[1])) for s, v in (precision_weights or {}).items() if v is not None
        }
        unknown = set(self.precision_weights) - set(self.scenarios)
        if unknown:
            raise ValueError(f"precision_weights for unknown scenario(s) {sorted(unknown)}")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
        self.confidence = float(confidence)
        self.metadata = dict(metadata or {})
        self._prepare()

    # ----------------------------------------------------------- derived data
    def _prepare(self) -> None:
        self.anchor_ids = [self.item_ids[p] for p in self.anchor_positions]
        self._anchor_index = {a: i for i, a in enumerate(self.anchor_ids)}
        self._item_set = set(self.item_ids)
        self._prior_prec = np.linalg.inv(self.prior_cov)
        self._A_anchor = self.A[self.anchor_positions]
        self._b_anchor = self.b[self.anchor_positions]
        self._anchor_scenario = self.scenario_index[self.anchor_positions]
        # balance weights normalised per scenario (they define the full score)
        S = len(self.scenarios)
        tot = np.bincount(self.scenario_index, weights=self.balance, minlength=S)
        self._w = self.balance / tot[self.scenario_index]
        self._w_anchor = self._w[self.anchor_positions]
        self._one_hot = np.zeros((len(self.item_ids), S))
        self._one_hot[np.arange(len(self.item_ids)), self.scenario_index] = 1.0
        self._scale = np.array([self.interval_scale[s] for s in self.scenarios])
        self._z = float(norm.ppf(0.5 + self.confidence / 2))
        k = len(self.anchor_ids)
        # cluster masses (within scenario) for the sampling error of the weighted mean
        self._cluster_mass = np.bincount(self.cluster, weights=self._w, minlength=k)
        self._order = np.argsort(self.cluster, kind="stable")
        counts = np.bincount(self.cluster, minlength=k)
        self._nonempty = np.flatnonzero(counts)
        self._starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[self._nonempty]
        self._anchor_one_hot = self._one_hot[self.anchor_positions]
        # (N, S) view of a contiguous (S, N) array: numpy 2.x multiplies (n, N) @ (N, 1)
        # about 1000x slower when the right operand is a C-contiguous column
        self._sum_by_scenario = np.ascontiguousarray(self._one_hot.T).T
        self._scenario_items = [np.flatnonzero(self.scenario_index == s) for s in range(S)]
        self._scenario_anchors = [np.flatnonzero(self._anchor_scenario == s) for s in range(S)]
        # outer products a_j a_j' flattened: a_j' S a_j for all items is one product
        self._AA = np.einsum("jd,je->jde", self.A, self.A).reshape(len(self.item_ids), -1)

    # ------------------------------------------------------------------ I/O
    def irt_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)``: discriminations (N, D) and difficulties (N,), in ``item_ids`` order."""
        return self.A.copy(), self.b.copy()

    def save(self, path: str | os.PathLike) -> list[Path]:
        """Write the side files into folder ``path``; returns their paths."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "n_items": len(self.item_ids),
            "n_anchors": len(self.anchor_ids),
            "n_dims": self.n_dims,
            "scenarios": self.scenarios,
            "lambdas": self.lambdas,
            "interval_scale": self.interval_scale,
            "precision_weights": {s: list(v) for s, v in self.precision_weights.items()},
            "confidence": self.confidence,
            "ability_prior": {"mean": self.prior_mean.tolist(), "cov": self.prior_cov.tolist()},
            "anchor_ids": self.anchor_ids,
            "item_ids": self.item_ids,
            "metadata": self.metadata,
        }
        json_path = folder / JSON_NAME
        json_path.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        npz_path = folder / NPZ_NAME
        arrays = {
            "A": self.A, "b": self.b, "balance": self.balance, "scenario": self.scenario_index,
            "cluster": self.cluster, "anchor_positions": self.anchor_positions,
            "anchor_weights": self.anchor_weights,
        }
        _write_npz_deterministic(npz_path, arrays)
        return [json_path, npz_path]

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TinyEstimator":
        """Read the side files from a folder (no pickle: loading runs no code)."""
        folder = Path(path)
        json_path, npz_path = folder / JSON_NAME, folder / NPZ_NAME
        for p in (json_path, npz_path):
            if not p.is_file():
                raise FileNotFoundError(f"{p} not found: is {folder} a tiny benchmark folder?")
        try:
            meta = json.loads(json_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{json_path}: not valid JSON ({exc})") from exc
        if meta.get("format") != FORMAT:
            raise ValueError(f"{json_path}: not a tiny estimator file (format={meta.get('format')!r})")
        if int(meta.get("schema_version", 0)) > SCHEMA_VERSION:
            raise ValueError(
                f"{json_path}: schema version {meta['schema_version']} is newer than this estimator "
                f"({SCHEMA_VERSION}); use the estimator.py shipped next to the data"
            )
        with np.load(npz_path, allow_pickle=False) as z:
            missing = [k for k in _NPZ_KEYS if k not in z.files]
            if missing:
                raise ValueError(f"{npz_path}: missing arrays {missing}")
            arr = {k: z[k] for k in _NPZ_KEYS}
        est = cls(
            item_ids=meta["item_ids"],
            anchor_positions=arr["anchor_positions"],
            anchor_weights=arr["anchor_weights"],
            A=arr["A"], b=arr["b"], balance=arr["balance"], scenario_index=arr["scenario"],
            scenario_names=meta["scenarios"], cluster=arr["cluster"],
            prior_mean=meta["ability_prior"]["mean"], prior_cov=meta["ability_prior"]["cov"],
            lambdas=meta.get("lambdas"), interval_scale=meta.get("interval_scale"),
            confidence=meta.get("confidence", 0.95), metadata=meta.get("metadata"),
            precision_weights=meta.get("precision_weights"),
        )
        if est.anchor_ids != [str(a) for a in meta["anchor_ids"]]:
            raise ValueError(f"{json_path}: anchor_ids disagree with the anchor positions in {npz_path.name}")
        return est

    @classmethod
    def from_hub(
        cls,
        repo_id: str,
        revision: str | None = None,
        subfolder: str | None = None,
        cache_dir: str | None = None,
        token: str | bool | None = None,
    ) -> "TinyEstimator":
        """Download a released version's side files (cached) and load them.

        ``revision`` is a release tag (``"v1.0.0"``), a commit id or a branch (default
        ``main``); ``subfolder`` selects a per-config estimator (``"<config>"``) in
        benchmarks whose configs are fitted separately. ``manifest.json`` and the side
        files are fetched together from ONE commit (``snapshot_download`` resolves the
        revision once), and every side file is checked against the sha256 in that
        manifest: a mismatch, or a side file the manifest does not list, raises
        ``ValueError``. The files live in the Hugging Face
        cache, so once a revision has been downloaded this works offline
        (``HF_HUB_OFFLINE=1``); the hashes are checked again on every load.
        """
        from huggingface_hub import snapshot_download  # lazy: only this method needs it

        prefix = f"{subfolder.strip('/')}/" if subfolder else ""
        where = f"{repo_id}@{revision or 'main'}"
        snapshot = Path(snapshot_download(
            repo_id, repo_type="dataset", revision=revision, cache_dir=cache_dir, token=token,
            allow_patterns=sorted({MANIFEST_NAME, prefix + MANIFEST_NAME, *(prefix + n for n in SIDE_FILES)}),
        ))
        folder = snapshot / prefix if prefix else snapshot
        # the release's manifest sits at the root (paths relative to the root); a subfolder
        # may carry its own (paths relative to the subfolder)
        if (snapshot / MANIFEST_NAME).is_file():
            manifest_path, key_prefix = snapshot / MANIFEST_NAME, prefix
        elif prefix and (folder / MANIFEST_NAME).is_file():
            manifest_path, key_prefix = folder / MANIFEST_NAME, ""
        else:
            raise ValueError(f"{where}: no {MANIFEST_NAME}: not a released tiny benchmark")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{where}: {MANIFEST_NAME} is not valid JSON ({exc})") from exc
        expected = manifest.get("files") if isinstance(manifest, dict) else None
        if not isinstance(expected, dict):
            raise ValueError(f"{where}: {MANIFEST_NAME} has no \"files\" table")
        for name in SIDE_FILES:
            path = folder / name
            if not path.is_file():
                raise FileNotFoundError(f"{where}: {prefix}{name} is missing from the release")
            entry = expected.get(key_prefix + name)
            want = entry.get("sha256") if isinstance(entry, dict) else None
            if not want:
                raise ValueError(f"{where}: the manifest has no sha256 for {prefix}{name}; refusing an unverified file")
            got = _sha256(path)
            if got != want:
                raise ValueError(
                    f"{where}: {prefix}{name} has sha256 {got[:12]}..., the manifest says {str(want)[:12]}...; "
                    "refusing a modified or corrupt file"
                )
        return cls.load(folder)

    # ------------------------------------------------------------- estimate
    def estimate(self, scores: Any) -> dict | list[dict]:
        """Estimate the full-benchmark score.

        Parameters
        ----------
        scores
            * a sequence of k scores in ``anchor_ids`` order (NaN/None = not answered);
            * a mapping ``{item_id: score}`` over any subset of the anchors;
            * a 2-D array (n, k): one model per row (returns a list of results).

            Scores are numbers in [0, 1] (booleans accepted).

        Returns
        -------
        dict (or list of dicts for 2-D input)
            ``irt``, ``pirt``, ``gpirt``, ``ci_low``, ``ci_high``, ``se``,
            ``n_answered``, and ``scenarios`` (per-benchmark results) for bundles.
        """
        Y, single = self._parse(scores)
        comp = self.components(Y)
        results = self._results(comp)
        return results[0] if single else results

    def components(self, Y: np.ndarray) -> dict:
        """Per-scenario estimator parts for a (n, k) anchor matrix (NaN = unanswered).

        Returns arrays of shape (n, S): ``irt``, ``pirt``, ``se_irt``, ``se_pirt``,
        and ``answered`` (n, S), the number of answered anchors per scenario.
        """
        Y = np.asarray(Y, dtype=np.float64)
        obs = ~np.isnan(Y)
        n, S = Y.shape[0], len(self.scenarios)
        Yf = np.where(obs, Y, 0.0)
        # --- irt: anchor-weighted mean over the answered anchors of each scenario
        wa = self.anchor_weights * obs  # (n, k)
        num = (wa * Yf) @ self._anchor_one_hot
        den = wa @ self._anchor_one_hot
        answered = obs.sum(1, keepdims=True) if S == 1 else (obs @ self._anchor_one_hot).astype(np.int64)
        irt = np.divide(num, den, out=np.full((n, S), np.nan), where=den > 0)
        # --- theta: MAP on the answered anchors, Laplace covariance
        theta, cov = _map_abilities(Yf, obs, self._A_anchor, self._b_anchor, self.prior_mean, self._prior_prec)
        # posterior-averaged P(correct): sigmoid(m / sqrt(1 + pi/8 a'Sa)), with a'Sa for
        # all items as one product with the items' outer products
        q = cov.reshape(n, -1) @ self._AA.T  # (n, N)
        q *= np.pi / 8.0
        q += 1.0
        np.sqrt(q, out=q)
        P = theta @ self.A.T
        P -= self.b
        P /= q
        P = expit(P, out=P)
        V = q  # reuse the buffer: V = P (1 - P)
        np.multiply(P, 1.0 - P, out=V)
        # --- pirt: sum over all items of w p, then the answered anchors' y replace their p
        Pa, Va = P[:, self.anchor_positions], V[:, self.anchor_positions]
        wa_items = self._w_anchor * obs  # (n, k): balance weight of answered anchors
        seen_fix = wa_items * (Yf - Pa)
        wV = V * self._w
        pirt = (P * self._w) @ self._sum_by_scenario + seen_fix @ self._anchor_one_hot
        # --- standard errors of pirt: Bernoulli noise of unseen items + theta uncertainty
        bern = (wV * self._w) @ self._sum_by_scenario - (wa_items * self._w_anchor * Va) @ self._anchor_one_hot
        theta_var = np.empty((n, S))
        for s in range(S):
            cols, acols = self._scenario_items[s], self._scenario_anchors[s]
            g = wV @ self.A if S == 1 else wV[:, cols] @ self.A[cols]
            g -= (wa_items[:, acols] * Va[:, acols]) @ self._A_anchor[acols]
            theta_var[:, s] = np.einsum("nd,nde,ne->n", g, cov, g)
        se_pirt = np.sqrt(np.maximum(bern, 0.0) + theta_var)
        se_irt = self._se_weighted_mean(P, obs)
        return {"irt": irt, "pirt": pirt, "se_irt": se_irt, "se_pirt": se_pirt, "answered": answered,
                "theta": theta}

    def _cluster_sums(self, X: np.ndarray) -> np.ndarray:
        """Per-anchor-cluster sums of the columns of X (n, N) -> (n, k)."""
        out = np.zeros((X.shape[0], len(self.anchor_ids)))
        out[:, self._nonempty] = np.add.reduceat(X[:, self._order], self._starts, axis=1)
        return out

    def _se_weighted_mean(self, P: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """Model-based standard error of the anchor-weighted mean (stratified sampling).

        Within cluster c the anchor stands for its members: its error is that of one
        draw, variance ``v_c = mean_w[p(1-p)] + var_w[p]`` over the members (which is
        ``mean_w[p] - mean_w[p]^2``); unanswered anchors move their mass to the answered
        ones, adding the spread of cluster means.
        """
        S = len(self.scenarios)
        n = P.shape[0]
        mass = self._cluster_mass
        safe = np.where(mass > 0, mass, 1.0)
        mean_p = self._cluster_sums(P * self._w) / safe
        v_c = np.maximum(mean_p - mean_p**2, 0.0)  # (n, k)
        out = np.empty((n, S))
        for s in range(S):
            m = self._scenario_anchors[s]
            aw = self.anchor_weights[m]
            W = aw * obs[:, m]
            tot = W.sum(1, keepdims=True)
            Wn = np.divide(W, tot, out=np.zeros_like(W), where=tot > 0)
            var = (Wn**2 * v_c[:, m]).sum(1)
            # unanswered mass: its clusters' means are replaced by the answered average
            miss = 1.0 - tot[:, 0] / aw.sum()
            mu = (aw * mean_p[:, m]).sum(1) / aw.sum()
            spread = (aw * (mean_p[:, m] - mu[:, None]) ** 2).sum(1) / aw.sum()
            out[:, s] = np.sqrt(var + miss**2 * spread)
        return out

    def _results(self, comp: dict) -> list[dict]:
        irt, pirt = comp["irt"], comp["pirt"]
        gp, se = np.empty_like(pirt), np.empty_like(pirt)
        for s, name in enumerate(self.scenarios):
            gp[:, s], se[:, s], _ = blend(irt[:, s], pirt[:, s], comp["se_irt"][:, s], comp["se_pirt"][:, s],
                                          self.lambdas[name], self.precision_weights.get(name))
        se *= self._scale[None, :]
        S = len(self.scenarios)
        out = []
        for i in range(irt.shape[0]):
            per = {}
            for s, name in enumerate(self.scenarios):
                per[name] = _pack(irt[i, s], pirt[i, s], gp[i, s], se[i, s], self._z, int(comp["answered"][i, s]))
            if S == 1:
                res = per[self.scenarios[0]]
            else:
                # bundle: the headline is the mean over benchmarks (Open LLM Leaderboard average)
                se_all = math.sqrt(float((se[i] ** 2).sum())) / S
                res = _pack(float(np.nanmean(irt[i])) if not np.isnan(irt[i]).all() else float("nan"),
                            float(pirt[i].mean()), float(gp[i].mean()), se_all, self._z,
                            int(comp["answered"][i].sum()))
                res["scenarios"] = per
            out.append(res)
        return out

    # -------------------------------------------------------------- parsing
    def _parse(self, scores: Any) -> tuple[np.ndarray, bool]:
        k = len(self.anchor_ids)
        if isinstance(scores, Mapping):
            row = np.full(k, np.nan)
            for key, val in scores.items():
                key = str(key)
                idx = self._anchor_index.get(key)
                if idx is None:
                    if key in self._item_set:
                        raise ValueError(f"item {key!r} is not one of the {k} anchors of this tiny benchmark")
                    raise ValueError(f"unknown item id {key!r}")
                row[idx] = _to_score(val, key)
            Y, single = row[None, :], True
        else:
            if isinstance(scores, (str, bytes)):
                raise ValueError("scores must be numbers, got text")
            try:
                arr = np.asarray(scores, dtype=object)
            except Exception as exc:  # ragged input
                raise ValueError(f"cannot read scores as an array: {exc}") from exc
            if arr.ndim == 1:
                single = True
                arr = arr[None, :]
            elif arr.ndim == 2:
                single = False
            else:
                raise ValueError(
                    f"scores must be 1-D (one model) or 2-D (one model per row), got {arr.ndim} dimensions"
                )
            if arr.shape[1] != k:
                raise ValueError(f"expected {k} scores (one per anchor, in anchor_ids order), got {arr.shape[1]}")
            Y = np.empty(arr.shape, dtype=np.float64)
            for idx, v in np.ndenumerate(arr):
                Y[idx] = _to_score(v, f"position {idx[-1]}")
        if Y.shape[0] == 0:
            raise ValueError("no scores given")
        # one model with nothing answered is a mistake; in a batch such a row gets the
        # population (prior) prediction, irt = NaN and a correspondingly wide interval
        if single and np.isnan(Y).all():
            raise ValueError("no anchor is answered: give at least one score")
        return Y, single


def evaluate(y: Any, benchmark: str, source: str | os.PathLike | None = None, revision: str | None = None) -> dict:
    """The original tinyBenchmarks API: ``evaluate(y, bench) -> {scenario: {"irt", "pirt", "gpirt"}}``.

    Parameters
    ----------
    y : sequence or mapping
        Scores in the tiny dataset's row order (bundles: the configs' tiny splits
        concatenated in config order), or ``{item_id: score}``.
    benchmark : str
        A tiny benchmark name (``"tinyMMLU"``) or the original's short name (``"mmlu"``,
        ``"arc"``, ``"lb"``, ``"helm_lite"``, ``"alpaca"``...).
    source : path or Hub repo id, optional
        Where the side files are: a folder, or a dataset repo. Default: the folder of this
        file when it holds that benchmark's side files, else ``tinyBenchmarks/<name>``.
    revision : str, optional
        Hub revision (a release tag such as ``"v1.0.0"``) when reading from the Hub.

    Returns
    -------
    dict
        ``{key: {"irt", "pirt", "gpirt", "ci_low", "ci_high"}}``, one key per scenario, named
        as the original package names them (``"mmlu"``, ``"truthfulqa"``, ``"alpaca_v2"``...).
    """
    name = ORIGINAL_BENCHMARKS.get(benchmark, benchmark)
    if source is None:
        here = Path(__file__).resolve().parent
        local = here / JSON_NAME
        if local.is_file() and json.loads(local.read_text(encoding="utf-8")).get("metadata", {}).get("benchmark") == name:
            source = here
        else:
            source = f"{HUB_ORG}/{name}"
    if Path(source).is_dir():
        est = TinyEstimator.load(source)
    else:
        est = TinyEstimator.from_hub(str(source), revision=revision)
    if est.metadata.get("benchmark", name) != name:
        raise ValueError(f"{source} holds {est.metadata['benchmark']!r}, not {name!r}")
    res = est.estimate(y)
    if isinstance(res, list):
        raise ValueError("evaluate takes one model's scores; use TinyEstimator.estimate for several")
    keys = est.metadata.get("original_scenarios") or {}
    per = res["scenarios"] if "scenarios" in res else {est.scenarios[0]: res}
    fields = ("irt", "pirt", "gpirt", "ci_low", "ci_high")
    return {keys.get(s, s): {f: r[f] for f in fields} for s, r in per.items()}


def blend(irt, pirt, se_irt, se_pirt, lam, precision=None):
    """gp-IRT and its unscaled standard error from the two estimators.

    Parameters
    ----------
    irt, pirt, se_irt, se_pirt : ndarray
        The anchor-weighted mean, p-IRT and their model-based standard errors (NaN irt:
        nothing answered in that scenario, gp-IRT is then p-IRT).
    lam : float or ndarray
        Fixed weight of ``irt`` (used when ``precision`` is None).
    precision : (c_irt, c_pirt) or None
        Calibrated scales of the two standard errors. When given, each estimate gets its
        own weight ``lam = v_pirt / (v_irt + v_pirt)`` with ``v = (c * se)^2``
        (inverse-variance weighting), which adapts to the anchors a model answered.

    Returns
    -------
    gp, se, lam : ndarray
    """
    irt, pirt = np.asarray(irt, dtype=np.float64), np.asarray(pirt, dtype=np.float64)
    se_irt, se_pirt = np.asarray(se_irt, dtype=np.float64), np.asarray(se_pirt, dtype=np.float64)
    no_irt = np.isnan(irt)
    if precision is None:
        lam_i = np.where(no_irt, 0.0, np.broadcast_to(np.asarray(lam, dtype=np.float64), irt.shape))
        # conservative: the two errors counted as fully correlated
        se = lam_i * np.nan_to_num(se_irt) + (1 - lam_i) * se_pirt
    else:
        v_i = (precision[0] * np.nan_to_num(se_irt)) ** 2
        v_p = (precision[1] * se_pirt) ** 2
        lam_i = np.where(no_irt, 0.0, v_p / np.maximum(v_i + v_p, 1e-300))
        se = np.sqrt(lam_i**2 * v_i + (1 - lam_i) ** 2 * v_p)
    gp = np.where(no_irt, pirt, lam_i * np.nan_to_num(irt) + (1 - lam_i) * pirt)
    return gp, se, lam_i


def _pack(irt, pirt, gp, se, z, answered) -> dict:
    half = z * se
    return {
        "irt": float(irt), "pirt": float(pirt), "gpirt": float(gp),
        "ci_low": float(max(0.0, gp - half)), "ci_high": float(min(1.0, gp + half)),
        "se": float(se), "n_answered": answered,
    }


def _to_score(v: Any, where: str) -> float:
    if v is None:
        return float("nan")
    if isinstance(v, (str, bytes)):
        raise ValueError(f"score at {where} is text ({v!r}); scores must be numbers in [0, 1]")
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (list, tuple, np.ndarray, Mapping)):
        raise ValueError(f"score at {where} is a sequence: rows must all have one score per anchor")
    try:
        x = float(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"score at {where} is not a number: {v!r}") from exc
    if math.isnan(x):
        return x
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"score at {where} is {x!r}; scores must be in [0, 1]")
    return x


def _map_abilities(Yf, obs, A, b, mean, prec, n_newton: int = 25):
    """Vectorised damped Newton for the MAP ability of each row; Laplace covariance."""
    n, D = Yf.shape[0], A.shape[1]
    W = obs.astype(np.float64)
    theta = np.tile(mean, (n, 1))

    def neg_post(th):
        Z = th @ A.T - b
        d = th - mean
        return -(W * (Yf * Z - np.logaddexp(0.0, Z))).sum(1) + 0.5 * np.einsum("nd,de,ne->n", d, prec, d)

    f = neg_post(theta)
    for _ in range(n_newton):
        P = expit(theta @ A.T - b)
        grad = (W * (P - Yf)) @ A + (theta - mean) @ prec
        H = np.einsum("nj,jd,je->nde", W * P * (1 - P), A, A) + prec
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        t = np.ones(n)
        for _ in range(30):
            cand = theta - t[:, None] * step
            fc = neg_post(cand)
            worse = fc > f + 1e-12
            if not worse.any():
                break
            t = np.where(worse, 0.5 * t, t)
        theta, f = cand, np.minimum(fc, f)
        if float(np.abs(t[:, None] * step).max()) < 1e-7:
            break
    P = expit(theta @ A.T - b)
    H = np.einsum("nj,jd,je->nde", W * P * (1 - P), A, A) + prec
    return theta, np.linalg.inv(H)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_npz_deterministic(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` with fixed zip timestamps, so identical inputs give identical bytes."""
    import io
    import zipfile

    tmp = Path(str(path) + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, path)
