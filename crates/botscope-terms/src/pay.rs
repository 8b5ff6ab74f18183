//! Pay per crawl over HTTP 402, as Cloudflare documents it ("Crawl
//! pages" and "Error codes", AI Crawl Control, April 2026): a priced page
//! answers 402 with `crawler-price`; a crawler pays by sending one of
//! `crawler-exact-price` (the price it was quoted) or `crawler-max-price`
//! (the most it pays), covered by its Web Bot Auth signature; a payment
//! accepted is answered with the page and `crawler-charged`; every other
//! case with its `crawler-error` code and status. Pure: the request's
//! fields and what the caller knows of its signature in, the outcome out.
//! Only a verified signature that covers the price header can pay.

use serde::Serialize;

use crate::price::Price;

/// The response field naming the price of a page.
pub const CRAWLER_PRICE: &str = "crawler-price";
/// The request field: the exact price the crawler pays.
pub const CRAWLER_EXACT_PRICE: &str = "crawler-exact-price";
/// The request field: the most the crawler pays.
pub const CRAWLER_MAX_PRICE: &str = "crawler-max-price";
/// The response field: what the crawler was charged.
pub const CRAWLER_CHARGED: &str = "crawler-charged";
/// The response field naming an error.
pub const CRAWLER_ERROR: &str = "crawler-error";

/// The documented error codes, each with its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PayError {
    /// 403: the site blocks this crawler.
    CrawlerForbidden,
    /// 400: no Web Bot Auth signature that verifies.
    StrongAuthRequired,
    /// 400: a signature that is incomplete or does not verify, or does
    /// not cover the price header.
    InvalidSignature,
    /// 400: a price header that does not read as `USD 0.01`.
    InvalidCrawlerPriceValue,
    /// 402: a paid request without a price header.
    MissingCrawlerPrice,
    /// 403: the payment could not be taken.
    PaymentFailed,
    /// 402: `crawler-exact-price` is not the price.
    InvalidCrawlerExactPrice,
    /// 402: `crawler-max-price` is under the price.
    InvalidCrawlerMaxPrice,
    /// 400: both price headers.
    ConflictingPriceHeaders,
    /// 502: the price configured is not a price.
    InvalidContentPrice,
    /// 500: something failed on the site's side; worth trying again.
    InternalError,
}

impl PayError {
    /// Every code, as written in `crawler-error`.
    pub const ALL: [PayError; 11] = [
        PayError::CrawlerForbidden,
        PayError::StrongAuthRequired,
        PayError::InvalidSignature,
        PayError::InvalidCrawlerPriceValue,
        PayError::MissingCrawlerPrice,
        PayError::PaymentFailed,
        PayError::InvalidCrawlerExactPrice,
        PayError::InvalidCrawlerMaxPrice,
        PayError::ConflictingPriceHeaders,
        PayError::InvalidContentPrice,
        PayError::InternalError,
    ];

    /// The code, as written in `crawler-error`.
    pub fn as_str(self) -> &'static str {
        match self {
            PayError::CrawlerForbidden => "CrawlerForbidden",
            PayError::StrongAuthRequired => "StrongAuthRequired",
            PayError::InvalidSignature => "InvalidSignature",
            PayError::InvalidCrawlerPriceValue => "InvalidCrawlerPriceValue",
            PayError::MissingCrawlerPrice => "MissingCrawlerPrice",
            PayError::PaymentFailed => "PaymentFailed",
            PayError::InvalidCrawlerExactPrice => "InvalidCrawlerExactPrice",
            PayError::InvalidCrawlerMaxPrice => "InvalidCrawlerMaxPrice",
            PayError::ConflictingPriceHeaders => "ConflictingPriceHeaders",
            PayError::InvalidContentPrice => "InvalidContentPrice",
            PayError::InternalError => "InternalError",
        }
    }

    /// A code read back (a crawler reading a response).
    pub fn parse(s: &str) -> Option<PayError> {
        PayError::ALL.into_iter().find(|e| e.as_str() == s.trim())
    }

    /// Its HTTP status.
    pub fn status(self) -> u16 {
        match self {
            PayError::CrawlerForbidden | PayError::PaymentFailed => 403,
            PayError::StrongAuthRequired
            | PayError::InvalidSignature
            | PayError::InvalidCrawlerPriceValue
            | PayError::ConflictingPriceHeaders => 400,
            PayError::MissingCrawlerPrice
            | PayError::InvalidCrawlerExactPrice
            | PayError::InvalidCrawlerMaxPrice => 402,
            PayError::InvalidContentPrice => 502,
            PayError::InternalError => 500,
        }
    }

    /// True for the one error a crawler may retry unchanged.
    pub fn retryable(self) -> bool {
        self == PayError::InternalError
    }
}

/// What the caller knows of the request's Web Bot Auth signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signed<'a> {
    /// No signature.
    No,
    /// A signature that does not verify (malformed, wrong key, expired,
    /// replayed) or only one of `Signature` and `Signature-Input`.
    Invalid,
    /// A signature whose keys are not known (yet): it cannot pay.
    Unverified,
    /// A signature that verifies, by an agent the registry does not name:
    /// no crawler anyone could bill, so it cannot pay.
    Unregistered,
    /// A signature that verifies, and the components it covers.
    Verified {
        /// The covered components' names, as written.
        covered: &'a [String],
    },
}

/// How a priced request ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// Asked without paying: 402 with `crawler-price`.
    Quote {
        /// The price.
        price: Price,
    },
    /// Paid: the page, with `crawler-charged`.
    Charged {
        /// What is charged.
        price: Price,
        /// The header that paid (`crawler-exact-price`, `crawler-max-price`).
        by: &'static str,
    },
    /// Refused with a documented error.
    Error {
        /// The code.
        code: PayError,
        /// The price, when the answer names it (`crawler-price` on a 402).
        #[serde(skip_serializing_if = "Option::is_none")]
        price: Option<Price>,
        /// In words, for logs.
        why: String,
    },
}

impl Outcome {
    /// The HTTP status of the answer.
    pub fn status(&self) -> u16 {
        match self {
            Outcome::Quote { .. } => 402,
            Outcome::Charged { .. } => 200,
            Outcome::Error { code, .. } => code.status(),
        }
    }

    /// The response fields to send (`crawler-price`, `crawler-charged`,
    /// `crawler-error`).
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Outcome::Quote { price } => vec![(CRAWLER_PRICE, price.to_string())],
            Outcome::Charged { price, .. } => vec![(CRAWLER_CHARGED, price.to_string())],
            Outcome::Error { code, price, .. } => {
                let mut v = vec![(CRAWLER_ERROR, code.as_str().to_owned())];
                if let Some(p) = price {
                    v.push((CRAWLER_PRICE, p.to_string()));
                }
                v
            }
        }
    }

    /// The price charged, when one is.
    pub fn charged(&self) -> Option<Price> {
        match self {
            Outcome::Charged { price, .. } => Some(*price),
            _ => None,
        }
    }
}

fn error(code: PayError, price: Option<Price>, why: impl Into<String>) -> Outcome {
    Outcome::Error {
        code,
        price,
        why: why.into(),
    }
}

/// Decides a request for a page priced `price`: `exact` and `max` are the
/// request's `crawler-exact-price` and `crawler-max-price` field lines
/// (none, one, or several: several of one field are refused as
/// ambiguous), `signed` what its signature is.
pub fn decide(price: Price, exact: &[&str], max: &[&str], signed: &Signed<'_>) -> Outcome {
    if exact.is_empty() && max.is_empty() {
        return Outcome::Quote { price };
    }
    if !exact.is_empty() && !max.is_empty() {
        return error(
            PayError::ConflictingPriceHeaders,
            None,
            "both crawler-exact-price and crawler-max-price",
        );
    }
    let (field, values) = if exact.is_empty() {
        (CRAWLER_MAX_PRICE, max)
    } else {
        (CRAWLER_EXACT_PRICE, exact)
    };
    if values.len() > 1 {
        return error(
            PayError::InvalidCrawlerPriceValue,
            None,
            format!("{} {field} fields: one price is paid", values.len()),
        );
    }
    let offered = match Price::parse_header(values[0]) {
        Ok(p) => p,
        Err(e) => {
            return error(
                PayError::InvalidCrawlerPriceValue,
                None,
                format!("{field}: {e}"),
            );
        }
    };
    // Only a verified signature that covers the price pays.
    match signed {
        Signed::No => {
            return error(
                PayError::StrongAuthRequired,
                None,
                format!("{field} without a Web Bot Auth signature"),
            );
        }
        Signed::Unverified => {
            return error(
                PayError::StrongAuthRequired,
                None,
                format!("{field} with a signature whose keys are not known"),
            );
        }
        Signed::Unregistered => {
            return error(
                PayError::StrongAuthRequired,
                None,
                format!("{field} signed by an agent the registry does not name"),
            );
        }
        Signed::Invalid => {
            return error(
                PayError::InvalidSignature,
                None,
                format!("{field} with a signature that does not verify"),
            );
        }
        Signed::Verified { covered } => {
            if !covered.iter().any(|c| c.eq_ignore_ascii_case(field)) {
                return error(
                    PayError::InvalidSignature,
                    None,
                    format!("the signature does not cover {field}"),
                );
            }
        }
    }
    if offered.currency != price.currency {
        let code = if field == CRAWLER_EXACT_PRICE {
            PayError::InvalidCrawlerExactPrice
        } else {
            PayError::InvalidCrawlerMaxPrice
        };
        return error(
            code,
            Some(price),
            format!(
                "{field} is in {}, the price in {}",
                offered.currency, price.currency
            ),
        );
    }
    if field == CRAWLER_EXACT_PRICE && offered.millionths != price.millionths {
        return error(
            PayError::InvalidCrawlerExactPrice,
            Some(price),
            format!("crawler-exact-price {offered} is not the price {price}"),
        );
    }
    if field == CRAWLER_MAX_PRICE && offered.millionths < price.millionths {
        return error(
            PayError::InvalidCrawlerMaxPrice,
            Some(price),
            format!("crawler-max-price {offered} is under the price {price}"),
        );
    }
    Outcome::Charged { price, by: field }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Price {
        Price::parse_header(s).expect("a price")
    }

    /// Every documented case, with its code and status, from Cloudflare's
    /// "Crawl pages" and "Error codes".
    #[test]
    fn the_documented_exchanges() {
        let price = p("USD 0.01");
        let covered = vec![
            "@authority".to_owned(),
            "signature-agent".to_owned(),
            "crawler-exact-price".to_owned(),
            "crawler-max-price".to_owned(),
        ];
        let ok = Signed::Verified { covered: &covered };
        // First request: the quote.
        let o = decide(price, &[], &[], &Signed::No);
        assert_eq!(
            (o.status(), o.headers()),
            (402, vec![("crawler-price", "USD 0.01".into())])
        );
        // Paid, exactly and at most.
        let o = decide(price, &["USD 0.01"], &[], &ok);
        assert_eq!(
            (o.status(), o.headers()),
            (200, vec![("crawler-charged", "USD 0.01".into())])
        );
        assert_eq!(o.charged(), Some(price));
        let o = decide(price, &[], &["USD 1.00"], &ok);
        assert_eq!(
            o.charged(),
            Some(price),
            "charged the price, not the maximum"
        );
        let code = |o: &Outcome| match o {
            Outcome::Error { code, .. } => (code.as_str(), o.status()),
            _ => ("", o.status()),
        };
        type Case<'a> = (Vec<&'a str>, Vec<&'a str>, Signed<'a>, (&'a str, u16));
        let cases: Vec<Case<'_>> = vec![
            (
                vec!["USD 0.01"],
                vec!["USD 0.01"],
                ok.clone(),
                ("ConflictingPriceHeaders", 400),
            ),
            (
                vec!["USD 0.1"],
                vec![],
                ok.clone(),
                ("InvalidCrawlerExactPrice", 402),
            ),
            (
                vec!["EUR 0.01"],
                vec![],
                ok.clone(),
                ("InvalidCrawlerExactPrice", 402),
            ),
            (
                vec![],
                vec!["USD 0.009"],
                ok.clone(),
                ("InvalidCrawlerMaxPrice", 402),
            ),
            (
                vec![],
                vec!["EUR 5"],
                ok.clone(),
                ("InvalidCrawlerMaxPrice", 402),
            ),
            (
                vec!["0.01"],
                vec![],
                ok.clone(),
                ("InvalidCrawlerPriceValue", 400),
            ),
            (
                vec![],
                vec!["USD -1"],
                ok.clone(),
                ("InvalidCrawlerPriceValue", 400),
            ),
            (
                vec![],
                vec!["USD 1", "USD 2"],
                ok.clone(),
                ("InvalidCrawlerPriceValue", 400),
            ),
            (
                vec!["USD 0.01"],
                vec![],
                Signed::No,
                ("StrongAuthRequired", 400),
            ),
            (
                vec!["USD 0.01"],
                vec![],
                Signed::Unverified,
                ("StrongAuthRequired", 400),
            ),
            (
                vec!["USD 0.01"],
                vec![],
                Signed::Invalid,
                ("InvalidSignature", 400),
            ),
        ];
        for (exact, max, signed, want) in cases {
            let o = decide(price, &exact, &max, &signed);
            assert_eq!(code(&o), want, "{exact:?} {max:?} {signed:?}");
            assert_eq!(o.charged(), None);
        }
        // A verified signature that does not cover the price header pays
        // nothing.
        let bare = vec!["@authority".to_owned(), "signature-agent".to_owned()];
        let o = decide(price, &[], &["USD 1"], &Signed::Verified { covered: &bare });
        assert_eq!(code(&o), ("InvalidSignature", 400));
        // The 402 errors name the price.
        let o = decide(price, &[], &["USD 0.001"], &ok);
        assert!(o.headers().contains(&("crawler-price", "USD 0.01".into())));
        // Every code reads back.
        for e in PayError::ALL {
            assert_eq!(PayError::parse(e.as_str()), Some(e));
        }
        assert!(PayError::InternalError.retryable() && !PayError::PaymentFailed.retryable());
    }
}
