"""Score, recency and lifecycle boundaries (SPEC §2.1)."""

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.engine import scoring
from learn_cli.engine.scoring import (
    format_time,
    lifecycle,
    recency,
    score,
    scorer,
    update_low_since,
)

NOW = datetime(2026, 11, 29, 17, 55, tzinfo=UTC)


def ago(**delta) -> str:
    return format_time(NOW - timedelta(**delta))


def rec(frequency=10, impact=1.0, used=None, projects=("p1",), status="active", **extra):
    out = {
        "id": "learn-20261129T175500Z-abc123",
        "frequency": frequency,
        "impact": impact,
        "last_used": used or format_time(NOW),
        "projects": list(projects),
        "status": status,
    }
    out.update(extra)
    return out


# ---------------------------------------------------------------- recency


@pytest.mark.parametrize(
    "delta, expected",
    [
        (timedelta(0), 1.0),
        (timedelta(days=6, hours=23), 1.0),
        (timedelta(days=7) - timedelta(seconds=1), 1.0),
        (timedelta(days=7), 0.9),
        (timedelta(days=13, hours=23, minutes=59), 0.9),
        (timedelta(days=14), 0.8),
        (timedelta(weeks=3), 0.7),
        (timedelta(weeks=9), 0.1),
        (timedelta(weeks=10) - timedelta(seconds=1), 0.1),
        (timedelta(weeks=10), 0.0),
        (timedelta(weeks=500), 0.0),
    ],
)
def test_recency_counts_whole_weeks(delta, expected):
    assert recency(format_time(NOW - delta), NOW) == expected


def test_recency_of_future_and_unusable_dates_is_one():
    assert recency(ago(days=-30), NOW) == 1.0
    assert recency("not a date", NOW) == 1.0
    assert recency(None, NOW) == 1.0
    assert recency(12345, NOW) == 1.0


def test_recency_accepts_naive_and_offset_timestamps():
    assert recency("2026-11-22T17:55:00", NOW) == 0.9  # naive: taken as UTC
    assert recency("2026-11-22T19:55:00+02:00", NOW) == 0.9
    assert recency(NOW - timedelta(days=7), NOW.isoformat()) == 0.9


# ---------------------------------------------------------------- score


def test_score_is_the_spec_formula():
    assert score(rec(frequency=5, impact=0.8), NOW) == 0.4
    assert score(rec(frequency=5, impact=0.8, used=ago(weeks=2)), NOW) == pytest.approx(0.32)
    assert score(rec(frequency=3, impact=1.0), NOW) == 0.3  # exactly, despite float noise
    assert score(rec(frequency=10, impact=1.0, used=ago(weeks=3)), NOW) == 0.7


def test_frequency_is_capped_at_ten():
    assert score(rec(frequency=10), NOW) == score(rec(frequency=11), NOW) == score(rec(frequency=10**9), NOW) == 1.0
    assert score(rec(frequency=9), NOW) == 0.9


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, 0.05),  # frequency 1, impact 0.5, last_used = now
        ({"frequency": "abc", "impact": None}, 0.05),
        ({"frequency": None, "impact": "0.8"}, 0.08),
        ({"frequency": "4", "impact": 1}, 0.4),
        ({"frequency": 4.9, "impact": 1.0}, 0.4),
        ({"frequency": -3, "impact": 1.0}, 0.1),
        ({"frequency": float("nan"), "impact": float("nan")}, 0.05),
        ({"frequency": True, "impact": False}, 0.05),
        ({"frequency": 10, "impact": 7}, 1.0),  # impact clamped to 1
        ({"frequency": 10, "impact": -1}, 0.0),
        ({"frequency": [], "impact": {}}, 0.05),
    ],
)
def test_score_tolerates_missing_and_odd_fields(fields, expected):
    assert score(fields, NOW) == pytest.approx(expected)


def test_last_used_falls_back_to_created_then_now():
    assert score({"frequency": 10, "impact": 1.0, "created": ago(weeks=2)}, NOW) == 0.8
    assert score({"frequency": 10, "impact": 1.0, "last_used": "garbage", "created": ago(weeks=2)}, NOW) == 0.8
    assert score({"frequency": 10, "impact": 1.0}, NOW) == 1.0


def test_score_without_now_uses_the_clock():
    assert score({"frequency": 10, "impact": 1.0, "last_used": format_time(datetime.now(UTC))}) == 1.0


odd_values = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 50), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), st.sampled_from(["3", "0.7", "1e3", "-2"]),
)
stamps = st.one_of(
    st.none(), st.text(max_size=25), st.just("2026-11-29T17:55:00Z"),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(lambda d: d.isoformat()),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
        lambda d: format_time(d.replace(tzinfo=UTC))
    ),
)


@settings(max_examples=300, deadline=None)
@given(frequency=odd_values, impact=odd_values, last_used=stamps, created=stamps)
def test_score_is_always_in_range_and_scorer_agrees(frequency, impact, last_used, created):
    record = {"frequency": frequency, "impact": impact, "last_used": last_used, "created": created}
    value = score(record, NOW)
    assert 0.0 <= value <= 1.0
    assert scorer(NOW)(record) == value


# ---------------------------------------------------------------- lifecycle


def test_candidate_range_is_inclusive_at_both_ends():
    assert lifecycle(rec(frequency=3, impact=1.0), NOW) == "candidate"  # 0.30
    assert lifecycle(rec(frequency=7, impact=1.0), NOW) == "candidate"  # 0.70, two projects or not
    assert lifecycle(rec(frequency=7, impact=1.0, projects=("a", "b")), NOW) == "candidate"


def test_just_below_point_three_is_not_a_candidate():
    low = rec(frequency=10, impact=0.29)
    assert score(low, NOW) == 0.29
    assert lifecycle(low, NOW) == "keep"


def test_promotion_needs_strictly_more_than_point_seven_and_enough_projects():
    above = {"frequency": 10, "impact": 0.71}
    assert score(rec(**above), NOW) == 0.71
    assert lifecycle(rec(**above, projects=("a", "b")), NOW) == "promote"
    assert lifecycle(rec(frequency=10, impact=0.70, projects=("a", "b")), NOW) == "candidate"
    assert lifecycle(rec(**above, projects=("a",)), NOW) == "candidate"  # too few projects
    assert lifecycle(rec(**above, projects=("a",)), NOW, promote_min_projects=1) == "promote"
    assert lifecycle(rec(**above, projects=("a", "a")), NOW) == "candidate"  # distinct projects


def test_three_projects_promote_whatever_the_score():
    assert lifecycle(rec(frequency=1, impact=0.1, projects=("a", "b", "c")), NOW) == "promote"
    assert lifecycle(rec(frequency=1, impact=0.1, projects=("a", "b", "b")), NOW) == "keep"


def test_archive_after_thirty_days_low_to_the_minute():
    stale = {"frequency": 1, "impact": 0.5}
    assert lifecycle(rec(**stale, low_since=ago(days=29, hours=23, minutes=59)), NOW) == "keep"
    assert lifecycle(rec(**stale, low_since=ago(days=30)), NOW) == "archive"
    assert lifecycle(rec(**stale, low_since=ago(days=30, minutes=1)), NOW) == "archive"
    assert lifecycle(rec(**stale), NOW) == "keep"  # no clock running yet
    assert lifecycle(rec(**stale, low_since="garbage"), NOW) == "keep"
    assert lifecycle(rec(**stale, low_since=ago(days=8)), NOW, archive_days=7) == "archive"


def test_a_healthy_score_is_never_archived_even_with_an_old_clock():
    assert lifecycle(rec(frequency=5, impact=1.0, low_since=ago(days=90)), NOW) == "candidate"


@pytest.mark.parametrize("status", ["pending", "conflicted", "global", "archived", "weird"])
def test_only_active_learnings_are_promoted_or_candidates(status):
    strong = rec(frequency=10, impact=1.0, projects=("a", "b", "c"), status=status)
    assert lifecycle(strong, NOW) == "keep"
    middling = rec(frequency=5, impact=1.0, status=status)
    assert lifecycle(middling, NOW) == "keep"


def test_missing_status_counts_as_active():
    record = rec(frequency=10, impact=0.9, projects=("a", "b"))
    del record["status"]
    assert lifecycle(record, NOW) == "promote"


@pytest.mark.parametrize("status, expected", [("pending", "archive"), ("global", "archive"), ("active", "archive"),
                                              ("conflicted", "keep"), ("archived", "keep")])
def test_which_statuses_can_be_archived(status, expected):
    assert lifecycle(rec(frequency=1, impact=0.2, status=status, low_since=ago(days=31)), NOW) == expected


def test_classify_reads_thresholds_from_config():
    record = rec(frequency=10, impact=0.8, projects=("a",))
    assert scoring.classify(record, NOW, {}) == "candidate"
    assert scoring.classify(record, NOW, {"promote_min_projects": 1}) == "promote"
    assert scoring.classify(record, NOW, {"promote_min_projects": "nonsense"}) == "candidate"
    old = rec(frequency=1, impact=0.1, low_since=ago(days=10))
    assert scoring.classify(old, NOW, {"archive_days": 7}) == "archive"
    assert scoring.classify(old, NOW, None) == "keep"


def test_project_count_tolerates_odd_shapes():
    assert scoring.project_count({"projects": "abc"}) == 1
    assert scoring.project_count({"projects": None, "project": "web-api"}) == 1
    assert scoring.project_count({"projects": [None, "", "a", "a", "b"]}) == 2
    assert scoring.project_count({}) == 0


# ---------------------------------------------------------------- low_since


def test_low_since_starts_when_the_score_first_falls_below_point_three():
    record = rec(frequency=1, impact=0.5)
    assert update_low_since(record, NOW) is True
    assert record["low_since"] == format_time(NOW)
    later = NOW + timedelta(days=3)
    assert update_low_since(record, later) is False  # the clock keeps its start
    assert record["low_since"] == format_time(NOW)


def test_low_since_is_cleared_when_the_score_rises():
    record = rec(frequency=5, impact=1.0, low_since=ago(days=10))
    assert update_low_since(record, NOW) is True
    assert "low_since" not in record
    assert update_low_since(record, NOW) is False


def test_low_since_boundary_and_repair():
    at_threshold = rec(frequency=3, impact=1.0)  # exactly 0.3: not low
    assert update_low_since(at_threshold, NOW) is False and "low_since" not in at_threshold
    broken = rec(frequency=1, impact=0.5, low_since="yesterday-ish")
    assert update_low_since(broken, NOW) is True
    assert broken["low_since"] == format_time(NOW)
    assert scoring.touch_low_since is update_low_since


# ---------------------------------------------------------------- import cost


def test_import_is_stdlib_only_and_cheap():
    code = (
        "import sys, json; import learn_cli.engine.scoring; "
        "heavy = ('orjson', 'typer', 'rich', 'rapidfuzz', 'filelock', 'difflib'); "
        "print(json.dumps({'heavy': sorted(m for m in heavy if m in sys.modules)}))"
    )
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert out["heavy"] == []


def test_clock_due_says_when_the_clock_can_change_a_learning():
    """Index v12's due columns (scoring.clock_due): whenever update_low_since would change a
    record or lifecycle would archive it, the record is due as Index.due_rowids asks (its
    due_clock passed, its clock archive_days old, or a clock that starts later than now): a
    run again that reads only the due rows misses no change the clock makes."""
    import random
    from datetime import timedelta

    from learn_cli.engine.scoring import ARCHIVE, clock_due, format_time, lifecycle, parse_time, update_low_since

    rng = random.Random(14)
    base = parse_time("2026-06-01T00:00:00Z")

    def moment():
        return rng.choice([format_time(base + timedelta(days=rng.uniform(-120, 200))), "not a time"])

    checked = changes = 0
    for _ in range(2000):
        rec = {"status": rng.choice(["active", "pending", "global", "conflicted", None])}
        for name, values in (("frequency", [1, 2, 3, 5, 10, 40, "x"]), ("impact", [0.1, 0.3, 0.5, 0.68, 0.9, 1.0])):
            if rng.random() < 0.9:
                rec[name] = rng.choice(values)
        for name, share in (("last_used", 0.9), ("created", 0.5), ("low_since", 0.5)):
            if rng.random() < share:
                rec[name] = moment()
        due, start = clock_due(rec)
        for _ in range(15):
            now = base + timedelta(days=rng.uniform(-150, 300), seconds=rng.uniform(0, 86400))
            at, archive_days = now.timestamp(), rng.choice([1, 30, 90])
            selected = due <= at or (start is not None and (start <= at - archive_days * 86400 or start > at))
            changed = update_low_since(dict(rec), now)
            archived = lifecycle(rec, now, 2, archive_days) == ARCHIVE
            changes += changed or archived
            assert selected or not (changed or archived), (rec, now)
            checked += 1
    assert changes > 1000 and checked == 30000


def test_the_due_index_leaves_out_the_rows_never_due():
    """The index's partial index of due rows names the NEVER due time as a literal (the index
    module does not import store.score on the hook path): the same value."""
    from learn_cli.store import index
    from learn_cli.store.score import NEVER_DUE

    assert scoring.NEVER == NEVER_DUE == float(index._DUE_SOON.rsplit("< ", 1)[1].rstrip(")"))
