"""Mrkdwn injection: names and text from users (questions, commands) or from data (an imported catalog's instance
types, regions and source, seed facts) never ping anyone (`<!channel>`, `<!here>`, `<!everyone>`, `@channel`,
`@here`, `@everyone`, user, user-group and channel mentions), never become links, and never break out of the
formatting around them, wherever Slack shows them: the text fallback, section text, table cells, context lines,
headers and button labels. Button values are data, not shown: they must decode back to the query they carry.

How a string is checked depends on how Slack reads it:
- mrkdwn (the `text` fallback, section and context text): every `<...>` is Slack syntax (mention, broadcast, link,
  date), so none may come from the input; `@here`-style words must be defused (slack_escape inserts a word joiner);
- plain_text (header, button labels) and raw_text table cells: `<!`, `<@`, `<#` and `@here`-style words defused.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slack_bolt import BoltRequest

from bot.citations import scrub
from bot.render import render_text
from bot.slack import blocks
from handlers.models import Answer, NameIssue, Offer, Pitfall, Query, Recommendation, RuleHit, Source, Tco
from tests.conftest import seed_bundled_part
from tests.slack_standin import SlackStandIn, check_message, message_blocks

SECRET = "injection-secret"
BOT_USER = SlackStandIn.bot_user_id
TOKENS = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<!subteam^S0EVIL|@oncall>",
    "<!date^1392734382^{date}|x>",
    "<@U0EVIL>",
    "<@W0EVIL|boss>",
    "<#C0EVIL>",
    "<#C0EVIL|general>",
    "<https://evil.example|click me>",
    "<mailto:a@b.c|mail>",
    "@channel",
    "@here",
    "@everyone",
    "@Channel",
    "@HERE",
    "<!channel|channel>",
    "&lt;!channel&gt;",
    "&lt;",
    "&amp;",
    "&",
    "<",
    ">",
    "*",
    "_",
    "~",
    "`",
    "```",
    "\n>",
    "\n",
    " ",
    ":",
    "|",
    "!",
    "#",
    "@",
    "A100",
    "中文",
    "\u2060",
    "\u200b",
    "x",
]
hostile = (
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), min_size=1, max_size=8)
    .map("".join)
    .filter(str.strip)
)  # names are never blank (a blank did-you-mean button is no button)

_BROADCAST = re.compile(r"(?<![\w\u2060])@(channel|here|everyone)\b", re.IGNORECASE)
_CONTROL = re.compile(r"<([^<>]*)>")
_PLAIN_SPECIAL = re.compile(r"<[!@#]")


# --- what Slack would see -------------------------------------------------------------------------------------------


def surfaces(message: dict) -> Iterator[tuple[str, str, str]]:
    """(kind, where, string) for every string Slack renders; kind is mrkdwn, plain or value."""
    if isinstance(message.get("text"), str):
        yield "mrkdwn", "/text", message["text"]

    def walk(node: Any, where: str) -> Iterator[tuple[str, str, str]]:
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "mrkdwn" and isinstance(node.get("text"), str):
                yield "mrkdwn", where, node["text"]
            elif kind in ("plain_text", "raw_text") and isinstance(node.get("text"), str):
                yield "plain", where, node["text"]
            if kind == "button" and isinstance(node.get("value"), str):
                yield "value", where + "/value", node["value"]
            for key, value in node.items():
                if key not in ("text", "value") or not isinstance(value, str):
                    yield from walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}/{i}")

    yield from walk(message.get("blocks") or [], "/blocks")
    yield from walk(message.get("attachments") or [], "/attachments")  # the offers table (issue 17)


def assert_inert(message: dict, *, allowed_controls: set[str] = frozenset()) -> None:
    """Nothing the input put there can ping, link or mention."""
    for kind, where, text in surfaces(message):
        if kind == "mrkdwn":
            controls = set(_CONTROL.findall(text)) - allowed_controls
            assert not controls, f"Slack syntax <{controls.pop()}> reaches {where}: {text[:300]!r}"
            assert not _BROADCAST.search(text), f"a broadcast reaches {where}: {text[:300]!r}"
        elif kind == "plain":
            assert not _PLAIN_SPECIAL.search(text), f"mention syntax in plain text at {where}: {text[:300]!r}"
            assert not _BROADCAST.search(text), f"a broadcast in plain text at {where}: {text[:300]!r}"
        elif text.startswith("{"):  # a value is data, never shown: a query that must decode, or a plain token
            assert isinstance(json.loads(text), dict)
        else:
            assert re.fullmatch(r"[A-Za-z0-9_.:-]{1,100}", text), f"odd button value at {where}: {text[:100]!r}"


def hostile_offer(h: str, n: int = 1, **extra: Any) -> Offer:
    fields = dict(
        provider=h,
        instance_type=h,
        gpu=h,
        gpu_model=h,
        gpu_memory_gb=80,
        gpu_count=n,
        region=h,
        zone=h,
        pricing="spot",
        price_per_hour=8.0 * n,
        price_per_gpu_hour=8.0,
        currency=h[:8] or "USD",
        price_per_hour_usd=8.0 * n,
        price_per_gpu_hour_usd=8.0,
        source=h,
        as_of=h,
        status=h,
        note=h,
    )
    return Offer(**{**fields, **extra})


def hostile_answer(h: str, intent: str = "cheapest") -> Answer:
    query = Query(
        text=h,
        intent=intent,
        gpus=[h],
        providers=[h],
        regions=[h],
        instance_types=[h],
        topic=h,
        issues=[NameIssue(kind="gpu", text=h, status="ambiguous", candidates=[h, h + "2"])],
    )
    return Answer(
        query=query,
        title=h,
        offers=[hostile_offer(h), hostile_offer(h, 2, vgpu=True, kind="article")],
        context=[hostile_offer(h, 4)],
        lines=[h, f"line {h}"],
        notes=[h],
        suggestions=[h, h + "2"],
        sources=[Source(source=h, as_of=h)],
        more=3,
        recommendations=[Recommendation(gpu=h, gpu_memory_gb=80, gpu_count=2, offer=hostile_offer(h), reason=h)],
        rules=[RuleHit(id=h, explain=h)],
        specs=[{"model": h, "memory_gb": 80}],
        tco=Tco(
            hours=720, pricing="spot", compute=1, storage=2, egress=3, total=6, currency=h[:8] or "USD", assumptions=[h]
        ),
        pitfalls=[Pitfall(id=h, title=h, body=h, severity=h, source=h, tags={"gpus": [h]})],
        extra={"settings_notes": [h], "defaulted": ["providers"]},
    )


# --- answers built from hostile names and text ------------------------------------------------------------------


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    h=hostile,
    intent=st.sampled_from(["cheapest", "price", "compare", "recommend", "tco", "pitfalls", "unknown"]),
    lang=st.sampled_from(["en", "zh"]),
)
@example(h="<!channel> @here <@U0EVIL> <#C0EVIL> <https://evil.example|click>", intent="cheapest", lang="en")
@example(h="&lt;!channel&gt; &amp;lt;!here&amp;gt;", intent="pitfalls", lang="zh")
@example(h=".csv", intent="cheapest", lang="en")  # "line .csv" tidied into a file name, scrubbed twice
def test_hostile_names_and_text_are_inert_on_every_surface(h, intent, lang):
    result = hostile_answer(h, intent)
    result = result.model_copy(update={"query": result.query.model_copy(update={"language": lang})})
    for message in (
        blocks.answer_message(result, shareable=True),
        blocks.answer_message(result, shareable=False, shared_by="U_CLICKER"),
    ):
        assert check_message(message) == (None, [])
        assert_inert(message, allowed_controls={"@U_CLICKER"})
    plain = render_text(result)  # the CLI's text is not mrkdwn; the Slack fallback is built from it, escaped
    assert blocks.fallback_text(result) == blocks.answer_message(result)["text"]
    assert plain.strip()


@settings(max_examples=500, deadline=None)
@given(text=hostile, shown=st.integers(0, 100))
def test_button_values_carry_hostile_queries_back_unchanged(text, shown):
    query = Query(
        text=text,
        intent="cheapest",
        gpus=["A100"],
        providers=["aws"],
        topic=text,
        issues=[NameIssue(kind="gpu", text=text, status="unknown", candidates=[text])],
    )
    value = blocks.encode_value(query, shown=shown, pick=text)
    assert value is not None and len(value) <= 2000
    decoded, extra = blocks.decode_value(value)
    assert extra == {"shown": shown, "pick": text}
    assert decoded.model_copy(update={"text": query.text}) == query  # only a very long text may be cut
    assert query.text.startswith(decoded.text)


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        "[]",
        "{}",
        '{"q": "<!channel>"}',
        '{"q": {"intent": "<!channel>"}}',
        '{"q": {"text": "<!channel>", "intent": "cheapest", "gpus": ["<!here>"]}}',
        '{"q": {"text": "x", "evil": "<!everyone>"}}',
        json.dumps({"q": {"text": "@here " * 500}}),
    ],
)
def test_a_tampered_button_value_gets_an_inert_reply(app, slack, value):
    hook = f"inj-{uuid.uuid4().hex[:8]}"
    payload = {
        "type": "block_actions",
        "team": {"id": "T0INJ"},
        "user": {"id": "U_CLICKER"},
        "api_app_id": "A_GPUBOT",
        "trigger_id": "1.2.3",
        "response_url": slack.hook_url(hook),
        "container": {"type": "message", "message_ts": "1.1", "channel_id": "C0INJ", "is_ephemeral": True},
        "channel": {"id": "C0INJ"},
        "actions": [
            {
                "type": "button",
                "action_id": blocks.ACTION_IDS["toggle"],
                "block_id": "b1",
                "value": value,
                "action_ts": "1.2",
            }
        ],
    }
    body = urlencode({"payload": json.dumps(payload)})
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    reply = slack.wait_for(f"hooks/{hook}")[0].body
    assert check_message(reply) == (None, [])
    assert_inert(reply)
    assert "Traceback" not in json.dumps(reply)


# --- through the Slack app -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture(scope="module")
def app(slack, kb):
    from bot.settings import load_settings
    from bot.slack.app import build_app

    return build_app(
        load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url), kb
    )


def dispatch(app, body: str, content_type: str):
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return app.dispatch(
        BoltRequest(
            body=body,
            headers={
                "content-type": content_type,
                "x-slack-request-timestamp": ts,
                "x-slack-signature": f"v0={digest}",
            },
        )
    )


def slash(app, slack, text: str, team: str = "T0INJ") -> dict:
    hook = f"inj-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": team,
            "channel_id": "C0INJ",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": text,
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = dispatch(app, body, "application/x-www-form-urlencoded")
    assert response.status == 200
    message = json.loads(response.body)
    if "Looking that up" in message.get("text", ""):
        message = slack.wait_for(f"hooks/{hook}")[0].body
    return message


def mention(app, slack, text: str) -> dict:
    before = len(slack.calls("chat.postMessage"))
    ts = f"{time.time():.6f}"
    event = {
        "type": "app_mention",
        "user": "U_ASKER",
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": "C0INJ",
        "event_ts": ts,
    }
    body = json.dumps(
        {
            "team_id": "T0INJ",
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
            "event": event,
        }
    )
    assert dispatch(app, body, "application/json").status == 200
    return slack.wait_for("chat.postMessage", before + 1)[before].body


QUESTIONS = [
    "cheapest <!channel> A100 <!here> spot <@U0EVIL>",
    "cheapest H1000 <!everyone> on awz <#C0EVIL|general>",  # did-you-mean buttons carry the hostile text
    "price of <https://evil.example|p4d.24xlarge>",
    "pitfalls @channel @here @everyone",
    "compare a100 vs <!subteam^S0EVIL|@oncall>",
    "*bold* _it_ ~strike~ `code` ```block``` > quote &amp; &lt;!channel&gt;",
    "最便宜的H100 <!channel> 按需实例 @here",
    "set providers <!channel>",
    "set regions @here,<@U0EVIL>",
    "set budget <!everyone> USD/GPU-hour",
    "unset <!channel>",
    "digest subscribe gpus <!here>,@channel",
    "digest subscribe tz <@U0EVIL>",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_hostile_questions_and_commands_are_inert_in_slash_replies(app, slack, text):
    message = slash(app, slack, text)
    assert check_message(message) == (None, [])
    assert_inert(message)


@pytest.mark.parametrize("text", QUESTIONS[:7])
def test_hostile_questions_are_inert_in_mention_replies(app, slack, text):
    reply = mention(app, slack, text)
    assert check_message(reply) == (None, [])
    assert_inert(reply)


def test_sharing_a_hostile_answer_pings_nobody_but_names_who_shared(app, slack):
    message = slash(app, slack, QUESTIONS[0])
    share = next(
        e
        for b in message_blocks(message)
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == blocks.ACTION_IDS["share"]
    )
    hook = f"inj-{uuid.uuid4().hex[:8]}"
    payload = {
        "type": "block_actions",
        "team": {"id": "T0INJ"},
        "user": {"id": "U_CLICKER"},
        "api_app_id": "A",
        "trigger_id": "1",
        "response_url": slack.hook_url(hook),
        "channel": {"id": "C0INJ"},
        "container": {"type": "message", "message_ts": "1.1", "channel_id": "C0INJ", "is_ephemeral": True},
        "actions": [
            {
                "type": "button",
                "action_id": share["action_id"],
                "block_id": "b",
                "value": share["value"],
                "action_ts": "1.2",
            }
        ],
    }
    assert dispatch(app, urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded").status == 200
    shared = slack.wait_for(f"hooks/{hook}", 2)[0].body
    assert shared["response_type"] == "in_channel"
    assert_inert(shared, allowed_controls={"@U_CLICKER"})
    assert "<@U_CLICKER>" in json.dumps(shared)  # the one mention gpubot means to make


# --- data: an imported catalog with hostile names and source ----------------------------------------------------

EVIL_ROWS = [
    ("<!channel>.big", "A100", "8", "96", "1152", "", "20.5", "8.1", "<#C0EVIL|general>"),
    ("evil@here.8x", "A100", "8", "96", "1152", "<!everyone> A100", "21.0", "", "@everyone-1"),
    ("<@U0EVIL|boss>.xl", "A100", "1", "12", "144", "", "3.2", "", "us-*east*-1"),
    ("p*bold*_it_~s~`c`", "A100", "1", "12", "144", "", "3.3", "1.1", "<https://evil.example|click>"),
]
EVIL_SOURCE = "<!here> evil source <https://evil.example|click> @channel"


@pytest.fixture(scope="module")
def evil_kb(tmp_path_factory, kb, bundled_part):
    """A knowledge base with the hostile catalog imported as provider `evilcloud` (own home and state)."""
    from knowledge.catalog.importer import import_catalog
    from knowledge.kb.opener import open_kb

    home = tmp_path_factory.mktemp("evil_home")
    seed_bundled_part(home, bundled_part)  # the import's build starts from the cached bundled part
    path = home / "evil.csv"
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "InstanceType",
            "AcceleratorName",
            "AcceleratorCount",
            "vCPUs",
            "MemoryGiB",
            "GpuInfo",
            "Price",
            "SpotPrice",
            "Region",
        ]
    )
    writer.writerows(EVIL_ROWS)
    path.write_text(out.getvalue(), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUBOT_HOME", str(home))
        mp.setenv("DATABASE_URL", f"sqlite:///{home / 'state.db'}")
        import_catalog(path, "evilcloud", source=EVIL_SOURCE, as_of="2026-11-30")
        evil = open_kb(home / "kb.db")
    yield evil
    evil.close()


@pytest.fixture(scope="module")
def evil_app(slack, evil_kb):
    from bot.settings import load_settings
    from bot.slack.app import build_app

    return build_app(
        load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url), evil_kb
    )


@pytest.mark.parametrize(
    "text",
    [
        "cheapest A100 on evilcloud",
        "cheapest A100 spot on evilcloud",
        "checklist A100 on evilcloud",
        "最便宜的A100 evilcloud",
    ],
)
def test_hostile_catalog_data_is_inert_in_replies(evil_app, slack, text):
    message = slash(evil_app, slack, text)
    assert check_message(message) == (None, [])
    rendered = json.dumps(message, ensure_ascii=False)
    assert "evil" in rendered, "the hostile offers are shown (else this test proves nothing)"
    assert_inert(message)
    reply = mention(evil_app, slack, text)
    assert_inert(reply)


def test_hostile_catalog_data_is_inert_in_the_app_home(evil_app, slack):
    event = {"type": "app_home_opened", "user": "U_ASKER", "channel": "D0INJ", "tab": "home", "event_ts": "1.1"}
    body = json.dumps(
        {
            "team_id": "T0INJ",
            "api_app_id": "A",
            "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
            "event": event,
        }
    )
    assert dispatch(evil_app, body, "application/json").status == 200
    view = slack.wait_for("views.publish")[-1].body["view"]
    assert "evil" in json.dumps(view)
    assert_inert({"blocks": view["blocks"]})


# --- formatting: a value inside *bold*, _italic_ or `code` cannot end it early ---------------------------------


@pytest.mark.parametrize(
    ("field", "value", "span"),
    [
        ("pitfall-title", "Spot* reclaimed", "*"),
        ("pitfall-source", "seed_S0 §5", "_"),
        ("rule-id", "cost`per`gpu", "`"),
        ("recommended-gpu", "H100*SXM", "*"),
    ],
)
def test_a_value_cannot_end_the_formatting_around_it(field, value, span):
    query = Query(text="x", intent="recommend")
    parts = {
        "pitfall-title": {"pitfalls": [Pitfall(id="p", title=value, body="b", severity="high", source="s")]},
        "pitfall-source": {"pitfalls": [Pitfall(id="p", title="t", body="b", severity="high", source=value)]},
        "rule-id": {"rules": [RuleHit(id=value, explain="e")]},
        "recommended-gpu": {"recommendations": [Recommendation(gpu=value, reason="r")]},
    }[field]
    message = blocks.answer_message(Answer(query=query, title="t", **parts))
    sections = "\n".join(b["text"]["text"] for b in message_blocks(message) if b["type"] == "section")
    assert value not in sections, f"{value!r} reaches a {span}...{span} span unchanged: {sections!r}"


@settings(max_examples=500, deadline=None)
@given(
    text=st.lists(
        st.sampled_from([*TOKENS, ".csv", "knowledge/", ".json", "S0-01", "(", ")", ",", "x.md"]), max_size=8
    ).map("".join),
    lang=st.sampled_from(["en", "zh"]),
)
@example(text="line .csv", lang="en")  # tidied to "line.csv", a file name: the text fallback scrubbed it twice
def test_scrubbing_a_sentence_twice_changes_nothing(text, lang):
    once = scrub(text, lang)
    assert scrub(once, lang) == once
