"""The keyless live price sources: name, the catalog each feeds, endpoint, cadence, timeout and byte cap.

| name | feeds | cadence | what |
|---|---|---|---|
| `aws_spot` | aws (spot column) | 10 min | AWS EC2 spot price feed |
| `aws_price_list` | aws (on-demand column, reserved terms) | daily | AWS Price List bulk API, streamed per region |
| `azure` | azure | daily | Azure Retail Prices API (`knowledge.catalog.fetchers.azure`) |
| `oci` | oci (on-demand column) | daily | Oracle Cloud price list API |
| `runpod` | runpod (whole catalog, with stock) | 15 min | RunPod GraphQL |
| `vast` | vast (whole catalog, with stock) | 10 min | Vast.ai marketplace search |

`GPUBOT_SOURCE_<NAME>_URL` overrides a source's endpoint (tests, air-gapped mirrors). Limits are parameters of
`LiveSource`, so a test passes a one-second timeout instead of waiting for the production one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from knowledge.catalog.fetchers import aws_price_list, aws_spot, oci, runpod, vast
from knowledge.config import source_url

__all__ = ["SOURCES", "LiveSource", "live_source", "names"]

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class LiveSource:
    """One live source and its limits: a request is cut at `timeout` seconds and `max_bytes` of body."""

    name: str
    provider: str
    default_url: str
    cadence_minutes: int
    timeout: float
    max_bytes: int
    verified: str  # "recorded real bodies" or "vendor documentation" (README, `prices sources`)
    replaces: bool = False  # the source lists every offer: its result is the provider's whole catalog

    @property
    def url(self) -> str:
        return source_url(self.name) or self.default_url

    def limited(self, *, timeout: float | None = None, max_bytes: int | None = None) -> LiveSource:
        return replace(self, timeout=timeout or self.timeout, max_bytes=max_bytes or self.max_bytes)


DAY = 24 * 60
SOURCES: dict[str, LiveSource] = {
    s.name: s
    for s in (
        LiveSource("aws_spot", "aws", aws_spot.URL, 10, 30.0, 16 * MB, "vendor documentation"),
        LiveSource(
            "aws_price_list",
            "aws",
            aws_price_list.URL,
            DAY,
            900.0,
            8192 * MB,  # per region (hundreds of MB and more each); streamed line by line, never held
            "recorded real bodies (service and region index); offer file from documentation",
        ),
        LiveSource(
            "azure",
            "azure",
            "https://prices.azure.com/api/retail/prices",
            DAY,
            120.0,
            64 * MB,
            "recorded real bodies",
        ),
        LiveSource("oci", "oci", oci.URL, DAY, 60.0, 32 * MB, "vendor documentation"),
        LiveSource("runpod", "runpod", runpod.URL, 15, 30.0, 8 * MB, "vendor documentation", replaces=True),
        LiveSource("vast", "vast", vast.URL, 10, 30.0, 32 * MB, "vendor documentation", replaces=True),
    )
}


def live_source(name: str) -> LiveSource | None:
    return SOURCES.get(name.strip().lower())


def names() -> tuple[str, ...]:
    return tuple(SOURCES)
