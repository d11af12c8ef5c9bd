"""What identifies a knowledge-base build: the schema version of its tables and the bundled data it came from.

Both the builder (`knowledge.kb.build`, which stamps them into the `meta` table) and the reader (`knowledge.kb.reader`,
which compares them) import this module; it imports neither.
"""

from __future__ import annotations

import hashlib

from knowledge.paths import DATA_DIR

SCHEMA_VERSION = (
    5  # bump when the tables change shape (4: offers.fetched_at, stock, stock_read_at; 5: price_terms.fetched_at)
)


def fingerprint() -> str:
    """Identifies the bundled data a knowledge base was built from (imports are tracked by `imports_version`).

    A knowledge base whose fingerprint differs (after an upgrade or a data change) is rebuilt on first use.
    """
    digest = hashlib.sha1(str(SCHEMA_VERSION).encode())
    for path in sorted(DATA_DIR.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]
