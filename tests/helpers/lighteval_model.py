"""A stand-in model for lighteval (``lighteval custom stand-in THIS_FILE ...``), in the tests: no weights.

Its log-likelihood of a continuation is a function of the request only (the context lighteval builds,
with its own PromptManager, and the continuation): ``-5 * h(context, continuation)``, ``h`` a hash in
[0, 1); a generation is ``#### <n>``, ``n`` from the prompt's hash. The same function as the
deterministic lm-eval model of tests/dataset/test_harness_tasks.py, so both harnesses see the same answers
to the same requests. Loaded by lighteval, never imported by the tests.
"""

import hashlib

from lighteval.models.abstract_model import LightevalModel
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.prompt_manager import PromptManager


def h(*parts):
    return int(hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 2**32


class _NoCache:
    """lighteval's sample cache, off (the pipeline hands it its registry)."""

    def _init_registry(self, registry):
        pass


class StandIn(LightevalModel):
    def __init__(self, config):
        self.config = config
        self.prompt_manager = PromptManager(use_chat_template=False)
        self._cache = _NoCache()

    @property
    def tokenizer(self):
        return None

    @property
    def add_special_tokens(self):
        return False

    @property
    def max_length(self):
        return 2048

    def greedy_until(self, docs):
        return [ModelResponse(text=[f"#### {int(100 * h(self.prompt_manager.prepare_prompt(d)))}"]) for d in docs]

    def loglikelihood(self, docs):
        out = []
        for d in docs:
            context = self.prompt_manager.prepare_prompt(d)
            out.append(ModelResponse(logprobs=[-5 * h(context, c) for c in d.choices],
                                     argmax_logits_eq_gold=[h(context, c) > 0.6 for c in d.choices],
                                     output_tokens=[[0] * len(c) for c in d.choices]))
        return out

    def loglikelihood_rolling(self, docs):
        return [ModelResponse(logprobs=[-h(self.prompt_manager.prepare_prompt(d))]) for d in docs]
