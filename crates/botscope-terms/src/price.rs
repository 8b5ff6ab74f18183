//! Prices, exact: an ISO 4217 currency and an amount counted in
//! millionths of the currency's major unit (never a float), so `USD 0.001`
//! a page, `EUR 10.00` a licence and a crawler's `crawler-max-price`
//! compare exactly. Read from RSL's `<amount currency="USD">0.001</amount>`
//! and from the pay-per-crawl headers (`crawler-price: USD 0.01`, Cloudflare's
//! documented form: a currency code, one space, a decimal amount).

use std::fmt;

use serde::Serialize;

/// The active ISO 4217 codes a price may name (the standard's list of
/// 2025, less `XTS` and `XXX`, which name no currency).
const CURRENCIES: &str = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG";

/// Digits after the point a price may carry (millionths).
pub const DECIMALS: usize = 6;
/// Digits before the point a price may carry.
pub const INTEGER_DIGITS: usize = 12;

/// An ISO 4217 currency code (three upper-case letters of the standard's
/// active list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

impl Currency {
    /// The code, if `s` is one of the active ISO 4217 codes (upper case,
    /// as the standard writes them).
    pub fn parse(s: &str) -> Option<Currency> {
        let b = s.as_bytes();
        if b.len() != 3 || !b.iter().all(u8::is_ascii_uppercase) {
            return None;
        }
        CURRENCIES
            .split(' ')
            .any(|c| c == s)
            .then(|| Currency([b[0], b[1], b[2]]))
    }

    /// The code as written (`USD`).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A price: a currency and an exact amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Price {
    /// The currency.
    pub currency: Currency,
    /// The amount in millionths of the currency's major unit (`USD 0.01`
    /// is 10,000).
    pub millionths: u64,
}

/// Why a price could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceError {
    /// Not `CUR amount`: no space, several, or another separator.
    Form,
    /// The currency is not an active ISO 4217 code.
    Currency(String),
    /// The amount is not a plain decimal number (`0.01`, `10`): a sign,
    /// an exponent, a comma, a second point, no digit.
    Amount(String),
    /// More than [`DECIMALS`] digits after the point, or more than
    /// [`INTEGER_DIGITS`] before it.
    Precision(String),
}

impl fmt::Display for PriceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriceError::Form => f.write_str(
                "not a price: write a currency code, one space and an amount (USD 0.01)",
            ),
            PriceError::Currency(c) => write!(f, "`{c}` is not an ISO 4217 currency code"),
            PriceError::Amount(a) => write!(f, "`{a}` is not a decimal amount"),
            PriceError::Precision(a) => write!(
                f,
                "`{a}` has more than {INTEGER_DIGITS} digits before the point or {DECIMALS} after it"
            ),
        }
    }
}

impl std::error::Error for PriceError {}

/// Shortens what is quoted back from a stranger's value.
fn quoted(s: &str) -> String {
    let mut out: String = s.chars().take(40).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// Reads a decimal amount (`0.01`, `10`, `10.`) as millionths.
pub fn parse_amount(s: &str) -> Result<u64, PriceError> {
    let bad = || PriceError::Amount(quoted(s));
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    if int.len() > INTEGER_DIGITS || frac.len() > DECIMALS {
        return Err(PriceError::Precision(quoted(s)));
    }
    let mut n: u64 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        n = n * 10 + u64::from(b - b'0');
    }
    for _ in frac.len()..DECIMALS {
        n *= 10;
    }
    Ok(n)
}

impl Price {
    /// A price from a currency code and a decimal amount (RSL's
    /// `<amount currency="USD">0.001</amount>`; surrounding white space
    /// of the amount is dropped).
    pub fn new(currency: &str, amount: &str) -> Result<Price, PriceError> {
        let c = Currency::parse(currency.trim())
            .ok_or_else(|| PriceError::Currency(quoted(currency.trim())))?;
        Ok(Price {
            currency: c,
            millionths: parse_amount(amount.trim())?,
        })
    }

    /// A price header's value (`crawler-price`, `crawler-exact-price`,
    /// `crawler-max-price`, `crawler-charged`): `USD 0.01`, the currency
    /// code and the amount separated by one space; white space around the
    /// whole value is dropped, as HTTP drops it around a field value.
    pub fn parse_header(value: &str) -> Result<Price, PriceError> {
        let v = value.trim_matches([' ', '\t']);
        let (cur, amount) = v.split_once(' ').ok_or(PriceError::Form)?;
        if amount.contains([' ', '\t']) || cur.contains('\t') {
            return Err(PriceError::Form);
        }
        Price::new(cur, amount)
    }

    /// The amount as a decimal: at least two digits after the point, at
    /// most six, trailing zeros past the second dropped (`0.01`, `0.001`,
    /// `10.00`).
    pub fn amount(&self) -> String {
        let scale = 10u64.pow(DECIMALS as u32);
        let (int, mut frac) = (self.millionths / scale, self.millionths % scale);
        let mut digits = DECIMALS;
        while digits > 2 && frac % 10 == 0 {
            frac /= 10;
            digits -= 1;
        }
        format!("{int}.{frac:0digits$}")
    }
}

impl fmt::Display for Price {
    /// The header form: `USD 0.01`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.currency, self.amount())
    }
}

impl Serialize for Price {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Price", 3)?;
        st.serialize_field("currency", &self.currency)?;
        st.serialize_field("amount", &self.amount())?;
        st.serialize_field("millionths", &self.millionths)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_form_and_every_malformed_amount() {
        let p = Price::parse_header("USD 0.01").expect("as written");
        assert_eq!((p.currency.as_str(), p.millionths), ("USD", 10_000));
        assert_eq!(p.to_string(), "USD 0.01");
        assert_eq!(
            Price::parse_header(" EUR 10 ")
                .expect("as written")
                .to_string(),
            "EUR 10.00"
        );
        assert_eq!(
            Price::parse_header("USD 0.001")
                .expect("as written")
                .to_string(),
            "USD 0.001"
        );
        assert_eq!(
            Price::parse_header("JPY 5.")
                .expect("as written")
                .millionths,
            5_000_000
        );
        assert_eq!(
            Price::parse_header("USD .5")
                .expect("as written")
                .millionths,
            500_000
        );
        for bad in [
            "",
            "USD",
            "0.01",
            "USD0.01",
            "USD  0.01",
            "USD 0.01 x",
            "USD\t0.01",
            "usd 0.01",
            "US 0.01",
            "XXX 0.01",
            "XTS 1",
            "ABC 1",
            "USD -0.01",
            "USD +1",
            "USD 1e3",
            "USD 0,01",
            "USD 1.2.3",
            "USD .",
            "USD 0x10",
            "USD ١",
            "USD 0.0000001",
            "USD 1000000000000",
            "USD NaN",
            "USD inf",
            "€ 1",
        ] {
            assert!(Price::parse_header(bad).is_err(), "{bad:?} read as a price");
        }
        assert!(matches!(
            Price::parse_header("USD 0.0000001"),
            Err(PriceError::Precision(_))
        ));
        assert!(matches!(
            Price::parse_header("ABC 1"),
            Err(PriceError::Currency(_))
        ));
        // The largest amount there is, exactly.
        let max = Price::parse_header("USD 999999999999.999999").expect("as written");
        assert_eq!(max.millionths, 999_999_999_999_999_999);
    }

    #[test]
    fn comparisons_are_exact() {
        let a = Price::parse_header("USD 0.10").expect("as written");
        let b = Price::parse_header("USD 0.1").expect("as written");
        let c = Price::parse_header("USD 0.100001").expect("as written");
        assert_eq!(a, b);
        assert!(c.millionths > a.millionths);
    }
}
