"""Prices imported elsewhere (another worker, the clock, another machine) reach a running worker's answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from knowledge.kb.live import LiveKB
from knowledge.kb.opener import open_kb
from knowledge.kb.reader import GpuRef
from tests.conftest import seed_bundled_part
from tests.reference_calc import CATALOGS


def test_an_import_on_another_machine_reaches_this_worker(state_url, kb, bundled_part, tmp_path, monkeypatch):
    here, there = tmp_path / "machine-a", tmp_path / "machine-b"
    for home in (here, there):  # machines that built before: each build after the import starts from the cache
        home.mkdir()
        seed_bundled_part(home, bundled_part)
    (here / "kb.db").write_bytes(Path(kb.path).read_bytes())
    monkeypatch.setenv("GPUBOT_HOME", str(here))
    live = LiveKB(open_kb(here / "kb.db"), interval=0)
    assert live.refresh() is True or not live.is_stale()  # catch up with this fresh state database first
    assert live.get().offers(providers=["othercloud"]) == []
    assert not live.is_stale()

    env = {**os.environ, "GPUBOT_HOME": str(there), "DATABASE_URL": state_url}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli",
            "kb",
            "import",
            str(CATALOGS / "tencent_vms.csv"),
            "--provider",
            "othercloud",
            "--currency",
            "CNY",
            "--usd-per-unit",
            "0.138",
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert live.is_stale()
    old = live.get()
    assert live.refresh() is True
    new = live.get()
    assert new is not old
    offers = new.offers(gpus=[GpuRef("V100")], providers=["othercloud"])
    assert offers and {o["currency"] for o in offers} == {"CNY"}
    assert live.refresh() is False  # nothing new: no rebuild


def test_memo_is_per_knowledge_base_and_released_with_it(kb):
    """`KB.memo` builds a derived value once per KB object; another KB (a rebuild) starts empty; the value goes
    with its KB (no module-level cache keeps a replaced knowledge base's data alive)."""
    import gc
    import weakref

    from knowledge.kb.reader import KB

    calls: list[str] = []

    class Derived(list):
        pass

    first = kb.memo(("test", "derived"), lambda: calls.append("a") or Derived([1]))
    assert kb.memo(("test", "derived"), lambda: calls.append("b") or Derived([2])) is first
    assert calls == ["a"]
    other = KB(kb.path)
    value = other.memo(("test", "derived"), lambda: Derived([3]))
    assert value == [3]
    ref = weakref.ref(value)
    del other, value
    gc.collect()
    assert ref() is None
