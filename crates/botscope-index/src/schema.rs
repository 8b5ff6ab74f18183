//! The index's schema: one document per version, its fields and the terms of its bias.

use botscope_robotstxt::Semantics;
use tantivy::schema::{FAST, Field as TField, INDEXED, STORED, STRING, Schema, TEXT};

/// The schema's fields.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub(crate) site: TField,
    pub(crate) suffix: TField,
    pub(crate) botname: TField,
    pub(crate) disallow: TField,
    pub(crate) allow: TField,
    pub(crate) disallow_seg: TField,
    pub(crate) allow_seg: TField,
    pub(crate) delay: TField,
    pub(crate) contain: TField,
    pub(crate) sitemap: TField,
    pub(crate) signal: TField,
    /// favor, disfavor, nobias under Google's rules, then the 1996 draft.
    pub(crate) tilt: [[TField; 3]; 2],
    /// `robot\x01bias` (names) and `token\x02bias` (product tokens).
    pub(crate) bias: [TField; 2],
    pub(crate) bias_json: TField,
    pub(crate) body: TField,
    pub(crate) from: TField,
    pub(crate) until: TField,
    pub(crate) latest: TField,
    pub(crate) rank: TField,
    pub(crate) source: TField,
    pub(crate) url: TField,
    pub(crate) hash: TField,
    /// What the version says to every agent ([`crate::Classes::encode`]).
    pub(crate) classes: TField,
    /// How the version ended at `until`: 0 replaced by a file or still in
    /// force, else the [`ended_code`] of the absence that followed.
    pub(crate) ended: TField,
}

/// The `ended` value of an absence (0: none).
pub(crate) fn ended_code(a: Option<botscope_store::Absence>) -> u64 {
    match a {
        None => 0,
        Some(botscope_store::Absence::Removed) => 1,
        Some(botscope_store::Absence::Unreachable) => 2,
        Some(botscope_store::Absence::Moved) => 3,
    }
}

/// The absence an `ended` value names.
pub(crate) fn ended_absence(code: u64) -> Option<botscope_store::Absence> {
    match code {
        1 => Some(botscope_store::Absence::Removed),
        2 => Some(botscope_store::Absence::Unreachable),
        3 => Some(botscope_store::Absence::Moved),
        _ => None,
    }
}

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let s = |b: &mut tantivy::schema::SchemaBuilder, n: &str| b.add_text_field(n, STRING);
    let f = Fields {
        site: b.add_text_field("site", STRING | STORED | FAST),
        suffix: s(&mut b, "suffix"),
        botname: b.add_text_field("botname", STRING | FAST),
        disallow: s(&mut b, "disallow"),
        allow: s(&mut b, "allow"),
        disallow_seg: s(&mut b, "disallow_seg"),
        allow_seg: s(&mut b, "allow_seg"),
        delay: b.add_f64_field("delay", INDEXED | FAST),
        contain: s(&mut b, "contain"),
        sitemap: s(&mut b, "sitemap"),
        signal: s(&mut b, "signal"),
        tilt: [
            [
                s(&mut b, "favor_g"),
                s(&mut b, "disfavor_g"),
                s(&mut b, "nobias_g"),
            ],
            [
                s(&mut b, "favor_d"),
                s(&mut b, "disfavor_d"),
                s(&mut b, "nobias_d"),
            ],
        ],
        bias: [s(&mut b, "bias_g"), s(&mut b, "bias_d")],
        bias_json: b.add_text_field("bias_json", STORED),
        body: b.add_text_field("body", TEXT | STORED),
        from: b.add_i64_field("from", INDEXED | FAST | STORED),
        until: b.add_i64_field("until", INDEXED | FAST | STORED),
        latest: s(&mut b, "latest"),
        rank: b.add_u64_field("rank", FAST | STORED),
        source: b.add_text_field("source", STRING | STORED),
        url: b.add_text_field("url", STORED),
        hash: b.add_bytes_field("hash", STORED),
        classes: b.add_bytes_field("classes", FAST),
        ended: b.add_u64_field("ended", FAST | STORED),
    };
    (b.build(), f)
}

/// The `contain` term of a file whose bias under `s` was not computed.
pub(crate) fn too_complex_term(s: Semantics) -> &'static str {
    match s {
        Semantics::Google => "too-complex:google",
        Semantics::Draft1996 => "too-complex:draft1996",
    }
}

pub(crate) fn sem_index(s: Semantics) -> usize {
    match s {
        Semantics::Google => 0,
        Semantics::Draft1996 => 1,
    }
}
