"""From a response matrix to a calibrated :class:`~builder.estimator.TinyEstimator`.

The steps (all on the *training* models given; the models a user will later score are
never seen here):

1. split the models into a fit part and an internal validation part (20%);
2. fit the IRT model on the fit part (dimension chosen by held-out log-loss);
3. for several k-means seeds, pick anchors on the item embeddings ``[a_j, b_j]`` and
   estimate the validation models from their anchor results;
4. choose gp-IRT's lambda and the interval scale per scenario on those validation
   estimates (pooled over seeds), then keep the seed whose anchors estimate the
   validation models best;
5. refit the IRT model on all models (warm start; anchors, lambda and interval scale
   kept) so that the shipped item parameters use every model.

:func:`validation_report` measures random-k, irt, p-IRT, gp-IRT, rank correlation and
interval coverage on the validation models.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr
from tqdm.auto import tqdm

from . import __version__
from .anchors import AnchorSet, balance_weights, cluster_anchors, random_anchors
from .calibrate import LAMBDA_GRID, choose_lambda, coverage, interval_scale
from .estimator import TinyEstimator
from .irt import IRTModel
from .matrix import ResponseMatrix

MIN_MODELS = 6


@dataclass
class FitResult:
    estimator: TinyEstimator
    anchors: AnchorSet
    irt: IRTModel
    report: dict = field(default_factory=dict)


def true_scores(Y: np.ndarray, balance: np.ndarray, scenario_index: np.ndarray, n_scenarios: int) -> np.ndarray:
    """Full scores (n, S): balance-weighted mean over each model's evaluated items."""
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    out = np.empty((Y.shape[0], n_scenarios))
    for s in range(n_scenarios):
        m = scenario_index == s
        w = balance[m] * obs[:, m]
        tot = w.sum(1)
        out[:, s] = np.where(tot > 0, (w * Yf[:, m]).sum(1) / np.where(tot > 0, tot, 1), np.nan)
    return out


def _estimator_from(irt: IRTModel, anchors: AnchorSet, matrix: ResponseMatrix, balance, scen_idx, scen_names,
                    lambdas=None, scales=None, metadata=None) -> TinyEstimator:
    mean, cov = irt.ability_prior()
    return TinyEstimator(
        item_ids=matrix.items, anchor_positions=anchors.positions, anchor_weights=anchors.weights,
        A=irt.discrimination_, b=irt.difficulty_, balance=balance, scenario_index=scen_idx,
        scenario_names=scen_names, cluster=anchors.labels, prior_mean=mean, prior_cov=cov,
        lambdas=lambdas, interval_scale=scales, metadata=metadata,
    )


def fit_estimator(
    matrix: ResponseMatrix,
    n_anchors: int = 100,
    seed: int = 0,
    n_dims: int | None = None,
    n_seeds: int = 5,
    validation_fraction: float = 0.2,
    binarize: bool | float = False,
    refit: bool = True,
    irt_params: dict | None = None,
    embedding: str = "irt",
    progress: bool = True,
    metadata: dict | None = None,
) -> FitResult:
    """Fit IRT, select anchors, calibrate; returns the estimator and a validation report.

    Parameters
    ----------
    matrix : ResponseMatrix
        Training models x items.
    n_anchors : int
        k, the size of the tiny benchmark (split evenly over scenarios).
    seed : int
        Seed of the model split, the IRT initialisation and the k-means seeds.
    n_dims : int, optional
        IRT dimension; chosen by validation when None.
    n_seeds : int
        k-means seeds tried; the best on the validation models is kept.
    validation_fraction : float
        Share of the models held out for validation.
    binarize : bool or float
        Passed to :class:`IRTModel` (soft labels by default).
    refit : bool
        Refit the IRT parameters on all models once anchors and calibration are fixed.
    irt_params : dict, optional
        Extra :class:`IRTModel` parameters (priors, ``max_iter``, ``tol``).
    """
    Y = matrix.scores
    n, N = Y.shape
    if n < MIN_MODELS:
        raise ValueError(f"need at least {MIN_MODELS} models to fit and validate, got {n}")
    if int(n_seeds) != n_seeds or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}")
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    scen = matrix.scenarios().astype(str)
    scen_names = list(dict.fromkeys(scen))
    scen_idx = np.array([scen_names.index(s) for s in scen])
    balance = balance_weights(scen, matrix.subscenarios())
    if n_anchors > N:
        raise ValueError(f"cannot pick {n_anchors} anchors from {N} items")

    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_val = max(2, int(round(validation_fraction * n)))
    val, fit_rows = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    truth_val = true_scores(Y[val], balance, scen_idx, len(scen_names))

    steps = tqdm(total=4 + (1 if refit else 0), desc="fit", disable=not progress, file=sys.stderr)
    irt = IRTModel(n_dims=n_dims, binarize=binarize, random_state=seed, **(irt_params or {}))
    steps.set_postfix_str(f"IRT on {len(fit_rows)} models x {N} items")
    irt.fit(Y[fit_rows])
    steps.update()

    # --- anchors for several k-means seeds, each estimated on the validation models
    emb = item_embeddings(irt, embedding)
    candidates = []
    steps.set_postfix_str(f"anchors: {n_seeds} k-means seeds")
    for i in range(n_seeds):
        anchors = cluster_anchors(emb, n_anchors, balance, scen, seed=int(rng.integers(2**31)))
        est = _estimator_from(irt, anchors, matrix, balance, scen_idx, scen_names)
        comp = est.components(Y[val][:, anchors.positions])
        candidates.append((anchors, comp))
    steps.update()

    # --- lambda and interval scale per scenario, pooled over seeds (a property of the
    # method more than of one anchor set; pooling gives n_seeds x more points)
    steps.set_postfix_str("calibration")
    lambdas, scales = {}, {}
    for s, name in enumerate(scen_names):
        irt_all = np.concatenate([c["irt"][:, s] for _, c in candidates])
        pirt_all = np.concatenate([c["pirt"][:, s] for _, c in candidates])
        truth_all = np.tile(truth_val[:, s], len(candidates))
        lam = choose_lambda(irt_all, pirt_all, truth_all)
        se_all = np.concatenate([lam * c["se_irt"][:, s] + (1 - lam) * c["se_pirt"][:, s] for _, c in candidates])
        gp_all = lam * irt_all + (1 - lam) * pirt_all
        lambdas[name], scales[name] = lam, interval_scale(gp_all, se_all, truth_all)
    lam_vec = np.array([lambdas[s] for s in scen_names])
    maes = []
    for anchors, comp in candidates:
        gp = lam_vec * comp["irt"] + (1 - lam_vec) * comp["pirt"]
        maes.append(float(np.nanmean(np.abs(gp - truth_val))))
    best = int(np.argmin(maes))
    anchors = candidates[best][0]
    steps.update()

    report = validation_report(
        Y[val], truth_val, candidates[best][1], lambdas, scales, balance, scen, scen_names, n_anchors, seed
    )
    report.update(
        n_models=n, n_items=N, n_fit_models=int(len(fit_rows)), n_validation_models=int(n_val),
        n_dims=int(irt.n_dims_), dims_scores={str(k): v for k, v in irt.dims_scores_.items()},
        seed_mae=maes, chosen_seed=int(anchors.seed), lambdas=lambdas, interval_scale=scales,
    )
    steps.update()

    if refit:
        steps.set_postfix_str(f"refit IRT on all {n} models")
        irt.refit(Y)
        steps.update()
    steps.close()
    meta = {
        "builder_version": __version__, "n_anchors": int(n_anchors), "seed": int(seed),
        "n_dims": int(irt.n_dims_), "n_training_models": int(n),
        "binarize": binarize, "refit": refit,
        "validation": {k: v for k, v in report.items() if k in ("table", "n_validation_models")},
        **(metadata or {}),
    }
    estimator = _estimator_from(irt, anchors, matrix, balance, scen_idx, scen_names, lambdas, scales, meta)
    return FitResult(estimator, anchors, irt, report)


EMBEDDINGS = ("irt", "profile")


def item_embeddings(irt: IRTModel, kind: str = "irt") -> np.ndarray:
    """Item embeddings for k-means.

    ``"irt"``: ``[a_j, b_j]`` (the original method). ``"profile"``: the item's predicted
    P(correct) for every fitted model, so that items which behave alike across models
    share a cluster (rotation-free and bounded, unlike extreme difficulties).
    """
    if kind == "irt":
        return np.hstack([irt.discrimination_, irt.difficulty_[:, None]])
    if kind == "profile":
        return irt.predict_proba().T
    raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {kind!r}")


def random_baseline(Y: np.ndarray, truth: np.ndarray, balance, scen, k: int, seed: int, draws: int = 50) -> np.ndarray:
    """MAE per scenario of the balance-weighted mean of k random items (mean over draws)."""
    scen_names = list(dict.fromkeys(scen))
    obs = ~np.isnan(Y)
    Yf = np.where(obs, Y, 0.0)
    rng = np.random.default_rng(seed + 7919)
    errs = np.zeros(len(scen_names))
    for _ in range(draws):
        a = random_anchors(k, balance, scen, seed=int(rng.integers(2**31)))
        for s, name in enumerate(scen_names):
            m = np.array([scen[p] == name for p in a.positions])
            pos = a.positions[m]
            w = balance[pos] * obs[:, pos]
            est = (w * Yf[:, pos]).sum(1) / np.maximum(w.sum(1), 1e-12)
            errs[s] += np.nanmean(np.abs(est - truth[:, s])) / draws
    return errs


def validation_report(Yv, truth, comp, lambdas, scales, balance, scen, scen_names, k, seed) -> dict:
    """Random-k / irt / p-IRT / gp-IRT MAE, Spearman and coverage per scenario."""
    from scipy.stats import norm

    z = norm.ppf(0.975)
    rand = random_baseline(Yv, truth, balance, scen, k, seed)
    rows = []
    for s, name in enumerate(scen_names):
        lam, c = lambdas[name], scales[name]
        irt, pirt, t = comp["irt"][:, s], comp["pirt"][:, s], truth[:, s]
        gp = lam * irt + (1 - lam) * pirt
        se = c * (lam * comp["se_irt"][:, s] + (1 - lam) * comp["se_pirt"][:, s])
        rho = spearmanr(gp, t).statistic if len(t) > 2 and np.std(t) > 0 else float("nan")
        rows.append({
            "scenario": name, "models": int(len(t)),
            "random": float(rand[s]), "irt": float(np.nanmean(np.abs(irt - t))),
            "pirt": float(np.mean(np.abs(pirt - t))), "gpirt": float(np.mean(np.abs(gp - t))),
            "spearman": float(rho), "coverage": coverage(gp, z * se, t),
            "lambda": lam, "interval_scale": c,
        })
    return {"table": rows}


def report_markdown(report: dict) -> str:
    """The validation table as Markdown."""
    lines = [
        f"Validation on {report.get('n_validation_models', '?')} held-out training models "
        f"(IRT fitted on {report.get('n_fit_models', '?')}; D = {report.get('n_dims', '?')}). "
        "MAE of the full-score estimate; coverage of the 95% interval.",
        "",
        "| scenario | models | random-k | irt | p-IRT | gp-IRT | Spearman (gp-IRT) | coverage | lambda |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["table"]:
        lines.append(
            f"| {r['scenario']} | {r['models']} | {r['random']:.4f} | {r['irt']:.4f} | {r['pirt']:.4f} | "
            f"{r['gpirt']:.4f} | {r['spearman']:.3f} | {r['coverage']:.0%} | {r['lambda']:.2f} |"
        )
    lines.append("")
    lines.append(
        "The validation models also chose the k-means seed, lambda and the interval scale, "
        "so these numbers are mildly optimistic; see the README's benchmark for test-set numbers."
    )
    return "\n".join(lines) + "\n"
