"""RunPod GraphQL (`https://api.runpod.io/graphql`, the GPU type list needs no key) -> prices and stock.

One POST asks every GPU type for its lowest price in each data centre, through GraphQL aliases (one
`lowestPrice(input: {gpuCount: 1, dataCenterId: ..., secureCloud: true})` field per data centre), as gpuhunt
reads RunPod without a key. A `lowestPrice` gives `uninterruptablePrice` (on-demand, per GPU-hour),
`minimumBidPrice` (spot, per GPU-hour) and `stockStatus` (`High`, `Medium`, `Low`, or null when none is free).

Rows follow the bundled catalog's form: instance type `1x_<GPU>_SECURE`, region the data centre's country code
(`US-TX-3` -> `US`, `EU-RO-1` -> `RO`, `EUR-IS-1` -> `IS`), zone the data-centre id. Stock: High/Medium ->
`in_stock`, Low -> `low`, a price with no stock status -> `out_of_stock`; a data centre with no price at all
does not offer the GPU and gives no row. A body with GraphQL `errors`, or without `data.gpuTypes`, is refused.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow

__all__ = ["DATA_CENTRES", "URL", "parse", "query"]

URL = "https://api.runpod.io/graphql"
DATA_CENTRES = (  # the data centres of the bundled RunPod catalog (knowledge/data/catalogs/runpod_vms.csv)
    "CA-MTL-1",
    "CA-MTL-2",
    "CA-MTL-3",
    "EU-CZ-1",
    "EU-NL-1",
    "EU-RO-1",
    "EU-SE-1",
    "EUR-IS-1",
    "EUR-IS-2",
    "US-CA-2",
    "US-GA-1",
    "US-IL-1",
    "US-KS-2",
    "US-TX-3",
    "US-WA-1",
)
STOCK = {"high": "in_stock", "medium": "in_stock", "low": "low"}
_FIELDS = "minimumBidPrice uninterruptablePrice stockStatus minVcpu minMemory"


def _alias(centre: str) -> str:
    return "dc_" + re.sub(r"[^A-Za-z0-9]", "_", centre)


def query(centres: tuple[str, ...] = DATA_CENTRES) -> dict:
    """The GraphQL request body: every GPU type, its lowest price in each data centre."""
    parts = [
        f'{_alias(c)}: lowestPrice(input: {{gpuCount: 1, dataCenterId: "{c}", secureCloud: true}}) {{ {_FIELDS} }}'
        for c in centres
    ]
    return {"query": "query GpuTypes { gpuTypes { id displayName memoryInGb " + " ".join(parts) + " } }"}


def _region(centre: str) -> str:
    head, _, rest = centre.partition("-")
    return head if head in ("US", "CA") else rest.split("-")[0]


def _price(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"price {value!r} is not a number")
    return float(value) if value > 0 else None


def _types(body: bytes, url: str) -> list:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise FetchError(f"not JSON ({exc})", url=url) from None
    if not isinstance(data, dict) or data.get("errors"):
        raise FetchError(f"GraphQL errors: {str((data or {}).get('errors'))[:300]}", url=url)
    types = (data.get("data") or {}).get("gpuTypes")
    if not isinstance(types, list):
        raise FetchError("no data.gpuTypes list", url=url)
    return types


def parse(body: bytes, *, fetched_at: dt.datetime, url: str = URL, centres=DATA_CENTRES) -> LiveData:
    """Offers per GPU type and data centre, with stock; FetchError for a malformed body."""
    data = LiveData("runpod", "runpod", "replace", f"RunPod GraphQL API {url} (gpuTypes.lowestPrice)", fetched_at)
    for gpu in _types(body, url):
        if not isinstance(gpu, dict) or not isinstance(gpu.get("displayName"), str):
            raise FetchError("a GPU type without a displayName", url=url)
        name = gpu["displayName"].strip()
        memory = gpu.get("memoryInGb")
        for centre in centres:
            low = gpu.get(_alias(centre))
            if not isinstance(low, dict):
                continue
            try:
                on_demand, spot = _price(low.get("uninterruptablePrice")), _price(low.get("minimumBidPrice"))
            except ValueError as exc:
                raise FetchError(f"{name} in {centre}: {exc}", url=url) from None
            if on_demand is None and spot is None:
                data.skip("no price in this data centre")
                continue
            status = low.get("stockStatus")
            stock = STOCK.get(str(status).lower(), "out_of_stock") if status else "out_of_stock"
            info = f"{name} {memory}GB" if isinstance(memory, int | float) else name
            data.rows.append(
                LiveRow(
                    f"1x_{name.replace(' ', '-')}_SECURE",
                    _region(centre),
                    on_demand,
                    spot,
                    accelerator=name,
                    accelerator_count=1.0,
                    vcpus=_price(low.get("minVcpu")),
                    memory_gib=_price(low.get("minMemory")),
                    gpu_info=info,
                    zone=centre,
                    stock=stock,
                )
            )
    if not data.rows:
        raise FetchError("no priced GPU type in any data centre; nothing to record", url=url)
    return data
