"""tinybench_builder.config: FitOptions mirrors fit_estimator's settings (names and defaults) and reaches it
unchanged; BuildOptions checks its values; both are frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from tinybench_builder.dataset import build as dataset
from tinybench_builder.dataset.options import BuildOptions
from tinybench_builder.errors import BuildError
from tinybench_builder.model.options import FitOptions
from tinybench_builder.model.fitting import fit_estimator
from tinybench_builder.layout import read_manifest
from helpers.builds import write_fixture

#: fit_estimator parameters a build sets per estimator, not settings
PER_CALL = {"matrix", "n_anchors", "seed", "scenario_order", "progress", "metadata", "subscenario_weights", "keep_design"}


def test_fit_options_mirror_fit_estimator():
    """When fit_estimator gains, loses or changes the default of a setting, FitOptions must follow."""
    settings = {n: p.default for n, p in inspect.signature(fit_estimator).parameters.items() if n not in PER_CALL}
    assert set(FitOptions.names()) == set(settings)
    assert {n: getattr(FitOptions(), n) for n in settings} == settings
    assert set(FitOptions.RECORDED) <= set(settings)


def test_fit_options_reach_fit_estimator_and_the_manifest(tmp_path, monkeypatch):
    calls = []

    def recording_fit(matrix, n_anchors=100, seed=0, n_dims=None, design="stratified", n_seeds=10, n_folds=None,
                      validation_fraction=0.2, binarize=False, irt_params=None, kappa=16.0, scenario_order=None,
                      progress=True, metadata=None, subscenario_weights=None, keep_design=None):
        """fit_estimator with its real signature, recording how the build calls it."""
        calls.append(dict(n_anchors=n_anchors, seed=seed, n_dims=n_dims, design=design, n_seeds=n_seeds,
                          n_folds=n_folds, validation_fraction=validation_fraction, binarize=binarize,
                          irt_params=irt_params, kappa=kappa, scenario_order=scenario_order, progress=progress))
        assert keep_design is None  # a fresh build keeps no design
        return fit_estimator(matrix, n_anchors, seed, n_dims, design, n_seeds, n_folds, validation_fraction, binarize,
                             irt_params, kappa, scenario_order, progress, metadata, subscenario_weights)

    monkeypatch.setattr(dataset, "fit_estimator", recording_fit)
    responses, content = write_fixture("tinyGSM8k", tmp_path / "in")
    fit = FitOptions(n_dims=1, n_seeds=2, n_folds=2, irt_params={"max_iter": 200}, kappa=4.0)
    out = dataset.build_benchmark("tinyGSM8k", responses, content, BuildOptions(anchors=6, seed=4, fit=fit),
                                  out=tmp_path / "out")
    assert calls == [dict(n_anchors=6, seed=4, n_dims=1, design="stratified", n_seeds=2, n_folds=2,
                          validation_fraction=0.2, binarize=False, irt_params={"max_iter": 200}, kappa=4.0,
                          scenario_order=["gsm8k"], progress=False)]
    params = read_manifest(out)["parameters"]
    assert params == {"anchors": 6, "seed": 4, "item_order": "upstream", "n_dims": 1, "design": "stratified",
                      "n_seeds": 2, "n_folds": 2, "validation_fraction": 0.2, "binarize": False,
                      "irt_params": {"max_iter": 200}, "kappa": 4.0}


def test_fit_options_record_only_adds_what_differs_from_the_default():
    assert list(FitOptions().record()) == list(FitOptions.RECORDED)
    assert "kappa" in FitOptions(kappa=2.0).record()


def test_options_are_frozen_and_checked():
    fit = FitOptions(irt_params={"tol": 1e-6})
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.n_seeds = 3
    with pytest.raises(TypeError):
        fit.irt_params["tol"] = 1.0  # read-only view; as_kwargs hands out a copy
    kwargs = fit.as_kwargs()
    kwargs["irt_params"]["tol"] = 1.0
    assert fit.irt_params["tol"] == 1e-6
    with pytest.raises(TypeError):
        FitOptions(n_seed=3)  # a typo is an error, not a silently ignored option
    with pytest.raises(BuildError, match="unknown fit option"):
        FitOptions.from_mapping({"n_dims": 1, "n_seed": 3})
    assert FitOptions.from_mapping({"n_dims": 1}) == FitOptions(n_dims=1)
    for kwargs, message in [({"version": "1 2"}, "invalid version"), ({"anchors": 0}, "anchors must be a positive integer"),
                            ({"item_order": "random"}, "item_order must be one of"),
                            ({"fit": {"n_dims": 1}}, "fit must be a FitOptions")]:
        with pytest.raises(BuildError, match=message):
            BuildOptions(**kwargs)
    options = BuildOptions(version="1.2.0")
    from tinybench_builder.dataset import LOCAL_NAMESPACE, own_namespace

    # no repository id given: the token's own namespace, or a local build (tests/cli/test_conventions.py)
    assert (options.repo_id_for("tinyX"), options.tag_for(), options.anchors_for(100)) == \
        (f"{own_namespace() or LOCAL_NAMESPACE}/tinyX", "v1.2.0", 100)
    with pytest.raises(TypeError, match="BuildOptions"):
        dataset.build_benchmark("tinyGSM8k", "r.parquet", None, {"anchors": 5}, out="x")
