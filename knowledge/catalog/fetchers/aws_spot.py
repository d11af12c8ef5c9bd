"""AWS spot price feed (`https://website.spot.ec2.aws.a2z.com/spot.json`, public, no key) -> spot prices.

The feed behind the EC2 Spot pricing page, regenerated every few minutes (the older `spot.js`, a JSONP wrapper of
the same object, has been frozen since 2024-05). Its shape, as the public clients read it (spotinfo embeds it as
a fallback; Netflix asgard mocked `spot.js`):

    {"vers": 0.01, "config": {"rate": "perhr", "valueColumns": ["linux", "mswin"], "currencies": ["USD"],
      "regions": [{"region": "us-east-1", "instanceTypes": [{"type": "...", "sizes": [
        {"size": "p4d.24xlarge", "valueColumns": [{"name": "linux", "prices": {"USD": "9.7776"}}, ...]}]}]}]}}

One price per region and instance type, Linux only here; a price that is not a positive number (`"N/A*"`,
`"-1"`) means no spot offer and is skipped. Legacy region names of the old feed (`us-east`, `eu-ireland`,
`apac-sin`, ...) are mapped to region codes. Only instance types the AWS catalog knows as accelerator offers are
kept (the feed lists every EC2 type); the rest are counted, never guessed.
"""

from __future__ import annotations

import datetime as dt
import json

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow

__all__ = ["URL", "parse"]

URL = "https://website.spot.ec2.aws.a2z.com/spot.json"
LEGACY_REGIONS = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
    "sa-east": "sa-east-1",
}


def _config(body: bytes, url: str) -> dict:
    text = body.decode("utf-8", errors="strict").strip()
    if text.startswith("callback(") and text.endswith(");"):  # the old spot.js form
        text = text[len("callback(") : -2]
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FetchError(f"not JSON ({exc})", url=url) from None
    config = data.get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("regions"), list):
        raise FetchError("no config.regions list: not the spot price feed", url=url)
    if "USD" not in (config.get("currencies") or ["USD"]):
        raise FetchError(f"currencies {config.get('currencies')!r} do not include USD", url=url)
    return config


def _linux_price(size: dict) -> float | None:
    for column in size.get("valueColumns") or []:
        if isinstance(column, dict) and column.get("name") == "linux":
            text = (column.get("prices") or {}).get("USD")
            try:
                value = float(str(text))
            except (TypeError, ValueError):
                return None
            return value if value > 0 else None
    return None


def parse(body: bytes, *, known: set[str], fetched_at: dt.datetime, url: str = URL) -> LiveData:
    """Spot rows for the instance types in `known` (the AWS catalog's accelerator types); FetchError if malformed."""
    data = LiveData("aws_spot", "aws", "spot", f"AWS EC2 spot price feed {url}", fetched_at)
    for region in _config(body, url)["regions"]:
        if not isinstance(region, dict) or not isinstance(region.get("instanceTypes"), list):
            raise FetchError("a region without an instanceTypes list", url=url)
        code = str(region.get("region") or "")
        code = LEGACY_REGIONS.get(code, code)
        for family in region["instanceTypes"]:
            for size in (family or {}).get("sizes") or []:
                name = size.get("size") if isinstance(size, dict) else None
                if not isinstance(name, str):
                    raise FetchError("a size without a name", url=url)
                if name not in known:
                    data.skip("not an accelerator instance type")
                    continue
                price = _linux_price(size)
                if price is None:
                    data.skip("no Linux spot price")
                    continue
                data.rows.append(LiveRow(name, code, spot_price=price))
    if not data.rows:
        raise FetchError("no spot price for any accelerator instance type; nothing to record", url=url)
    return data
