"""Bad input, generated: arbitrary unicode, control characters, empty and huge text into the parser, into
`bot.pipeline.answer` and through the real Bolt app (`app.dispatch(BoltRequest(...))` with correctly signed
slash-command and event bodies), on the small test knowledge base (every cloud, a few hundred real rows: these
properties do not depend on the full catalogs; huge questions are timed on the full one). The property everywhere:
a helpful reply (help, an answer or a did-you-mean), never a traceback, never the internal-error apology, never a
500, always within Block Kit limits.

7,550 generated inputs here (11,270 with tests/test_bad_requests.py and tests/test_injection.py); this file runs
in about 30 s on a 2-core machine. Hypothesis settings are per test (no deadline: the machine is shared; examples
are cheap, so the counts are high).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import typing
import uuid
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slack_bolt import BoltRequest

from bot.pipeline import answer
from bot.render import answer_json, render_text
from bot.slack import blocks
from handlers.i18n import t
from handlers.models import Intent, Query
from tests.slack_standin import SlackStandIn, check_message

SECRET = "fuzz-signing-secret"
BOT_USER = SlackStandIn.bot_user_id
APOLOGIES = {t("error.internal", "en"), t("error.internal", "zh")}
INTENTS = typing.get_args(Intent)  # every intent of the contract (handlers.models.Intent)
FAST = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# --- strategies ------------------------------------------------------------------------------------------------

# Every code point Python can hold, surrogates included (the parser and pipeline get str, not bytes).
any_text = st.text(st.characters(codec=None, categories=None), max_size=400)
# What can travel in a UTF-8 HTTP body: no lone surrogates.
wire_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
controls = st.text(st.characters(categories=("Cc", "Cf", "Zl", "Zp", "Zs", "Co")), max_size=200)
# Pieces of real questions, so that generated text reaches the handlers rather than only "not understood".
WORDS = [
    "cheapest",
    "price of",
    "compare",
    "vs",
    "spec",
    "recommend",
    "tco",
    "pitfalls",
    "checklist",
    "digest",
    "history",
    "help",
    "spot",
    "on demand",
    "reserved 1 year",
    "reserved 3 years",
    "A100",
    "a100-80g",
    "H100",
    "H200",
    "B200",
    "L4",
    "T4",
    "V100",
    "A10",
    "RTX 4090",
    "H1000",
    "910B",
    "aws",
    "azure",
    "gcp",
    "alibaba",
    "tencent",
    "huawei",
    "inspur",
    "awz",
    "us-east-1",
    "eu-west-1",
    "cn-hangzhou",
    "europe-west",
    "p4d.24xlarge",
    "g5.xlarge",
    "g4dn.xlarg",
    "Standard_NC80adis_H100_v5",
    "8x",
    "x8",
    "16 GPUs",
    "80GB",
    ">= 48 GB",
    "70B",
    "training",
    "inference",
    "fine-tuning",
    "1 month",
    "720 hours",
    "2 years",
    "500 GB storage",
    "10 TB egress",
    "top 20",
    "top 0",
    "top 99999",
    "CNY",
    "USD",
    "最便宜的",
    "按需",
    "竞价",
    "多少钱",
    "对比",
    "推荐",
    "八卡",
    "两年",
    "阿里云",
    "腾讯云",
    "华为云",
    "显存",
    "坑",
    "?",
    "!",
    ",",
    "/gpu",
    "<@U_BOT>",
    "-1",
    "0",
    "1e309",
    "NaN",
    "inf",
    "99999999999999999999",
    "0.0000001",
    "%",
    "$",
    "¥",
]
question = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=12).map(" ".join)


def huge(unit: str, size: int = 100_000) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


HUGE = {
    "cheapest": huge("cheapest A100 spot on aws "),
    "chinese": huge("最便宜的H100按需实例，阿里云还是腾讯云？"),
    "compare": huge("compare a100 vs h100 vs l4 "),
    "tco": huge("tco 8x h100 1 month 500 GB storage 10 TB egress "),
    "pitfalls": huge("pitfalls spot egress quota "),
    "one-word": "x" * 100_000,
    "controls": huge("\x00\x01\x1b[31m\u200b\u202e\ufeff\r\n\t"),
    "mentions": huge("<!channel> <@U1> @here "),
    "emoji": huge("🚀🔥💸 "),
}


# --- the parser and the pipeline -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vocab(small_kb):
    from handlers.parse import Vocabulary

    return Vocabulary.from_kb(small_kb)


def assert_query(query: Query, text: str) -> None:
    assert isinstance(query, Query)
    assert query.intent in INTENTS and query.language in ("en", "zh")
    assert query.text == text  # the Query keeps what was typed
    assert all(isinstance(g, str) and g for g in query.gpus)
    assert query.top_n is None or query.top_n >= 0


@settings(max_examples=4000, **FAST)
@given(text=st.one_of(any_text, controls, question))
@example(text="")
@example(text="\x00")
@example(text="\ud800")  # a lone surrogate
@example(text="Ａ１００ ＳＰＯＴ")  # full-width
@example(text="ﬁ ǅ İ ẞ")  # case mappings that change length
def test_parser_reads_anything(vocab, text):
    from handlers.parse import parse

    assert_query(parse(text, vocab), text)


def assert_helpful(result, text: str) -> None:
    """A reply a person can use: a title, no apology, no traceback, text and JSON renderable, Block Kit valid."""
    assert result.title.strip(), f"empty answer to {text!r}"
    assert result.title not in APOLOGIES, f"internal error answering {text[:200]!r}"
    rendered = render_text(result)
    assert rendered.strip() and "Traceback" not in rendered
    json.dumps(answer_json(result), ensure_ascii=False)
    if result.query.intent == "unknown":
        assert result.lines, "not understood: the reply lists what gpubot can answer"
    message = blocks.answer_message(result, shareable=True)
    assert check_message(message) == (None, [])


@settings(max_examples=1200, **FAST)
@given(text=st.one_of(any_text, controls))
@example(text="")
@example(text="   ")
@example(text="\x00\x00\x00")
@example(text="\u202echeapest A100")  # right-to-left override
def test_pipeline_answers_any_text_helpfully(small_kb, text):
    assert_helpful(answer(text, small_kb), text)


@settings(max_examples=1800, **FAST)
@given(text=question)
@example(text="cheapest A100 top 99999")
@example(text="cheapest 1e309 x A100")
@example(text="tco 99999999999999999999 hours H100")
@example(text="cheapest -1 x H100")
@example(text="price of p4d.24xlarge reserved 3 years in us-east-1 in CNY")
def test_pipeline_answers_question_like_text_helpfully(small_kb, text):
    assert_helpful(answer(text, small_kb), text)


@pytest.mark.parametrize("name", sorted(HUGE))
def test_huge_text_is_answered_quickly(kb, vocab, name):
    from handlers.parse import parse

    text = HUGE[name]
    assert_query(parse(text, vocab), text)
    started = time.process_time()  # CPU time: what the answer costs, whatever else the machine is running
    result = answer(text, kb)
    elapsed = time.process_time() - started
    assert_helpful(result, text)
    assert elapsed < 1.5, f"{name}: {elapsed:.2f} s of CPU for 100 KB, Slack's ack budget is 1.5 s"
    assert len(render_text(result)) < 60_000, "a huge question does not make a huge answer"


# --- through the real Slack app -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture(scope="module")
def app(slack, small_kb):
    from bot.settings import load_settings
    from bot.slack.app import build_app

    settings_ = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    return build_app(settings_, small_kb)


def signed(body: str, content_type: str) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"content-type": content_type, "x-slack-request-timestamp": ts, "x-slack-signature": f"v0={digest}"}


def slash(app, slack, text: str) -> dict:
    hook = f"fuzz-{uuid.uuid4().hex[:10]}"
    body = urlencode(
        {
            "token": "legacy",
            "team_id": "T0FUZZ",
            "channel_id": "C0FUZZ",
            "channel_name": "fuzz",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": text,
            "api_app_id": "A_GPUBOT",
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = app.dispatch(BoltRequest(body=body, headers=signed(body, "application/x-www-form-urlencoded")))
    assert response.status == 200, (response.status, response.body)
    message = json.loads(response.body) if response.body else {}
    if not message:  # an empty ack: the reply comes by the response_url
        message = slack.wait_for(f"hooks/{hook}")[0].body  # a slow answer arrives through response_url
    return message


def assert_reply(message: dict, text: str) -> None:
    assert check_message(message) == (None, []), f"invalid reply to {text[:200]!r}"
    assert message["text"].strip()
    dumped = json.dumps(message, ensure_ascii=False)
    assert "Traceback" not in dumped and 'File "' not in dumped
    assert message["text"] not in {blocks.slack_escape(a) for a in APOLOGIES}, f"apology for {text[:200]!r}"


@settings(max_examples=300, **FAST)
@given(text=st.one_of(wire_text, question))
@example(text="")
@example(text="\x00\x1b\u200b")
@example(text="set providers \x00")
@example(text="digest subscribe hour 99 tz Mars/Olympus")
@example(text="unset")
@example(text="set budget -5 USD/GPU-hour")
def test_slash_command_with_any_text_gets_a_valid_reply(app, slack, text):
    assert_reply(slash(app, slack, text), text)


def event_body(event: dict) -> str:
    return json.dumps(
        {
            "token": "legacy",
            "team_id": "T0FUZZ",
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
            "event": event,
            "authorizations": [{"team_id": "T0FUZZ", "user_id": BOT_USER, "is_bot": True}],
        }
    )


def one_reply(app, slack, event: dict, text: str) -> dict:
    """The one reply to an event: a posted message, or (a history question) a chart uploaded into the thread."""
    before, uploads_before = len(slack.calls("chat.postMessage")), len(slack.uploads())
    body = event_body(event)
    response = app.dispatch(BoltRequest(body=body, headers=signed(body, "application/json")))
    assert response.status == 200, (response.status, response.body)
    deadline = time.monotonic() + 5
    while len(slack.calls("chat.postMessage")) == before and len(slack.uploads()) == uploads_before:
        assert time.monotonic() < deadline, f"no reply to {text[:200]!r}"
        time.sleep(0.01)
    if len(slack.uploads()) > uploads_before:
        upload = slack.uploads()[uploads_before]
        return {"channel": upload.channel_id, "thread_ts": upload.thread_ts, "text": upload.initial_comment or ""}
    reply = slack.calls("chat.postMessage")[before]
    assert reply.ok, (reply.response, text[:200])
    return reply.body


@settings(max_examples=150, **FAST)
@given(text=st.one_of(wire_text, question))
@example(text="")
@example(text="<@U_BOT>")
def test_mention_with_any_text_gets_one_valid_reply_in_its_thread(app, slack, text):
    ts = f"{time.time():.6f}{uuid.uuid4().int % 1000:03d}"
    event = {
        "type": "app_mention",
        "user": "U_ASKER",
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": "C0FUZZ",
        "event_ts": ts,
    }
    reply = one_reply(app, slack, event, text)
    assert reply["thread_ts"] == ts and reply["channel"] == "C0FUZZ"
    assert_reply(reply, text)


@settings(max_examples=100, **FAST)
@given(text=st.one_of(wire_text, question))
def test_dm_with_any_text_gets_one_valid_reply(app, slack, text):
    ts = f"{time.time():.6f}{uuid.uuid4().int % 1000:03d}"
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D0FUZZ",
        "user": "U_ASKER",
        "text": text,
        "ts": ts,
        "event_ts": ts,
    }
    assert_reply(one_reply(app, slack, event, text), text)


@pytest.mark.parametrize("name", ["cheapest", "chinese", "controls", "mentions", "one-word"])
def test_huge_slash_command_and_mention_get_valid_replies(app, slack, name):
    text = HUGE[name]
    assert_reply(slash(app, slack, text), text)
    ts = f"{time.time():.6f}"
    event = {
        "type": "app_mention",
        "user": "U_ASKER",
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": "C0FUZZ",
        "event_ts": ts,
    }
    assert_reply(one_reply(app, slack, event, text), text)


@pytest.mark.parametrize(
    "body",
    [
        {"team_id": "T0FUZZ", "channel_id": "C0FUZZ", "user_id": "U_ASKER", "command": "/gpu"},  # no text at all
        {
            "team_id": "T0FUZZ",
            "channel_id": "C0FUZZ",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": "help",
            "response_url": "http://127.0.0.1:9/hooks/unreachable",
        },
    ],
    ids=["no-text", "unreachable-response-url"],
)
def test_slash_command_with_odd_but_signed_fields_is_answered(app, body):
    encoded = urlencode(body)
    response = app.dispatch(BoltRequest(body=encoded, headers=signed(encoded, "application/x-www-form-urlencoded")))
    assert response.status == 200
    assert_reply(json.loads(response.body), body.get("text", ""))


# --- the numeric grammar: no Infinity or NaN in any JSON output (issue 25) -----------------------------------------

_DIGITS = st.one_of(
    st.integers(min_value=0, max_value=10**400).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(0, 99), st.integers(-400, 400)),
    st.sampled_from(["1e309", "1e-320", "NaN", "inf", "-0", "0.0000001", "9" * 330, "1,5", "2e1", "1E400"]),
)
_NUMERIC_FRAMES = [
    "tco of 8x H100 for {n} hours",
    "cheapest {n}x A100 spot",
    "H100 for {n} months with {n} TB storage and {n} GB egress",
    "{n}B model inference cheapest",
    "top {n} cheapest L4",
    "GPU with {n} GB memory",
    "H100 spot below {n}",
    "H100竞价低于每卡每小时{n}美元时提醒我",
    "A100 训练 {n} 小时 多少钱",
]


def _no_infinity(data, where: str) -> None:
    try:
        json.dumps(data, allow_nan=False)
    except ValueError:
        pytest.fail(f"Infinity or NaN in the JSON of {where}")


@settings(max_examples=200, **FAST)
@given(frame=st.sampled_from(_NUMERIC_FRAMES), n=_DIGITS)
@example(frame="tco of H100 for {n} hours", n="9" * 330)
@example(frame="H100 spot below {n}", n="1e309")
def test_the_numeric_grammar_never_gives_infinity_or_nan(small_kb, vocab, frame, n):
    from bot.pipeline import understand
    from handlers.parse.alert import AlertParseError, parse_alert
    from knowledge.numbers import finite

    text = frame.format(n=n)
    _no_infinity(understand(text, small_kb).model_dump(mode="json"), f"parse --json {text!r}")
    result = answer(text, small_kb)
    assert result.title not in APOLOGIES, text
    _no_infinity(finite(answer_json(result, False)), f"ask --json {text!r}")
    try:
        alert = parse_alert(text, vocab)
    except AlertParseError:
        return
    assert 0.0001 <= alert.amount <= 100_000, text
    if n in ("2e1",):
        assert alert.amount == 20.0, "exponent notation read right"
