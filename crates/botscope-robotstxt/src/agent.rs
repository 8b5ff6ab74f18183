//! Reducing a User-Agent header to the product token robots.txt names.

/// Product names that belong to browser engines and platforms, never to
/// the robot a User-Agent header identifies.
const BROWSER_TOKENS: &[&str] = &[
    "mozilla",
    "applewebkit",
    "khtml",
    "gecko",
    "chrome",
    "chromium",
    "safari",
    "version",
    "mobile",
    "firefox",
    "edge",
    "edg",
    "opera",
    "opr",
    "build",
    "like",
    "trident",
    "msie",
    "windows",
    "linux",
    "android",
    "iphone",
    "ipad",
    "cpu",
    "macintosh",
    "intel",
    "x11",
    "headlesschrome",
    "compatible",
];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
}

/// True when `s` is a valid product token for robots.txt matching:
/// non-empty and only `[A-Za-z_-]`.
pub fn is_product_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_token_byte)
}

/// Reduces what a caller gives as the agent to the product token that
/// robots.txt groups are matched against.
///
/// A valid token (`Googlebot`) is returned as it is. A whole User-Agent
/// header is reduced to the robot's token: the one after `compatible;`
/// when there is one, else the first `Name/version` product that is not a
/// browser engine. Anything else (`Foo Bar`) is returned unchanged, so it
/// matches only a group that names it exactly, as in Google's library.
///
/// ```
/// use botscope_robotstxt::product_token;
/// assert_eq!(product_token("Googlebot"), "Googlebot");
/// assert_eq!(product_token("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"), "bingbot");
/// assert_eq!(product_token("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"), "GPTBot");
/// assert_eq!(product_token("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"), "facebookexternalhit");
/// assert_eq!(product_token("Foo Bar"), "Foo Bar");
/// ```
pub fn product_token(agent: &str) -> &str {
    if is_product_token(agent) || !agent.bytes().any(|b| matches!(b, b'/' | b'(' | b';')) {
        return agent;
    }
    let bytes = agent.as_bytes();
    // `compatible; Name/1.0` or `compatible; Name;`
    if let Some(i) = find_ci(bytes, b"compatible;") {
        let rest = &agent[i + b"compatible;".len()..];
        let rest = rest.trim_start();
        let end = rest
            .bytes()
            .position(|b| !is_token_byte(b))
            .unwrap_or(rest.len());
        if end > 0 && !is_browser(&rest[..end]) {
            return &rest[..end];
        }
    }
    // The first `Name/version` product that is not a browser engine.
    let mut i = 0;
    while i < bytes.len() {
        if is_token_byte(bytes[i]) && (i == 0 || !is_token_byte(bytes[i - 1])) {
            let end = bytes[i..]
                .iter()
                .position(|&b| !is_token_byte(b))
                .map_or(bytes.len(), |e| i + e);
            if bytes.get(end) == Some(&b'/') && !is_browser(&agent[i..end]) {
                return &agent[i..end];
            }
            i = end;
        } else {
            i += 1;
        }
    }
    agent
}

fn is_browser(token: &str) -> bool {
    BROWSER_TOKENS.iter().any(|b| b.eq_ignore_ascii_case(token))
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_crawler_headers() {
        let cases = [
            (
                "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.4844.84 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                "Googlebot",
            ),
            ("Googlebot-Image/1.0", "Googlebot-Image"),
            (
                "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
                "YandexBot",
            ),
            (
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
                "ClaudeBot",
            ),
            ("Twitterbot/1.0", "Twitterbot"),
            ("CCBot/2.0 (https://commoncrawl.org/faq/)", "CCBot"),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
            ),
        ];
        for (ua, want) in cases {
            assert_eq!(product_token(ua), want, "{ua}");
        }
    }
}
