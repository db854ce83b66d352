"""The State Object, typed.

The wire form (one JSON object per turn):

    {"url", "page_content", "element_index": {"1": {...}, ...}, "screenshot", "state_hash",
     "error"?: {"code", "message", "failed_action"}, "task"?: {"status", "message"}}

`State.from_json` reads it; `State.to_dict` gives the wire form back unchanged
(keys this version does not know are kept).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Mapping, Optional, Union


@dataclass(frozen=True)
class Attributes:
    name: Optional[str] = None
    value: Optional[str] = None
    placeholder: Optional[str] = None
    type: Optional[str] = None
    href: Optional[str] = None
    checked: Optional[bool] = None


@dataclass(frozen=True)
class Element:
    """One entry of the element index: what an action's `element_index` names."""

    index: int
    tag: str
    role: Optional[str] = None
    aria_label: Optional[str] = None
    text_content: Optional[str] = None
    attributes: Attributes = field(default_factory=Attributes)

    @classmethod
    def from_json(cls, index: int, obj: Mapping[str, Any]) -> "Element":
        attrs = obj.get("attributes") or {}
        return cls(
            index=index,
            tag=obj.get("tag", ""),
            role=obj.get("role"),
            aria_label=obj.get("aria-label"),
            text_content=obj.get("text_content"),
            attributes=Attributes(
                name=attrs.get("name"),
                value=attrs.get("value"),
                placeholder=attrs.get("placeholder"),
                type=attrs.get("type"),
                href=attrs.get("href"),
                checked=attrs.get("checked"),
            ),
        )


@dataclass(frozen=True)
class ErrorInfo:
    """The `error` of a State Object: the action was refused or failed; the state is the previous one."""

    code: str
    message: str
    failed_action: Any = None


@dataclass(frozen=True)
class TaskEnd:
    """The `task` of the last State Object after `finish_task` / `fail_task`."""

    status: str  # "finished" | "failed"
    message: str


@dataclass(frozen=True)
class State:
    """One State Object."""

    url: str
    page_content: str
    element_index: Dict[int, Element]
    screenshot: str  # base64 PNG of the viewport; "" when screenshots are off
    state_hash: str
    error: Optional[ErrorInfo] = None
    task: Optional[TaskEnd] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Union[str, bytes, Mapping[str, Any]]) -> "State":
        """A State Object from its JSON text or its decoded dict."""
        data: Dict[str, Any] = json.loads(obj) if isinstance(obj, (str, bytes)) else dict(obj)
        err = data.get("error")
        task = data.get("task")
        return cls(
            url=data.get("url") or "",
            page_content=data.get("page_content") or "",
            element_index={int(k): Element.from_json(int(k), v) for k, v in (data.get("element_index") or {}).items()},
            screenshot=data.get("screenshot") or "",
            state_hash=data.get("state_hash") or "",
            error=ErrorInfo(err.get("code", ""), err.get("message", ""), err.get("failed_action")) if err else None,
            task=TaskEnd(task.get("status", ""), task.get("message", "")) if task else None,
            raw=data,
        )

    def to_dict(self) -> Dict[str, Any]:
        """The wire form, as received."""
        return dict(self.raw)

    def to_json(self) -> str:
        return json.dumps(self.raw, ensure_ascii=False, separators=(",", ":"))

    def screenshot_png(self) -> bytes:
        """The screenshot as PNG bytes (b"" when screenshots are off)."""
        return base64.b64decode(self.screenshot) if self.screenshot else b""

    def find(self, *, role: Optional[str] = None, name: Optional[str] = None) -> Optional[Element]:
        """The first element with this role and whose aria-label, text or placeholder is `name`."""
        for el in self:
            if role is not None and el.role != role:
                continue
            if name is not None and name not in (el.aria_label, el.text_content, el.attributes.placeholder):
                continue
            return el
        return None

    def __iter__(self) -> Iterator[Element]:
        return iter(self.element_index[k] for k in sorted(self.element_index))
