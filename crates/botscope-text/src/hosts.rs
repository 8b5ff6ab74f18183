//! Host lists: one host per line, or `rank,host` lines as top-sites lists
//! ship (a header line is skipped); URLs are reduced to their host.
//! Duplicates and lines that are not host names are counted, with the
//! first line numbers as samples. A line over [`MAX_LINE`] bytes is junk
//! and is skipped without being buffered.

use std::collections::HashSet;
use std::io::{self, BufRead, Read};

/// Longest line read.
pub const MAX_LINE: usize = 4096;

/// What a host list held.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HostList {
    /// Distinct hosts in order, with their rank when given.
    pub hosts: Vec<(Option<u64>, String)>,
    /// Hosts listed again.
    pub duplicates: u64,
    /// The first junk lines: (line number, start of the line).
    pub junk: Vec<(u64, String)>,
    /// Lines that are not host names.
    pub junk_count: u64,
}

impl HostList {
    /// What a reader of the list should know: duplicates skipped, lines
    /// that are not host names (with the first few).
    pub fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.duplicates > 0 {
            v.push(format!("{} duplicate hosts skipped", self.duplicates));
        }
        if self.junk_count > 0 {
            let samples: Vec<String> = self
                .junk
                .iter()
                .map(|(n, l)| format!("line {n}: {l:?}"))
                .collect();
            v.push(format!(
                "{} lines are not host names, skipped ({})",
                self.junk_count,
                samples.join("; ")
            ));
        }
        v
    }
}

/// Reads a host list.
pub fn read_host_list(mut r: impl BufRead) -> io::Result<HostList> {
    let mut out = HostList::default();
    let mut seen: HashSet<String> = HashSet::new();
    let junk = |out: &mut HostList, n: u64, line: &str| {
        out.junk_count += 1;
        if out.junk.len() < 5 {
            out.junk.push((n, line.chars().take(80).collect()));
        }
    };
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        let got = (&mut r)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if got == 0 {
            break;
        }
        n += 1;
        if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
            // Skip the rest of an over-long line, unbuffered.
            loop {
                let chunk = r.fill_buf()?;
                if chunk.is_empty() {
                    break;
                }
                match chunk.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        r.consume(i + 1);
                        break;
                    }
                    None => {
                        let l = chunk.len();
                        r.consume(l);
                    }
                }
            }
            junk(&mut out, n, "(a line over 4096 bytes)");
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (rank, field) = match line.split_once(',') {
            Some((rank, host)) => match rank.trim().parse::<u64>() {
                Ok(rank) => (Some(rank), host),
                // A header line such as `rank,domain`.
                Err(_) if n == 1 => continue,
                Err(_) => (None, line),
            },
            None => (None, line),
        };
        match crate::host_of(field) {
            Some(h) => {
                if seen.insert(h.clone()) {
                    out.hosts.push((rank, h));
                } else {
                    out.duplicates += 1;
                }
            }
            None => junk(&mut out, n, line),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists() {
        let text = "rank,domain\n1,Google.com\n2,example.org\n# comment\n\nhttps://www.bbc.co.uk/news\nexample.org\nnot a host!\n3,.bad\n192.0.2.1\n";
        let l = read_host_list(text.as_bytes()).expect("read");
        let hosts: Vec<(Option<u64>, &str)> =
            l.hosts.iter().map(|(r, h)| (*r, h.as_str())).collect();
        assert_eq!(
            hosts,
            vec![
                (Some(1), "google.com"),
                (Some(2), "example.org"),
                (None, "www.bbc.co.uk"),
                (None, "192.0.2.1"),
            ]
        );
        assert_eq!(l.duplicates, 1);
        assert_eq!(l.junk_count, 2);
        assert_eq!(l.junk[0].0, 8);
    }

    #[test]
    fn long_lines_are_skipped_unbuffered() {
        let mut text = b"a.test\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 100_000));
        text.extend_from_slice(b"\nb.test\n");
        let l = read_host_list(&text[..]).expect("read");
        let hosts: Vec<&str> = l.hosts.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(hosts, vec!["a.test", "b.test"]);
        assert_eq!((l.junk_count, l.junk[0].0), (1, 2));
    }
}
