"""Type stubs of the extension module (botscope's Rust libraries)."""

import os
from datetime import date, datetime
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

__version__: str
MAX_BODY_BYTES: int
DEFAULT_PARSE_CAP: int
SOMESITE_AGENTS: List[str]

_Body = Union[str, bytes]
_Path = Union[str, "os.PathLike[str]"]
_Time = Union[int, str, date, datetime, None]

class Error(Exception):
    """What botscope's libraries refuse, with their message."""

class MalformedLine(ValueError):
    """A log line that is not a request of its format; ``args[1]`` is the
    reason's stable name (``layout-mismatch``, ``bad-time``, ...)."""

class Robots:
    """A robots.txt file, parsed once and asked many times.

    >>> r = Robots("User-agent: *\\nDisallow: /private\\n")
    >>> r.allowed("Googlebot", "https://example.com/private/x")
    False
    """

    def __init__(
        self, body: _Body, semantics: str = "google", max_bytes: Optional[int] = 512000
    ) -> None: ...
    @property
    def semantics(self) -> str:
        """``"google"`` or ``"draft1996"``."""
    @property
    def sitemaps(self) -> List[str]:
        """The ``Sitemap`` URLs, in file order."""
    @property
    def groups(self) -> List[dict]:
        """The groups, as ``botscope robots parse --format json``."""
    def allowed(self, agent: str, url: str) -> bool:
        """May ``agent`` (a product token or a User-Agent header) fetch
        ``url`` (an absolute URL or a path)?"""
    def allowed_many(self, agent: str, urls: Iterable[str]) -> List[bool]:
        """``allowed`` for many URLs (a list, tuple or iterable of str), in
        order; a batch of 64 URLs or 64 KiB or more is matched with the
        interpreter lock released."""
    def explain(self, agent: str, url: str) -> dict:
        """The verdict, the deciding rule, the group, a reason, and the
        usage preferences, as ``botscope robots check --format json``."""
    def usage(self, agent: str, url: str) -> dict:
        """The Content-Usage and Content-Signal preferences in force."""
    def crawl_delay(self, agent: str) -> Optional[float]:
        """The Crawl-delay for ``agent``, in seconds, or None."""
    def lint(self) -> List[dict]:
        """Diagnostics, as ``botscope robots lint --format json``."""
    def to_dict(self) -> dict:
        """The parse tree, as ``botscope robots parse --format json``."""

class Signer:
    """Signs requests with a Web Bot Auth key (``botscope keys
    generate``'s JWK, or a PKCS#8 PEM), naming ``agent`` (an https URL)
    in ``Signature-Agent``."""

    def __init__(self, key: str, agent: Optional[str] = None, validity: float = 60.0) -> None: ...
    @property
    def keyid(self) -> str: ...
    @property
    def agent(self) -> Optional[str]: ...
    def sign(
        self,
        method: str,
        url: str,
        covers: Sequence[Tuple[str, str]] = (),
        created: Optional[int] = None,
    ) -> List[Tuple[str, str]]:
        """The ``Signature-Agent``, ``Signature-Input`` and ``Signature``
        fields that sign the request."""

def rsl(body: Union[bytes, str]) -> dict: ...
def terms(
    robots: Optional[Union[bytes, str]],
    url: str,
    use: str,
    agent: str = "*",
    licence: Optional[Union[bytes, str]] = None,
    licence_url: Optional[str] = None,
    header: Optional[Union[str, Sequence[str]]] = None,
    user: Optional[str] = None,
    geo: Optional[str] = None,
) -> dict: ...
def content_usage(lines: Union[str, Sequence[str]]) -> dict:
    """The AI usage preferences of a ``Content-Usage`` header's field lines,
    read as one Dictionary: ``usage``, ``problems``, ``error``."""

def bias(body: _Body, semantics: str = "google") -> dict:
    """BotSeer's bias table of one file (``botscope bias --format json``)."""

class Favorability:
    """Favourability over a set of files: (favoured - disfavoured) / N."""

    def __init__(self, semantics: str = "google") -> None: ...
    def add(self, body: _Body) -> None: ...
    def add_many(self, bodies: Iterable[_Body]) -> None: ...
    def add_bias(self, bias: dict) -> None: ...
    def merge(self, other: "Favorability") -> None: ...
    @property
    def n(self) -> int: ...
    def table(self) -> List[dict]: ...

class Registry:
    """The registry of known crawlers, the User-Agent classifier and the
    installed IP-owner databases."""

    def __init__(self, path: Optional[_Path] = None, user: bool = True) -> None: ...
    def identify(self, user_agent: str) -> dict: ...
    def verify(
        self,
        ip: str,
        user_agent: Optional[str] = None,
        offline: bool = True,
        nameservers: Sequence[str] = (),
        timeout: float = 5.0,
    ) -> dict: ...
    def bots(self) -> List[dict]: ...
    def agents(
        self, category: Optional[str] = None, operator: Optional[str] = None
    ) -> List[str]: ...
    def __len__(self) -> int: ...

def parse_log_line(line: _Body, format: str = "combined") -> dict:
    """One access-log line as a dict, or ``MalformedLine``."""

def analyze_logs(
    paths: Union[_Path, Sequence[_Path]],
    robots: Union[_Path, Sequence[str], None] = None,
    format: Optional[str] = None,
    since: _Time = None,
    until: _Time = None,
    registry: Optional[Registry] = None,
    threads: Optional[int] = None,
) -> dict:
    """``botscope logs analyze --format json``."""

class Store:
    def __init__(self, db: _Path) -> None: ...
    def stats(self) -> dict: ...
    def site(self, host: str) -> Optional[List[dict]]: ...
    def iter_versions(self) -> "Versions": ...
    def _arrow_schema(self) -> bytes: ...
    def _arrow_batches(self) -> "ArrowBatches": ...

class Versions(Iterator[dict]):
    def __next__(self) -> dict: ...

class ArrowBatches(Iterator[bytes]):
    """Arrow IPC streams of one record batch each (``Store.versions``)."""

    def __next__(self) -> bytes: ...

class Index:
    def __init__(self, path: _Path, threads: Optional[int] = None) -> None: ...
    def span(self) -> Optional[Tuple[int, int]]: ...
    def _search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        rank: str = "relevance",
        semantics: str = "google",
        as_of: _Time = None,
    ) -> Tuple[List[dict], List[str], dict]: ...
    def _favor(
        self,
        where_: Optional[str] = None,
        as_of: _Time = None,
        semantics: str = "google",
        sort: str = "appeared",
        min_appeared: int = 0,
    ) -> Tuple[List[dict], List[str], dict]: ...
    def _trends(
        self,
        agents: List[str],
        by: str = "month",
        where_: Optional[str] = None,
        start: _Time = None,
        end: _Time = None,
        semantics: str = "google",
        db: Optional[str] = None,
        category: Optional[str] = None,
        operator: Optional[str] = None,
        sites: Optional[str] = None,
        rank_file: Optional[str] = None,
        top: Optional[int] = None,
        weight: Optional[str] = None,
        method: str = "exact",
        per_site: bool = False,
        max_rows: Optional[int] = None,
    ) -> Tuple[List[dict], List[str], dict]: ...


def _warc_verdicts(
    path: _Path,
    agents: Sequence[str],
    methods: Sequence[str],
    semantics: str = "google",
    name: Optional[str] = None,
    file: int = 0,
) -> Tuple[bytes, int, dict, Optional[str]]:
    """Each robots.txt capture of a WARC file (gzip or not), read as
    ``botscope store import`` reads it and judged per agent by each
    method: ``(stream, captures, counts, damage)``, the captures an Arrow
    IPC stream in the columns of ``botscope.spark``'s captures (each
    capture's verdicts a list of codes: 1 full, 2 partial, 3 none);
    ``file`` is the file's place among the job's."""
