"""How a run checks claims: the options shared by ``dpverify check``, ``dpverify report``, the
pytest plugin and :func:`dpverify.check`, with the one validation all of them apply.

The command line and the pytest plugin name the same setting differently (``--precision``,
``--dpverify-precision``): each validator takes the flag to name in its message, so both
surfaces refuse the same values with the same words.

>>> Options.validated(precision=30).precision
30
>>> Options.validated(precision=10, flag="--dpverify-precision")
Traceback (most recent call last):
...
dpverify.options.OptionError: --dpverify-precision 10 is out of range: give 15 to 10000 significant digits
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

DEFAULT_PRECISION = 50
DEFAULT_MAX_WORK = 50_000_000
PRECISION_RANGE = (15, 10_000)  # below 15 digits the certified intervals cannot separate tight ratios


class OptionError(ValueError):
    """A command-line value out of range or malformed; ``flag`` names the option as the user wrote it."""

    def __init__(self, flag: str, message: str) -> None:
        self.flag = flag
        super().__init__(message)


def _integer(value: object, flag: str) -> int:
    if isinstance(value, bool):
        raise OptionError(flag, f"{flag} {value!r} is not a whole number")
    try:
        return int(str(value).strip())
    except ValueError:
        raise OptionError(flag, f"{flag} {value!r} is not a whole number") from None


def check_precision(value: object, flag: str = "--precision") -> int:
    """Significant digits of the certified arithmetic, within :data:`PRECISION_RANGE`."""
    digits = _integer(value, flag)
    low, high = PRECISION_RANGE
    if not low <= digits <= high:
        raise OptionError(flag, f"{flag} {digits} is out of range: give {low} to {high} significant digits")
    return digits


def check_max_work(value: object, flag: str = "--max-work") -> int:
    """The work guard's limit: at least 1."""
    work = _integer(value, flag)
    if work < 1:
        raise OptionError(flag, f"{flag} {work} is out of range: give a limit of at least 1 "
                                f"(the default is {DEFAULT_MAX_WORK})")
    return work


def check_jobs(value: object, flag: str = "--jobs") -> int:
    """Worker processes: at least 1."""
    jobs = _integer(value, flag)
    if jobs < 1:
        raise OptionError(flag, f"{flag} {jobs} is out of range: give at least 1 worker process")
    return jobs


def parse_points(values: tuple[str, ...] | list[str], flag: str = "--point") -> Optional[dict[str, str]]:
    """``NAME=VALUE`` selections as a dict (``None`` when there are none)."""
    out: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise OptionError(flag, f"{flag} {item!r} is not NAME=VALUE: write e.g. {flag} eps=1/2")
        out[name.strip()] = value.strip()
    return out or None


@dataclass
class Options:
    precision: int = DEFAULT_PRECISION
    max_work: int = DEFAULT_MAX_WORK
    proofs: bool = True  # try to prove claims for every parameter value, beyond the grid

    @classmethod
    def validated(cls, precision: object = None, max_work: object = None, proofs: bool = True, *,
                  flag: str = "--precision", work_flag: str = "--max-work") -> "Options":
        """Options from user input, ``None`` meaning the default; raises :class:`OptionError`
        naming ``flag`` (or ``work_flag``) and the allowed range for a value out of range."""
        return cls(precision=DEFAULT_PRECISION if precision is None else check_precision(precision, flag),
                   max_work=DEFAULT_MAX_WORK if max_work is None else check_max_work(max_work, work_flag),
                   proofs=proofs)
