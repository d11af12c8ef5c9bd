"""YAML read in tests with libyaml (`yaml.CSafeLoader`, the safe loader in C): the pure-Python `yaml.safe_load` of
the bundled data files at import took 3 s of CPU in every xdist worker."""

from __future__ import annotations

from typing import Any

import yaml


def yaml_load(text: str) -> Any:
    """What `yaml.safe_load(text)` returns, parsed by libyaml."""
    return yaml.load(text, Loader=yaml.CSafeLoader)
