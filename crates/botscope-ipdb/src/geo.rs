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

/// One MMDB file, checked.
pub struct GeoDb {
    reader: maxminddb::Reader<Vec<u8>>,
}

impl std::fmt::Debug for GeoDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeoDb")
            .field("type", &self.reader.metadata().database_type)
            .finish()
    }
}

impl GeoDb {
    /// Reads and checks a database: its metadata, and one lookup.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<GeoDb, Error> {
        check(&bytes)?;
        let reader = maxminddb::Reader::from_source(bytes)
            .map_err(|e| Error::Invalid(format!("not a MaxMind DB file: {e}")))?;
        Ok(GeoDb { reader })
    }

    /// 4 or 6 (an IPv6 database answers IPv4 addresses too).
    pub fn ip_version(&self) -> u16 {
        self.reader.metadata().ip_version
    }

    /// The place of `ip`, if the database has it.
    pub fn lookup(&self, ip: IpAddr) -> Option<Place> {
        let ip = botscope_botid::normalize(ip);
        if ip.is_ipv6() && self.ip_version() == 4 {
            return None;
        }
        let v: Value = self.reader.lookup(ip).ok()?.decode().ok()??;
        Some(place(&v))
    }
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
    fn junk_is_not_a_database() {
        assert!(GeoDb::from_bytes(b"not a database".to_vec()).is_err());
        assert!(GeoDb::from_bytes(Vec::new()).is_err());
    }
}
