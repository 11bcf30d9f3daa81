"""The sparse vector loop shared by the benchmark's SVT specs (not a spec file: ``_*.py`` is skipped).

Every variant of ``sparse_vector.py`` and ``sparse_vector_broken.py`` with a
cutoff is this loop with its own noise scales, threshold and released value;
the spec files import it as a sibling module (the loader puts a spec file's
folder on ``sys.path`` while it imports it, as for ``spec/_thresholds.py``).
"""
import dpverify as dp


def above_threshold(q, threshold, scale, c, release=None, redraw=None):
    """Compare each answer plus Lap(``scale``) with the noisy ``threshold``, in order.

    Below gives False; above gives ``release(answer, noisy, threshold)`` (True when
    ``release`` is None) and stops after the c-th above; ``redraw``, when given,
    draws a fresh threshold after every above that does not stop.  Returns the
    answers as a tuple.
    """
    out, count = [], 0
    for answer in q:
        noisy = dp.laplace(answer, scale)
        if noisy >= threshold:
            out.append(True if release is None else release(answer, noisy, threshold))
            count += 1
            if count >= c:
                break
            if redraw is not None:
                threshold = redraw()
        else:
            out.append(False)
    return tuple(out)
