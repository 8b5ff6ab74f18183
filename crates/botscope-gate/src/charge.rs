//! Charging (a policy's `charge` rules): the pay-per-crawl exchange of
//! botscope-terms applied to a request as the gate sees it (its price
//! headers, its signature as checked), the answer's `crawler-*` fields,
//! and the counts `/metrics` shows. Only a signature that verifies, by an
//! agent the registry names, and covers the price header pays.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use botscope_terms::pay::{self, Outcome, PayError, Signed};
use botscope_terms::{Currency, Price};

use crate::signature::Checked;

/// The status a payment answer carries behind nginx, whose
/// `auth_request` passes on 401 and 403 only.
pub const X_BOT_PAY_STATUS: HeaderName = HeaderName::from_static("x-bot-pay-status");

/// Field lines of `name`, as text (a line that is not text is refused as
/// a price by being kept as the empty string).
fn lines<'a>(h: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    h.get_all(name)
        .iter()
        .take(8)
        .map(|v| v.to_str().unwrap_or(""))
        .collect()
}

/// The payment exchange for a request priced `price`.
pub(crate) fn outcome(price: Price, h: &HeaderMap, checked: Option<&Checked>) -> Outcome {
    let signed = match checked {
        None => Signed::No,
        Some(c) => match c.verdict.outcome {
            botscope_httpsig::Outcome::Verified if c.bot.is_some() => Signed::Verified {
                covered: &c.verdict.covered,
            },
            botscope_httpsig::Outcome::Verified => Signed::Unregistered,
            botscope_httpsig::Outcome::Unverified => Signed::Unverified,
            botscope_httpsig::Outcome::Invalid => Signed::Invalid,
        },
    };
    pay::decide(
        price,
        &lines(h, pay::CRAWLER_EXACT_PRICE),
        &lines(h, pay::CRAWLER_MAX_PRICE),
        &signed,
    )
}

/// The answer's payment fields: `crawler-price`, `crawler-charged` or
/// `crawler-error`, and the status they go with (`X-Bot-Pay-Status`).
pub(crate) fn headers(h: &mut HeaderMap, pay: Option<&Outcome>) {
    let Some(o) = pay else { return };
    for (name, value) in o.headers() {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(HeaderName::from_static(name), v);
        }
    }
    h.insert(X_BOT_PAY_STATUS, HeaderValue::from(o.status()));
}

/// Payment answers counted, and what was charged per currency.
#[derive(Debug, Default)]
pub struct Charges {
    quotes: AtomicU64,
    charged: AtomicU64,
    refunded: AtomicU64,
    errors: [AtomicU64; PayError::ALL.len()],
    /// Millionths charged, per currency (the policy's currencies only).
    amounts: Mutex<BTreeMap<Currency, u64>>,
}

impl Charges {
    /// Counts one answer.
    pub(crate) fn count(&self, o: &Outcome) {
        match o {
            Outcome::Quote { .. } => {
                self.quotes.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Charged { price, .. } => {
                self.charged.fetch_add(1, Ordering::Relaxed);
                let mut m = self.amounts.lock().unwrap_or_else(|p| p.into_inner());
                let n = m.entry(price.currency).or_default();
                *n = n.saturating_add(price.millionths);
            }
            Outcome::Error { code, .. } => {
                if let Some(i) = PayError::ALL.iter().position(|e| e == code) {
                    self.errors[i].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Takes back a charge the application's error answered (standalone:
    /// no crawler pays for an error).
    pub(crate) fn uncharged(&self, price: Price) {
        self.charged.fetch_sub(1, Ordering::Relaxed);
        self.refunded.fetch_add(1, Ordering::Relaxed);
        let mut m = self.amounts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&price.currency) {
            *n = n.saturating_sub(price.millionths);
        }
    }

    /// `(outcome, count)`: `quote`, `charged`, `uncharged`, then each
    /// error code.
    pub fn outcomes(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("quote", self.quotes.load(Ordering::Relaxed)),
            ("charged", self.charged.load(Ordering::Relaxed)),
            ("uncharged", self.refunded.load(Ordering::Relaxed)),
        ];
        for (i, e) in PayError::ALL.iter().enumerate() {
            v.push((e.as_str(), self.errors[i].load(Ordering::Relaxed)));
        }
        v
    }

    /// `(currency, millionths)` charged.
    pub fn amounts(&self) -> Vec<(Currency, u64)> {
        let m = self.amounts.lock().unwrap_or_else(|p| p.into_inner());
        m.iter().map(|(c, n)| (*c, *n)).collect()
    }
}
