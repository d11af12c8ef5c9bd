"""One settings object for every environment variable (issue 17): `knowledge.config`, documented in README.

The model follows the environment at each call, an invalid value is one line naming the variable (never a
traceback, in the CLI and at `serve`'s start), README's table is the model's, and no other module reads gpubot's
variables from `os.environ` itself.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, load_settings
from knowledge import config as cfg
from knowledge.config_model import Config, describe, markdown_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
START, END = "<!-- settings table: python -m bot.settings -->\n", "\n<!-- end of settings table -->"


def test_names_are_the_models_variables():
    assert sorted(cfg.NAMES) == sorted(name.upper() for name in Config.model_fields)
    assert set(cfg.NAMES) <= {name for name, _, _ in describe(Settings)}  # Settings carries every one of them


def test_the_cheap_defaults_are_the_models_and_free_text_is_free(monkeypatch, tmp_path):
    assert {name.upper(): field.default for name, field in Config.model_fields.items()} == cfg.DEFAULTS
    for name in cfg.FREE_TEXT:  # check() skips these: any text must be valid for them
        monkeypatch.setenv(name, str(tmp_path / "x y;%(☃)s, z"))
    cfg.config()


def test_get_is_typed_and_needs_no_validation_while_unset(monkeypatch):
    monkeypatch.delenv("GPUBOT_ANSWER_CACHE", raising=False)
    assert cfg.get("GPUBOT_ANSWER_CACHE") == 512
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", " 7 ")
    assert cfg.get("GPUBOT_ANSWER_CACHE") == 7
    from handlers.cache import size

    assert size() == 7
    with pytest.raises(KeyError):
        cfg.raw("HOME")  # not one of ours


def test_every_field_has_help_and_secrets_are_secret():
    for model in (Config, Settings):
        for name, field in model.model_fields.items():
            assert (field.description or "").strip(), f"{name} has no help text"
    secret = {name for name, field in Settings.model_fields.items() if "SecretStr" in str(field.annotation)}
    assert {
        "database_url",
        "gpubot_secret_key",
        "slack_bot_token",
        "slack_signing_secret",
        "slack_app_token",
        "slack_client_secret",
    } <= secret
    shown = repr(Config(gpubot_secret_key="k" * 44, database_url="postgresql://u:pw@h/db"))
    assert "pw@" not in shown and "k" * 44 not in shown


@pytest.mark.parametrize("variable", [row[0] for row in describe(Settings)])
def test_readme_documents_every_variable(variable):
    table = README.split(START, 1)[1].split(END, 1)[0]
    assert re.search(rf"^\| `{re.escape(variable)}` \| \S", table, re.MULTILINE), f"README lacks {variable}"


def test_readme_table_is_the_models():
    assert START in README and END in README
    assert README.split(START, 1)[1].split(END, 1)[0] == markdown_table(Settings), (
        "README's table differs from the settings model: paste the output of `python -m bot.settings`"
    )


def test_defaults_match_the_readme_and_the_model():
    table = README.split(START, 1)[1].split(END, 1)[0]
    row = next(line for line in table.splitlines() if line.startswith("| `GPUBOT_DB_BUSY_TIMEOUT` |"))
    assert row.endswith("| `30.0` |") and cfg.config().gpubot_db_busy_timeout == 30.0


def test_the_object_follows_the_environment_at_each_call(monkeypatch):
    monkeypatch.delenv("GPUBOT_DB_BUSY_TIMEOUT", raising=False)
    first = cfg.config()
    assert first is cfg.config()  # unchanged variables: the same object, not validated again
    monkeypatch.setenv("GPUBOT_DB_BUSY_TIMEOUT", "2.5")
    assert cfg.config().gpubot_db_busy_timeout == 2.5
    from knowledge.state.db import busy_timeout

    assert busy_timeout() == 2.5
    monkeypatch.setenv("GPUBOT_DB_BUSY_TIMEOUT", "")  # empty is unset
    assert cfg.config().gpubot_db_busy_timeout == 30.0
    monkeypatch.setenv("GPUBOT_CLAIM_TIMEOUT", "0.2")
    from knowledge.state.claims import claim_timeout

    assert claim_timeout() == 0.2
    monkeypatch.setenv("GPUBOT_CATALOG_URL_NEBIUS", "https://example.test/vms.csv")
    assert cfg.catalog_url("nebius") == "https://example.test/vms.csv" and cfg.catalog_url("lambda") is None


def test_home_follows_gpubot_home_then_xdg(monkeypatch, tmp_path):
    from knowledge.paths import home

    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "a"))
    assert home() == tmp_path / "a"
    monkeypatch.delenv("GPUBOT_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert home() == tmp_path / "xdg" / "gpubot"


@pytest.mark.parametrize(
    "variable, value, says",
    [
        ("GPUBOT_DB_BUSY_TIMEOUT", "abc", "valid number"),
        ("GPUBOT_DB_BUSY_TIMEOUT", "-1", "greater than or equal to 0"),
        ("GPUBOT_REFRESH_HOUR", "24", "less than or equal to 23"),
        ("GPUBOT_DIGEST_MINUTE", "five", "valid integer"),
        ("GPUBOT_ANSWER_CACHE", "lots", "valid integer"),
        ("GPUBOT_HTTP_READ_TIMEOUT", "0", "greater than 0"),
        ("GPUBOT_IMPORT_MAX_ROWS", "1e9x", "valid integer"),
        ("GPUBOT_LOG_LEVEL", "LOUD", "DEBUG"),
    ],
)
def test_an_invalid_value_is_one_error_naming_the_variable(monkeypatch, variable, value, says):
    monkeypatch.setenv(variable, value)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.config()
    message = str(err.value)
    assert message.startswith(f"invalid setting {variable}: ") and says in message and "\n" not in message
    with pytest.raises(SettingsError, match=rf"^invalid setting {variable}: "):  # `serve` stops at start
        load_settings()


def test_secret_values_are_never_in_the_error(monkeypatch):
    monkeypatch.setenv("PORT", "not-a-port")
    monkeypatch.setenv("SLACK_API_URL", "ftp://user:hunter2@proxy")  # a URL may hold a password: never shown
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "PORT: " in str(err.value) and "'not-a-port'" in str(err.value)  # a number is shown as given
    assert "SLACK_API_URL: " in str(err.value) and "hunter2" not in str(err.value)


@pytest.mark.parametrize(
    "variable, value, argv",
    [
        ("GPUBOT_LOG_LEVEL", "LOUD", ["ask", "cheapest A100 spot"]),
        ("GPUBOT_ANSWER_CACHE", "lots", ["ask", "cheapest H100 on demand", "--json"]),
        ("GPUBOT_IMPORT_MAX_ROWS", "many", ["kb", "import", "{catalog}", "--provider", "acme"]),
        ("GPUBOT_DB_BUSY_TIMEOUT", "abc", ["db", "upgrade"]),
    ],
)
def test_the_cli_says_which_variable_is_wrong_without_a_traceback(
    kb, monkeypatch, capsys, tmp_path, variable, value, argv
):
    from bot.cli import main

    catalog = tmp_path / "acme.csv"
    catalog.write_text("InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx1,A100,1,1.0,us-east-1\n")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")  # a new engine reads the timeout
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", "0")
    monkeypatch.setenv(variable, value)
    code = main([arg.format(catalog=catalog) for arg in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"invalid setting {variable}: " in err and "Traceback" not in err and err.count("\n") == 1


def test_serve_stops_at_start_on_an_invalid_value(monkeypatch, capsys):
    from bot.cli import main

    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s" * 32)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-3")
    monkeypatch.setenv("GPUBOT_HTTP_MAX_CONNECTIONS", "a few")
    assert main(["serve", "--http"]) == 2
    err = capsys.readouterr().err
    assert "GPUBOT_HTTP_MAX_CONNECTIONS" in err and "Traceback" not in err and "xoxb-1-2-3" not in err


# --- no other module reads gpubot's variables itself -------------------------------------------------------------

SETTINGS_MODULES = {"knowledge/config.py", "knowledge/config_model.py", "bot/settings.py"}
OURS = re.compile(r"^(GPUBOT_|SLACK_|DATABASE_URL$|XDG_DATA_HOME$|PORT$|LOG_LEVEL$)")


def _environment_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every read of the environment: os.environ / os.getenv / os.environb, by any key."""
    reads = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            reads += [
                (node.lineno, f"from os import {a.name}")
                for a in node.names
                if a.name in ("environ", "getenv", "environb")
            ]
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in ("environ", "getenv", "environb")
        ):
            continue
        reads.append((node.lineno, f"os.{node.attr}"))
    return reads


def _keys_of(tree: ast.AST) -> dict[int, list[str | None]]:
    """Line -> the keys of os.environ.get/setdefault/[]/getenv calls on it (None: not a string literal)."""
    keys: dict[int, list[str | None]] = {}
    for node in ast.walk(tree):
        target, key = None, None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value if node.func.attr in ("get", "setdefault", "pop") else node.func
            key = node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        if isinstance(target, ast.Attribute) and target.attr in ("environ", "getenv"):
            keys.setdefault(node.lineno, []).append(key.value if isinstance(key, ast.Constant) else None)
    return keys


def test_no_module_outside_the_settings_modules_reads_our_variables():
    offenders = []
    for path in sorted(p for package in ("bot", "handlers", "knowledge") for p in (ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in SETTINGS_MODULES:
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        keys = _keys_of(tree)
        for line, what in _environment_reads(tree):
            named = keys.get(line, [None])
            # the only environment use allowed elsewhere: a literal key that is not one of gpubot's variables
            if any(key is None or OURS.match(str(key)) for key in named):
                offenders.append(f"{rel}:{line}: {what} {named}")
        for match in re.finditer(r"environ\.get\(\s*f?[\"'](GPUBOT_|SLACK_|DATABASE_URL)", source):
            offenders.append(f"{rel}: {match.group(0)}")  # belt and braces, for a form the AST walk misses
    assert not offenders, "read these through knowledge.config (or bot.settings):\n" + "\n".join(offenders)


def test_the_check_finds_a_direct_read():
    tree = ast.parse(
        'import os\nx = os.environ.get("GPUBOT_HOME")\ny = os.getenv(name)\n'
        'os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")\n'
    )
    keys = _keys_of(tree)
    flagged = [
        line
        for line, _ in _environment_reads(tree)
        if any(k is None or OURS.match(str(k)) for k in keys.get(line, [None]))
    ]
    assert sorted(flagged) == [2, 3]
