"""The one i18n table: every phrase the code asks for exists, in both languages, with the same placeholders."""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

import pytest

from handlers.i18n import MESSAGES, PHRASES_FILE, t

ROOT = Path(__file__).resolve().parents[1]
# module-level lookups and the area each one reads (`phrase = scoped("history")`)
LOOKUPS = {"t": ""}


def _placeholders(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def _literal_keys() -> list[tuple[str, str]]:
    """(module, key) of every `t("key")`, `phrase("key")`, `_p("key")` call with a literal key in the packages."""
    found = []
    for path in sorted(p for package in ("handlers", "bot") for p in (ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        areas = dict(LOOKUPS)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in ("bot.slack.phrases", "bot.slack.blocks"):
                areas.update({alias.asname or alias.name: "slack." for alias in node.names if alias.name == "phrase"})
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "scoped"
            ):
                areas[node.targets[0].id] = node.value.args[0].value + "."
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "phrase":
                first = node.args[0] if node.args else None  # `blocks.phrase("key")`
                if getattr(node.func.value, "id", None) == "blocks" and isinstance(first, ast.Constant):
                    found.append((str(path.relative_to(ROOT)), "slack." + first.value))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in areas:
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.append((str(path.relative_to(ROOT)), areas[node.func.id] + first.value))
    return found


def test_every_literal_key_in_the_code_is_in_the_table():
    keys = _literal_keys()
    assert len(keys) > 250  # the scan sees the handlers' and the Slack edge's lookups
    missing = sorted({f"{module}: {key}" for module, key in keys if key not in MESSAGES})
    assert not missing


@pytest.mark.parametrize("key", sorted(json.loads(PHRASES_FILE.read_text(encoding="utf-8"))["phrases"]))
def test_phrase_has_english_and_chinese_with_the_same_placeholders(key):
    phrases = MESSAGES[key]
    assert set(phrases) <= {"en", "zh"}
    if key.startswith("help."):  # Chinese help lines: the English one is the handler's docstring
        assert phrases.get("zh"), key
        return
    assert phrases.get("en"), key
    if "zh" in phrases:  # Chinese may leave out a word English needs ("{regions}" for the plural)
        assert _placeholders(phrases["zh"]) <= _placeholders(phrases["en"])


def test_no_module_keeps_its_own_phrase_table():
    """A dict literal mapping keys to {"en": ..., "zh": ...} belongs in knowledge/data/phrases.json."""
    owners = []
    for path in sorted(p for package in ("handlers", "bot", "knowledge") for p in (ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and len(node.values) > 2:
                inner = [v for v in node.values if isinstance(v, ast.Dict)]
                langs = [{k.value for k in v.keys if isinstance(k, ast.Constant)} for v in inner]
                if len(inner) == len(node.values) and all(lang == {"en", "zh"} for lang in langs):
                    owners.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not owners


def test_lookup_falls_back_to_english_and_formats():
    key = next(k for k, v in MESSAGES.items() if "{" not in v["en"])
    assert t(key, "fr") == MESSAGES[key]["en"]
    assert t(key, "zh") == MESSAGES[key].get("zh", MESSAGES[key]["en"])


@pytest.mark.parametrize(
    ("n", "lang", "said"),
    [(1, "en", "+1 region"), (3, "en", "+3 regions"), (1, "zh", "另有1个地域"), (15, "zh", "另有15个地域")],
)
def test_other_regions_are_counted_in_words_a_reader_expects(n, lang, said):
    from handlers.common import also_in

    assert also_in(n, lang) == said


def test_no_reply_phrase_names_a_command_line_command_or_a_file():
    """Every phrase may reach Slack (handlers do not know their edge): none names a `gpubot ...` command, the
    server's files or its home (the stand-in's leak rule, issue 24); the CLI's own help lives in README and --help."""
    from tests.slack_standin import LEAKS

    leaking = {
        f"{key} ({lang}): {found.group(0)}"
        for key, texts in MESSAGES.items()
        for lang, text in texts.items()
        if (found := LEAKS.search(text))
    }
    assert not leaking, sorted(leaking)
