"""botscope inside Scrapy: robots.txt exactly as Google reads it (every
request checked, statuses as RFC 9309 reads them), pacing by
Crawl-delay, requests signed with Web Bot Auth, and each page's terms
honoured (``TermsMiddleware``: Content-Usage, RSL, pay per crawl within a
budget), switched on in a project's ``settings.py``::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "botscope.scrapy.RobotParser"
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "botscope.scrapy.RobotsTxtMiddleware": 100,
        "botscope.scrapy.CrawlDelayMiddleware": 110,
        "botscope.scrapy.WebBotAuthMiddleware": 950,
    }
    BOTSCOPE_SIGNING_KEY = "keys/signing-key.jwk"
    BOTSCOPE_SIGNATURE_AGENT = "https://crawler.example"

Scrapy's own ``RobotsTxtMiddleware`` fetches each host's robots.txt and
asks the parser about every request; the answers are
:class:`botscope.Robots`'s, the same as the ``botscope`` command's.

The parser's settings (all optional):

``BOTSCOPE_ROBOTS_SEMANTICS``
    ``"google"`` (the default: RFC 9309 as Google's parser reads it) or
    ``"draft1996"`` (the 1996 draft: first match wins, no wildcards).
``BOTSCOPE_ROBOTS_MAX_BYTES``
    How much of a robots.txt body is read (500 KiB by default, as
    Google's crawlers; ``None`` or ``0`` reads it whole, up to
    :data:`botscope.MAX_BODY_BYTES`).
"""

from __future__ import annotations

import asyncio
import logging
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as _ScrapyRobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred
from w3lib.url import safe_url_string

from ._botscope import DEFAULT_PARSE_CAP, Robots, Signer, terms

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "CrawlDelayMiddleware",
    "RobotParser",
    "RobotsTxtMiddleware",
    "TermsMiddleware",
    "WebBotAuthMiddleware",
]

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
        body = robotstxt_body or b""
        if max_bytes is not None and len(body) > max_bytes:
            # As Robots reads it: up to the last whole line within the cap
            # (a line cut in two would be another rule).
            body = body[: body.rfind(b"\n", 0, max_bytes) + 1]
        self.body: bytes = body
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


def _slot_has_jitter() -> bool:
    from scrapy.core.downloader import Slot

    return "jitter" in getattr(Slot, "__dataclass_fields__", {})


_SLOT_JITTER = _slot_has_jitter()


def _robots_agent(crawler, request) -> str:
    """The agent robots.txt is asked about, as Scrapy's robots.txt
    middleware chooses it: ``ROBOTSTXT_USER_AGENT``, else the request's
    User-Agent, else ``USER_AGENT``."""
    settings = crawler.settings
    agent = settings.get("ROBOTSTXT_USER_AGENT")
    if not agent and request is not None:
        agent = request.headers.get(b"User-Agent")
    return _text(agent or settings.get("USER_AGENT") or "")


class CrawlDelayMiddleware:
    """Paces each host by its robots.txt ``Crawl-delay``, which Scrapy
    reads (``RobotParser.crawl_delay``) but does not apply.

    Enabled by ``DOWNLOADER_MIDDLEWARES = {"botscope.scrapy.CrawlDelayMiddleware":
    110}`` (after Scrapy's robots.txt middleware, 100) with
    ``ROBOTSTXT_OBEY``. When a host's robots.txt is parsed, the delay of
    the group the crawler's agent reads becomes the least time between two
    requests to that host's download slot: never shortened by jitter
    (``DOWNLOAD_DELAY_JITTER``) or AutoThrottle, never below
    ``DOWNLOAD_DELAY``, and at most ``BOTSCOPE_MAX_CRAWL_DELAY`` seconds
    (60 by default: a stranger's ``Crawl-delay: 86400`` does not stall the
    crawl for a day). The delays applied are in the stats
    (``botscope/crawl_delay/hosts``) and ``delays`` (slot to seconds).
    """

    def __init__(self, crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("CrawlDelayMiddleware paces by robots.txt: ROBOTSTXT_OBEY is off")
        self.crawler = crawler
        self.max_delay = settings.getfloat("BOTSCOPE_MAX_CRAWL_DELAY", 60.0)
        self.delays: dict = {}
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)

    @classmethod
    def from_crawler(cls, crawler) -> "CrawlDelayMiddleware":
        return cls(crawler)

    def _robots_parsed(self, robotparser, request) -> None:
        delay = robotparser.crawl_delay(_robots_agent(self.crawler, request))
        if not delay or delay <= 0:
            return
        downloader = self.crawler.engine.downloader
        key = downloader.get_slot_key(request)
        self.delays[key] = min(float(delay), self.max_delay)
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value("botscope/crawl_delay/hosts")
        self._apply(downloader, key)

    def _apply(self, downloader, key) -> None:
        delay = self.delays[key]
        # A slot made later (the first, or one collected when idle) starts
        # with the delay; one made already gets it now.
        slot_settings = dict(downloader.per_slot_settings.get(key, {}))
        slot_settings["delay"] = max(delay, slot_settings.get("delay", 0.0))
        # No random shortening: Scrapy 2.19 calls it the slot's jitter,
        # 2.18 its randomize_delay (deprecated in 2.19).
        if _SLOT_JITTER:
            slot_settings["jitter"] = 0.0
            slot_settings.pop("randomize_delay", None)
        else:
            slot_settings["randomize_delay"] = False
        downloader.per_slot_settings[key] = slot_settings
        slot = downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, delay)
            if _SLOT_JITTER:
                slot.jitter = 0.0
            else:
                slot.randomize_delay = False

    def process_request(self, request, spider=None):
        if not self.delays:
            return None
        downloader = self.crawler.engine.downloader
        key = downloader.get_slot_key(request)
        if key in self.delays:
            # AutoThrottle would otherwise lower the slot's delay.
            request.meta["autothrottle_dont_adjust_delay"] = True
            self._apply(downloader, key)
        return None


class WebBotAuthMiddleware:
    """Signs every request with Web Bot Auth (HTTP Message Signatures over
    ``@authority`` and ``Signature-Agent``, Ed25519, a fresh nonce each),
    as ``botscope fetch --signing-key`` does, so that a site (botscope's
    gate, Cloudflare) can verify who is crawling.

    Enabled by ``DOWNLOADER_MIDDLEWARES = {"botscope.scrapy.WebBotAuthMiddleware":
    950}`` (after every middleware that changes a request: redirects and
    retries are signed afresh) with ``BOTSCOPE_SIGNING_KEY``, the key file
    ``botscope keys generate`` wrote, and ``BOTSCOPE_SIGNATURE_AGENT``, the
    https URL whose ``/.well-known/http-message-signatures-directory``
    publishes its public half. Optional: ``BOTSCOPE_SIGNATURE_VALIDITY``
    (seconds, 60), ``BOTSCOPE_SIGNATURE_COVERS`` (header fields a request
    carries that the signature covers too; pay per crawl's
    ``crawler-max-price`` and ``crawler-exact-price`` always are).
    A request with ``meta["dont_sign"]`` goes unsigned. Without a key the
    middleware is off (``NotConfigured``); a key that does not read stops
    the crawl at its start with the reason.
    """

    # Pay per crawl's price fields are covered whenever a request carries
    # one (an unsigned offer is refused).
    PRICE_FIELDS = ("crawler-max-price", "crawler-exact-price")

    def __init__(self, signer: Signer, covers=(), stats=None) -> None:
        self.signer = signer
        self.covers = list(dict.fromkeys([c.lower() for c in covers] + list(self.PRICE_FIELDS)))
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler) -> "WebBotAuthMiddleware":
        settings = crawler.settings
        key = settings.get("BOTSCOPE_SIGNING_KEY")
        if not key:
            raise NotConfigured("BOTSCOPE_SIGNING_KEY is not set: requests go unsigned")
        try:
            text = Path(key).read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"BOTSCOPE_SIGNING_KEY {key!r}: {e.strerror}") from None
        signer = Signer(
            text,
            settings.get("BOTSCOPE_SIGNATURE_AGENT"),
            settings.getfloat("BOTSCOPE_SIGNATURE_VALIDITY", 60.0),
        )
        return cls(signer, settings.getlist("BOTSCOPE_SIGNATURE_COVERS"), crawler.stats)

    def process_request(self, request, spider=None):
        if request.meta.get("dont_sign") or not request.url.startswith(("https://", "http://")):
            return None
        covers = []
        for name in self.covers:
            value = request.headers.get(name)
            if value is not None:
                covers.append((name, _text(value)))
        for name, value in self.signer.sign(request.method, request.url, covers):
            request.headers[name] = value
        if self.stats is not None:
            self.stats.inc_value("botscope/signed")
        return None


# The file RFC 9309 tells a crawler to assume when robots.txt is
# unreachable (a server error, 429, or no answer): complete disallow.
_DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


class RobotsTxtMiddleware(_ScrapyRobotsTxtMiddleware):
    """Scrapy's robots.txt middleware, with RFC 9309's status rules and
    every request checked.

    Enabled in place of Scrapy's::

        DOWNLOADER_MIDDLEWARES = {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "botscope.scrapy.RobotsTxtMiddleware": 100,
        }

    What it changes:

    - **Every request is checked.** In Scrapy 2.19 on the asyncio reactor
      (the default), the requests that wait for a host's robots.txt while
      it downloads get no parser but the first (Twisted's ``asFuture``
      consumes the shared Deferred's result) and are fetched unchecked,
      disallowed or not. Here each waiter gets the parser.
    - **Statuses as RFC 9309 reads them** (section 2.3.1): a 4xx other
      than 429 means no rules (the body, an error page, is not parsed); a
      5xx or 429, or no answer at all, means complete disallow for the
      crawl (Scrapy parses whatever body came, or allows everything).
      Redirects are followed by Scrapy's redirect middleware before the
      answer reaches here (RFC 9309: at least five hops).
    """

    async def robot_parser(self, request):
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if isinstance(pending, Deferred):
            # A Deferred of its own per waiter, relayed from the shared one
            # (which keeps its result for the next waiter).
            mine: Deferred = Deferred()

            def relay(result):
                mine.callback(result)
                return result

            pending.addBoth(relay)
            return await maybe_deferred_to_future(mine)
        return await super().robot_parser(request)

    async def _parse_robots(self, response, netloc, request) -> None:
        status = response.status
        if status == 429 or status >= 500:
            self._stats.inc_value("botscope/robotstxt/unreachable")
            response = response.replace(body=_DISALLOW_ALL)
        elif status >= 400:
            response = response.replace(body=b"")
        await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc, netloc) -> None:
        if isinstance(exc, IgnoreRequest):
            # Refused by another middleware (a policy of the crawl's own):
            # Scrapy's reading, no rules.
            super()._robots_error(exc, netloc)
            return
        key = f"robotstxt/exception_count/{type(exc)}"
        self._stats.inc_value(key)
        self._stats.inc_value("botscope/robotstxt/unreachable")
        pending = self._parsers[netloc]
        rp = build_from_crawler(self._parserimpl, self.crawler, _DISALLOW_ALL)
        self._parsers[netloc] = rp
        if isinstance(pending, Deferred):
            pending.callback(rp)


# An RSL document is read up to this size (larger: not read, `unknown`).
_MAX_LICENCE_BYTES = 1 << 20


def _price(text, what):
    """``USD 0.02`` as (currency, millionths), or None for None."""
    if text is None or text == "":
        return None
    parts = str(text).split()
    if len(parts) == 1:
        parts = ["USD", parts[0]]
    try:
        currency, amount = parts
        millionths = Decimal(amount) * 1_000_000
        if millionths != millionths.to_integral_value() or millionths <= 0 or len(currency) != 3:
            raise ValueError
        return currency.upper(), int(millionths)
    except (ValueError, ArithmeticError):
        raise ValueError(f"{what} {text!r} is not a price such as 'USD 0.02'") from None


def _shown(price) -> str:
    """(currency, millionths) as pay per crawl writes it: ``USD 0.01``."""
    currency, millionths = price
    whole, frac = divmod(millionths, 1_000_000)
    digits = f"{frac:06d}".rstrip("0")
    return f"{currency} {whole}.{digits:0<2}"


class TermsMiddleware:
    """Honours each page's terms for the crawl's use, as ``botscope fetch
    --use`` does: robots.txt's Content-Usage and Content-Signal, the RSL
    licences its ``License`` lines name, the page's own ``Content-Usage``
    header, and pay per crawl over HTTP 402.

    Enabled by ``DOWNLOADER_MIDDLEWARES = {"botscope.scrapy.TermsMiddleware":
    120}`` (after the robots.txt middleware) with ``BOTSCOPE_USE`` (what
    the crawl does with the pages: ``train-ai``, ``ai-use``, ``ai-index``,
    ``search``, or RSL's and Content-Signal's names). For each request:

    - **Skip.** A page the terms refuse for the use (``refused``, or
      ``not-crawlable``) is not asked for; nor is one they license only
      through an RSL licence server (``licence``: the token protocol is
      ``botscope fetch --license-credentials``'s, not spoken here). A
      fetched page whose ``Content-Usage`` header refuses the use is
      dropped before the spider sees it. Each is counted
      (``botscope/terms/<answer>``) and logged with the reason.
    - **Pay within a budget.** With ``BOTSCOPE_MAX_PRICE`` (``USD 0.02``)
      every request offers at most that, in a ``crawler-max-price``
      field the request's Web Bot Auth signature covers
      (``WebBotAuthMiddleware``, which this requires: an offer is never
      sent unsigned). A page priced up to it is served and charged its
      price (``crawler-charged``); one priced higher comes back 402 with
      its ``crawler-price``, never retried. ``BOTSCOPE_BUDGET``
      (``USD 5``) caps the whole: each request's maximum is set aside
      before it is sent and what was not charged comes back, so the crawl
      never passes the budget; a request whose maximum would pass it goes
      without an offer (a free page is still served, a priced one answers
      402), counted as ``botscope/terms/over-budget``.
    - **Record.** ``request.meta["botscope_terms"]`` (and the response's
      ``meta``) holds the verdict (``answer``, ``cost``, ``reasons`` with
      their lines), ``meta["botscope_charged"]`` what the page cost; the
      stats hold ``botscope/spent_millionths`` and the counts.

    A licence that cannot be read never passes as free: the answer is
    ``unknown``, and the page is fetched only as any page no terms speak
    of is.
    """

    def __init__(self, crawler) -> None:
        settings = crawler.settings
        self.use = settings.get("BOTSCOPE_USE")
        if not self.use:
            raise NotConfigured("BOTSCOPE_USE is not set: no terms are read")
        # The use's name is checked now: a crawl with a typo stops here.
        terms(None, "https://example.com/", self.use)
        self.crawler = crawler
        self.stats = crawler.stats
        self.max_price = _price(settings.get("BOTSCOPE_MAX_PRICE"), "BOTSCOPE_MAX_PRICE")
        self.budget = _price(settings.get("BOTSCOPE_BUDGET"), "BOTSCOPE_BUDGET")
        if self.budget and not self.max_price:
            raise ValueError("BOTSCOPE_BUDGET caps what BOTSCOPE_MAX_PRICE offers: set both")
        if self.max_price:
            if self.budget and self.budget[0] != self.max_price[0]:
                raise ValueError("BOTSCOPE_BUDGET and BOTSCOPE_MAX_PRICE are in different currencies")
            if not settings.get("BOTSCOPE_SIGNING_KEY"):
                raise ValueError(
                    "BOTSCOPE_MAX_PRICE offers a price, which is never sent unsigned: "
                    "set BOTSCOPE_SIGNING_KEY (WebBotAuthMiddleware signs it)"
                )
        self.spent = 0
        self.reserved = 0
        self.robots: dict = {}
        self.licences: dict = {}
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)

    @classmethod
    def from_crawler(cls, crawler) -> "TermsMiddleware":
        return cls(crawler)

    def _robots_parsed(self, robotparser, request) -> None:
        """Keeps the host's robots.txt and the first RSL licence its
        `License` lines name, read once per host."""
        body = getattr(robotparser, "body", None)
        licence_url = None
        if body:
            robots = getattr(robotparser, "robots", None) or Robots(body)
            named = robots.to_dict()["licenses"]
            licence_url = named[0]["url"] if named else None
        self.robots[urlparse_cached(request).netloc] = (body, licence_url)

    async def _licence(self, url):
        """The RSL document at ``url`` (bytes), or None when it cannot be
        read; fetched once per crawl, the requests that need it meanwhile
        waiting for the same fetch."""
        from scrapy import Request
        from scrapy.http.request import NO_CALLBACK

        known = self.licences.get(url)
        if known is None and url not in self.licences:
            known = self.licences[url] = asyncio.get_running_loop().create_future()
            body = None
            try:
                response = await self.crawler.engine.download_async(
                    Request(url, priority=1000, callback=NO_CALLBACK,
                            meta={"dont_obey_robotstxt": True, "botscope_terms_fetch": True})
                )
                if response.status == 200 and len(response.body) <= _MAX_LICENCE_BYTES:
                    body = response.body
            except Exception as e:  # the licence is unknown, never free
                logger.info("RSL licence %s not read: %s", url, e)
            known.set_result(body)
            self.licences[url] = body
            return body
        if hasattr(known, "__await__"):
            return await asyncio.shield(known)
        return known

    def _agent(self, request) -> str:
        return _robots_agent(self.crawler, request)

    def _count(self, what: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"botscope/terms/{what}")

    async def process_request(self, request, spider=None):
        if request.meta.get("dont_obey_robotstxt") or request.meta.get("botscope_terms_fetch"):
            return None
        if not request.url.startswith(("https://", "http://")):
            return None
        robots, licence_url = self.robots.get(urlparse_cached(request).netloc, (None, None))
        licence = await self._licence(licence_url) if licence_url else None
        verdict = terms(robots, request.url, self.use, self._agent(request),
                        licence=licence, licence_url=licence_url)
        request.meta["botscope_terms"] = verdict
        request.meta["botscope_terms_robots"] = (robots, licence, licence_url)
        answer = verdict["answer"]
        self._count(answer)
        if answer in ("refused", "not-crawlable", "licence"):
            why = "; ".join(r["text"] for r in verdict["reasons"] if r.get("says") != "allows")
            raise IgnoreRequest(f"the terms answer {answer} for {self.use}: {why}")
        if self.max_price:
            _, most = self.max_price
            if self.budget and self.spent + self.reserved + most > self.budget[1]:
                # No offer the budget cannot keep: the request goes without
                # one (a free page is served; a priced one answers 402).
                self._count("over-budget")
                request.headers.pop("crawler-max-price", None)
                return None
            self.reserved += most
            request.meta["botscope_reserved"] = most
            request.headers["crawler-max-price"] = _shown(self.max_price)
        return None

    def _release(self, request) -> None:
        self.reserved -= request.meta.pop("botscope_reserved", 0)

    def process_response(self, request, response, spider=None):
        if "botscope_terms" not in request.meta:
            return response
        self._release(request)
        charged = response.headers.get(b"crawler-charged")
        if charged and self.max_price:
            currency, most = self.max_price
            try:
                price = _price(_text(charged), "crawler-charged")
            except ValueError:
                price = None
            if price is None or price[0] != currency or price[1] > most:
                # A charge that does not read, in another currency, or over
                # the offer: counted as the whole offer, so the budget holds.
                logger.warning("%s: crawler-charged %r is not a charge of the offer %s; "
                               "counted as the offer", request.url, _text(charged)[:64],
                               _shown(self.max_price))
                price = (currency, most)
            self.spent += price[1]
            request.meta["botscope_charged"] = _shown(price)
            if self.stats is not None:
                self.stats.inc_value("botscope/spent_millionths", price[1])
                self.stats.inc_value("botscope/charged")
        if response.status == 402:
            self._count("unpaid")
            logger.info("%s is priced %s (%s): not paid", request.url,
                        _text(response.headers.get(b"crawler-price") or b"?"),
                        _text(response.headers.get(b"crawler-error") or b"over the maximum"))
            return response
        header = [_text(v) for v in response.headers.getlist(b"Content-Usage")]
        if header and response.status < 400:
            robots, licence, licence_url = request.meta["botscope_terms_robots"]
            verdict = terms(robots, request.url, self.use, self._agent(request),
                            licence=licence, licence_url=licence_url, header=header)
            request.meta["botscope_terms"] = verdict
            if verdict["answer"] in ("refused", "not-crawlable", "licence"):
                self._count(f"page-{verdict['answer']}")
                raise IgnoreRequest(
                    f"the page's Content-Usage ({'; '.join(header)}) answers "
                    f"{verdict['answer']} for {self.use}"
                )
        return response

    def process_exception(self, request, exception, spider=None):
        self._release(request)
        return None
