"""AlpacaEval annotations reader."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tinybench_builder.read.sources import SourceError, alpaca_eval
from helpers.sources import alpaca_annotations, write_alpaca

INSTR = ["Name three uses for a paperclip.", "Write a haiku about rain.", "What is 2+2?", "Explain tides."]


@pytest.fixture
def content(tmp_path):
    path = tmp_path / "content.parquet"
    pd.DataFrame({"item_id": [str(i) for i in range(len(INSTR))], "instruction": INSTR,
                  "output": [f"ref {i}" for i in range(len(INSTR))], "dataset": "koala"}).to_parquet(path)
    return path


def test_preference_to_score_and_content_ids(tmp_path, content):
    root = tmp_path / "results"
    # preference 0 is a draw (-> 1.5), null -> NaN, strings -> float; model order differs from eval order
    write_alpaca(root, "model-a", alpaca_annotations("model-a", INSTR[::-1], [2.0, "1.25", None, 0]))
    write_alpaca(root, "model-b", alpaca_annotations("model-b", INSTR, [1.0, 1.5, 1.7328, 2.0]))
    m = alpaca_eval.read(root, content=content)
    assert m.models == ["model-a", "model-b"]
    assert m.items == ["0", "1", "2", "3"]
    np.testing.assert_allclose(m.scores[0], [0.5, np.nan, 0.25, 1.0])
    np.testing.assert_allclose(m.scores[1], [0.0, 0.5, 0.7328, 1.0])
    assert m.item_info.loc["2", "instruction"] == INSTR[2]
    assert m.item_info.loc["2", "output"] == "ref 2"  # content columns joined by item_id


def test_without_content_item_is_instruction_text(tmp_path):
    write_alpaca(tmp_path, "m", alpaca_annotations("m", INSTR[:2], [2.0, 1.0]))
    m = alpaca_eval.read(tmp_path)
    assert m.items == INSTR[:2]
    np.testing.assert_array_equal(m.scores[0], [1.0, 0.0])


def test_content_without_item_id_uses_row_position(tmp_path):
    path = tmp_path / "c.csv"
    pd.DataFrame({"instruction": INSTR}).to_csv(path, index=False)
    write_alpaca(tmp_path / "r", "m", alpaca_annotations("m", INSTR[2:], [2.0, 1.0]))
    m = alpaca_eval.read(tmp_path / "r", content=path)
    assert m.items == ["0", "1", "2", "3"]  # padded to the whole eval set
    np.testing.assert_array_equal(m.scores[0], [np.nan, np.nan, 1.0, 0.0])


def test_annotator_choice(tmp_path):
    root = tmp_path / "results"
    write_alpaca(root, "m", alpaca_annotations("m", INSTR[:2], [2.0, 2.0]))
    write_alpaca(root, "m", alpaca_annotations("m", INSTR[:2], [1.0, 0.0], annotator="alpaca_eval_gpt4"),
                 annotator="alpaca_eval_gpt4")
    np.testing.assert_array_equal(alpaca_eval.read(root).scores[0], [1, 1])  # default: AE2 weighted judge
    np.testing.assert_array_equal(alpaca_eval.read(root, task="alpaca_eval_gpt4").scores[0], [0, 0.5])
    with pytest.raises(SourceError, match="no annotations by 'nope'; annotators found: alpaca_eval_gpt4, weighted"):
        alpaca_eval.read(root, task="nope")


def test_single_file_model_from_generator(tmp_path):
    f = tmp_path / "some.json"
    f.write_text(json.dumps(alpaca_annotations("gen-model", INSTR[:2], [1.5, 1.5])))
    m = alpaca_eval.read(f)
    assert m.models == ["gen-model"]


def test_bad_input(tmp_path, content):
    p = write_alpaca(tmp_path, "m", alpaca_annotations("m", INSTR, [2.0] * 4))
    p.write_text(p.read_text()[:-200])
    with pytest.raises(SourceError, match=r"annotations.json: line \d+: invalid JSON"):
        alpaca_eval.read(tmp_path)
    p.write_text(json.dumps(alpaca_annotations("m", ["unknown instruction"], [2.0])))
    with pytest.raises(SourceError, match="instruction not in the content file"):
        alpaca_eval.read(tmp_path, content=content)
    p.write_text(json.dumps(alpaca_annotations("m", INSTR[:1], ["very good"])))
    with pytest.raises(SourceError, match="record 0: preference 'very good' is not a number"):
        alpaca_eval.read(tmp_path)
    p.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(SourceError, match="expected a JSON list"):
        alpaca_eval.read(tmp_path)
