//! What `find` says of a sighting, as a line of text or of JSON: where in
//! which input, what was read, whose page it was and when it was served.
//! It says "seen in this input": a mark shows that a page marked for a
//! client was taken, not what it was used for.

use crate::input::Found;

/// Unix seconds as RFC 3339 (UTC).
fn time(t: u64) -> String {
    i64::try_from(t)
        .ok()
        .and_then(|t| jiff::Timestamp::from_second(t).ok())
        .map_or_else(|| format!("{t} (Unix seconds)"), |t| t.to_string())
}

/// The line for `f` in input `name`, for a terminal (strangers' text
/// escaped).
pub fn text(name: &str, f: &Found) -> String {
    let s = &f.sighting;
    let field = botscope_text::field;
    let mut o = format!("{}: byte {}", field(name), s.offset);
    if let Some(u) = &f.uri {
        o.push_str(&format!(" ({})", field(u)));
    }
    match (&s.phrase, s.edits) {
        (Some(p), 0) => o.push_str(&format!(": phrase \"{p}\"")),
        (Some(p), _) => o.push_str(&format!(
            ": phrase \"{p}\" as \"{}\" (one of its words changed, added or dropped)",
            field(&s.evidence)
        )),
        (None, _) => o.push_str(&format!(": code {}", field(&s.evidence))),
    }
    o.push_str(&format!(
        " — the page of {}, period from {}",
        field(&s.mark.client.describe()),
        time(s.mark.period_start)
    ));
    match &s.served {
        Some(v) => o.push_str(&format!(
            "; served {} to {}, {} page{}",
            time(v.first),
            time(v.last),
            v.pages,
            if v.pages == 1 { "" } else { "s" }
        )),
        None => o.push_str("; not in the issuance record given"),
    }
    o
}

/// The JSON object for `f` in input `name`.
pub fn json(name: &str, f: &Found) -> serde_json::Value {
    let s = &f.sighting;
    serde_json::json!({
        "input": name,
        "offset": s.offset,
        "record_uri": f.uri,
        "kind": s.kind,
        "evidence": s.evidence,
        "phrase": s.phrase,
        "edits": s.edits,
        "client": s.mark.client,
        "client_text": s.mark.client.describe(),
        "period_start": time(s.mark.period_start),
        "served": s.served.as_ref().map(|v| serde_json::json!({
            "first": time(v.first),
            "last": time(v.last),
            "pages": v.pages,
        })),
    })
}

/// The closing line: how many marks were seen, and what that says.
pub fn summary(marks: u64, bytes: u64) -> String {
    if marks == 0 {
        format!("no mark seen in this input ({bytes} bytes read)")
    } else {
        format!(
            "{marks} mark{} seen in this input ({bytes} bytes read): each shows that a page marked for that client was copied here, not what it was used for",
            if marks == 1 { "" } else { "s" }
        )
    }
}
