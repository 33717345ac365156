"""Data: reading and validating user files (:mod:`.io`), the bundled Sachs data
(:mod:`._datasets`, read as package resources from :mod:`.bundled`), simulation of linear SEMs
(:mod:`.simulate`), transforms (:mod:`.transforms`), sufficient statistics (:mod:`.stats`), several
conditions with their intervention targets (:mod:`.conditions`) and the
classroom lessons' simulation presets (:mod:`.lessons`). ``X`` is ``(n_samples, n_nodes)``.
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
