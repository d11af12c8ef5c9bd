"""`gpubot kb import`: add (or replace) one provider's catalog, atomically.

The file is validated and converted first; only then is it copied into `$GPUBOT_HOME/imports/`, recorded in the
imports manifest and the knowledge base rebuilt. Any failure leaves the previous knowledge base and manifest
exactly as they were.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from knowledge.build import CatalogSource, build, bundled_catalogs
from knowledge.catalog import CatalogError, read_catalog
from knowledge.offers import convert
from knowledge.paths import imports_dir, kb_path

_PROVIDER = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def _write_json_atomic(path: Path, data: object) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
    os.replace(tmp, path)


def import_catalog(
    path: str | Path,
    provider: str,
    *,
    hosts: str | Path | None = None,
    currency: str | None = None,
    usd_per_unit: float | None = None,
    source: str | None = None,
    as_of: str | None = None,
) -> dict:
    """Validate, store and load one catalog for `provider`; return a report. Raises CatalogError/ValueError."""
    import datetime as dt

    provider = provider.strip().lower()
    if not _PROVIDER.match(provider):
        raise ValueError(f"provider name {provider!r} must be lower-case letters, digits, '-' or '_'")
    bundled = {c.provider: c for c in bundled_catalogs()}.get(provider)
    if hosts is None and bundled and bundled.hosts_path:
        hosts = bundled.hosts_path  # e.g. GCP: a new accelerator file still needs the host-VM prices
    currency = (currency or (bundled.currency if bundled else "USD")).upper()
    if usd_per_unit is None:
        usd_per_unit = bundled.usd_per_unit if bundled and bundled.currency == currency else 1.0
    if currency != "USD" and usd_per_unit == 1.0:
        raise ValueError(f"give --usd-per-unit for a {currency} catalog (the rate its USD prices were converted at)")
    if usd_per_unit <= 0:
        raise ValueError("--usd-per-unit must be positive")
    path = Path(path)
    catalog = read_catalog(path)
    host_catalog = read_catalog(hosts) if hosts else None
    if not catalog.rows:
        raise CatalogError(path, "no accelerator rows (only host-VM rows); pass it with --hosts instead")
    as_of = as_of or dt.date.today().isoformat()
    source = source or f"{path.name} imported with gpubot kb import"
    src = CatalogSource(provider, path, Path(hosts) if hosts else None, currency, usd_per_unit, as_of, source)
    result = convert(provider, catalog, hosts=host_catalog.hosts if host_catalog else (),
                     currency=src.currency_info(), source=source, as_of=as_of)
    if not result.offers:
        raise CatalogError(path, "no priced offers in this file (every price empty or skipped)")

    folder = imports_dir()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    stored = f"{provider}-{digest}.csv"
    stored_hosts = None
    shutil.copyfile(path, folder / stored)
    if hosts:
        stored_hosts = f"{provider}-hosts-{hashlib.sha256(Path(hosts).read_bytes()).hexdigest()[:12]}.csv"
        shutil.copyfile(hosts, folder / stored_hosts)
    manifest_path = folder / "manifest.json"
    before = manifest_path.read_text(encoding="utf-8") if manifest_path.exists() else None
    manifest = json.loads(before) if before else {}
    manifest[provider] = {"provider": provider, "file": stored, "hosts_file": stored_hosts,
                          "currency": src.currency, "usd_per_unit": usd_per_unit, "as_of": as_of, "source": source,
                          "original": str(path)}
    _write_json_atomic(manifest_path, manifest)
    try:
        report = build(kb_path())
    except BaseException:
        if before is None:
            manifest_path.unlink(missing_ok=True)
        else:
            _write_json_atomic(manifest_path, json.loads(before))
        raise
    return {
        "provider": provider,
        "rows": len(catalog.rows),
        "host_rows": len(catalog.hosts) + (len(host_catalog.hosts) if host_catalog else 0),
        "duplicates": catalog.duplicates,
        "offers": len(result.offers),
        "skipped": result.skipped,
        "kb_offers": report["offers"],
    }
