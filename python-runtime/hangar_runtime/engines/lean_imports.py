"""Keeps scikit-learn out of the runtimes that never use it.

transformers' generation package (which every model class imports) loads
`sklearn.metrics` when scikit-learn is installed, for one function: the ROC curve
that assisted decoding with an `assistant_confidence_threshold` uses to tune itself.
No Hangar engine runs assisted decoding, yet the import (scikit-learn and the SciPy
parts it pulls in) is about 0.75 s of CPU of a ~6 s Transformers LLM start on a 2-core
machine, paid by every launch that does not take a warm spare. scikit-learn has to
stay installed: the scikit-learn engine and sentence-transformers need it.

So an engine that needs no scikit-learn (transformers, transformers_audio,
transformers_image, diffusers; not sentence-transformers, which imports it itself)
calls this where its load imports its libraries, after the model's files are found
(a download that cannot start still fails before any heavy import). transformers'
generation package is then imported once with the name hidden (a `None` in
`sys.modules` is Python's documented way to make a module unimportable, and
`importlib.util.find_spec` then answers None, which is how transformers asks). transformers remembers "not available" (its check is
cached), so assisted decoding would only skip its self-tuning; scikit-learn itself
is importable again as soon as this returns, for anything else in the process."""

import importlib
import sys

_GENERATION = "transformers.generation.candidate_generator"


def import_transformers_without_sklearn() -> None:
    """Imports transformers' generation package with scikit-learn hidden, unless
    either is imported already (then there is nothing left to save)."""
    if _GENERATION in sys.modules or "sklearn" in sys.modules:
        return
    sys.modules["sklearn"] = None  # type: ignore[assignment]
    try:
        importlib.import_module(_GENERATION)
    except ImportError:
        pass  # transformers is not installed: the engine's own import says so
    finally:
        if sys.modules.get("sklearn", 0) is None:
            del sys.modules["sklearn"]
