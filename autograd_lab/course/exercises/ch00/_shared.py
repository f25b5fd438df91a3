"""What the chapter's exercise modules share."""
from __future__ import annotations

from collections.abc import Iterable


def keyed(titles: Iterable[str]) -> list[str]:
    """The observation key of each case: its title, and for a title met before (random hidden
    shapes can repeat one), the title with the case's number, so no case hides another."""
    keys: list[str] = []
    for number, title in enumerate(titles, 1):
        keys.append(title if title not in keys else f"{title} (case {number})")
    return keys
