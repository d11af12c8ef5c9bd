"""The command line's first-time `gpubot ask` loads only what its intent needs (issue 29, item 6).

Each question runs in a fresh `gpubot ask` process (the printed-answer cache off, so the answer is computed and a
non-default variable is set: the settings are validated), which then lists what it imported. The answer is checked
against the bundled AWS catalog read here, so a process that loaded little because it failed cannot pass.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AWS = ROOT / "knowledge" / "data" / "catalogs" / "aws_vms.csv"

pytestmark = pytest.mark.slow  # one new interpreter per question

# never on the path of a question: servers, Slack, charts, the state database, building or importing catalogs,
# pydantic-settings' sources (the settings are validated by their fields, knowledge.config_fields)
NEVER = (
    "pydantic_settings",
    "asyncio",
    "matplotlib",
    "slack_bolt",
    "slack_sdk",
    "sqlalchemy",
    "alembic",
    "bot.serve",
    "bot.slack.app",
    "bot.charts",
    "knowledge.state.db",
    "knowledge.history",
    "knowledge.kb.build",
    "knowledge.catalog.importer",
)
# the handlers of other intents (`handlers.INTENTS`), and what only they use
OTHER_INTENTS = (
    "handlers.compare",
    "handlers.recommend",
    "handlers.work",
    "handlers.train_cost",
    "handlers.rent_or_api",
    "handlers.history",
    "handlers.digest",
    "handlers.checklist",
    "handlers.help",
    "handlers.spot_choice",
    "knowledge.facts.work",
    "knowledge.facts.train_cost",
)
NOT_FOR_CHEAPEST = (  # a cheapest answer without a seed erratum: no TCO, no price questions, no rules
    "handlers.tco",
    "handlers.price",
    "handlers.tco_model",
    "handlers.break_even",
    "knowledge.facts.rules",
)
NOT_FOR_PRICE = (  # every name said exactly: no fuzzy matching; a price is not a TCO (`handlers.spec.price_checked`)
    "rapidfuzz",
    "handlers.tco",
    "handlers.tco_model",
    "handlers.break_even",
    "handlers.spot_risk",
    "knowledge.facts.rules",
)

CHILD = (
    "import json, sys\n"
    "from bot.cli import main\n"
    "code = main(['ask', sys.argv[1]])\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _aws_rows(**match: str) -> list[dict[str, str]]:
    with AWS.open(encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if all(row[k] == v for k, v in match.items())]


def _cheapest_a100_spot_per_gpu() -> str:
    rows = [r for r in _aws_rows(AcceleratorName="A100") if r["SpotPrice"]]
    best = min(float(r["SpotPrice"]) / float(r["AcceleratorCount"]) for r in rows)
    return f"${best:.4f}/GPU"


def _p4d_on_demand_per_hour() -> str:
    return f"${min(float(r['Price']) for r in _aws_rows(InstanceType='p4d.24xlarge') if r['Price']):.2f}/"


def _first_time(question: str, home: Path) -> tuple[str, set[str]]:
    env = {"PATH": "/usr/bin:/bin", "GPUBOT_HOME": str(home), "GPUBOT_ANSWER_CACHE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, question], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, set(json.loads(done.stderr.splitlines()[-1]))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(
    "question, intent, figure",
    [
        ("cheapest A100 spot on aws", "cheapest", _cheapest_a100_spot_per_gpu),
        ("aws上最便宜的A100竞价实例", "cheapest", _cheapest_a100_spot_per_gpu),
        ("price of p4d.24xlarge", "price", _p4d_on_demand_per_hour),
        ("p4d.24xlarge 多少钱", "price", _p4d_on_demand_per_hour),
    ],
)
def test_a_first_time_question_loads_only_its_intents_modules(gpubot_home, question, intent, figure):
    text, modules = _first_time(question, gpubot_home)
    assert figure() in text.splitlines()[0], text  # the answer itself, from the raw catalog
    assert _loaded(modules, NEVER) == []
    assert _loaded(modules, OTHER_INTENTS) == []
    assert _loaded(modules, NOT_FOR_CHEAPEST if intent == "cheapest" else NOT_FOR_PRICE) == []
    assert f"handlers.{'cheapest' if intent == 'cheapest' else 'price'}" in modules  # the intent's own handler
