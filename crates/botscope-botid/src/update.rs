//! `bots update`: operators' published lists applied to the user registry,
//! each checked before anything is written. Pure: the caller reads the
//! files and writes the result; the words for people come back as text.

use std::fmt::Write;

use crate::import::{Change, import_list};
use crate::ipset::IpRange;
use crate::registry::{BotEntry, Registry};

/// An update in progress: the user registry's entries, with each list
/// applied in turn.
#[derive(Debug)]
pub struct Update<'r> {
    current: &'r Registry,
    entries: Vec<BotEntry>,
    source: String,
    force: bool,
    /// What changed, per list and bot (`FILE -> BOT: N items, A added, R
    /// removed`, then the items), for people.
    pub report: String,
    /// Why the update must not be written (junk input, a list that
    /// shrinks a bot by more than half without `force`).
    pub refusals: Vec<String>,
    /// Lists no bot could be found for.
    pub unattributed: usize,
}

impl<'r> Update<'r> {
    /// Over `current` (bundled and user registries layered), starting from
    /// the user registry's `entries`, written to `source`.
    pub fn new(current: &'r Registry, entries: Vec<BotEntry>, source: String, force: bool) -> Self {
        Update {
            current,
            entries,
            source,
            force,
            report: String::new(),
            refusals: Vec::new(),
            unattributed: 0,
        }
    }

    /// Applies the list `name` (its file name) with content `text` to
    /// `bot`, or to the bots its file name names.
    pub fn apply(&mut self, name: &str, text: &str, bot: Option<&BotEntry>) {
        let file = name.rsplit('/').next().unwrap_or(name);
        let targets: Vec<BotEntry> = match bot {
            Some(b) => vec![b.clone()],
            None => crate::publishers_of(self.current, file)
                .into_iter()
                .cloned()
                .collect(),
        };
        if targets.is_empty() {
            let _ = writeln!(
                self.report,
                "{name}: cannot tell which bot publishes this list; give --bot NAME"
            );
            self.unattributed += 1;
            return;
        }
        let got = import_list(text);
        if got.address_lines == 0 {
            // Junk, a binary file, the wrong file: the whole update stops.
            self.refusals.push(format!(
                "{name}: no line is an address ({} item(s) that are not); is this the list?",
                got.skipped.len()
            ));
            return;
        }
        for mut t in targets {
            let old: Vec<IpRange> = t.ranges().collect();
            t.set_ranges(got.ranges.clone());
            let new: Vec<IpRange> = t.ranges().collect();
            let change = Change::between(&old, &new);
            let _ = writeln!(
                self.report,
                "{name} -> {}: {} address item(s), {} added, {} removed",
                t.name,
                new.len(),
                change.added.len(),
                change.removed.len()
            );
            for (sign, items) in [("+", &change.added), ("-", &change.removed)] {
                for r in items.iter().take(5) {
                    let _ = writeln!(self.report, "  {sign} {}", r.written());
                }
                if items.len() > 5 {
                    let _ = writeln!(self.report, "  {sign} … {} more", items.len() - 5);
                }
            }
            if change.shrinks_by_half(old.len()) && !self.force {
                self.refusals.push(format!(
                    "{name}: would remove {} of {}'s {} address item(s), more than half; \
                     give --force if the operator really shrank its list",
                    change.removed.len(),
                    t.name,
                    old.len()
                ));
                continue;
            }
            t.source.clone_from(&self.source);
            match self
                .entries
                .iter_mut()
                .find(|b| b.name.eq_ignore_ascii_case(&t.name))
            {
                Some(slot) => *slot = t,
                None => self.entries.push(t),
            }
        }
        for (line, text) in got.skipped.iter().take(5) {
            let _ = writeln!(
                self.report,
                "  skipped line {line}: {:?} is not an address",
                botscope_text::field(text)
            );
        }
        if got.skipped.len() > 5 {
            let _ = writeln!(self.report, "  … {} more skipped", got.skipped.len() - 5);
        }
    }

    /// The entries as updated (those a refused list would have changed
    /// left as they were), to layer over the registry in memory.
    pub fn into_entries(self) -> Vec<BotEntry> {
        self.entries
    }

    /// The user registry to write, as YAML, checked to read back.
    pub fn finish(self) -> Result<String, Vec<crate::RegistryError>> {
        let text = Registry::with_entries(self.entries).to_yaml();
        Registry::parse("the updated registry", &text)?;
        Ok(text)
    }
}
