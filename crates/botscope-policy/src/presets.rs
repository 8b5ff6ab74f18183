//! The policies `botscope policy init --preset NAME` writes, commented
//! rule by rule.

/// Every preset: name, what it is for, and its text.
pub const PRESETS: [(&str, &str, &str); 3] = [
    (
        "balanced",
        "keeps search engines, feeds, archives and people working; refuses fakes and robots.txt breakers",
        include_str!("../presets/balanced.yaml"),
    ),
    (
        "block-ai-training",
        "balanced, and AI training crawlers refused (verified or not)",
        include_str!("../presets/block-ai-training.yaml"),
    ),
    (
        "strict",
        "only proven crawlers and people: AI and SEO crawlers and unregistered robots refused, unproven claims held to a trickle",
        include_str!("../presets/strict.yaml"),
    ),
];

/// The text of the preset named `name`.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, t)| *t)
}
