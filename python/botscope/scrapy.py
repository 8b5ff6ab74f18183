"""botscope inside Scrapy: robots.txt exactly as Google reads it.

Switched on in a project's ``settings.py``::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "botscope.scrapy.RobotParser"

Scrapy's own ``RobotsTxtMiddleware`` fetches each host's robots.txt and
asks this parser about every request; the answers are
:class:`botscope.Robots`'s, the same as the ``botscope`` command's.

Settings read (all optional):

``BOTSCOPE_ROBOTS_SEMANTICS``
    ``"google"`` (the default: RFC 9309 as Google's parser reads it) or
    ``"draft1996"`` (the 1996 draft: first match wins, no wildcards).
``BOTSCOPE_ROBOTS_MAX_BYTES``
    How much of a robots.txt body is read (500 KiB by default, as
    Google's crawlers; ``None`` or ``0`` reads it whole, up to
    :data:`botscope.MAX_BODY_BYTES`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional, Union

from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
from w3lib.url import safe_url_string

from ._botscope import DEFAULT_PARSE_CAP, Robots

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["RobotParser"]

logger = logging.getLogger(__name__)

_Text = Union[str, bytes]


def _text(value: _Text) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class RobotParser(_ScrapyRobotParser):
    """A ``scrapy.robotstxt.RobotParser`` backed by :class:`botscope.Robots`.

    Beyond Scrapy's interface (``from_crawler``, ``allowed``,
    ``crawl_delay``), a handler of Scrapy's ``robots_parsed`` signal
    (which carries this object as ``robotparser``) reads ``robots`` (the
    :class:`botscope.Robots`: ``explain``, ``usage``, ``lint``, the parse
    tree) and ``sitemaps``.

    >>> from botscope.scrapy import RobotParser
    >>> rp = RobotParser(b"User-agent: *\\nDisallow: /private\\nCrawl-delay: 2\\n")
    >>> rp.allowed("https://example.com/private/x", "MyBot/1.0 (+https://example.com/bot)")
    False
    >>> rp.allowed(b"https://example.com/", b"MyBot")
    True
    >>> rp.crawl_delay("MyBot")
    2.0
    """

    def __init__(
        self,
        robotstxt_body: bytes,
        spider: object = None,
        semantics: str = "google",
        max_bytes: Optional[int] = DEFAULT_PARSE_CAP,
    ) -> None:
        self.spider = spider
        if max_bytes == 0:
            max_bytes = None
        self.robots: Robots = Robots(robotstxt_body or b"", semantics, max_bytes)

    @classmethod
    def from_crawler(cls, crawler: "Crawler", robotstxt_body: bytes) -> "RobotParser":
        if crawler is None:
            return cls(robotstxt_body)
        settings = crawler.settings
        semantics = settings.get("BOTSCOPE_ROBOTS_SEMANTICS") or "google"
        max_bytes = settings.get("BOTSCOPE_ROBOTS_MAX_BYTES", DEFAULT_PARSE_CAP)
        if max_bytes is not None:
            max_bytes = int(max_bytes)
        return cls(robotstxt_body, getattr(crawler, "spider", None), semantics, max_bytes)

    def allowed(self, url: _Text, user_agent: _Text) -> bool:
        """May ``user_agent`` (a product token, or the whole User-Agent
        header Scrapy sends, reduced to its robot's token) fetch ``url``?
        A URL with characters outside ASCII is asked about as Scrapy
        requests it, percent-encoded."""
        url = _text(url)
        if not url.isascii():
            url = safe_url_string(url)
        return self.robots.allowed(_text(user_agent), url)

    def crawl_delay(self, user_agent: _Text) -> Optional[float]:
        """The Crawl-delay of ``user_agent``'s group, in seconds, or None."""
        return self.robots.crawl_delay(_text(user_agent))

    @property
    def sitemaps(self) -> list:
        """The ``Sitemap`` URLs of the file, in file order."""
        return self.robots.sitemaps
