"""Side-by-side tables of the adaptive session and FAQ (:mod:`benchmarks.faq`), from the rows of
:func:`benchmarks.adaptive.run_split`.

Per protocol, budget and matrix, both methods on the same test models, sessions pooled over the
seeds (and the development protocol's nested splits):

* **ESS (var/MSE)**: the variance of the plain mean of n random items drawn without replacement,
  ``(1 - n/N) S^2 / n`` (each model's own ``S^2``), averaged over the sessions, over the method's
  mean squared error: how many random items one asked item is worth;
* **ESS (width, FAQ's)**: ``(mean uniform width / mean method width)^2``, the uniform reference
  being FAQ's own (Bernoulli(n/N) sampling, Horvitz-Thompson mean, z interval clipped to [0, 1]:
  :func:`benchmarks.faq.uniform_reference`), FAQ's published definition;
* **MAE / random-n**, **coverage** and mean **width** of the 95% interval;
* **ours / FAQ**: the ratio of the two ESS (var/MSE), ``MSE_FAQ / MSE_ours``, with a 95% paired
  bootstrap interval over the test models (a model and all its sessions are resampled
  together, the same models for both methods); **ahead** when the interval is above 1,
  **behind** when below, **level** otherwise. Over the matrices: the geometric mean of the
  ratios, its interval from the same bootstrap (each matrix resampled independently).

Coverage is "binomially consistent with 92-97%" when the Clopper-Pearson 95% interval of the
coverage (covered sessions of all sessions) meets [92%, 97%]. Sessions of one model at several
seeds are not independent, so this is a lenient check.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist

from benchmarks import protocols

__all__ = ["FAQ_BUDGETS", "GOAL_RATIO", "collect", "compare", "tables", "goal_lines"]

#: the budgets of the comparison (issue 30): 2.5% and 10% of the items, and 100 items
FAQ_BUDGETS = ("2.5%", "10%", "100")
#: ESS (var/MSE) of ours over FAQ's, geometric mean over the matrices, at 10% of N and 100 items
GOAL_RATIO = 1.3
GOAL_BUDGETS = ("10%", "100")
COVERAGE_GOAL = (0.92, 0.97)
BOOTSTRAP = 2000


def collect(rows: list[dict], protocol: str, spec: str) -> dict[str, dict]:
    """Per matrix, every session of both methods at one budget: arrays over (seed, test model)."""
    out: dict[str, dict] = {}
    for r in rows:
        if r["protocol"] != protocol or spec not in r["budgets"] or "faq" not in r["budgets"][spec]:
            continue
        b = r["budgets"][spec]
        d = out.setdefault(r["dataset"], {k: [] for k in ("truth", "var", "unif", "model", "ours_s", "ours_lo",
                                                               "ours_hi", "faq_s", "faq_lo", "faq_hi", "rand")}
                           | {"n": b["n"], "n_train": r["n_train"], "n_test": r["n_test"], "hyper": []})
        d["truth"] += r["truth"]
        d["var"] += b["var_random"]
        d["unif"] += b["unif_width"]
        d["model"] += r["test_models"]
        d["rand"].append(b["mae_random"])
        for key, src in (("ours", b["adaptive"]), ("faq", b["faq"])):
            d[f"{key}_s"] += src["score"]
            d[f"{key}_lo"] += src["ci_low"]
            d[f"{key}_hi"] += src["ci_high"]
        if not r.get("draw"):  # one split's hyperparameters once, whatever its number of session draws
            d["hyper"].append(r["faq_hyper"])
    return {name: {k: (np.asarray(v) if isinstance(v, list) and k not in ("model", "hyper") else v)
                   for k, v in d.items()} for name, d in out.items()}


def _metrics(d: dict, m: str) -> dict:
    e = d[f"{m}_s"] - d["truth"]
    lo, hi = d[f"{m}_lo"], d[f"{m}_hi"]
    cov = protocols.covers(lo, d["truth"], hi)
    w = hi - lo
    return {"ess": float(np.mean(d["var"]) / np.mean(e ** 2)), "ess_width": float((np.mean(d["unif"]) / np.mean(w)) ** 2),
            "ratio_rand": float(np.mean(np.abs(e)) / np.mean(d["rand"])), "coverage": float(np.mean(cov)),
            "covered": int(cov.sum()), "sessions": int(cov.size), "width": float(np.mean(w)), "bias": float(np.mean(e))}


def _binomially_consistent(k: int, n: int, lo: float = COVERAGE_GOAL[0], hi: float = COVERAGE_GOAL[1]) -> bool:
    """The Clopper-Pearson 95% interval of k / n meets [lo, hi]."""
    low = 0.0 if k == 0 else float(beta_dist.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta_dist.ppf(0.975, k + 1, n - k))
    return high >= lo and low <= hi


def compare(per: dict[str, dict], seed: int = 0) -> dict:
    """Metrics of both methods per matrix, the paired bootstrap of the ESS ratio, the geometric mean."""
    rng = np.random.default_rng(seed)
    names = list(per)
    res: dict[str, Any] = {"matrices": {}}
    boots = np.zeros((BOOTSTRAP, len(names)))
    for j, name in enumerate(names):
        d = per[name]
        e_o2, e_f2 = (d["ours_s"] - d["truth"]) ** 2, (d["faq_s"] - d["truth"]) ** 2
        models = np.asarray(d["model"])
        uniq, inv = np.unique(models, return_inverse=True)
        so = np.bincount(inv, weights=e_o2, minlength=uniq.size)
        sf = np.bincount(inv, weights=e_f2, minlength=uniq.size)
        for b in range(BOOTSTRAP):
            pick = np.bincount(rng.integers(0, uniq.size, uniq.size), minlength=uniq.size)
            boots[b, j] = float(pick @ sf) / max(float(pick @ so), 1e-300)
        ratio = float(e_f2.mean() / e_o2.mean())
        lo, hi = np.quantile(boots[:, j], [0.025, 0.975])
        verdict = "ahead" if lo > 1 else ("behind" if hi < 1 else "level")
        ours, faq = _metrics(d, "ours"), _metrics(d, "faq")
        res["matrices"][name] = {"ours": ours, "faq": faq, "ratio": ratio, "ratio_ci": [float(lo), float(hi)],
                                 "verdict": verdict, "n": d["n"], "n_train": d["n_train"], "n_test": d["n_test"],
                                 "hyper": d["hyper"],
                                 "ours_cov_ok": _binomially_consistent(ours["covered"], ours["sessions"])}
    if names:
        ratios = np.array([res["matrices"][n]["ratio"] for n in names])
        res["geomean"] = float(np.exp(np.mean(np.log(ratios))))
        g = np.exp(np.mean(np.log(boots), 1))
        res["geomean_ci"] = [float(x) for x in np.quantile(g, [0.025, 0.975])]
    return res


def _hyper_text(hypers: list[dict], spec: str) -> tuple[str, str]:
    """FAQ's chosen K, lambda and setting over the splits (the most common first, with counts)."""
    kl = Counter(f"{h['K']}, {h['lambda']:g}" for h in hypers)
    st = Counter(", ".join(f"{x:g}" for x in h["settings"][spec]) for h in hypers)

    def fmt(c: Counter) -> str:
        return "; ".join(f"{k} ({v})" if len(c) > 1 else k for k, v in c.most_common(2)) + (" ..." if len(c) > 2 else "")
    return fmt(kl), fmt(st)


def tables(rows: list[dict], protocol: str, budgets: tuple) -> tuple[str, dict]:
    """Markdown: a summary over the matrices per budget, then one side-by-side table per budget."""
    specs = [s for s in budgets if s in FAQ_BUDGETS]
    comps = {spec: compare(collect(rows, protocol, spec)) for spec in specs}
    comps = {spec: c for spec, c in comps.items() if c["matrices"]}
    head = [("| budget | items n | ESS ours (var/MSE) | ESS FAQ (var/MSE) | ours / FAQ, geometric mean [95% CI] "
            "| ahead / level / behind | ESS ours (FAQ's width def.) | ESS FAQ (FAQ's width def.) "
            "| MAE / random-n ours | FAQ | coverage ours (min-max) | coverage FAQ (min-max) | width ours | width FAQ |"),
            "|---|---|---:|---:|---|---|---:|---:|---:|---:|---|---|---:|---:|"]
    parts = []
    for spec, c in comps.items():
        mats = list(c["matrices"].values())
        ns = sorted({m["n"] for m in mats})
        verdicts = Counter(m["verdict"] for m in mats)

        def mean(method: str, key: str, mats=mats) -> float:
            return float(np.mean([m[method][key] for m in mats]))

        def span(method: str, mats=mats) -> str:
            v = [m[method]["coverage"] for m in mats]
            return f"{np.mean(v):.1%} ({min(v):.0%}-{max(v):.0%})"
        head.append(f"| {spec} | {ns[0]}{'' if len(ns) == 1 else f'-{ns[-1]}'} | {mean('ours', 'ess'):.2f} | "
                    f"{mean('faq', 'ess'):.2f} | **{c['geomean']:.2f}x** [{c['geomean_ci'][0]:.2f}, "
                    f"{c['geomean_ci'][1]:.2f}] | {verdicts['ahead']} / {verdicts['level']} / {verdicts['behind']} | "
                    f"{mean('ours', 'ess_width'):.2f} | {mean('faq', 'ess_width'):.2f} | "
                    f"{mean('ours', 'ratio_rand'):.2f} | {mean('faq', 'ratio_rand'):.2f} | {span('ours')} | {span('faq')} | "
                    f"{mean('ours', 'width'):.3f} | {mean('faq', 'width'):.3f} |")
        t = [(f"Budget {spec}: ESS under both definitions, MAE / random-n, coverage and width, ours and FAQ "
             "on the same test models"),
             "",
             ("| dataset | train/test | n | ESS ours | ESS FAQ | ours / FAQ [95% CI] | verdict | ESS width ours | "
             "ESS width FAQ | MAE/rnd ours | MAE/rnd FAQ | cov. ours | cov. FAQ | width ours | width FAQ | "
             "FAQ K, lambda | FAQ beta0, rho, gamma, tau |"),
             "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for name, m in c["matrices"].items():
            o, f = m["ours"], m["faq"]
            kl, st = _hyper_text(m["hyper"], spec)
            cov_flag = "" if m["ours_cov_ok"] else " (!)"
            t.append(f"| {name} | {m['n_train']}/{m['n_test']} | {m['n']} | {o['ess']:.2f} | {f['ess']:.2f} | "
                     f"{m['ratio']:.2f} [{m['ratio_ci'][0]:.2f}, {m['ratio_ci'][1]:.2f}] | {m['verdict']} | "
                     f"{o['ess_width']:.2f} | {f['ess_width']:.2f} | {o['ratio_rand']:.2f} | {f['ratio_rand']:.2f} | "
                     f"{o['coverage']:.1%}{cov_flag} | {f['coverage']:.1%} | {o['width']:.3f} | {f['width']:.3f} | "
                     f"{kl} | {st} |")
        parts.append("\n".join(t))
    text = "\n".join(head) + "\n\n" + "\n\n".join(parts)
    return text, comps


def goal_lines(comps: dict) -> list[str]:
    """The issue's goals, checked: ESS ratio >= 1.3x (geometric mean) at 10% and 100, coverage of
    ours 92-97% (binomially consistent) on every matrix, no matrix where FAQ is ahead."""
    out = []
    for spec, c in comps.items():
        g = c["geomean"]
        bad_cov = [f"{n} {m['ours']['coverage']:.1%}" for n, m in c["matrices"].items() if not m["ours_cov_ok"]]
        behind = [n for n, m in c["matrices"].items() if m["verdict"] == "behind"]
        goal = (f"goal >= {GOAL_RATIO}x: {'met' if g >= GOAL_RATIO else f'NOT met (short by {GOAL_RATIO / g:.2f}x)'}"
                if spec in GOAL_BUDGETS else "no ratio goal at this budget")
        out.append(f"{spec}: ESS ours / FAQ {g:.2f}x [{c['geomean_ci'][0]:.2f}, {c['geomean_ci'][1]:.2f}] ({goal}); "
                   f"coverage 92-97% (binomially consistent) on every matrix: "
                   f"{'met' if not bad_cov else 'NOT met: ' + ', '.join(bad_cov)}; "
                   f"no matrix where FAQ is significantly ahead: {'met' if not behind else 'NOT met: ' + ', '.join(behind)}")
    return out

