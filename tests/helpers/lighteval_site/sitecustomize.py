"""Imported by the Python of lighteval in the tests (this folder on ``PYTHONPATH``): what lighteval 0.13.0 needs
to start on a machine without internet and with today's dependencies. Nothing here touches our tasks.

* **No internet.** lighteval imports every task file when it loads its task list, and its
  ``tiny_benchmarks.py`` then downloads the original tinyBenchmarks pickle from GitHub
  (``TinyCorpusAggregator.download``: ``requests.get``; a missing file is skipped, a failed
  connection kills the run). That one URL is answered 404, as GitHub answers for a missing file.
* **huggingface_hub >= 1.0** (datasets 5 and transformers 5 need it): lighteval's MT-Bench task calls
  ``HfApi().list_models(model_name=...)`` at import, an argument huggingface_hub 1.0 removed; it is
  passed on as ``search`` (the list is lazy, nothing is fetched). Only where the argument is gone.
* **xxhash >= 4** refuses ``str``; lighteval hashes each query when it logs the details. A ``str`` is
  encoded as UTF-8 (what xxhash 3 did). Only where xxhash refuses it.

With ``pip install "lighteval==0.13.0" "huggingface_hub<1" "xxhash<4"`` (the cards' install line) only
the first applies.
"""

import inspect

import requests

_ORIGINAL_PICKLE = "https://raw.githubusercontent.com/felipemaiapolo/tinyBenchmarks/"
_get = requests.get


def _offline_get(url, *args, **kwargs):
    if str(url).startswith(_ORIGINAL_PICKLE):
        response = requests.Response()
        response.status_code, response.url = 404, str(url)
        return response
    return _get(url, *args, **kwargs)


requests.get = _offline_get

try:
    import huggingface_hub

    _list_models = huggingface_hub.HfApi.list_models
    if "model_name" not in inspect.signature(_list_models).parameters:
        def _list_models_by_name(self, *args, model_name=None, **kwargs):
            if model_name is not None:
                kwargs.setdefault("search", model_name)
            return _list_models(self, *args, **kwargs)

        huggingface_hub.HfApi.list_models = _list_models_by_name
except ImportError:
    pass

try:
    import xxhash

    try:
        xxhash.xxh64("")
    except TypeError:
        _xxh64 = xxhash.xxh64

        def _xxh64_text(data=b"", *args, **kwargs):
            return _xxh64(data.encode("utf-8") if isinstance(data, str) else data, *args, **kwargs)

        xxhash.xxh64 = _xxh64_text
except ImportError:
    pass
