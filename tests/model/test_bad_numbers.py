"""Data that no IRT model can be fitted on is refused before the slow fit, with what is wrong
(issue 21): a model with no scores, a constant matrix, items that never tell the models apart.
A fit that still produces a non-finite parameter says so, not ``Out of range float values``."""

from __future__ import annotations

import numpy as np
import pytest

from tinybench_builder.cli.main import main
from tinybench_builder.model import fitting
from tinybench_builder.read.matrix import ResponseMatrix
from tinybench_builder.read.simulate import simulate_responses


def _matrix(change) -> ResponseMatrix:
    m, _ = simulate_responses(n_models=20, n_items=60, n_dims=1, seed=1)
    scores = m.scores.copy()
    change(scores)
    return ResponseMatrix(scores, m.models, m.items)


def _no_scores(s):
    s[3, :] = np.nan
    s[7, :] = np.nan


CASES = {
    "a model with no scores": (_no_scores, r"2 model\(s\) have no scores at all.*model-0003, sim-model-0007"),
    "a constant matrix": (lambda s: s.__setitem__(slice(None), 1.0), r"every score in the matrix is 1"),
    "items that never differ between models": (
        lambda s: s.__setitem__(slice(None), np.tile(np.arange(60) % 2, (20, 1)).astype(float)),
        r"no item's score differs between the models"),
}


class _Reached(Exception):
    pass


@pytest.mark.parametrize("case", sorted(CASES))
def test_unfittable_data_is_refused_before_the_fit(case, tmp_path, capsys, monkeypatch):
    change, message = CASES[case]
    path = tmp_path / "m.csv"
    _matrix(change).write(path)

    def reached(*args, **kwargs):
        raise _Reached("the slow fit started")

    monkeypatch.setattr(fitting, "_fit", reached)
    assert main(["fit", str(path), "--anchors", "10", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("error: ") == 1 and err.splitlines()[-1].startswith("error: the scores cannot be fitted: "), err
    import re

    assert re.search(message, err), err
    assert "JSON" not in err and not (tmp_path / "o").exists()


def test_a_fit_that_gives_nan_says_which_parameter(monkeypatch):
    m = _matrix(lambda s: None)
    real = fitting._calibrate

    def poisoned(*args, **kwargs):  # the calibration gives a NaN error (an estimator cannot hold one)
        return {**real(*args, **kwargs), "sigma": float("nan")}

    monkeypatch.setattr(fitting, "_calibrate", poisoned)
    from tinybench_builder.errors import BuildError

    with pytest.raises(BuildError, match=r"not finite.*sigma"):
        fitting.fit_estimator(m, n_anchors=10, n_dims=1, n_folds=2, progress=False)
