//! The IP-owner databases from strangers' bytes: an ASN CSV, the stored
//! ASN table, a MaxMind DB file and a place table (the demo's format).
//! Never a panic; a table that reads
//! back answers lookups inside its ranges only.

#![no_main]

use std::net::IpAddr;

use botscope_ipdb::{AsnBuilder, AsnTable, GeoDb};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut b = AsnBuilder::default();
    if b.add_csv(data).is_ok() {
        let (table, report) = b.finish();
        assert_eq!(table.len(), report.rows);
        let back = AsnTable::from_bytes(&table.to_bytes()).expect("a built table reads back");
        assert_eq!(back, table);
    }
    if let Ok(t) = AsnTable::from_bytes(data) {
        for ip in ["0.0.0.0", "8.8.8.8", "255.255.255.255", "::", "2001:db8::1"] {
            let _ = t.lookup(ip.parse::<IpAddr>().expect("ip"));
        }
    }
    if let Ok(db) = GeoDb::from_bytes(data.to_vec()) {
        let _ = db.lookup([1, 2, 3, 4].into());
        let _ = db.lookup("2001:db8::1".parse::<IpAddr>().expect("ip"));
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(db) = GeoDb::from_table(text)
    {
        // Networks are apart: a lookup finds at most one, and a place's
        // fields are checked (a country is two letters, coordinates in range).
        for ip in ["0.0.0.0", "1.2.3.4", "255.255.255.255", "::", "2001:db8::1"] {
            if let Some(p) = db.lookup(ip.parse::<IpAddr>().expect("ip")) {
                assert!(p.country.is_none_or(|c| c.len() == 2));
                assert!(p.latitude.is_none_or(|x| x.abs() <= 90.0));
            }
        }
    }
});
