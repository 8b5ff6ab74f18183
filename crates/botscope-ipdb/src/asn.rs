//! IP range → AS number and organisation: read from ip-location-db's CSV
//! (`start,end,asn,organisation`, inclusive ranges of IPv4 or IPv6
//! addresses), kept as a compact sorted table and looked up by binary
//! search.

use std::net::IpAddr;

use crate::Error;

/// Rows read from CSV at most (the real files hold about 520,000).
pub const MAX_ROWS: usize = 8_000_000;

const MAGIC: &[u8; 8] = b"BSASN01\n";

/// One range of the table: inclusive bounds as numbers (IPv4 addresses as
/// their 32 bits), the AS number and the index of its organisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row<T> {
    start: T,
    end: T,
    asn: u32,
    org: u32,
}

/// What a CSV read found besides the rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvReport {
    /// Rows kept.
    pub rows: usize,
    /// Lines that are not a range row (first few shown in `samples`).
    pub bad: usize,
    /// Ranges dropped because an earlier range covers their start.
    pub overlapping: usize,
    /// Up to 3 bad lines, numbered, for the message.
    pub samples: Vec<String>,
}

/// The AS of every range, IPv4 and IPv6.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AsnTable {
    v4: Vec<Row<u32>>,
    v6: Vec<Row<u128>>,
    orgs: Vec<String>,
}

/// Builds a table from CSV files, one at a time.
#[derive(Debug, Default)]
pub struct AsnBuilder {
    v4: Vec<Row<u32>>,
    v6: Vec<Row<u128>>,
    orgs: Vec<String>,
    org_ids: std::collections::HashMap<String, u32>,
    report: CsvReport,
}

impl AsnBuilder {
    /// Reads one CSV (`start,end,asn,organisation`; a header line is
    /// allowed). Lines that are not rows are counted, not fatal.
    pub fn add_csv(&mut self, data: &[u8]) -> Result<(), Error> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(data);
        for (n, rec) in r.byte_records().enumerate() {
            if self.v4.len() + self.v6.len() >= MAX_ROWS {
                return Err(Error::Invalid(format!("more than {MAX_ROWS} ranges")));
            }
            let ok = rec.ok().and_then(|rec| self.row(&rec));
            if ok.is_none() {
                self.report.bad += 1;
                if self.report.samples.len() < 3 {
                    let line = String::from_utf8_lossy(
                        data.split(|b| *b == b'\n').nth(n).unwrap_or_default(),
                    );
                    let line: String = line.chars().take(80).collect();
                    self.report.samples.push(format!(
                        "line {}: {}",
                        n + 1,
                        botscope_text::field(&line)
                    ));
                }
            }
        }
        Ok(())
    }

    fn row(&mut self, rec: &csv::ByteRecord) -> Option<()> {
        let field = |i: usize| std::str::from_utf8(rec.get(i)?).ok().map(str::trim);
        let start: IpAddr = field(0)?.parse().ok()?;
        let end: IpAddr = field(1)?.parse().ok()?;
        let asn: u32 = field(2)?.trim_start_matches("AS").parse().ok()?;
        let org = rec
            .get(3)
            .map(|o| String::from_utf8_lossy(o).trim().to_owned())
            .unwrap_or_default();
        let next = self.orgs.len() as u32;
        let id = *self.org_ids.entry(org.clone()).or_insert(next);
        if id == next {
            self.orgs.push(org);
        }
        match (start, end) {
            (IpAddr::V4(a), IpAddr::V4(b)) if a <= b => self.v4.push(Row {
                start: a.into(),
                end: b.into(),
                asn,
                org: id,
            }),
            (IpAddr::V6(a), IpAddr::V6(b)) if a <= b => self.v6.push(Row {
                start: a.into(),
                end: b.into(),
                asn,
                org: id,
            }),
            _ => return None,
        }
        Some(())
    }

    /// The table, sorted, with overlapping ranges dropped (the first one
    /// of a start wins), and what was read.
    pub fn finish(mut self) -> (AsnTable, CsvReport) {
        self.report.overlapping += settle(&mut self.v4);
        self.report.overlapping += settle(&mut self.v6);
        self.report.rows = self.v4.len() + self.v6.len();
        (
            AsnTable {
                v4: self.v4,
                v6: self.v6,
                orgs: self.orgs,
            },
            self.report,
        )
    }
}

/// Sorts by start and drops ranges that begin inside the one before;
/// returns how many were dropped.
fn settle<T: Ord + Copy>(rows: &mut Vec<Row<T>>) -> usize {
    rows.sort_by_key(|r| r.start);
    let before = rows.len();
    let mut last: Option<T> = None;
    rows.retain(|r| {
        if last.is_some_and(|e| r.start <= e) {
            return false;
        }
        last = Some(r.end);
        true
    });
    before - rows.len()
}

fn find<T: Ord + Copy>(rows: &[Row<T>], x: T) -> Option<&Row<T>> {
    let i = rows.partition_point(|r| r.start <= x);
    rows[..i].last().filter(|r| x <= r.end)
}

impl AsnTable {
    /// Ranges held.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// True when there are no ranges.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The AS number and organisation of `ip` (IPv4-mapped IPv6 looked up
    /// as IPv4).
    pub fn lookup(&self, ip: IpAddr) -> Option<(u32, &str)> {
        let row = match botscope_botid::normalize(ip) {
            IpAddr::V4(a) => find(&self.v4, u32::from(a)).map(|r| (r.asn, r.org)),
            IpAddr::V6(a) => find(&self.v6, u128::from(a)).map(|r| (r.asn, r.org)),
        }?;
        Some((
            row.0,
            self.orgs.get(row.1 as usize).map_or("", String::as_str),
        ))
    }

    /// The table as the data directory keeps it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.v4.len() * 16 + self.v6.len() * 40);
        out.extend_from_slice(MAGIC);
        for n in [self.v4.len(), self.v6.len(), self.orgs.len()] {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        for r in &self.v4 {
            for x in [r.start, r.end, r.asn, r.org] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        for r in &self.v6 {
            out.extend_from_slice(&r.start.to_le_bytes());
            out.extend_from_slice(&r.end.to_le_bytes());
            out.extend_from_slice(&r.asn.to_le_bytes());
            out.extend_from_slice(&r.org.to_le_bytes());
        }
        for o in &self.orgs {
            out.extend_from_slice(&(o.len() as u32).to_le_bytes());
            out.extend_from_slice(o.as_bytes());
        }
        out
    }

    /// Reads [`AsnTable::to_bytes`]' form back, checking every bound: a
    /// damaged file is an error, never a wrong answer or a panic.
    pub fn from_bytes(b: &[u8]) -> Result<AsnTable, Error> {
        let bad = |what: &str| Error::Invalid(format!("damaged ASN table: {what}"));
        let mut c = Cursor { b, at: 0 };
        if c.take(8) != Some(MAGIC.as_slice()) {
            return Err(bad("not a botscope ASN table"));
        }
        let (n4, n6, norgs) = (c.u32()?, c.u32()?, c.u32()?);
        c.u32()?;
        let (n4, n6, norgs) = (n4 as usize, n6 as usize, norgs as usize);
        if n4.saturating_mul(16) + n6.saturating_mul(40) + norgs.saturating_mul(4) > b.len() {
            return Err(bad("counts larger than the file"));
        }
        let mut t = AsnTable::default();
        for _ in 0..n4 {
            let (start, end, asn, org) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
            t.v4.push(Row {
                start,
                end,
                asn,
                org,
            });
        }
        for _ in 0..n6 {
            let (start, end, asn, org) = (c.u128()?, c.u128()?, c.u32()?, c.u32()?);
            t.v6.push(Row {
                start,
                end,
                asn,
                org,
            });
        }
        for _ in 0..norgs {
            let n = c.u32()? as usize;
            let s = c.take(n).ok_or_else(|| bad("cut short"))?;
            t.orgs.push(
                String::from_utf8(s.to_vec()).map_err(|_| bad("an organisation is not UTF-8"))?,
            );
        }
        let sorted = |w: bool| {
            if w {
                Ok(())
            } else {
                Err(bad("ranges out of order"))
            }
        };
        sorted(t.v4.windows(2).all(|w| w[0].end < w[1].start))?;
        sorted(t.v6.windows(2).all(|w| w[0].end < w[1].start))?;
        let orgs_ok =
            t.v4.iter()
                .map(|r| (r.start <= r.end, r.org))
                .chain(t.v6.iter().map(|r| (r.start <= r.end, r.org)));
        for (ordered, org) in orgs_ok {
            if !ordered || org as usize >= norgs {
                return Err(bad("a range is inverted or names no organisation"));
            }
        }
        Ok(t)
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        self.take(N)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| Error::Invalid("damaged ASN table: cut short".into()))
    }

    fn u32(&mut self) -> Result<u32, Error> {
        self.array().map(u32::from_le_bytes)
    }

    fn u128(&mut self) -> Result<u128, Error> {
        self.array().map(u128::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "1.0.0.0,1.0.0.255,13335,\"Cloudflare, Inc.\"\n\
        66.249.64.0,66.249.95.255,15169,Google LLC\n\
        66.249.70.0,66.249.70.255,64500,Inside Google's range\n\
        junk line\n\
        2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC\n";

    fn table() -> (AsnTable, CsvReport) {
        let mut b = AsnBuilder::default();
        b.add_csv(CSV.as_bytes()).expect("csv");
        b.finish()
    }

    #[test]
    fn ranges_are_found_at_their_bounds_and_not_outside() {
        let (t, r) = table();
        assert_eq!((r.rows, r.bad, r.overlapping), (3, 1, 1));
        assert_eq!(r.samples, ["line 4: junk line"]);
        let at = |s: &str| t.lookup(s.parse().expect("ip"));
        assert_eq!(at("1.0.0.0"), Some((13335, "Cloudflare, Inc.")));
        assert_eq!(at("1.0.0.255"), Some((13335, "Cloudflare, Inc.")));
        assert_eq!(at("1.0.1.0"), None);
        assert_eq!(at("0.255.255.255"), None);
        assert_eq!(
            at("66.249.70.1"),
            Some((15169, "Google LLC")),
            "overlap dropped"
        );
        assert_eq!(at("::ffff:66.249.66.1"), Some((15169, "Google LLC")));
        assert_eq!(at("2001:4860:4801::1"), Some((15169, "Google LLC")));
        assert_eq!(at("2001:4861::1"), None);
    }

    #[test]
    fn the_stored_form_reads_back_and_damage_is_an_error() {
        let (t, _) = table();
        let bytes = t.to_bytes();
        assert_eq!(AsnTable::from_bytes(&bytes).expect("read back"), t);
        for cut in [0, 7, 8, 20, 30, bytes.len() - 1] {
            assert!(AsnTable::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[8] = 0xff; // a count far beyond the file
        assert!(AsnTable::from_bytes(&flipped).is_err());
        let mut swapped = bytes.clone();
        swapped[24..28].copy_from_slice(&u32::MAX.to_le_bytes()); // start after end
        assert!(AsnTable::from_bytes(&swapped).is_err());
        assert!(AsnTable::from_bytes(b"random bytes, not a table").is_err());
    }
}
