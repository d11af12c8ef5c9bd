"""Memory per GPU from a catalog's `GpuInfo`, read the way its file writes it.

Catalogs write memory every way: MiB or GB, per GPU or per instance, `TotalGpuMemoryInMiB` meaning one GPU or all
(catalogs/README.md). One row alone is often ambiguous (81920 MiB on a 2-GPU row is 2 x 40 GB or 2 x 80 GB of an
A100), but a file keeps one convention. `file_convention` infers it from the file's unambiguous rows (those whose
readings fit exactly one datasheet size, e.g. 163118 MiB for 2 H100 = 2 x 79.6 GB), and `memory` applies it to
every row of that file, ambiguous ones included. A size the convention reads that no datasheet lists is kept as read
and reported, never replaced by a datasheet size (sizes that exist are added to `gpu_specs.csv` with their source).
Without a convention (no unambiguous row, or rows that disagree), each row is read on its own: the reading that
matches a datasheet size wins.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

_MIB = re.compile(r"""['"]SizeInMiB['"]\s*:\s*(\d+(?:\.\d+)?)""")
_TOTAL = re.compile(r"""['"]TotalGpuMemoryInMiB['"]\s*:\s*(\d+(?:\.\d+)?)""")
_PLAUSIBLE = (1.0, 1024.0)  # GB per GPU a reading must fall in (16 "MiB" is 16 GB, not 0.016)
_TOLERANCE = 0.03  # a GpuInfo reading within 3 % of a datasheet size is that size (141 GB vs 144384 MiB)
AGREEMENT = 0.8  # share of a file's unambiguous rows a convention must fit (one data error does not flip a file)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= _TOLERANCE * b


def readings(gpu_info: str, count: float) -> list[tuple[float, str]]:
    """Every per-GPU memory (GB) a GpuInfo can mean, most usual reading first, with how it was read."""
    return list(_readings(gpu_info, count))


@lru_cache(maxsize=8192)  # a catalog repeats its few hundred (GpuInfo, count) pairs on every row
def _readings(gpu_info: str, count: float) -> tuple[tuple[float, str], ...]:
    found: list[tuple[float, str]] = []
    size = float(m.group(1)) if (m := _MIB.search(gpu_info)) else None
    total = float(m.group(1)) if (m := _TOTAL.search(gpu_info)) else None
    n = count if count >= 1 else 1.0
    if size is not None:
        found += [
            (size / 1024, "SizeInMiB per GPU"),
            (size / 1024 / n, "SizeInMiB per instance"),
            (size, "SizeInMiB holding GB"),
        ]
    if total is not None:
        found += [
            (total / 1024 / n, "TotalGpuMemoryInMiB per instance"),
            (total / 1024, "TotalGpuMemoryInMiB per GPU"),
            (total / n, "TotalGpuMemoryInMiB holding GB per instance"),
        ]
    return tuple((round(gb, 1), how) for gb, how in found if _PLAUSIBLE[0] <= gb <= _PLAUSIBLE[1])


def telling_ways(gpu_info: str, count: float, sizes: set[float]) -> set[str] | None:
    """The ways of reading that give a datasheet size, when the row tells them apart from the ways that do not
    (every fitting reading gives the same size and some plausible reading gives another); else None."""
    found = _readings(gpu_info, count)
    fitting = {how: gb for gb, how in found if any(close(gb, s) for s in sizes)}
    if not fitting:
        return None
    values = sorted(set(fitting.values()))
    if not all(close(v, values[0]) for v in values):
        return None  # two datasheet sizes fit: this row cannot tell
    if all(how in fitting for _, how in found):
        return None  # every way of reading gives that size: nothing to learn
    return set(fitting)


def file_convention(rows: Iterable[tuple[str, float, set[float]]]) -> str | None:
    """How one file writes memory ("SizeInMiB per instance"), from its rows as (GpuInfo, count, datasheet sizes of
    the row's family); None when no row tells, or the telling rows disagree."""
    votes: Counter[str] = Counter()
    telling = 0
    for gpu_info, count, sizes in rows:
        ways = telling_ways(gpu_info, count, sizes) if sizes else None
        if ways:
            telling += 1
            votes.update(ways)
    if not telling:
        return None
    order = [how for _, how in readings("'SizeInMiB': 2048, 'TotalGpuMemoryInMiB': 4096", 2)]  # the usual order
    best = max(votes, key=lambda how: (votes[how], -order.index(how) if how in order else -99))
    return best if votes[best] >= AGREEMENT * telling else None


def memory(
    sizes: set[float],
    named: float | None,
    gpu_info: str,
    count: float,
    raw: str,
    hint: float | None = None,
    convention: str | None = None,
) -> tuple[float | None, tuple[str, ...]]:
    """(memory per GPU in GB or None, notes) of one row: the name's figure, else the file's convention, else the
    reading that fits the family's datasheet sizes."""
    found = _readings(gpu_info, count)
    if named is not None:
        if found and not any(close(gb, named) for gb, _ in found):
            return named, (
                f"{raw}: GpuInfo memory ({found[0][0]:g} GB) disagrees with the name's {named:g} GB; using the name",
            )
        return named, ()
    by_convention = next((gb for gb, how in found if how == convention), None) if convention else None
    if by_convention is not None:
        size = next((s for s in sorted(sizes) if close(by_convention, s)), None)
        if size is not None or not sizes:
            return size or by_convention, ()
        return by_convention, (
            f"{raw}: GpuInfo memory {by_convention:g} GB per GPU (read as {convention}, this file's convention) "
            f"is no datasheet size ({', '.join(f'{s:g}' for s in sorted(sizes))} GB); kept as read",
        )
    return _by_datasheet(sizes, found, gpu_info, raw, hint)


def _by_datasheet(
    sizes: set[float], found: tuple[tuple[float, str], ...], gpu_info: str, raw: str, hint: float | None
) -> tuple[float | None, tuple[str, ...]]:
    """One row read on its own: the reading that matches a datasheet size wins."""
    if not found:
        return (hint if hint in sizes else next(iter(sizes)) if len(sizes) == 1 else None), ()
    if not sizes:  # no datasheet: the reading the instance name agrees with, else the usual one
        return next((gb for gb, _ in found if hint and close(gb, hint)), found[0][0]), ()
    usual = "SizeInMiB per GPU" if _MIB.search(gpu_info) else "TotalGpuMemoryInMiB per instance"
    matched: dict[float, str] = {}  # datasheet size -> the first reading that gives it
    for gb, how in found:
        for size in sizes:
            if close(gb, size):
                matched.setdefault(size, how)
    if len(matched) > 1:  # the instance name's size decides ("2xV100_16GB": 32768 MiB is two 16 GB cards),
        usual_fit = [size for size, how in matched.items() if how == usual]  # else the usual reading
        pick = hint if hint in matched else usual_fit[0] if usual_fit else None
        matched = {pick: matched[pick]} if pick is not None else matched
    if len(matched) == 1:
        ((size, how),) = matched.items()
        note = () if how == usual else (f"{raw}: GpuInfo memory read as {how} ({size:g} GB per GPU, as the datasheet)",)
        return size, note
    if matched:
        return None, (
            f"{raw}: GpuInfo memory fits {' or '.join(f'{s:g}' for s in sorted(matched))} GB per GPU "
            "depending on its unit; memory left unknown",
        )
    if len(sizes) == 1:
        (size,) = sizes
        return size, (
            f"{raw}: GpuInfo memory ({found[0][0]:g} GB) matches no datasheet size; using the datasheet's {size:g} GB",
        )
    return None, (
        f"{raw}: GpuInfo memory ({found[0][0]:g} GB) matches none of the datasheet sizes "
        f"({', '.join(f'{s:g}' for s in sorted(sizes))} GB); memory left unknown",
    )
