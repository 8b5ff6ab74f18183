//! The DNS responder: A records for the simulated hosts, NXDOMAIN for the
//! rest; `*.loopback.test` points at 127.0.0.1 and `*.private.test` at
//! 10.0.0.1 (for the harvester's refusal of such addresses).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{RData, Record, RecordType};

use crate::Shared;

/// How a responder behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsMode {
    /// Answers what is true.
    Honest,
    /// Answers every name with 127.77.255.254 (as hijacking resolvers do).
    Lying,
    /// Never answers.
    Dead,
}

fn answer_for(shared: &Shared, name: &str, mode: DnsMode) -> Option<IpAddr> {
    if mode == DnsMode::Lying {
        return Some(IpAddr::V4(Ipv4Addr::new(127, 77, 255, 254)));
    }
    if name.ends_with(".loopback.test") {
        return Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    if name.ends_with(".private.test") {
        return Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
    }
    shared.sites.get(name).map(|(_, ip)| *ip)
}

fn respond(shared: &Shared, q: &[u8], mode: DnsMode) -> Option<Vec<u8>> {
    let req = Message::from_vec(q).ok()?;
    if req.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut resp = Message::response(req.metadata.id, OpCode::Query);
    resp.metadata.recursion_desired = req.metadata.recursion_desired;
    resp.metadata.recursion_available = true;
    resp.metadata.authoritative = true;
    let Some(query) = req.queries.first() else {
        resp.metadata.response_code = ResponseCode::FormErr;
        return resp.to_vec().ok();
    };
    resp.add_query(query.clone());
    let name = query.name().to_string();
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    match answer_for(shared, &name, mode) {
        None => resp.metadata.response_code = ResponseCode::NXDomain,
        Some(IpAddr::V4(v4)) if query.query_type() == RecordType::A => {
            resp.add_answer(Record::from_rdata(
                query.name().clone(),
                300,
                RData::A(A(v4)),
            ));
        }
        // AAAA and anything else: the name exists, no such records.
        Some(_) => {}
    }
    resp.to_vec().ok()
}

/// Serves queries on `sock` until the web stops.
pub(crate) async fn serve(sock: tokio::net::UdpSocket, shared: Arc<Shared>, mode: DnsMode) {
    let mut buf = vec![0u8; 4096];
    while !shared.stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = sock.recv_from(&mut buf).await else {
            continue;
        };
        if mode == DnsMode::Dead {
            continue;
        }
        if let Some(out) = respond(&shared, &buf[..n], mode) {
            let _ = sock.send_to(&out, from).await;
        }
    }
}
