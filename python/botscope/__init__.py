"""botscope for Python: robots.txt exactly as Google reads it, crawler
identity, access-log robots and BotSeer's research index.

The engine is botscope's Rust libraries, the same that run the
``botscope`` command: every answer here is the command's.

>>> import botscope
>>> r = botscope.Robots("User-agent: *\\nDisallow: /private\\nAllow: /private/ok\\n")
>>> r.allowed("Googlebot", "https://example.com/private/x")
False
>>> r.allowed("Googlebot", "https://example.com/private/ok")
True
>>> r.explain("Googlebot", "/private/x")["rule"]
{'kind': 'disallow', 'line': 2, 'pattern': '/private'}
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Iterator, List, Optional, Sequence, Union

from . import _botscope
from ._botscope import (
    DEFAULT_PARSE_CAP,
    MAX_BODY_BYTES,
    Error,
    Favorability,
    MalformedLine,
    Registry,
    Robots,
    Signer,
    analyze_logs,
    bias,
    content_usage,
    parse_log_line,
    rsl,
    terms,
)

__version__ = _botscope.__version__

__all__ = [
    "DEFAULT_PARSE_CAP",
    "MAX_BODY_BYTES",
    "Error",
    "Favorability",
    "Index",
    "MalformedLine",
    "Registry",
    "Robots",
    "Rows",
    "Signer",
    "Store",
    "analyze_logs",
    "bias",
    "content_usage",
    "parse_log_line",
    "rsl",
    "terms",
]

PathLike = Union[str, "os.PathLike[str]"]
Time = Union[int, str, datetime, None]


class Rows(list):
    """A result's rows: a list of dicts, one per row, keyed by the
    columns the command's CSV and Parquet outputs name. ``columns`` is
    their order and ``result`` the whole result as the command's JSON
    (totals, the query as parsed, the periods, ...)."""

    def __init__(self, rows: list, columns: List[str], result: dict):
        super().__init__(rows)
        self.columns = columns
        self.result = result

    def to_pandas(self):
        """The rows as a pandas DataFrame, columns in order (pandas must
        be installed)."""
        import pandas

        return pandas.DataFrame(list(self), columns=self.columns)


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


class Store:
    """A store of harvested robots.txt versions (``botscope harvest``,
    ``botscope store import``): an SQLite file or a ``postgres://`` URL,
    opened for reading.

    >>> s = botscope.Store("robots.db")            # doctest: +SKIP
    >>> s.versions().read_pandas().groupby("host").size()  # doctest: +SKIP
    """

    def __init__(self, db: PathLike):
        self._s = _botscope.Store(os.fspath(db))

    def stats(self) -> dict:
        """What the store holds, as ``botscope store stats --format json``."""
        return self._s.stats()

    def site(self, host: str) -> Optional[List[dict]]:
        """One site's versions, oldest first, or None when the store does
        not know the host (dicts as :meth:`iter_versions` gives them). A
        version whose ``absent`` is ``removed``, ``unreachable`` or
        ``moved`` is a time the site had no robots.txt (its body empty)."""
        versions = self._s.site(host)
        if versions is None:
            return None
        return [_dated(v) for v in versions]

    def versions(self):
        """Every version, streamed: a ``pyarrow.RecordBatchReader`` of the
        columns of ``botscope store export --format parquet``
        (docs/store.md), times as UTC timestamps, in batches of at most
        8,192 rows or 8 MiB read as the caller goes, so memory stays
        bounded whatever the store's size. ``.read_all()`` makes it one
        ``pyarrow.Table``, ``.read_pandas()`` a DataFrame; DuckDB, Polars
        and ``pyarrow.dataset.write_dataset`` read the stream itself.
        Needs pyarrow; :meth:`iter_versions` does not."""
        import pyarrow
        import pyarrow.ipc

        schema = pyarrow.ipc.open_stream(self._s._arrow_schema()).schema
        chunks = self._s._arrow_batches()

        def batches():
            for chunk in chunks:
                yield from pyarrow.ipc.open_stream(chunk)

        return pyarrow.RecordBatchReader.from_batches(schema, batches())

    def iter_versions(self) -> Iterator[dict]:
        """Every version, one dict at a time (``host``, ``url``,
        ``first_seen`` and ``last_seen`` as UTC datetimes, ``hash``,
        ``content_type``, ``body`` as str, or bytes when it is not UTF-8,
        ``source``, ``absent`` None), read as the caller goes: the files
        only, as the exports write them."""
        for v in self._s.iter_versions():
            yield _dated(v)

    def __repr__(self) -> str:
        return repr(self._s)


def _dated(v: dict) -> dict:
    v["first_seen"] = _utc(v["first_seen"])
    v["last_seen"] = _utc(v["last_seen"])
    return v


class Index:
    """BotSeer's research index (``botscope index build``): search the
    robots.txt of many sites by field, favourability per robot, trends.

    Times (``as_of``, ``start``, ``end``) are Unix seconds, dates
    (``"2024-03-01"``, ``"2024-03"``), RFC 3339 times or aware datetimes.
    """

    def __init__(self, path: PathLike, threads: Optional[int] = None):
        self._i = _botscope.Index(os.fspath(path), threads)

    def span(self):
        """The first and last time the index covers (UTC datetimes), or
        None when it is empty."""
        s = self._i.span()
        return None if s is None else (_utc(s[0]), _utc(s[1]))

    def search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        rank: str = "relevance",
        semantics: str = "google",
        as_of: Time = None,
    ) -> Rows:
        """The sites whose robots.txt matches ``query`` (``botname:gptbot``,
        ``disallow:/search``, ``favor:googlebot``, ``crawl:CC-MAIN-2024-10``,
        words of the file, ``AND``/``OR``/``NOT``; docs/research.md), as
        ``botscope search --format csv`` lists them; ``result["total"]`` is
        the number of matches. ``rank``: ``relevance``, ``bias``,
        ``least-bias`` or ``site``. A query that does not parse raises
        ValueError with a caret under the column."""
        return Rows(*self._i._search(query, limit, offset, rank, semantics, as_of))

    def favor(
        self,
        where: Optional[str] = None,
        as_of: Time = None,
        semantics: str = "google",
        sort: str = "appeared",
        min_appeared: int = 0,
    ) -> Rows:
        """Favourability per robot over the sites matching ``where`` (all
        when None), as ``botscope favor``: ``robot``, ``appeared``,
        ``favored``, ``disfavored``, ``favorability``; ``result["n"]`` is
        N. ``sort``: ``appeared``, ``favored``, ``disfavored`` or
        ``favorability``."""
        return Rows(*self._i._favor(where, as_of, semantics, sort, min_appeared))

    def trends(
        self,
        agents: Union[str, Sequence[str], None] = None,
        by: str = "month",
        where: Optional[str] = None,
        start: Time = None,
        end: Time = None,
        semantics: str = "google",
        db: Optional[PathLike] = None,
        category: Optional[str] = None,
        operator: Optional[str] = None,
        sites: Optional[PathLike] = None,
        rank_file: Optional[PathLike] = None,
        top: Optional[int] = None,
        weight: Optional[str] = None,
        method: str = "exact",
        per_site: bool = False,
        max_rows: Optional[int] = None,
    ) -> Rows:
        """Per period (``month``, ``year``, or ``crawl`` with ``db``) and
        agent, how the sites' robots.txt treat it, as ``botscope trends
        --format csv``. The agents are those given and every registry
        robot of ``category`` or ``operator``. ``db`` (the store the index
        was built from) adds the sites without a robots.txt to the
        denominators. A cohort: ``sites`` (a host per line, or CSV with a
        host column) or the ``top`` sites of ``rank_file`` (Tranco's
        ``rank,host``), each weighed by the list's ``weight`` column when
        given. ``method`` judges each file as botscope does (``exact``) or
        as a study did: ``somesite`` (Liu et al., IMC 2025; without agents,
        their 24 AI User-Agents) or ``cic`` (Consent in Crisis), adding
        per agent the sites the exact engine judges otherwise
        (``disagree_with_exact``).

        ``per_site=True`` gives instead the verdict behind every count, as
        ``botscope trends --per-site``: a row per period, site (``host``)
        and agent (and ``(group)``) with its ``verdict``; with a study's
        method, the exact engine's (``exact``) and ``past_budget`` beside
        it, so the sites behind ``disagree_with_exact`` are the rows where
        ``verdict != exact``. ``result`` still holds the counts. More rows
        than ``max_rows`` (default ten million) raise ``botscope.Error``."""
        if agents is None:
            agents = []
        elif isinstance(agents, str):
            agents = [agents]
        path = lambda p: None if p is None else os.fspath(p)
        return Rows(
            *self._i._trends(
                list(agents),
                by,
                where,
                start,
                end,
                semantics,
                path(db),
                category,
                operator,
                path(sites),
                path(rank_file),
                top,
                weight,
                method,
                per_site,
                max_rows,
            )
        )

    def __repr__(self) -> str:
        return repr(self._i)
