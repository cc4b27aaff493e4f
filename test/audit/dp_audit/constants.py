"""Constants of the audit, and the extension's constants read from its C++ source.

The audit recomputes the mechanisms' exact laws on its own, but a few numbers
are design choices of the extension, not consequences of the definitions (the
release grid's resolution, the number of quantile bins, the cap of the
selection exponents, the calibration's safety margins). They are read here
from the named C++ constants under src/, wherever a restructuring moves them,
so that the audit cannot drift from the code: a renamed or removed constant
stops the audit with a setup error naming it, instead of auditing a stale copy.
"""

import decimal
import glob
import os
import re
from typing import Callable, Dict

from . import ExtensionConstantError

# Probability that a whole run on a correct implementation reports a failure.
FALSE_FAILURE_BUDGET = 1e-6

# test/audit: REPORT.md and privacy_loss.png are written there.
AUDIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIR = os.path.join(AUDIT_DIR, "..", "..", "src")


def _source_texts() -> Dict[str, str]:
    paths = sorted(glob.glob(os.path.join(SOURCE_DIR, "**", "*.h"), recursive=True) +
                   glob.glob(os.path.join(SOURCE_DIR, "**", "*.cpp"), recursive=True))
    texts = {}
    for path in paths:
        with open(path, encoding="utf-8") as source:
            texts[os.path.relpath(path, SOURCE_DIR)] = source.read()
    return texts


def _read_constant(texts: Dict[str, str], pattern: str, convert: Callable[[str], object],
                   description: str):
    """The value of the only definition matching `pattern` (group 1) under src/."""
    found = [(path, match.group(1)) for path, text in texts.items()
             for match in re.finditer(pattern, text)]
    if len(found) != 1:
        where = ", ".join(path for path, _ in found) or "nowhere"
        raise ExtensionConstantError(
            f"{description}: expected one definition matching {pattern!r} under src/, "
            f"found {len(found)} ({where}); update test/audit/dp_audit/constants.py")
    return convert(found[0][1])


_TEXTS = _source_texts()

# Noise of a release is scaled so that the grid is 2^-40 of the noise scale
# (docs/privacy_guarantees.md "Secure noise"; laplace_mechanism.h kGridBitsBelowScale).
GRID_BITS_BELOW_SCALE = _read_constant(
    _TEXTS, r"constexpr int kGridBitsBelowScale = (\d+);", int,
    "release grid bits below the Laplace scale")

# dp_median/dp_percentile: "a fixed grid of 1024 bins between the bounds"
# (README; quantile.h kDefaultQuantileBins).
QUANTILE_BINS = _read_constant(
    _TEXTS, r"constexpr std::size_t kDefaultQuantileBins = (\d+);", int,
    "number of quantile bins")

# selection.h: acceptance exponents are capped (probabilities below e^-cap
# per visit are raised to it); mirrored here though never reached.
MAX_SELECTION_EXPONENT = float(_read_constant(
    _TEXTS, r"constexpr unsigned kMaxSelectionExponent = (\d+);", int,
    "cap of the permute-and-flip acceptance exponent"))

# The Gaussian calibration demands delta(sigma) <= delta (1 - 2^-30)
# (gaussian_mechanism.h kDeltaSafetyMargin = 1 / 2^30).
DELTA_SAFETY_MARGIN_BITS = _read_constant(
    _TEXTS, r"constexpr double kDeltaSafetyMargin = 1\.0 / \(1u << (\d+)\);", int,
    "Gaussian calibration safety margin (bits)")

# DP partition selection demands its threshold inequality with a margin in
# log space (partition_selection.cpp); the audit does the same in decimal
# arithmetic.
PARTITION_SELECTION_LOG_MARGIN = _read_constant(
    _TEXTS, r"const long double margin = ([0-9.eE+-]+)L;", decimal.Decimal,
    "partition selection log-space margin")
