//! IP → country, city and coordinates from MaxMind DB files: DB-IP's city
//! database as ip-location-db packages it (flat records: `country_code`,
//! `city`, `latitude`, `longitude`), or MaxMind's GeoIP2/GeoLite2 layout
//! (`country.iso_code`, `city.names.en`, `location.*`).

use std::net::IpAddr;

use serde_json::Value;

use crate::Error;

/// Where an address is placed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Place {
    /// ISO 3166-1 alpha-2 country code.
    pub country: Option<String>,
    /// City name (English).
    pub city: Option<String>,
    /// Latitude, degrees.
    pub latitude: Option<f64>,
    /// Longitude, degrees.
    pub longitude: Option<f64>,
}

/// A place database: one MMDB file, checked, or a table of networks (the
/// demo's, cut from DB-IP's by `examples/cut_city.rs`).
pub struct GeoDb {
    source: Source,
    /// Whom a page that shows its places credits.
    credit: Option<String>,
}

enum Source {
    Mmdb(maxminddb::Reader<Vec<u8>>),
    /// Networks as (first, last, place), sorted by first address; IPv4
    /// and IPv6 apart.
    Table {
        v4: Vec<(u32, u32, Place)>,
        v6: Vec<(u128, u128, Place)>,
    },
}

impl std::fmt::Debug for GeoDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::Mmdb(r) => f
                .debug_struct("GeoDb")
                .field("type", &r.metadata().database_type)
                .finish(),
            Source::Table { v4, v6 } => f
                .debug_struct("GeoDb")
                .field("networks", &(v4.len() + v6.len()))
                .finish(),
        }
    }
}

/// At most this many networks in a table ([`GeoDb::from_table`]).
pub const MAX_TABLE_ROWS: usize = 1_000_000;

impl GeoDb {
    /// Reads and checks a database: its metadata, and one lookup.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<GeoDb, Error> {
        check(&bytes)?;
        let reader = maxminddb::Reader::from_source(bytes)
            .map_err(|e| Error::Invalid(format!("not a MaxMind DB file: {e}")))?;
        let m = reader.metadata();
        let said = m.description.values().chain([&m.database_type]);
        let said = said
            .map(|s| s.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(" ");
        let credit = if said.contains("geolite") {
            Some("GeoLite2 data created by MaxMind (https://www.maxmind.com)".to_owned())
        } else if said.contains("db-ip") || said.contains("dbip") {
            Some(crate::Kind::City.attribution().to_owned())
        } else {
            None
        };
        Ok(GeoDb {
            source: Source::Mmdb(reader),
            credit,
        })
    }

    /// Reads a table of networks: a line each, `network,country,city,
    /// latitude,longitude` (a network in CIDR notation; empty fields
    /// unknown); `#` lines are comments, and the first line, when it is
    /// one, is the attribution (whom a page that shows the places
    /// credits). A line that does not read is an error naming it; more
    /// than `MAX_TABLE_ROWS` (1,000,000) lines too, and networks that
    /// overlap (an MMDB file's never do).
    pub fn from_table(text: &str) -> Result<GeoDb, Error> {
        let mut v4: Vec<(u32, u32, Place, usize)> = Vec::new();
        let mut v6: Vec<(u128, u128, Place, usize)> = Vec::new();
        let mut attribution = None;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(c) = line.strip_prefix('#') {
                if attribution.is_none() && n == 0 {
                    attribution = Some(c.trim().trim_end_matches([';', ',']).to_owned());
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            if v4.len() + v6.len() >= MAX_TABLE_ROWS {
                return Err(Error::Invalid(format!(
                    "a place table of more than {MAX_TABLE_ROWS} networks"
                )));
            }
            let bad = |why: &str| Error::Invalid(format!("line {}: {why}", n + 1));
            let f: Vec<&str> = line.split(',').collect();
            let [net, country, city, lat, lon] = f[..] else {
                return Err(bad("expected network,country,city,latitude,longitude"));
            };
            let (addr, len) = net
                .split_once('/')
                .ok_or_else(|| bad("the network has no /length"))?;
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| bad("the network's address does not read"))?;
            let len: u8 = len
                .parse()
                .map_err(|_| bad("the network's length does not read"))?;
            let num = |s: &str| -> Result<Option<f64>, Error> {
                if s.is_empty() {
                    return Ok(None);
                }
                s.parse::<f64>()
                    .map(Some)
                    .map_err(|_| bad("a coordinate does not read"))
            };
            let v = serde_json::json!({
                "country_code": country, "city": city,
                "latitude": num(lat)?, "longitude": num(lon)?,
            });
            let p = place(&v);
            match addr {
                IpAddr::V4(a) if len <= 32 => {
                    let mask = u32::MAX.checked_shr(u32::from(len)).unwrap_or(0);
                    let first = u32::from(a) & !mask;
                    v4.push((first, first | mask, p, n + 1));
                }
                IpAddr::V6(a) if len <= 128 => {
                    let mask = u128::MAX.checked_shr(u32::from(len)).unwrap_or(0);
                    let first = u128::from(a) & !mask;
                    v6.push((first, first | mask, p, n + 1));
                }
                _ => return Err(bad("the network's length is too long")),
            }
        }
        Ok(GeoDb {
            source: Source::Table {
                v4: apart(v4)?,
                v6: apart(v6)?,
            },
            credit: attribution,
        })
    }

    /// 4 or 6 (an IPv6 database answers IPv4 addresses too).
    pub fn ip_version(&self) -> u16 {
        match &self.source {
            Source::Mmdb(r) => r.metadata().ip_version,
            Source::Table { v6, .. } if !v6.is_empty() => 6,
            Source::Table { .. } => 4,
        }
    }

    /// Whom a page that shows its places must credit: the table's first
    /// comment, or what the MMDB file's metadata names (DB-IP, MaxMind's
    /// GeoLite2), or what [`GeoDb::credited`] set.
    pub fn attribution(&self) -> Option<String> {
        self.credit.clone()
    }

    /// The same database, credited to `credit` when it names no source
    /// itself (ip-location-db's DB-IP files carry an empty description).
    pub fn credited(mut self, credit: &str) -> GeoDb {
        if self.credit.is_none() {
            self.credit = Some(credit.to_owned());
        }
        self
    }

    /// The place of `ip`, if the database has it.
    pub fn lookup(&self, ip: IpAddr) -> Option<Place> {
        let ip = botscope_botid::normalize(ip);
        match &self.source {
            Source::Mmdb(r) => {
                if ip.is_ipv6() && r.metadata().ip_version == 4 {
                    return None;
                }
                let v: Value = r.lookup(ip).ok()?.decode().ok()??;
                Some(place(&v))
            }
            Source::Table { v4, v6, .. } => match ip {
                IpAddr::V4(a) => find(v4, u32::from(a)),
                IpAddr::V6(a) => find(v6, u128::from(a)),
            },
        }
    }
}

/// Sorts a table's networks (each with its line) and checks that no two
/// overlap.
fn apart<T: Ord + Copy>(mut rows: Vec<(T, T, Place, usize)>) -> Result<Vec<(T, T, Place)>, Error> {
    rows.sort_by_key(|r| r.0);
    for w in rows.windows(2) {
        if w[1].0 <= w[0].1 {
            let (a, b) = (w[0].3.min(w[1].3), w[0].3.max(w[1].3));
            return Err(Error::Invalid(format!(
                "line {b}: its network overlaps line {a}'s"
            )));
        }
    }
    Ok(rows.into_iter().map(|(a, b, p, _)| (a, b, p)).collect())
}

/// The network that holds `x`: the last that starts at or before it, if
/// it ends at or after it (the networks are apart).
fn find<T: Ord + Copy>(rows: &[(T, T, Place)], x: T) -> Option<Place> {
    let end = rows.partition_point(|r| r.0 <= x);
    rows[..end].last().filter(|r| r.1 >= x).map(|r| r.2.clone())
}

/// Checks a database without keeping it: its metadata and one lookup.
/// Returns its IP version and build time (Unix seconds).
pub(crate) fn check(bytes: &[u8]) -> Result<(u16, u64), Error> {
    let reader = maxminddb::Reader::from_source(bytes)
        .map_err(|e| Error::Invalid(format!("not a MaxMind DB file: {e}")))?;
    let m = reader.metadata();
    if m.node_count == 0 || !matches!(m.ip_version, 4 | 6) {
        return Err(Error::Invalid(
            "a MaxMind DB file with no search tree".into(),
        ));
    }
    let probe: IpAddr = if m.ip_version == 4 {
        IpAddr::from([8, 8, 8, 8])
    } else {
        IpAddr::from([0x2001, 0x4860, 0, 0, 0, 0, 0, 0x8888])
    };
    reader
        .lookup(probe)
        .and_then(|r| r.decode::<Value>())
        .map_err(|e| Error::Invalid(format!("a MaxMind DB file that cannot be read: {e}")))?;
    Ok((m.ip_version, m.build_epoch))
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Reads either layout.
fn place(v: &Value) -> Place {
    let country = text(v.get("country_code")).or_else(|| text(v.pointer("/country/iso_code")));
    let city = match v.get("city") {
        Some(Value::String(_)) => text(v.get("city")),
        Some(c) => text(c.pointer("/names/en")),
        None => None,
    };
    let coord = |flat: &str, nested: &str| {
        v.get(flat)
            .or_else(|| v.pointer(nested))
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite())
    };
    Place {
        country: country.filter(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic())),
        city,
        latitude: coord("latitude", "/location/latitude").filter(|x| x.abs() <= 90.0),
        longitude: coord("longitude", "/location/longitude").filter(|x| x.abs() <= 180.0),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts() {
        let flat = serde_json::json!({"country_code": "US", "city": "Mountain View",
            "latitude": 37.42, "longitude": -122.08, "state1": "California"});
        let p = place(&flat);
        assert_eq!(p.country.as_deref(), Some("US"));
        assert_eq!(p.city.as_deref(), Some("Mountain View"));
        assert_eq!(p.latitude, Some(37.42));
        let nested = serde_json::json!({"country": {"iso_code": "SE"},
            "city": {"names": {"en": "Linköping"}}, "location": {"latitude": 58.4, "longitude": 15.6}});
        let p = place(&nested);
        assert_eq!(p.country.as_deref(), Some("SE"));
        assert_eq!(p.city.as_deref(), Some("Linköping"));
        assert_eq!(p.longitude, Some(15.6));
        let junk = serde_json::json!({"country_code": "\u{1b}[2J", "latitude": 500.0, "city": ""});
        assert_eq!(place(&junk), Place::default());
    }

    #[test]
    fn a_table_places_an_address_in_its_network() {
        let t = "# IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0, built 2026-06-05;\n\
                 # more words\n\
                 66.249.66.0/24,US,Council Bluffs,41.26,-95.86\n\
                 66.249.64.0/23,US,Mountain View,37.422,-122.084\n\
                 2001:4860:4801::/48,US,The Dalles,45.59,-121.17\n\
                 203.0.113.0/24,,,,\n";
        let db = GeoDb::from_table(t).unwrap();
        let at = |s: &str| db.lookup(s.parse().unwrap());
        assert_eq!(
            at("66.249.66.1").unwrap().city.as_deref(),
            Some("Council Bluffs")
        );
        assert_eq!(
            at("66.249.65.1").unwrap().city.as_deref(),
            Some("Mountain View")
        );
        assert_eq!(at("66.249.65.255").unwrap().latitude, Some(37.422));
        assert!(at("66.249.67.0").is_none());
        assert!(at("1.1.1.1").is_none());
        assert_eq!(
            at("::ffff:66.249.66.9").unwrap().city.as_deref(),
            Some("Council Bluffs")
        );
        assert_eq!(
            at("2001:4860:4801:2::1").unwrap().country.as_deref(),
            Some("US")
        );
        assert_eq!(at("203.0.113.5"), Some(Place::default()));
        assert_eq!(db.ip_version(), 6);
        assert_eq!(
            db.attribution().as_deref(),
            Some("IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0, built 2026-06-05")
        );
        for bad in [
            "1.2.3.0/24,US,X,1",
            "1.2.3.0,US,X,1,2",
            "1.2.3.0/33,US,X,1,2",
            "x/8,US,X,1,2",
            "1.2.3.0/24,US,X,north,2",
        ] {
            let e = GeoDb::from_table(bad).unwrap_err().to_string();
            assert!(e.starts_with("line 1: "), "{bad}: {e}");
        }
        let e = GeoDb::from_table("1.2.0.0/16,US,,,\n1.2.3.0/24,US,,,").unwrap_err();
        assert_eq!(e.to_string(), "line 2: its network overlaps line 1's");
    }

    #[test]
    fn the_demo_table_reads() {
        let t = include_str!("../../../examples/geo/dbip-city-lite-demo.csv");
        let db = GeoDb::from_table(t).unwrap();
        // A Googlebot address of the example logs.
        let p = db.lookup("66.249.73.135".parse().unwrap()).unwrap();
        assert_eq!(p.country.as_deref(), Some("US"));
        assert!(p.latitude.is_some() && p.longitude.is_some());
        assert!(db.attribution().unwrap().contains("DB-IP"));
    }

    #[test]
    fn junk_is_not_a_database() {
        assert!(GeoDb::from_bytes(b"not a database".to_vec()).is_err());
        assert!(GeoDb::from_bytes(Vec::new()).is_err());
    }
}
