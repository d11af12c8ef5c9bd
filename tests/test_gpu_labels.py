"""Issue 26, item 7: an offer is labelled with the GPU's name and memory ("B200 180GB", "A10G 24GB"), never with the
notes a datasheet row carries in parentheses ("B200 (HGX B200, per GPU)", "A10G (AWS G5 only)").

The expected label of every offer of every bundled catalog is computed here from the knowledge base's raw row: the
datasheet model (its name, everything before the first " (") or else the variant or family, then the memory per GPU.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.render import gpu_label
from handlers.common import offer
from tests.test_display_units import ask, offer_lines

ROOT = Path(__file__).resolve().parents[1]
NOTE = re.compile(r"\(|per GPU|only\b|board", re.IGNORECASE)


def expected_label(row: dict) -> str:
    name = (row["gpu_model"] or "").split(" (")[0] or row["gpu_variant"] or row["gpu"]
    memory = row["gpu_memory_gb"]
    if memory and f"{memory:g}GB" not in name.replace(" ", ""):
        name += f" {memory:g}GB"
    return name


def test_every_bundled_offer_is_labelled_with_a_clean_name(kb):
    rows = kb.rows("SELECT * FROM offers GROUP BY provider, gpu, gpu_model, gpu_variant, gpu_memory_gb")
    assert len(rows) > 100  # every accelerator of the twelve clouds' catalogs
    models = {r["gpu_model"] for r in rows if r["gpu_model"]}
    assert {"B200 (HGX B200, per GPU)", "A10G (AWS G5 only)"} <= models  # the notes exist in the data
    for row in rows:
        label = gpu_label(offer(row))
        assert not NOTE.search(label), (row["provider"], row["instance_type"], label)
        assert label == expected_label(row), (row["provider"], row["instance_type"])


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("cheapest B200", "B200 180GB"),
        ("最便宜的B200", "B200 180GB"),
        ("cheapest A10G", "A10G 24GB"),
        ("A10G最便宜的是哪家", "A10G 24GB"),
    ],
)
def test_an_answer_names_the_gpu_without_datasheet_notes(home, capsys, question, label):
    text, data = ask(capsys, question)
    lines = offer_lines(text)
    assert lines and all(f"x {label} · " in line for line in lines), lines
    assert "(HGX" not in text and "G5 only" not in text and "per GPU)" not in text


def test_a_training_estimate_names_gpus_without_datasheet_notes(home, capsys):
    text, data = ask(capsys, "cost to fine-tune Llama 2 70B with LoRA", "--verbose")
    assert "B200 / B200" in text and "(HGX" not in text and "per GPU)" not in text
