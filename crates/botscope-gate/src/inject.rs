//! Putting a page's trap links into the HTML the standalone gate passes
//! on: before the first `</body>` (any case), or at the end of a page
//! without one, as the body streams through. Pure: chunks in, chunks out.
//!
//! A gzip-encoded page is decoded, rewritten and encoded again (the gate
//! asks the application for gzip or nothing when it may rewrite a page);
//! an identity page stays identity. Cost: linear in the page's bytes
//! (each byte looked at once for `</body`, six held back across chunks);
//! memory, a chunk as decoded (at most 1,032 times its compressed size,
//! deflate's limit) and the snippet.

use std::io::Write;

use flate2::Compression;
use flate2::write::{GzDecoder, GzEncoder};

const CLOSE: &[u8] = b"</body";

/// A gzip page's decoder and encoder.
type Gzip = (GzDecoder<Vec<u8>>, GzEncoder<Vec<u8>>);

/// The rewriter of one page.
pub struct Rewriter {
    gzip: Option<Gzip>,
    /// The canary's slot filler, when the page is marked.
    slot: Option<botscope_canary::slot::Slot>,
    /// The snippet, until it is placed.
    snippet: Option<Vec<u8>>,
    /// The last bytes seen, held back in case they start `</body`.
    held: Vec<u8>,
}

/// Where `</body` starts in `b`, any case.
fn find_close(b: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'<', b)
        .find(|&i| b.len() - i >= CLOSE.len() && b[i..i + CLOSE.len()].eq_ignore_ascii_case(CLOSE))
}

impl Rewriter {
    /// For a page whose body is gzip-encoded (`gzip`) or not, to carry
    /// `snippet`.
    pub fn new(snippet: String, gzip: bool) -> Rewriter {
        Rewriter::page(Some(snippet), None, gzip)
    }

    /// For a page to carry `snippet` before its body's end (when some),
    /// and the canary reference in its slots (`slot`, when some).
    pub fn page(
        snippet: Option<String>,
        slot: Option<botscope_canary::slot::Slot>,
        gzip: bool,
    ) -> Rewriter {
        Rewriter {
            slot,
            gzip: gzip.then(|| {
                (
                    GzDecoder::new(Vec::new()),
                    GzEncoder::new(Vec::new(), Compression::fast()),
                )
            }),
            snippet: snippet.map(String::into_bytes),
            held: Vec::new(),
        }
    }

    /// The canary references placed and the markers refused so far.
    pub fn slots(&self) -> (u32, u32) {
        self.slot.as_ref().map_or((0, 0), |s| (s.placed, s.refused))
    }

    /// The bytes to send for the next chunk of the page as received.
    pub fn push(&mut self, chunk: &[u8]) -> std::io::Result<Vec<u8>> {
        let plain = match &mut self.gzip {
            Some((d, _)) => {
                d.write_all(chunk)?;
                std::mem::take(d.get_mut())
            }
            None => chunk.to_vec(),
        };
        let plain = match &mut self.slot {
            Some(s) => s.push(&plain),
            None => plain,
        };
        let out = self.place(plain, false);
        self.encode(&out, false)
    }

    /// The bytes that end the page.
    pub fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        let plain = match &mut self.gzip {
            Some((d, _)) => {
                d.try_finish()?;
                std::mem::take(d.get_mut())
            }
            None => Vec::new(),
        };
        let plain = match &mut self.slot {
            Some(s) => {
                let mut p = s.push(&plain);
                p.extend(s.finish());
                p
            }
            None => plain,
        };
        let out = self.place(plain, true);
        self.encode(&out, true)
    }

    fn place(&mut self, plain: Vec<u8>, last: bool) -> Vec<u8> {
        let Some(snippet) = &self.snippet else {
            return plain;
        };
        let mut b = std::mem::take(&mut self.held);
        b.extend_from_slice(&plain);
        if let Some(i) = find_close(&b) {
            let mut out = Vec::with_capacity(b.len() + snippet.len());
            out.extend_from_slice(&b[..i]);
            out.extend_from_slice(snippet);
            out.extend_from_slice(&b[i..]);
            self.snippet = None;
            return out;
        }
        if last {
            b.extend_from_slice(snippet);
            self.snippet = None;
            return b;
        }
        // Hold back what could start `</body` in the next chunk.
        let keep = b.len().min(CLOSE.len() - 1);
        self.held = b.split_off(b.len() - keep);
        b
    }

    fn encode(&mut self, plain: &[u8], last: bool) -> std::io::Result<Vec<u8>> {
        let Some((_, e)) = &mut self.gzip else {
            return Ok(plain.to_vec());
        };
        e.write_all(plain)?;
        if last {
            e.try_finish()?;
        } else if !plain.is_empty() {
            // Each chunk goes out as it comes (a page streams).
            e.flush()?;
        }
        Ok(std::mem::take(e.get_mut()))
    }
}

/// A page the standalone gate may put trap links or a canary reference
/// in: its snippet, its mark and reference, and whether the client takes
/// gzip.
pub(crate) struct Plan {
    snippet: Option<String>,
    kinds: u8,
    client_gzip: bool,
    canary: Option<(
        std::sync::Arc<crate::canary::Canaries>,
        botscope_canary::Mark,
        String,
    )>,
}

/// Whether a header's list names `coding` (with a q-value above 0).
fn accepts(h: &axum::http::HeaderMap, coding: &str) -> bool {
    h.get_all(axum::http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim();
            let zero = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            name.eq_ignore_ascii_case(coding) && !zero
        })
}

/// The plan for a request the gate passes on: a page (a GET a person
/// navigates to) while the policy switches on `script` or `anchor` links,
/// or pages are marked (`--canary-key`). The application is then asked
/// for gzip or nothing (what the gate can rewrite), as the client
/// accepts.
pub(crate) fn plan(
    g: &crate::Gate,
    a: &crate::answer::Answer,
    method: &str,
    target: &str,
    upstream_headers: &mut axum::http::HeaderMap,
    user_agent: &str,
) -> Option<Plan> {
    use botscope_policy::TrapKind;
    let snap = g.current.load();
    let traps = snap
        .policy
        .as_ref()
        .and_then(|p| p.traps.as_ref())
        .filter(|t| t.has(TrapKind::Script) || t.has(TrapKind::Anchor));
    if (traps.is_none() && g.canary.is_none()) || method != "GET" {
        return None;
    }
    let h = &*upstream_headers;
    let text = |n: &str| h.get(n).and_then(|v| v.to_str().ok());
    if !botscope_policy::is_navigation(
        text("sec-fetch-mode"),
        text("sec-fetch-dest"),
        text("accept"),
        target,
    ) {
        return None;
    }
    let client_gzip = accepts(h, "gzip");
    upstream_headers.insert(
        axum::http::header::ACCEPT_ENCODING,
        axum::http::HeaderValue::from_static(if client_gzip { "gzip" } else { "identity" }),
    );
    let now = u64::try_from(crate::unix_now()).unwrap_or(0);
    let snippet = match traps {
        Some(t) => {
            let mut nonce = [0u8; 4];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce).ok()?;
            let signer = g.traps.signer(&g.challenges.key());
            Some(signer.snippet(t, a.client, user_agent, now, u32::from_be_bytes(nonce)))
        }
        None => None,
    };
    let canary = g.canary.as_ref().map(|c| {
        let (mark, text) = c.mark(crate::canary::client_of(a, user_agent), now);
        (c.clone(), mark, text)
    });
    Some(Plan {
        snippet,
        kinds: traps.map_or(0, |t| t.kinds),
        client_gzip,
        canary,
    })
}

/// The response made private to the client (a canary's page is marked
/// for it): `private` first, `public` and `s-maxage` dropped, the rest
/// kept.
fn private(h: &mut axum::http::HeaderMap) {
    use axum::http::header::CACHE_CONTROL;
    let mut d: Vec<String> = vec!["private".to_owned()];
    for v in h
        .get_all(CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        for x in v.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let name = x
                .split('=')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if !matches!(name.as_str(), "public" | "s-maxage" | "private") {
                d.push(x.to_owned());
            }
        }
    }
    if let Ok(v) = axum::http::HeaderValue::from_str(&d.join(", ")) {
        h.insert(CACHE_CONTROL, v);
    }
}

/// The application's answer with the plan's links put in, when it is an
/// HTML page the gate can rewrite (200, `text/html`, identity or gzip,
/// no `no-transform`); else as it is.
pub(crate) fn wrap(
    parts: &mut axum::http::response::Parts,
    body: hyper::body::Incoming,
    plan: Option<Plan>,
    counts: &crate::trap::Counts,
) -> axum::body::Body {
    use axum::http::header;
    use http_body_util::BodyExt as _;
    let Some(plan) = plan else {
        return axum::body::Body::new(body);
    };
    let h = &parts.headers;
    let html = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/html"))
        });
    let no_transform = h
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("no-transform"));
    let coding = h
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    let gzip = match coding.as_deref() {
        None | Some("identity") => false,
        Some("gzip" | "x-gzip") if plan.client_gzip => true,
        _ => {
            if html {
                counts
                    .not_injected
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return axum::body::Body::new(body);
        }
    };
    if parts.status != axum::http::StatusCode::OK || !html || no_transform {
        return axum::body::Body::new(body);
    }
    if plan.snippet.is_some() {
        for (_, k) in botscope_policy::TrapKind::ALL {
            if plan.kinds & k.bit() != 0 && k != botscope_policy::TrapKind::Robots {
                counts.served[k as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
    if plan.canary.is_some() {
        private(&mut parts.headers);
    }
    // The page changes with each client: its length is the stream's, and
    // an entity tag can only say it is alike.
    parts.headers.remove(header::CONTENT_LENGTH);
    if let Some(tag) = parts
        .headers
        .get(header::ETAG)
        .and_then(|v| v.to_str().ok())
        .filter(|t| !t.starts_with("W/"))
        .and_then(|t| axum::http::HeaderValue::from_str(&format!("W/{t}")).ok())
    {
        parts.headers.insert(header::ETAG, tag);
    }
    let (canary, slot) = match plan.canary {
        Some((c, mark, text)) => (
            Some((c, mark)),
            Some(botscope_canary::slot::Slot::new(text)),
        ),
        None => (None, None),
    };
    let rw = Rewriter::page(plan.snippet, slot, gzip);
    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    let frames = futures_util::stream::unfold(Some((body, rw, canary)), |state| async move {
        let (mut body, mut rw, canary) = state?;
        loop {
            match body.frame().await {
                Some(Ok(frame)) => {
                    // Trailers are dropped: the page's end is rewritten.
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    return Some(match rw.push(&data) {
                        Ok(out) => (
                            Ok::<_, BoxError>(hyper::body::Frame::data(axum::body::Bytes::from(
                                out,
                            ))),
                            Some((body, rw, canary)),
                        ),
                        Err(e) => (Err(e.into()), None),
                    });
                }
                Some(Err(e)) => return Some((Err(e.into()), None)),
                None => {
                    let end = rw.finish();
                    // The page is whole: its mark was served if a slot
                    // took it.
                    if let Some((c, mark)) = &canary {
                        let (placed, refused) = rw.slots();
                        c.count(placed, refused);
                        if placed > 0 {
                            c.served(mark, u64::try_from(crate::unix_now()).unwrap_or(0));
                        }
                    }
                    return Some(match end {
                        Ok(out) => (
                            Ok(hyper::body::Frame::data(axum::body::Bytes::from(out))),
                            None,
                        ),
                        Err(e) => (Err(e.into()), None),
                    });
                }
            }
        }
    });
    axum::body::Body::new(http_body_util::StreamBody::new(frames))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn run(page: &[u8], gzip: bool, chunk: usize) -> Vec<u8> {
        let body = if gzip {
            let mut e = GzEncoder::new(Vec::new(), Compression::default());
            e.write_all(page).expect("test");
            e.finish().expect("test")
        } else {
            page.to_vec()
        };
        let mut r = Rewriter::new("<i>T</i>".into(), gzip);
        let mut out = Vec::new();
        for c in body.chunks(chunk) {
            out.extend(r.push(c).expect("test"));
        }
        out.extend(r.finish().expect("test"));
        if gzip {
            let mut d = flate2::read::GzDecoder::new(&out[..]);
            let mut plain = Vec::new();
            d.read_to_end(&mut plain).expect("test");
            plain
        } else {
            out
        }
    }

    #[test]
    fn the_snippet_goes_before_the_first_body_end_whatever_the_chunks() {
        for gzip in [false, true] {
            for chunk in [1, 2, 5, 6, 7, 64, 4096] {
                assert_eq!(
                    run(b"<html><body><p>x</p></BODY></html>", gzip, chunk),
                    b"<html><body><p>x</p><i>T</i></BODY></html>"
                );
                assert_eq!(
                    run(b"<p>no end", gzip, chunk),
                    b"<p>no end<i>T</i>",
                    "a page without </body> ends with it"
                );
                assert_eq!(
                    run(b"a</body>b</body>", gzip, chunk),
                    b"a<i>T</i></body>b</body>",
                    "once"
                );
                assert_eq!(run(b"", gzip, chunk), b"<i>T</i>");
                assert_eq!(run(b"</bod", gzip, chunk), b"</bod<i>T</i>");
            }
        }
    }

    #[test]
    fn a_large_page_is_rewritten_in_one_pass() {
        let mut page = vec![b'<'; 1 << 20];
        page.extend_from_slice(b"</body>");
        let out = run(&page, true, 16 * 1024);
        assert_eq!(out.len(), page.len() + 8);
        assert!(out.ends_with(b"<i>T</i></body>"));
    }

    #[test]
    fn a_broken_gzip_body_is_an_error_not_a_panic() {
        let mut r = Rewriter::new("<i>T</i>".into(), true);
        let e = r.push(b"this is not gzip at all").and_then(|_| r.finish());
        assert!(e.is_err());
    }
}
