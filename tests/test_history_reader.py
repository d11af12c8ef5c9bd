"""Handlers read the price history through an injected reader and never write (issue 17): the history and digest
handlers answer from an in-memory fake (no database at all) exactly as from the real state database (SQLite and
PostgreSQL), the pipeline hands them the reader, and `gpubot history --json` on a current SQLite state starts
without SQLAlchemy, pydantic or Jinja (issue 18: under 200 ms).

Expected figures come straight from the hand-made snapshots in `tests/history_fakes.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from handlers.models import Query
from tests.history_fakes import NEW, OLD, SNAPSHOTS, MemoryReader

ROOT = Path(__file__).resolve().parents[1]
A100_SPOT_AWS = Query(
    text="A100 spot price history on aws", intent="history", gpus=["A100"], providers=["aws"], pricing="spot"
)
DIGEST_AWS = Query(text="digest aws", intent="digest", providers=["aws"])


def _lowest_per_gpu_hour(offers: list[dict]) -> float:
    return min(o["price_per_hour_usd"] / o["gpu_count"] for o in offers)


def expected_history_title() -> str:
    old, new = (_lowest_per_gpu_hour(offers) for _, _, _, offers in SNAPSHOTS)
    pct = (new - old) / old * 100
    return f"A100 spot on AWS: ${old:.2f} -> ${new:.2f} per GPU-hour, {pct:+.0f}% since {OLD.date().isoformat()}"


def _record(snapshots=SNAPSHOTS) -> None:
    from knowledge.history import snapshots as history

    for provider, source, taken_at, offers in snapshots:
        history.record_snapshot(provider, offers, source, taken_at)


def _shown(answer) -> dict:
    """What a user sees of an answer, and the points without the database's snapshot ids."""
    points = [{k: v for k, v in p.items() if k != "snapshot"} for p in answer.extra.get("history", [])]
    return {"title": answer.title, "lines": answer.lines, "notes": answer.notes, "points": points}


# --- the fake reader: injection, no database -------------------------------------------------------------------


def test_the_history_handler_answers_from_an_injected_reader():
    from handlers.history import handle

    reader = MemoryReader()
    answer = handle(A100_SPOT_AWS, None, reader)
    assert answer.title == expected_history_title()  # $2.00 -> $1.50, -25%
    assert [p["taken_at"] for p in answer.extra["history"]] == [OLD.isoformat(), NEW.isoformat()]
    assert [p["cheapest"]["region"] for p in answer.extra["history"]] == ["us-east-1", "us-east-1"]
    assert "offers" in reader.calls and "snapshots_of" in reader.calls  # it really read through the fake


def test_the_digest_handler_answers_from_an_injected_reader():
    from handlers.digest import handle

    answer = handle(DIGEST_AWS, None, MemoryReader())
    assert answer.title == f"GPU price changes since {OLD.date().isoformat()}"
    assert answer.extra["digest"]["changes"] == 1  # us-east-1 16.00 -> 12.00; us-west-2 unchanged
    assert answer.extra["digest"]["removed"] == 1  # eu-west-1 withdrawn
    assert "1 region cheaper, median -25.0%" in answer.lines[0] and "1 withdrawn" in answer.lines[0]


def test_the_pipeline_hands_its_reader_to_the_history_handlers(kb):
    from bot.pipeline import answer_query

    assert answer_query(A100_SPOT_AWS, kb, MemoryReader()).title == expected_history_title()
    assert answer_query(DIGEST_AWS, kb, MemoryReader()).extra["digest"]["removed"] == 1


def test_handlers_answer_from_a_fake_without_loading_any_state_module(tmp_path):
    """In a fresh process: the state database is unreachable, and nothing that could write it is even imported."""
    code = (
        "import sys\n"
        "from tests.history_fakes import MemoryReader\n"
        "from tests.test_history_reader import A100_SPOT_AWS, DIGEST_AWS\n"
        "import handlers.history, handlers.digest\n"
        "print(handlers.history.handle(A100_SPOT_AWS, None, MemoryReader()).title)\n"
        "print(handlers.digest.handle(DIGEST_AWS, None, MemoryReader()).title)\n"
        "loaded = ['sqlalchemy', 'knowledge.state.db', 'knowledge.history.snapshots',"
        " 'knowledge.history.baselines', 'knowledge.kb.opener']\n"
        "print([m for m in loaded if m in sys.modules])\n"
    )
    env = {"PATH": "/usr/bin:/bin", "GPUBOT_HOME": str(tmp_path), "DATABASE_URL": "sqlite:////nonexistent/dir/x.db"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    title, digest_title, loaded = done.stdout.splitlines()
    assert title == expected_history_title()
    assert digest_title.startswith("GPU price changes since")
    assert loaded == "[]"
    assert not (tmp_path / "state.db").exists()


# --- the real reader: the same answers from the state database -------------------------------------------------


@pytest.fixture()
def recorded(tmp_path, monkeypatch, state_url):
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    _record()
    return state_url


def test_the_state_reader_gives_the_answers_the_fake_gives(recorded):
    from handlers import digest, history
    from knowledge.history.reader import StateHistoryReader

    real, fake = StateHistoryReader(), MemoryReader()
    assert _shown(history.handle(A100_SPOT_AWS, None, real)) == _shown(history.handle(A100_SPOT_AWS, None, fake))
    assert history.handle(A100_SPOT_AWS, None, real).title == expected_history_title()
    real_digest, fake_digest = digest.handle(DIGEST_AWS, None, real), digest.handle(DIGEST_AWS, None, fake)
    assert (real_digest.title, real_digest.lines, real_digest.notes) == (
        fake_digest.title,
        fake_digest.lines,
        fake_digest.notes,
    )
    assert real.providers() == ["aws"]
    assert [s.taken_at for s in real.snapshots_of("aws")] == [OLD, NEW]
    assert [s.seq for s in real.snapshots_of("aws", since=NEW)] == [2]
    assert real.latest_snapshot("aws").taken_at == NEW


def test_a_current_sqlite_state_is_read_without_sqlalchemy(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'state.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    _record()
    code = (
        "import sys\n"
        "from knowledge.history.reader import StateHistoryReader\n"
        "from knowledge.history.diff import diff_since\n"
        f"reader = StateHistoryReader({url!r})\n"
        "digest = diff_since(reader)\n"
        "print(len(digest.changed), len(digest.removed), reader.providers())\n"
        "print('sqlalchemy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["1 1 ['aws']", "False"]


def test_history_json_starts_without_sqlalchemy_pydantic_or_jinja(kb, gpubot_home, tmp_path):
    """Once the baselines are recorded, `gpubot history --json` reads a current SQLite state with the plain driver
    and prints the series without building models or loading the renderer (issue 18's 200 ms)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "GPUBOT_HOME": str(gpubot_home),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'state.db'}",
    }
    code = (
        "import sys, json\n"
        "from bot.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "heavy = ['sqlalchemy', 'alembic', 'pydantic', 'jinja2', 'bot.render', 'handlers.models']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )

    def run(*args: str) -> tuple[dict, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", code, "history", *args, "--json"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), json.loads(done.stderr.splitlines()[-1])

    first, _ = run("H100", "--provider", "gcp", "--pricing", "spot")  # records the gcp baseline: SQLAlchemy
    assert len(first["history"]) > 100 and first["history"][0]["series"] == "gcp_weekly"
    second, loaded = run("L4", "--provider", "gcp", "--pricing", "on_demand")  # a new question, state current
    assert loaded == []
    assert len(second["history"]) > 100
    assert {p["gpu"] for p in second["history"]} == {"L4"} and {p["pricing"] for p in second["history"]} == {
        "on_demand"
    }
