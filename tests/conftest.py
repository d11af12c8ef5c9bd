"""Shared fixtures: two knowledge bases, each built once per test run (whatever the number of xdist workers):
`kb` from the real bundled data, `small_kb` from a small real subset of it (tests/data/small_kb/, for tests that do
not need the full catalogs)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

SMALL_KB_DATA = Path(__file__).resolve().parent / "data" / "small_kb"

for name in [key for key in os.environ if key.startswith("SLACK_")]:
    del os.environ[name]  # Bolt reads SLACK_* silently; tests configure everything explicitly


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """`name`, built by `build(path)` once per test run: by the first xdist worker that asks, under a file lock in
    the run's shared temporary folder, the other workers waiting for it (a build takes seconds of CPU)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # .../pytest-N/, shared by the workers' popen-gwK folders
    target = root / "built" / name
    target.parent.mkdir(exist_ok=True)
    with (root / "built" / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            home = target.with_name(f"{name}.home")
            home.mkdir(exist_ok=True)
            with pytest.MonkeyPatch.context() as patch:  # the build reads the (empty) state of a home of its own
                patch.setenv("GPUBOT_HOME", str(home))
                patch.delenv("DATABASE_URL", raising=False)
                build(target)
    return target


@pytest.fixture(scope="session")
def full_kb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full knowledge base's file, built once per run; copy it, never write to it."""
    from knowledge.kb.build import build

    return built_once(tmp_path_factory, "kb.db", build)


@pytest.fixture(scope="session")
def bundled_part(full_kb_file: Path) -> Path:
    """The cached bundled part the full build kept in its home (`knowledge.kb.base_cache`): a home with a copy in
    its `cache/` folder builds after an import without building the bundled part first. Copy it, never write to it."""
    (part,) = (full_kb_file.with_name(f"{full_kb_file.name}.home") / "cache").glob("kb_bundled-*.db")
    return part


def seed_bundled_part(home: Path, part: Path) -> None:
    (home / "cache").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(part, home / "cache" / part.name)


@pytest.fixture(scope="session")
def gpubot_home(tmp_path_factory: pytest.TempPathFactory, full_kb_file: Path) -> Path:
    """This worker's GPUBOT_HOME, holding a copy of the full knowledge base."""
    home = tmp_path_factory.mktemp("gpubot_home")
    shutil.copyfile(full_kb_file, home / "kb.db")
    os.environ["GPUBOT_HOME"] = str(home)
    return home


def copy_kb(kb, target: Path) -> None:
    """A copy of `kb`'s file at `target`, with the vocabulary `kb` pickled beside it under the copy's name: the
    same build, so the copy's first question loads it (~20 ms) instead of building it again (~1 s of CPU)."""
    from knowledge.kb.reader import KB
    from knowledge.kb.vocabulary import Vocabulary, cache_path

    shutil.copyfile(kb.path, target)
    Vocabulary.from_kb(kb)  # built once per KB and pickled beside it
    source, copied = cache_path(kb), cache_path(KB(target))
    if source and copied and source.exists():
        shutil.copyfile(source, copied)


@pytest.fixture(scope="session")
def kb(gpubot_home: Path):
    """The full knowledge base (every bundled catalog, price file and seed fact)."""
    from knowledge.kb.opener import open_kb

    return open_kb(gpubot_home / "kb.db")


@pytest.fixture
def home(kb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private GPUBOT_HOME holding a copy of the full knowledge base, with the answer cache off (CLI tests)."""
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", "0")
    return home


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kb, bundled_part: Path) -> Path:
    """One machine for imports: its own GPUBOT_HOME seeded with the built knowledge base (and the bundled part its
    build cached: a build after an import starts from it), a SQLite state database of its own."""
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    seed_bundled_part(home, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    return home


@pytest.fixture(scope="session")
def small_kb(tmp_path_factory: pytest.TempPathFactory, gpubot_home: Path):
    """A small knowledge base: every cloud, a few hundred real catalog rows (tests/data/small_kb/make.py says which),
    the real price files cut to them, every seed fact, spec, pitfall and rule. For tests whose assertions do not
    depend on the full catalogs (the parser, rules, rendering, fuzzing); answers' figures are tested on `kb`."""
    from knowledge.kb.build import build
    from knowledge.kb.reader import KB

    def small(path: Path) -> None:
        build(path, catalog_dir=SMALL_KB_DATA / "catalogs", pricing_dir=SMALL_KB_DATA / "pricing")

    return KB(built_once(tmp_path_factory, "small_kb.db", small))


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the session, from the machine's binaries (never skipped)."""
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def migrated_sqlite_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite state database migrated to the newest schema once per worker: fresh states are copies of it
    (migrating each one cost ~40 ms of CPU). Copy it, never write to it."""
    import sqlalchemy as sa

    from knowledge.state.db import upgrade

    path = tmp_path_factory.mktemp("migrated_state") / "state.db"
    engine = sa.create_engine(f"sqlite:///{path}", poolclass=sa.pool.NullPool)
    upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def state_url(request, tmp_path, monkeypatch) -> str:
    """A fresh persistent-state database with no rows, at the newest schema, on SQLite and on PostgreSQL (each test
    runs on both): a copy of a database migrated once (tests of migrating itself use `empty_state_url`)."""
    if request.param == "sqlite":
        path = tmp_path / "state.db"
        shutil.copyfile(request.getfixturevalue("migrated_sqlite_state"), path)
        path.chmod(0o600)  # as gpubot creates it (knowledge.state.private_files)
        url = f"sqlite:///{path}"
    else:
        url = request.getfixturevalue("postgres").new_database()
    monkeypatch.setenv("DATABASE_URL", url)
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_state_url(request, tmp_path, monkeypatch) -> str:
    """A fresh, empty persistent-state database that was never migrated, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        url = request.getfixturevalue("postgres").new_database(migrated=False)
    monkeypatch.setenv("DATABASE_URL", url)
    return url


# The fast tier (`./scripts/test -m "not slow"`; target under a minute, see BENCHMARKS.md): everything but real
# servers, subprocesses, PostgreSQL and whole-build comparisons. The whole suite (no -m) runs everything, always.
SLOW_MODULES = frozenset(
    {
        "test_scale",
        "test_faults",
        "test_fuzz",
        "test_injection",
        "test_slack_http",
        "test_oauth",
        "test_live_kb",
        "test_bad_requests",
        "test_migrations",
        "test_digest_post",
        "test_state",
        "test_history_series",
        "test_import_unit",
        "test_import_serving",
        "test_import_faults",  # real CLI processes, a server rebuilding in a child process
        "test_hostile",  # real servers, slow-client sockets, nginx
        "test_live_refresh",  # a stand-in HTTP server for the live price sources, a real server answering
        "test_stock_alerts",  # the live-source stand-in server builds its knowledge bases
        "test_kb_incremental",  # in process, but whole builds compared: 3 imports, 6 builds, ~19 s of CPU
    }
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core for the whole suite, one per core plus one for the fast tier. Much of the
    whole suite's time is tests waiting (a server's retry-after, a lease running out, a child process): the extra
    workers compute meanwhile. The fast tier (`-m "not slow"`) waits less. Measured on 2 cores, quiet, 2026-12-04:
    whole suite 3 workers 181 s, 4 workers 162 s (303 s of CPU either way); fast tier 2 workers 67-69 s, 3 workers
    65 s, 4 workers 67 s."""
    cores = len(os.sched_getaffinity(0))
    return cores + 1 if _the_fast_tier(config.option.markexpr) else 2 * cores


def _the_fast_tier(markexpr: str) -> bool:
    """Whether `-m markexpr` leaves out the slow tests but keeps the unmarked ones (pytest's own evaluation)."""
    from _pytest.mark.expression import Expression

    if not markexpr:
        return False
    expression = Expression.compile(markexpr)
    return expression.evaluate(lambda name, **_: False) and not expression.evaluate(lambda name, **_: name == "slow")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and getattr(config, "cache", None) is not None:  # xdist's controller
        config.pluginmanager.register(ModuleSeconds(config), "gpubot-module-seconds")
    config.addinivalue_line(
        "markers",
        "slow: starts servers, subprocesses or PostgreSQL, or compares whole builds (left out by -m 'not slow')",
    )
    config.addinivalue_line(
        "markers", "live: fetches the real vendor endpoints (internet); runs only with GPUBOT_LIVE_TESTS=1 -m live"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    live = os.environ.get("GPUBOT_LIVE_TESTS") == "1"
    for item in items:
        if item.get_closest_marker("live") is not None and not live:
            item.add_marker(pytest.mark.skip(reason="fetches real endpoints: set GPUBOT_LIVE_TESTS=1 and run -m live"))
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        callspec = getattr(item, "callspec", None)
        on_postgres = "postgres" in item.fixturenames or (
            callspec and "postgresql" in (callspec.params.get("state_url"), callspec.params.get("empty_state_url"))
        )
        if module in SLOW_MODULES or on_postgres:
            item.add_marker(pytest.mark.slow)
    # The long tests first (servers, subprocesses, PostgreSQL), then the modules that took longest in the last run
    # (a module never timed counts as the longest): the quick ones fill the workers' gaps at the end instead of one
    # worker finishing a 20-second test alone. A stable sort: each module's tests stay together and in order.
    last = config.cache.get(MODULE_SECONDS, {}) if getattr(config, "cache", None) else {}
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None,
            -last.get(_module_group(item.nodeid, item.get_closest_marker("slow") is not None), float("inf")),
        )
    )


MODULE_SECONDS = "gpubot/module_seconds"  # in pytest's cache (.pytest_cache): each module's test time, last run


def _module_group(nodeid: str, slow: bool) -> str:
    return f"{nodeid.split('::', 1)[0]} {'slow' if slow else 'fast'}"


class ModuleSeconds:
    """Adds up each module's test time (on the controller, from every worker's reports) for the next run's order."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.spent: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        group = _module_group(report.nodeid, "slow" in report.keywords)
        self.spent[group] = self.spent.get(group, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        cache = self.config.cache
        if cache is not None and self.spent:
            cache.set(MODULE_SECONDS, {**cache.get(MODULE_SECONDS, {}), **self.spent})
