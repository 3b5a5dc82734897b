"""Client-side steps of tests/release/test_versions.py, run in a fresh process by ``helpers.client.run_in_client``
(the real ``huggingface_hub`` and ``datasets`` clients read the loopback Hub's endpoint at import)."""

from __future__ import annotations

from typing import Any


def cache_revisions(repo: str, tags: list[str]) -> dict:
    """Online: what a consumer caches at each tag, both ways: ``load_dataset(repo, revision=tag)``
    (the path our docs avoid), the snapshot (the path they use) and ``TinyEstimator.from_hub``."""
    from datasets import load_dataset
    from huggingface_hub import snapshot_download

    from tinybench_builder.estimator import TinyEstimator

    out: dict[str, Any] = {}
    for tag in tags:
        rows = load_dataset(repo, revision=tag)["test"]
        path = snapshot_download(repo, repo_type="dataset", revision=tag)
        est = TinyEstimator.from_hub(repo, revision=tag)
        out[tag] = {"rows": list(rows["item_id"]), "snapshot": path, "anchors": est.anchor_ids,
                    "design": est.design_hash}
    return out


def offline_revision(repo: str, tag: str) -> dict:
    """Offline (HF_HUB_OFFLINE=1, the cache of :func:`cache_revisions`): the rows at ``tag`` by each
    path, the estimator of ``tag`` and what it says of the rows ``load_dataset(repo, revision=tag)``
    served."""
    from datasets import load_dataset
    from huggingface_hub import snapshot_download

    from tinybench_builder.estimator import TinyEstimator

    out: dict[str, Any] = {}
    served = list(load_dataset(repo, revision=tag)["test"]["item_id"])
    path = snapshot_download(repo, repo_type="dataset", revision=tag)
    out["served_by_load_dataset"] = served
    out["snapshot_rows"] = list(load_dataset(path)["test"]["item_id"])
    est = TinyEstimator.from_hub(repo, revision=tag)
    out["anchors"] = est.anchor_ids
    out["from_hub_rows"] = list(est.tiny_split()["item_id"])
    loaded = TinyEstimator.load(path)
    out["same_estimator"] = loaded.design_hash == est.design_hash and loaded.anchor_ids == est.anchor_ids
    # tinybench-builder estimate hub:OWNER/NAME@TAG TABLE, offline: the snapshot of the tag from the cache
    import tempfile

    import pandas as pd

    from tinybench_builder.estimate import estimate_table

    with tempfile.TemporaryDirectory() as tmp:
        table = f"{tmp}/scores.parquet"
        pd.DataFrame([[1.0] * len(est.anchor_ids)], columns=est.anchor_ids,
                     index=pd.Index(["m"], name="model")).to_parquet(table)
        out["hub_estimate"] = float(estimate_table(f"hub:{repo}@{tag}", table, version=tag)["score"][0])
        out["direct_estimate"] = float(est.estimate([1.0] * len(est.anchor_ids))["score"])
        try:
            estimate_table(f"hub:{repo}", table)
        except ValueError as exc:
            out["no_revision"] = str(exc)
    import warnings

    try:  # the rows datasets served, estimated by id with the estimator of the tag asked for
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            res = est.estimate(dict.fromkeys(served, 1.0), version=tag)
        out["estimate_of_served"] = {"score": res["score"], "warnings": [str(w.message) for w in said]}
    except ValueError as exc:
        out["estimate_of_served"] = {"error": str(exc)}
    return out
