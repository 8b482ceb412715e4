"""The rules a run's answers are read by, in one place (docs/glossary.md
defines each term): the band of "the same", the level every interval holds
at, when more workers "helped", and how a level is split over a family of
questions. The deciding code (verdicts, races, steps, the gate), the
report's wording, the pages' numbers (``research.doc_numbers``) and the
simulation all read them here, so that changing one is one edit.

Each reading of an interval is here too, beside the rule it applies, with
its room: how far a mean lies from the nearest answer, which tells how
many more rounds a question needs (``comparisons.rounds_needed``).
"""

import enum
import math

# The band: two times are the same when the interval of their ratio lies
# within 1 - BAND and 1 + BAND.
BAND = 0.05
# The level: every interval of a run holds with 1 - ALPHA, whenever the
# run stopped (a confidence sequence: ``anytime``).
ALPHA = 0.05
# How a race splits its ALPHA, in advance: ELIMINATION_ALPHA over its rows'
# own intervals against the reference, the rest over its comparisons with
# the leader, of which SIDE_BY_SIDE_ALPHA over the comparisons side by
# side where its rows pair in their worker (``race``).
ELIMINATION_ALPHA = 0.01
SIDE_BY_SIDE_ALPHA = 0.02
# The share of a worker-count step's level spent on its pairs side by
# side; the rest goes to the comparison through the speedups (``steps``).
STEP_SIDE_SHARE = 0.5

SAME_BAND = (1 - BAND, 1 + BAND)
# A step of a worker-count series helped when it saved more than the band:
# the fewer workers' time over the more's above 1 / (1 - BAND).
HELPED = 1 / SAME_BAND[0]

class Reading(str, enum.Enum):
    """What an interval says, by the rule that read it. A str, so that the
    report, JSON and CSV print its value ("faster") as they always did."""
    # A row's verdict against the reference (``verdict``), and the gate's
    # change of a row (``changed``: slower or faster).
    FASTER = "faster"
    SLOWER = "slower"
    SAME = "same"
    UNDECIDED = "undecided"
    # A row's standing against a race's leader (``standing``): shown slower,
    # the same, not told apart but within the band, or still open.
    WITHIN = "within"
    OPEN = "open"

    __str__ = str.__str__
    __format__ = str.__format__


FASTER, SLOWER, SAME, UNDECIDED, WITHIN, OPEN = Reading
# The verdicts a row can have.
VERDICTS = (FASTER, SLOWER, SAME, UNDECIDED)


def split(alpha, family):
    """Each question's level when ``alpha`` is split over a family of
    ``family`` questions (Bonferroni): then all of them hold together with
    at least 1 - ``alpha``, whatever their dependence."""
    return alpha / max(1, family)


def percent(share):
    """0.04 -> "4%", 0.005 -> "0.5%", 0.9975 -> "99.75%"."""
    text = ("%.4f" % (100 * share)).rstrip("0").rstrip(".")
    return text + "%"


# As the report words them: "the same within 5%", "95% interval", "wrong
# with at most 5% chance".
BAND_TEXT = percent(BAND)
LEVEL_TEXT = percent(1 - ALPHA)
ALPHA_TEXT = percent(ALPHA)


def verdict(ratio):
    """What a paired speedup's interval says of the model against the
    reference: faster (low end above 1), slower (high end below 1), the
    same (inside SAME_BAND), else undecided (also without an interval).
    Each is wrong with at most the interval's ALPHA, whenever it is read."""
    if ratio is None or ratio.low is None:
        return UNDECIDED
    if ratio.low > 1.0:
        return FASTER
    if ratio.high < 1.0:
        return SLOWER
    if SAME_BAND[0] <= ratio.low and ratio.high <= SAME_BAND[1]:
        return SAME
    return UNDECIDED


def verdict_room(mean):
    """Faster or slower: the interval clear of 1; the same: inside the band."""
    return max(abs(mean), min(math.log(SAME_BAND[1]) - mean, mean - math.log(SAME_BAND[0])))


def ahead(ratio):
    """A rival's time over a race's leader's: shown faster than the leader
    (its interval wholly below 1), so that it leads instead."""
    return ratio is not None and ratio.high is not None and ratio.high < 1.0


def standing(ratio):
    """A row's time over a race's leader's: shown slower; the same within
    the band; not told apart but no more than the band faster; or open."""
    if ratio is None or ratio.low is None:
        return OPEN
    if ratio.low > 1.0:
        return SLOWER
    if SAME_BAND[0] <= ratio.low and ratio.high <= SAME_BAND[1]:
        return SAME
    if ratio.low >= SAME_BAND[0]:
        return WITHIN
    return OPEN


def race_room(mean):
    """Another row against the leader (log of its time over the leader's):
    shown slower, shown no more than the band faster, or shown faster (it
    then leads), whichever is nearer. A rival that reads faster than the
    band on the rounds it shares with the leader is not hopeless: a few
    more show it faster, and the race goes on with it in the lead."""
    return max(mean - math.log(SAME_BAND[0]), -mean)


def step(ratio):
    """A step of a worker-count series (fewer workers' time over more's):
    True where it helped (saved more than the band), False where it did
    not, None while open."""
    if ratio is None or ratio.low is None:
        return None
    if ratio.low >= HELPED:
        return True
    if ratio.high < HELPED:
        return False
    return None


def step_room(mean):
    """A step's mean (log of fewer workers' time over more's): clear of
    saving the band, either way."""
    return abs(mean - math.log(HELPED))


def changed(ratio):
    """The gate's reading of a row's speedup in a new run over the base run:
    "slower" or "faster" where the interval lies wholly beyond the band,
    None inside it or without an interval."""
    if ratio is None or ratio.low is None:
        return None
    if ratio.high < 1 / SAME_BAND[1]:
        return SLOWER
    if ratio.low > SAME_BAND[1]:
        return FASTER
    return None
