"""Lists: one page, or every item of every page (``limit``, ``starting_after``, ``has_more``).

``client.agentic.debit_pulls.list(limit=2)`` answers a :class:`Pager`: iterate it for every
item of every page (it asks for the next page with ``starting_after`` = the last id while
``has_more``), or call :meth:`Pager.first_page` for one page as the API answered it. The
async client answers an :class:`AsyncPager` (``async for``; ``await pager`` is the first
page).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from typing import Any, Generic, Literal, TypeVar

from typing_extensions import TypedDict

__all__ = ["ListPage", "Pager", "AsyncPager"]

T = TypeVar("T", bound=Mapping[str, Any])

DEFAULT_MAX_ITEMS = 10_000


class ListPage(TypedDict, Generic[T]):
    """A page as the API answers it (``MandateList``, ``EventList``, … are its instances)."""

    object: Literal["list"]
    url: str
    data: list[T]
    has_more: bool


def _next_cursor(page: ListPage[T]) -> str | None:
    """The ``starting_after`` of the page after ``page``; ``None`` at the end."""
    if not page["has_more"] or not page["data"]:
        return None
    last_id = page["data"][-1].get("id")
    if not isinstance(last_id, str):
        raise TypeError("a list item has no string id to page after")
    return last_id


class Pager(Generic[T]):
    """A list call of the sync client: iterate it for every item of every page."""

    def __init__(
        self, fetch: Callable[[str | None], ListPage[T]], starting_after: str | None = None
    ) -> None:
        self._fetch = fetch
        self._starting_after = starting_after
        self._first: ListPage[T] | None = None

    def first_page(self) -> ListPage[T]:
        """The first page (fetched once, then kept)."""
        if self._first is None:
            self._first = self._fetch(self._starting_after)
        return self._first

    def pages(self) -> Iterator[ListPage[T]]:
        """Every page, the first one first."""
        page = self.first_page()
        while True:
            yield page
            cursor = _next_cursor(page)
            if cursor is None:
                return
            page = self._fetch(cursor)

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page["data"]

    def to_list(self, max_items: int = DEFAULT_MAX_ITEMS) -> list[T]:
        """Every item of every page in one list (at most ``max_items``)."""
        out: list[T] = []
        for item in self:
            if len(out) >= max_items:
                break
            out.append(item)
        return out


class AsyncPager(Generic[T]):
    """A list call of the async client: ``async for`` over every item of every page, or
    ``await`` it for the first page."""

    def __init__(
        self,
        fetch: Callable[[str | None], Awaitable[ListPage[T]]],
        starting_after: str | None = None,
    ) -> None:
        self._fetch = fetch
        self._starting_after = starting_after
        self._first: ListPage[T] | None = None

    async def first_page(self) -> ListPage[T]:
        """The first page (fetched once, then kept)."""
        if self._first is None:
            self._first = await self._fetch(self._starting_after)
        return self._first

    def __await__(self) -> Generator[Any, None, ListPage[T]]:
        return self.first_page().__await__()

    async def pages(self) -> AsyncIterator[ListPage[T]]:
        """Every page, the first one first."""
        page = await self.first_page()
        while True:
            yield page
            cursor = _next_cursor(page)
            if cursor is None:
                return
            page = await self._fetch(cursor)

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page["data"]:
                yield item

    async def to_list(self, max_items: int = DEFAULT_MAX_ITEMS) -> list[T]:
        """Every item of every page in one list (at most ``max_items``)."""
        out: list[T] = []
        async for item in self:
            if len(out) >= max_items:
                break
            out.append(item)
        return out
