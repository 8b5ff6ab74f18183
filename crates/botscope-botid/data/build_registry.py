#!/usr/bin/env python3
"""Builds registry.yaml, the registry bundled with botscope, from the public
data set in shared/data (operators' published IP lists, the reverse-DNS
domains operators document, and the ai.robots.txt list of AI agents).

    python3 crates/botscope-botid/data/build_registry.py ../shared/data > crates/botscope-botid/data/registry.yaml

The output is valid bottica (plus botscope's superset fields). Refresh the
IP lists without a rebuild with `botscope bots update --from FILE|DIR`.
"""

import ipaddress
import json
import re
import sys
from pathlib import Path

DATA = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
IPDATA = DATA / "botid" / "ipdata"

# The Web Bot Auth signature agents operators sign as (the `Signature-Agent`
# URL whose key directory lists their keys), with where that is said.
SIGNATURE_AGENTS = {
    "ChatGPT Agent": (["https://chatgpt.com"],
                      "OpenAI: ChatGPT agent signs its requests (HTTP Message Signatures), Signature-Agent https://chatgpt.com"),
    "DuckDuckBot": (["https://bot.duckduckgo.com"],
                    "DuckDuckGo: DuckDuckBot's signed requests name https://bot.duckduckgo.com"),
}

# name, operator, category, url, respects robots.txt, ua tokens, fcrdns hosts
# (None: no FCrDNS), ip files (relative to ipdata), ip source URLs.
BOTS = [
    ("Googlebot", "Google", "search", "https://developers.google.com/search/docs/crawling-indexing/googlebot", True,
     ["Googlebot", "Googlebot-Image", "Googlebot-Video", "Googlebot-News", "Storebot-Google", "Google-InspectionTool"],
     ["googlebot.com", "google.com"], ["google/googlebot.json"],
     ["https://developers.google.com/search/apis/ipranges/googlebot.json"]),
    ("Google-Special-Crawlers", "Google", "other", "https://developers.google.com/search/docs/crawling-indexing/google-special-case-crawlers", True,
     ["AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "APIs-Google", "Google-Safety"], ["google.com"],
     ["google/special-crawlers.json"], ["https://developers.google.com/search/apis/ipranges/special-crawlers.json"]),
    ("Google-User-Triggered-Fetchers", "Google", "other", "https://developers.google.com/search/docs/crawling-indexing/google-user-triggered-fetchers", False,
     ["FeedFetcher-Google", "Google-Site-Verification", "Google-Read-Aloud", "GoogleProducer"], ["googleusercontent.com", "google.com"],
     ["google/user-triggered-fetchers.json", "jonhadfield/user-triggered-fetchers-2024-02-27.json"],
     ["https://developers.google.com/search/apis/ipranges/user-triggered-fetchers.json"]),
    ("bingbot", "Microsoft", "search", "https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0", True,
     ["bingbot", "msnbot", "adidxbot"], ["search.msn.com"], ["lord-alfred/bing/ipv4.txt", "goodbots/bingbot.ips"],
     ["https://www.bing.com/toolbox/bingbot.json"]),
    ("BingPreview", "Microsoft", "social", "https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0", True,
     ["BingPreview", "MicrosoftPreview"], ["search.msn.com"], [], []),
    ("YandexBot", "Yandex", "search", "https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html", True,
     ["YandexBot", "YandexImages", "YandexMobileBot", "YandexAccessibilityBot"], ["yandex.ru", "yandex.net", "yandex.com"],
     ["goodbots/yandex.ips"], []),
    ("Baiduspider", "Baidu", "search", "https://www.baidu.com/search/spider_english.html", True,
     ["Baiduspider"], ["baidu.com", "baidu.jp"], [], []),
    ("Applebot", "Apple", "search", "https://support.apple.com/en-us/119829", True,
     ["Applebot"], ["applebot.apple.com"], ["jonhadfield/applebot.json", "goodbots/applebot.ips"],
     ["https://search.developer.apple.com/applebot.json"]),
    ("DuckDuckBot", "DuckDuckGo", "search", "https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot", True,
     ["DuckDuckBot"], None, ["lord-alfred/duckduckbot/ipv4.txt", "goodbots/duckduckbot.ips"], ["https://duckduckgo.com/duckduckbot.json"]),
    ("DuckAssistBot", "DuckDuckGo", "ai-assistant", "https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot", True,
     ["DuckAssistBot"], None, ["lord-alfred/duckassistbot/ipv4.txt"], ["https://duckduckgo.com/duckassistbot.json"]),
    ("Amazonbot", "Amazon", "ai-training", "https://developer.amazon.com/amazonbot", True,
     ["Amazonbot"], ["crawl.amazonbot.amazon"], [], []),
    ("AmazonAdBot", "Amazon", "other", "https://adbot.amazon.com/", True, ["AmazonAdBot"], ["amazonadbot.com"], [], []),
    ("CCBot", "Common Crawl", "ai-training", "https://commoncrawl.org/ccbot", True,
     ["CCBot"], ["crawl.commoncrawl.org"], ["goodbots/commoncrawlbot.ips"], ["https://index.commoncrawl.org/ccbot.json"]),
    ("Pinterestbot", "Pinterest", "social", "https://help.pinterest.com/en/business/article/pinterest-crawler", True,
     ["Pinterestbot"], ["pinterest.com", "pinterestcrawler.com"], [], []),
    ("PetalBot", "Huawei", "search", "https://aspiegel.com/petalbot", True, ["PetalBot"], ["aspiegel.com", "petalsearch.com"], [], []),
    ("Qwantbot", "Qwant", "search", "https://help.qwant.com/bot/", True, ["Qwantbot", "Qwantify"], ["qwant.com"], [],
     ["https://help.qwant.com/wp-content/uploads/sites/2/2025/01/qwantbot.json"]),
    ("SeznamBot", "Seznam", "search", "https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/", True, ["SeznamBot"], ["seznam.cz"], [], []),
    ("Sogou", "Sogou", "search", "https://www.sogou.com/docs/help/webmasters.htm", True, ["Sogou"], ["sogou.com"], [], []),
    ("Slurp", "Yahoo", "search", "https://help.yahoo.com/kb/SLN22600.html", True, ["Slurp"], ["crawl.yahoo.net", "yse.yahoo.net"], [], []),
    ("MojeekBot", "Mojeek", "search", "https://www.mojeek.com/bot.html", True, ["MojeekBot"], ["mojeek.com"], ["goodbots/mojeekbot.ips"], []),
    ("YoudaoBot", "NetEase Youdao", "search", "https://www.youdao.com/help/webmaster/spider/", True, ["YoudaoBot"], ["crawler.youdao.com"], [], []),
    ("Twitterbot", "X", "social", "https://developer.x.com/en/docs/x-for-websites/cards/guides/getting-started", True,
     ["Twitterbot"], ["twttr.com"], ["goodbots/twitterbot.ips"], []),
    ("facebookexternalhit", "Meta", "social", "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers", False,
     ["facebookexternalhit", "facebookcatalog"], None, ["goodbots/facebookbot.ips"], ["http://www.facebook.com/peering/geofeed"]),
    ("GPTBot", "OpenAI", "ai-training", "https://platform.openai.com/docs/bots", True,
     ["GPTBot"], None, ["lord-alfred/openai/ipv4.txt"], ["https://openai.com/gptbot.json"]),
    ("OAI-SearchBot", "OpenAI", "ai-search", "https://platform.openai.com/docs/bots", True,
     ["OAI-SearchBot"], None, ["lord-alfred/openai/ipv4.txt"], ["https://openai.com/searchbot.json"]),
    ("ChatGPT-User", "OpenAI", "ai-assistant", "https://platform.openai.com/docs/bots", False,
     ["ChatGPT-User"], None, ["lord-alfred/openai/ipv4.txt"], ["https://openai.com/chatgpt-user.json"]),
    ("ClaudeBot", "Anthropic", "ai-training", "https://support.claude.com/en/articles/8896518", True,
     ["ClaudeBot"], None, ["jonhadfield/anthropic.json"], ["https://claude.com/crawling/bots.json"]),
    ("Claude-User", "Anthropic", "ai-assistant", "https://support.claude.com/en/articles/8896518", True,
     ["Claude-User"], None, ["jonhadfield/anthropic.json"], ["https://claude.com/crawling/bots.json"]),
    ("Claude-SearchBot", "Anthropic", "ai-search", "https://support.claude.com/en/articles/8896518", True,
     ["Claude-SearchBot"], None, ["jonhadfield/anthropic.json"], ["https://claude.com/crawling/bots.json"]),
    ("PerplexityBot", "Perplexity", "ai-search", "https://docs.perplexity.ai/guides/bots", True,
     ["PerplexityBot"], None, ["lord-alfred/perplexity/ipv4.txt"], ["https://www.perplexity.ai/perplexitybot.json"]),
    ("Perplexity-User", "Perplexity", "ai-assistant", "https://docs.perplexity.ai/guides/bots", False,
     ["Perplexity-User"], None, ["lord-alfred/perplexity/ipv4.txt"], ["https://www.perplexity.ai/perplexity-user.json"]),
    ("AhrefsBot", "Ahrefs", "seo", "https://ahrefs.com/robot", True,
     ["AhrefsBot", "AhrefsSiteAudit"], None, ["goodbots/ahrefsbot.ips"], ["https://api.ahrefs.com/v3/public/crawler-ip-ranges"]),
    ("SemrushBot", "Semrush", "seo", "https://www.semrush.com/bot/", True, ["SemrushBot"], None, ["goodbots/semrushbot.ips"], []),
    ("BLEXBot", "WebMeUp", "seo", "http://webmeup-crawler.com/", True, ["BLEXBot"], ["webmeup.com"], [], []),
    ("Bytespider", "ByteDance", "ai-training", "https://bytedance.com", False, ["Bytespider"], ["bytedance.com"], [], []),
    ("MistralAI-User", "Mistral", "ai-assistant", "https://docs.mistral.ai/robots", True, ["MistralAI-User"], None, [],
     ["https://mistral.ai/mistralai-user-ips.json"]),
    ("archive.org_bot", "Internet Archive", "archive", "https://archive.org/details/archive.org_bot", False,
     ["archive.org_bot"], ["archive.org"], [], []),
    ("Stripe", "Stripe", "other", "https://docs.stripe.com/ips", None, ["Stripe"], ["crawl.stripe.com"], ["goodbots/stripewebhook.ips"], []),
    ("marginalia", "Marginalia", "search", "https://www.marginalia.nu/marginalia-search/for-webmasters/", True,
     ["search.marginalia.nu", "marginalia"], None, ["goodbots/marginalia.ips"], []),
    ("TelegramBot", "Telegram", "social", "https://core.telegram.org/bots/webapps", None, ["TelegramBot"], None, ["goodbots/telegrambot.ips"], []),
    ("UptimeRobot", "UptimeRobot", "monitoring", "https://uptimerobot.com/help/locations/", None, ["UptimeRobot"], None, ["goodbots/uptimerobot.ips"], []),
    ("Pingdom", "SolarWinds", "monitoring", "https://www.pingdom.com/rss/probe_servers.xml", None, ["Pingdom.com_bot"], None, ["goodbots/pingdombot.ips"], []),
    ("BetterUptimeBot", "Better Stack", "monitoring", "https://betterstack.com/docs/uptime/frequently-asked-questions/", None, ["Better Uptime Bot", "BetterStackBot"], None, ["goodbots/betteruptimebot.ips"], []),
    ("FreshpingBot", "Freshworks", "monitoring", "https://www.freshworks.com/website-monitoring/", None, ["FreshpingBot"], None, ["goodbots/freshpingbot.ips"], []),
    ("WebPageTest", "Catchpoint", "monitoring", "https://www.webpagetest.org/", None, ["PTST", "WebPageTest"], None, ["goodbots/webpagetestbot.ips"], []),
    ("OutageOwl", "OutageOwl", "monitoring", "https://outageowl.com", None, ["OutageOwl"], None, ["goodbots/outageowl.ips"], []),
    ("RSSAPI", "RSS API", "feed", "https://rssapi.net", None, ["RSSAPI"], None, ["goodbots/rssapi.ips"], []),
    ("Feedly", "Feedly", "feed", "https://feedly.com/fetcher.html", None, ["Feedly"], None, [], []),
    ("MollieWebhook", "Mollie", "other", "https://docs.mollie.com/", None, ["Mollie"], None, ["goodbots/molliewebhook.ips"], []),
    ("BunnyCDN", "BunnyWay", "other", "https://bunny.net/", None, ["BunnyCDN"], None, ["goodbots/bunnycdn.ips"], []),
    ("Cloudflare", "Cloudflare", "other", "https://www.cloudflare.com/ips/", None, ["Cloudflare"], None, ["goodbots/cloudflare.ips"], []),
    ("Fastly", "Fastly", "other", "https://api.fastly.com/public-ip-list", None, ["Fastly"], None, ["goodbots/fastly.ips"], []),
    ("ImageKit", "ImageKit", "other", "https://imagekit.io/", None, ["ImageKit"], None, ["goodbots/imagekit.ips"], []),
    ("imgix", "imgix", "other", "https://imgix.com/", None, ["imgix"], None, ["goodbots/imgix.ips"], []),
    # Names a site owner meets in real logs, with no published addresses:
    # the registry names them (their User-Agents read poorly) and says
    # whose they are; their claims stay unverifiable.
    ("Google Favicon", "Google", "other", "https://developers.google.com/search/docs/appearance/favicon-in-search", None,
     ["Google favicon"], None, [], []),
    ("Google Web Preview", "Google", "other", None, None, ["Google Web Preview"], None, [], []),
    ("Expanse", "Palo Alto Networks", "other", "https://www.paloaltonetworks.com/cortex/cortex-xpanse", None,
     ["Expanse"], None, [], []),
    ("GenomeCrawlerd", "Nokia", "other", "https://www.nokia.com/genomecrawler", None, ["GenomeCrawlerd"], None, [], []),
]

EXTRA = ["bunnycdn", "cloudflare", "fastly", "imagekit", "imgix"]


# How the verifiers combine, from each operator's documentation: these
# operators give reverse DNS and an address list as alternatives (or
# document reverse DNS, the list being a convenience that goes stale), so
# one passing verifier is enough. Entries not named here keep bottica's
# all-of meaning.
ANY_OF = {
    "Googlebot": "Google: reverse DNS, or match against its published IP ranges",
    "Google-Special-Crawlers": "Google: reverse DNS, or match against its published IP ranges",
    "Google-User-Triggered-Fetchers": "Google: reverse DNS, or match against its published IP ranges",
    "bingbot": "Bing: reverse DNS (search.msn.com), or its published bingbot.json",
    "YandexBot": "Yandex documents reverse DNS; the address list is a third party's",
    "Applebot": "Apple: reverse DNS (applebot.apple.com), or its published CIDR list",
    "CCBot": "Common Crawl: reverse DNS (crawl.commoncrawl.org), or its published ccbot.json",
    "MojeekBot": "Mojeek documents reverse DNS; the address list is a third party's",
    "Twitterbot": "X documents reverse DNS (twttr.com); the address list is a third party's",
    "Stripe": "Stripe publishes its webhook addresses; reverse DNS as an alternative",
}


def read_ips(rel):
    """CIDR blocks and addresses from one file: Google-style JSON or plain lists."""
    path = IPDATA / rel
    text = path.read_text(encoding="utf-8", errors="replace")
    out = []
    if rel.endswith(".json"):
        for p in json.loads(text).get("prefixes", []):
            for k in ("ipv4Prefix", "ipv6Prefix"):
                if p.get(k):
                    out.append(p[k].strip().replace("\u200b", ""))
    else:
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip().replace("\u200b", "")
            if line:
                out.append(line)
    nets = []
    for item in out:
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            print(f"skipping {item!r} in {rel}", file=sys.stderr)
    return nets


def category_of(function):
    """botscope's category of an ai.robots.txt function: fetches a user asked
    for (assistants, agents, user-initiated prompts) are `ai-assistant`;
    crawling that indexes for AI answers (AI Search Crawlers, search result
    generation) is `ai-search`; the rest collects data (`ai-training`)."""
    f = function.lower()
    if any(w in f for w in ("assistant", "agent", "user-initiated", "responses", "prompt")):
        return "ai-assistant"
    if re.search(r"\bsearch\b", f):
        return "ai-search"
    return "ai-training"


def plain(text):
    """Markdown link text or plain text, one line."""
    m = re.match(r"\[([^\]]+)\]\(([^)]+)\)", text.strip())
    return (m.group(1), m.group(2)) if m else (text.strip(), None)


def operator_name(text):
    """The operator's name out of ai.robots.txt's prose: `Kagi that fetches
    …` is Kagi, `Ai2, a non-profit …` is Ai2, `the Chinese company Huawei`
    is Huawei; a URL or `Anyone who …` is no name."""
    t = (text or "").strip()
    if not t or t.lower().startswith(("http://", "https://", "anyone", "unclear")):
        return None
    t = re.sub(r"^the\s+", "", t, flags=re.I)
    m = re.match(r"^(?:[A-Z][\w-]*\s+)?company\s+(.+)$", t)
    if m:
        t = m.group(1)
    t = re.split(r",|\s\(|\s+(?:that|to|used|which|who|for)\s", t, maxsplit=1)[0].strip()
    t = t.rstrip(".…").strip()
    return t or None


# The autonomous systems each operator crawls from, for operators that run
# their own networks. Taken from the AS numbers that announce the operator's
# own published ranges (RouteViews and DB-IP, as packaged in npm's
# @ip-location-db/asn, 2026-06), plus the operator's other registered AS
# numbers. A claim from an address that an IP-owner database places in
# another network is spoofing evidence, so a list here must be complete:
# operators whose crawlers run on shared clouds (AWS, Azure, GCP) get none,
# since a cloud's AS says nothing about who rents the address.
OPERATOR_ASNS = {
    "Google": [15169, 19527, 36040, 36384, 36385, 36492, 41264, 43515, 139070, 139190, 396982],
    "Microsoft": [3598, 8068, 8069, 8075, 12076, 58593],
    "Yandex": [13238, 44534, 202611, 208722, 215013],
    "Apple": [714, 6185],
    "Meta": [32934, 54115, 63293, 149642],
    "X": [13414, 35995, 63179],
}


def list_date(rel):
    """The date a JSON list says it was made (`creationTime`), if it says."""
    if not rel.endswith(".json"):
        return None
    t = json.loads((IPDATA / rel).read_text(encoding="utf-8", errors="replace")).get("creationTime")
    return t[:10] if isinstance(t, str) and re.match(r"\d{4}-\d{2}-\d{2}", t) else None


def q(s):
    return "'" + s.replace("'", "''") + "'"


def main():
    ai = json.loads((DATA / "agents" / "ai-robots-txt.json").read_text())
    entries = []
    names = set()
    for name, op, cat, url, respects, tokens, hosts, files, sources in BOTS:
        nets = []
        for f in files:
            nets.extend(read_ips(f))
        nets = sorted(set(ipaddress.collapse_addresses([n for n in nets if n.version == 4])), key=lambda n: n.network_address) + \
            sorted(set(ipaddress.collapse_addresses([n for n in nets if n.version == 6])), key=lambda n: n.network_address)
        entries.append(dict(name=name, operator=op, category=cat, url=url, respects=respects, tokens=tokens,
                            hosts=hosts, nets=nets, sources=sources, files=files,
                            asns=OPERATOR_ASNS.get(op, []),
                            as_of=max(filter(None, (list_date(f) for f in files)), default=None)))
        names.add(name.lower())
        for t in tokens:
            names.add(t.lower())
    for name, info in sorted(ai.items(), key=lambda kv: kv[0].lower()):
        if name.lower() in names:
            continue
        # `MistralAI-User/1.0` is the documented `MistralAI-User`: the
        # product token before a version is the robot's robots.txt name,
        # so the versioned name is one more token of that robot.
        base = name.split("/")[0].lower()
        owner = next((e for e in entries if base in {t.lower() for t in e["tokens"]} | {e["name"].lower()}), None)
        if owner is not None:
            owner["tokens"].append(name)
            names.add(name.lower())
            continue
        names.add(name.lower())
        op, op_url = plain(info.get("operator", ""))
        if op_url is None and op.startswith(("http://", "https://")):
            op_url = op
        op = operator_name(op)
        respect = info.get("respect", "").strip().lower()
        respects = True if respect.startswith("yes") else False if respect.startswith("no") else None
        entries.append(dict(name=name, operator=op, category=category_of(info.get("function", "")), url=op_url,
                            respects=respects, tokens=[name], hosts=None, nets=[], sources=[], files=[],
                            asns=OPERATOR_ASNS.get(op, []), as_of=None))

    print("# The registry bundled with botscope: valid bottica (bots: name, fcrdns_hosts,")
    print("# ip_list, ip_ranges, cidr_list) plus botscope's fields (operator, category, url,")
    print("# respects_robots_txt, ua_tokens, ip_sources, verify, asns, ip_as_of,")
    print("# signature_agents).")
    print("# Built by crates/botscope-botid/data/build_registry.py from public data:")
    print("# operators' published IP lists and documented reverse-DNS domains (see")
    print("# SOURCES.tsv beside this file) and the ai.robots.txt list of AI agents.")
    print("# Refresh the IP lists with `botscope bots update --from FILE|DIR`.")
    print("bots:")
    for e in entries:
        print(f"- name: {q(e['name'])}")
        if e["operator"]:
            print(f"  operator: {q(e['operator'])}")
        print(f"  category: {e['category']}")
        if e["url"]:
            print(f"  url: {q(e['url'])}")
        if e["respects"] is not None:
            print(f"  respects_robots_txt: {'true' if e['respects'] else 'false'}")
        print("  ua_tokens:")
        for t in e["tokens"]:
            print(f"    - {q(t)}")
        if e["sources"]:
            print("  ip_sources:")
            for s in e["sources"]:
                print(f"    - {q(s)}")
        if e["hosts"] is not None and e["nets"] and e["name"] in ANY_OF:
            print(f"  # {ANY_OF[e['name']]}")
            print("  verify: any-of")
        if e["asns"]:
            print(f"  asns: [{', '.join(str(a) for a in e['asns'])}]")
        if e["hosts"] is not None:
            if e["hosts"]:
                print("  fcrdns_hosts:")
                for h in e["hosts"]:
                    print(f"    - {h}")
            else:
                print("  fcrdns_hosts: []")
        if e["as_of"] and e["nets"]:
            print(f"  ip_as_of: {e['as_of']}")
        if e["name"] in SIGNATURE_AGENTS:
            agents, why = SIGNATURE_AGENTS[e["name"]]
            print(f"  # {why}")
            print("  signature_agents:")
            for a in agents:
                print(f"    - {q(a)}")
        singles = [n for n in e["nets"] if n.num_addresses == 1]
        blocks = [n for n in e["nets"] if n.num_addresses > 1]
        if singles:
            print(f"  # from {', '.join(e['files'])}")
            print("  ip_list:")
            for n in singles:
                print(f"    - {q(str(n.network_address))}")
        if blocks:
            if not singles:
                print(f"  # from {', '.join(e['files'])}")
            print("  cidr_list:")
            for n in blocks:
                print(f"    - {q(str(n))}")


if __name__ == "__main__":
    main()
