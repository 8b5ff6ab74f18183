//! JSON-lines access logs: one object per line, with the key names nginx
//! `escape=json` formats, load balancers and log shippers use.

use std::borrow::Cow;
use std::net::IpAddr;

use serde_json::Value;

use crate::record::{Malformed, Record, Signed};
use crate::time::{parse_clf_time, parse_iso_time};

fn get<'v>(o: &'v serde_json::Map<String, Value>, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().find_map(|k| o.get(*k)).filter(|v| !v.is_null())
}

fn string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if s.is_empty() || s == "-" => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn uint(v: Option<&Value>) -> Result<u64, Malformed> {
    match v {
        None => Ok(0),
        Some(Value::Number(n)) => n.as_u64().ok_or(Malformed::BadNumber),
        Some(Value::String(s)) if s == "-" || s.is_empty() => Ok(0),
        Some(Value::String(s)) => s.parse().map_err(|_| Malformed::BadNumber),
        Some(_) => Err(Malformed::BadNumber),
    }
}

pub(crate) fn parse_json_line(line: &[u8]) -> Result<Record<'static>, Malformed> {
    let v: Value = serde_json::from_slice(line).map_err(|_| Malformed::BadJson)?;
    let Value::Object(o) = v else {
        return Err(Malformed::BadJson);
    };
    let ip_text = string(get(
        &o,
        &[
            "remote_addr",
            "client_ip",
            "clientip",
            "remote_ip",
            "ip",
            "client",
            "c-ip",
        ],
    ))
    .ok_or(Malformed::MissingField)?;
    let ip: IpAddr = ip_text.parse().map_err(|_| Malformed::BadAddress)?;
    let time = match get(
        &o,
        &[
            "time_local",
            "time_iso8601",
            "timestamp",
            "@timestamp",
            "time",
            "date",
        ],
    ) {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && *x < 253_402_300_800.0)
            .map(|x| x as i64)
            .ok_or(Malformed::BadTime)?,
        Some(Value::String(s)) => parse_clf_time(s.as_bytes())
            .or_else(|| parse_iso_time(s.as_bytes()))
            .ok_or(Malformed::BadTime)?,
        _ => return Err(Malformed::MissingField),
    };
    let (method, path, protocol) = match string(get(&o, &["request"])) {
        Some(r) => {
            let mut parts = r.splitn(3, ' ');
            let m = parts.next().unwrap_or_default().to_owned();
            let p = parts.next().unwrap_or_default().to_owned();
            let v = parts.next().unwrap_or_default().to_owned();
            (m, p, v)
        }
        None => (
            string(get(&o, &["request_method", "method", "verb"])).unwrap_or_default(),
            string(get(&o, &["request_uri", "uri", "url", "path"])).unwrap_or_default(),
            string(get(&o, &["server_protocol", "protocol"])).unwrap_or_default(),
        ),
    };
    let status = match get(&o, &["status", "status_code", "response", "code"]) {
        Some(v) => u16::try_from(uint(Some(v)).map_err(|_| Malformed::BadStatus)?)
            .ok()
            .filter(|s| (100..=999).contains(s))
            .ok_or(Malformed::BadStatus)?,
        None => return Err(Malformed::MissingField),
    };
    Ok(Record {
        vhost: string(get(&o, &["host", "vhost", "server_name", "http_host"])).map(Cow::Owned),
        ip: match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        },
        user: string(get(&o, &["remote_user", "user"])).map(Cow::Owned),
        time,
        method: Cow::Owned(method),
        path: Cow::Owned(path),
        protocol: Cow::Owned(protocol),
        status,
        bytes: uint(get(
            &o,
            &[
                "body_bytes_sent",
                "bytes_sent",
                "bytes",
                "size",
                "response_size",
            ],
        ))?,
        referer: string(get(&o, &["http_referer", "referer", "referrer"])).map(Cow::Owned),
        user_agent: string(get(&o, &["http_user_agent", "user_agent", "agent", "ua"]))
            .map(Cow::Owned),
        duration_us: match get(&o, &["request_time", "duration", "response_time"]) {
            Some(Value::Number(n)) => n
                .as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|s| (s * 1e6) as u64),
            Some(Value::String(s)) => s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|s| (s * 1e6) as u64),
            _ => None,
        },
        signed: Signed {
            input: string(get(&o, &["http_signature_input", "signature_input"])).map(Cow::Owned),
            signature: string(get(&o, &["http_signature", "signature"])).map(Cow::Owned),
            agent: string(get(&o, &["http_signature_agent", "signature_agent"])).map(Cow::Owned),
            scheme: string(get(&o, &["scheme", "request_scheme"])).map(Cow::Owned),
        },
        truncated: false,
    })
}
