"""The account event stream (GET /v1/accounts/{user}/events), as parsed events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, Optional

__all__ = ["Event", "parse_event_stream"]

_MAX_LINE = 1 << 20  # a line longer than this is not the daemon's


@dataclass(frozen=True)
class Event:
    """One event: ``name`` (``key-ready``, ``rotated``, ``locked``, ``unlocked``, ``resync``,
    ``device-enrolled``, ``device-revoked``, ``pairing-failed``, ``destroyed``, ``forbidden``…),
    its ``id`` (``EPOCH-N``, for ``Last-Event-ID``), and ``data``, its JSON object."""

    name: str
    id: Optional[str] = None
    data: Dict[str, Any] = field(default_factory=dict)
    raw: str = ""

    @property
    def generation(self) -> Optional[int]:
        value = self.data.get("generation")
        return value if isinstance(value, int) else None

    @property
    def key_id(self) -> Optional[str]:
        return self.data.get("keyId")


def parse_event_stream(lines: Iterable[str]) -> Iterator[Event]:
    """Events from a text/event-stream's lines (line ends already removed), as the HTML
    standard reads them: ``:`` starts a comment, a blank line ends an event, ``data``
    lines join with a newline, an event without ``event:`` is a ``message``."""
    name, event_id, data, has_data = "", None, [], False
    for line in lines:
        if len(line) > _MAX_LINE:
            raise ValueError("an event stream line is longer than 1 MiB")
        if line == "":
            if has_data:
                raw = "\n".join(data)
                try:
                    parsed = json.loads(raw) if raw else {}
                except ValueError:
                    parsed = {}
                yield Event(name or "message", event_id, parsed if isinstance(parsed, dict) else {}, raw)
            name, data, has_data = "", [], False
            continue
        if line.startswith(":"):
            continue
        key, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)
            has_data = True
        elif key == "id" and "\0" not in value:
            event_id = value
