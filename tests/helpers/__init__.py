"""Test helpers, shared by the test modules (``from helpers.builds import built``).

* :mod:`.builds`: hand-made content in every registered benchmark's schema, simulated responses,
  fast fit settings and a per-session cache of built folders;
* :mod:`.sources`: small evaluation outputs in every source format the readers know;
* :mod:`.folders`: small fake tiny-dataset folders (the build contract) for the release tests;
* :mod:`.client`: run a function of these helpers in a fresh Python (the Hub clients read
  ``HF_ENDPOINT`` at import time), and :mod:`.hub_clients`, the functions run there;
* :mod:`.hub`: the loopback Hugging Face Hub server the real clients talk to;
* :mod:`.markdown`: the fenced code blocks of the README (its snippets are run as written).
"""
