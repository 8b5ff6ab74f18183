//! Who an address belongs to, offline: the AS number and organisation
//! that announce it (ip-location-db's ASN data: RouteViews, NRO and
//! DB-IP, CC BY 4.0) and the country and city it is placed in (DB-IP's
//! city database, CC BY 4.0, as MaxMind DB files). The databases live in
//! a data directory; [`DataDir::install`] checks a new one before it
//! replaces the old, and everything works without them (owners unknown).
//!
//! ```
//! use botscope_ipdb::AsnBuilder;
//!
//! let mut b = AsnBuilder::default();
//! b.add_csv(b"66.249.64.0,66.249.95.255,15169,Google LLC\n")?;
//! let (table, report) = b.finish();
//! assert_eq!(report.rows, 1);
//! assert_eq!(table.lookup("66.249.66.1".parse()?), Some((15169, "Google LLC")));
//! assert_eq!(table.lookup("192.0.2.1".parse()?), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod asn;
mod dir;
mod geo;

use std::net::IpAddr;

pub use asn::{AsnBuilder, AsnTable, CsvReport, MAX_ROWS};
pub use dir::{
    DataDir, DbStatus, Installed, Kind, ListStatus, NPM_REGISTRY, Status, UpdateConfig,
    fetch_source, lists_status, update,
};
pub use geo::{GeoDb, Place};

use botscope_botid::Owner;

/// What can go wrong with a database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not a database of the kind asked for; nothing was
    /// written.
    #[error("{0}")]
    Invalid(String),
    /// The input would replace a much larger database (`--force` to
    /// accept); nothing was written.
    #[error("{0}")]
    Shrinks(String),
    /// Reading, writing or fetching failed.
    #[error("{0}")]
    Io(String),
}

/// The owner databases that are installed (any of them may be missing).
#[derive(Debug, Default)]
pub struct IpOwners {
    asn: Option<AsnTable>,
    geo: Vec<GeoDb>,
    /// When the ASN table was installed (Unix seconds), if known.
    asn_as_of: Option<i64>,
}

/// How much older than the ASN table a request may be for its network to
/// count as evidence: addresses are reassigned, and a log of 2015 read
/// with a table of 2026 would call the crawlers of that time fakes. The
/// same bound as for published lists.
pub const STALE_AFTER: i64 = botscope_botid::LIST_STALE_AFTER;

impl IpOwners {
    /// No database: every owner unknown.
    pub fn none() -> IpOwners {
        IpOwners::default()
    }

    /// From tables in memory.
    pub fn new(asn: Option<AsnTable>, mut geo: Vec<GeoDb>) -> IpOwners {
        // IPv4 databases first: they answer IPv4 addresses before an
        // IPv6 one that holds them too.
        geo.sort_by_key(GeoDb::ip_version);
        IpOwners {
            asn,
            geo,
            asn_as_of: None,
        }
    }

    /// The same, the ASN table dated (Unix seconds): requests more than
    /// [`STALE_AFTER`] older get networks that are not evidence.
    pub fn dated(mut self, asn_as_of: Option<i64>) -> IpOwners {
        self.asn_as_of = asn_as_of;
        self
    }

    /// True when some database places addresses.
    pub fn has_places(&self) -> bool {
        !self.geo.is_empty()
    }

    /// The same with one more place database.
    pub fn with_places(mut self, db: GeoDb) -> IpOwners {
        self.geo.push(db);
        self.geo.sort_by_key(GeoDb::ip_version);
        self
    }

    /// Whom a page that shows owners or places must credit, one line per
    /// database that asks for it (the ASN table's sources, the place
    /// databases'), each `NAME (URL), TERMS`.
    pub fn credits(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .asn
            .iter()
            .map(|_| Kind::Asn.attribution().to_owned())
            .collect();
        v.extend(self.geo.iter().filter_map(GeoDb::attribution));
        v.dedup();
        v
    }

    /// True when no database is installed.
    pub fn is_empty(&self) -> bool {
        self.asn.is_none() && self.geo.is_empty()
    }

    /// The AS and place of `ip`: an IPv4 database first for IPv4
    /// addresses, then one for IPv6 (which holds IPv4 too).
    pub fn place(&self, ip: IpAddr) -> (Owner, Place) {
        let ip = botscope_botid::normalize(ip);
        let (asn, as_org) = match self.asn.as_ref().and_then(|t| t.lookup(ip)) {
            Some((a, o)) => (Some(a), (!o.is_empty()).then(|| o.to_owned())),
            None => (None, None),
        };
        let place = self
            .geo
            .iter()
            .find_map(|d| d.lookup(ip))
            .unwrap_or_default();
        let owner = Owner {
            asn,
            as_org,
            country: place.country.clone(),
            stale: false,
        };
        (owner, place)
    }
}

impl botscope_botid::Owners for IpOwners {
    fn owner(&self, ip: IpAddr) -> Owner {
        self.place(ip).0
    }

    fn owner_at(&self, ip: IpAddr, when: i64) -> Owner {
        let mut o = self.place(ip).0;
        o.stale = self.asn_as_of.is_some_and(|t| when < t - STALE_AFTER);
        o
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A page that shows owners or places credits each database that
    /// answered it, the ASN table's sources too.
    #[test]
    fn credits_name_every_installed_source() {
        assert!(IpOwners::none().credits().is_empty());
        let mut b = AsnBuilder::default();
        b.add_csv(b"66.249.64.0,66.249.95.255,15169,GOOGLE\n")
            .unwrap();
        let places =
            GeoDb::from_table("# Places by Someone (https://example.org), CC0\n1.0.0.0/24,AU,,,\n")
                .unwrap();
        let o = IpOwners::new(Some(b.finish().0), vec![places]);
        assert_eq!(
            o.credits(),
            [
                Kind::Asn.attribution(),
                "Places by Someone (https://example.org), CC0"
            ]
        );
        assert!(Kind::Asn.attribution().contains("(https://db-ip.com)"));
    }
}
