//! The lists `bots export` and `logs export-lists` write, read back into
//! one IP index, and the robots.txt files served per category.
//!
//! Two layouts are read: `apache-dirs` (a directory per list, an empty
//! file per address, usually behind botscope's generation symlink) and
//! `plain` (`<list>.txt`, one address or network per line). Reading is
//! all or nothing: a line that is not an address, a file over the size
//! limit, or a directory with neither layout is an error naming the file
//! and line, and the caller keeps what it had.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use botscope_botid::{ALL_OK, IpIndex, IpRange, OTHER, SUSPECT, UNDECLARED};
use botscope_os::{Dir, Kind};

use crate::Error;

/// A list file read at most (a plain list of every IPv4 address a crawler
/// fleet uses is far smaller).
pub const MAX_LIST_BYTES: u64 = 256 << 20;
/// Addresses (files) read at most from an apache-dirs tree.
pub const MAX_ENTRIES: usize = 20_000_000;
/// A robots.txt served at most: what crawlers read (RFC 9309).
pub const MAX_ROBOTS_BYTES: u64 = botscope_robotstxt::DEFAULT_PARSE_CAP as u64;

/// What the gate knows of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// In no list.
    None,
    /// `all-ok-bots`: a verified robot.
    AllOk,
    /// `other-bots`: a robot neither verified nor spoofed.
    Other,
    /// `undeclared-bots`: a browser's User-Agent behaving like a crawler.
    Undeclared,
    /// `disobedient-bots`: a robot a log showed fetching what robots.txt
    /// closed to it.
    Disobedient,
    /// `suspect-bots`: a spoofer or scanner, on evidence.
    Suspect,
}

impl Category {
    /// The list's name, or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::None => "none",
            Category::AllOk => ALL_OK,
            Category::Other => OTHER,
            Category::Undeclared => UNDECLARED,
            Category::Disobedient => botscope_policy::DISOBEDIENT,
            Category::Suspect => SUSPECT,
        }
    }

    /// The category a list name stands for (`None` for a per-bot list).
    pub fn of_list(name: &str) -> Option<Category> {
        match name {
            ALL_OK => Some(Category::AllOk),
            OTHER => Some(Category::Other),
            UNDECLARED => Some(Category::Undeclared),
            botscope_policy::DISOBEDIENT => Some(Category::Disobedient),
            SUSPECT => Some(Category::Suspect),
            _ => None,
        }
    }

    /// The category of `none` or a list name of a category.
    pub fn parse(name: &str) -> Option<Category> {
        if name == "none" {
            Some(Category::None)
        } else {
            Category::of_list(name)
        }
    }
}

/// The lists, as one index from address to the lists that hold it.
#[derive(Debug)]
pub struct Lists {
    index: IpIndex,
    /// List names by owner id (shared with every answer that names one).
    names: Vec<Arc<str>>,
    /// Addresses (entries) per list.
    pub counts: BTreeMap<String, usize>,
    /// `apache-dirs` or `plain`.
    pub layout: &'static str,
}

/// A client's place in the lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The most severe category of the lists that hold it.
    pub category: Category,
    /// The verified bot's list (its directory name as exported), if any.
    pub bot: Option<Arc<str>>,
}

impl Lists {
    /// Builds the index from `(list, range)` entries.
    pub fn from_entries(entries: Vec<(String, IpRange)>, layout: &'static str) -> Lists {
        let mut names: Vec<Arc<str>> = Vec::new();
        let mut ids: BTreeMap<String, u32> = BTreeMap::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut b = IpIndex::builder();
        for (list, range) in entries {
            let id = *ids.entry(list.clone()).or_insert_with(|| {
                names.push(Arc::from(list.as_str()));
                (names.len() - 1) as u32
            });
            *counts.entry(list).or_default() += 1;
            b.add(range, id);
        }
        Lists {
            index: b.build(),
            names,
            counts,
            layout,
        }
    }

    /// Where `ip` stands: the most severe category of its lists (suspect
    /// over undeclared over other over verified), and its bot when it is
    /// verified.
    pub fn place(&self, ip: IpAddr) -> Placed {
        let mut category = Category::None;
        let mut bot = None;
        for &id in self.index.lookup(ip) {
            let Some(name) = self.names.get(id as usize) else {
                continue;
            };
            match Category::of_list(name) {
                Some(c) => category = category.max(c),
                None => {
                    // A per-bot list holds verified addresses only.
                    category = category.max(Category::AllOk);
                    if bot.as_ref().is_none_or(|b: &Arc<str>| name < b) {
                        bot = Some(name.clone());
                    }
                }
            }
        }
        Placed {
            bot: bot.filter(|_| category == Category::AllOk),
            category,
        }
    }

    /// The category lists holding `ip`, as [`botscope_policy::list_bit`]
    /// bits (a per-bot list counts as `all-ok-bots`).
    pub fn bits(&self, ip: IpAddr) -> u8 {
        let mut bits = 0;
        for &id in self.index.lookup(ip) {
            if let Some(name) = self.names.get(id as usize) {
                bits |= botscope_policy::list_bit(name)
                    .or_else(|| botscope_policy::list_bit(ALL_OK))
                    .unwrap_or(0);
            }
        }
        bits
    }

    /// Entries in every list.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

fn bad(path: &Path, line: usize, what: String) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        line,
        what,
    }
}

/// A list name from a file or directory name: the exported names only
/// (`[a-z0-9._-]`, as `bots export` writes them).
fn list_name(name: &str) -> Option<&str> {
    (!name.is_empty()
        && !name.starts_with('.')
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        }))
    .then_some(name)
}

/// Reads the lists in `dir` (either layout). `dir` is resolved once (a
/// symlink such as the apache-dirs generation link is followed there) and
/// everything is read through that one path, so a generation flipped
/// meanwhile is never mixed with the one before. A list that is a
/// symlink leading out of the directory, or not a regular file or
/// directory, is refused.
pub fn read(dir: &Path) -> Result<Lists, Error> {
    let root = Dir::open(dir)?;
    let mut plain = Vec::new();
    let mut dirs = Vec::new();
    for e in root.entries()? {
        let name = e.name_lossy();
        let plain_name = name.strip_suffix(".txt").and_then(list_name);
        let dir_name = list_name(&name).filter(|_| plain_name.is_none());
        if plain_name.is_none() && dir_name.is_none() {
            continue;
        }
        root.check(&e)?;
        match (e.kind, plain_name, dir_name) {
            (Kind::File { .. }, Some(list), _) => plain.push((list.to_owned(), e)),
            (Kind::Dir, _, Some(list)) => dirs.push((list.to_owned(), e)),
            _ => {}
        }
    }
    let has = |names: &[&String]| names.iter().any(|n| Category::of_list(n).is_some());
    let plain_names: Vec<&String> = plain.iter().map(|(n, _)| n).collect();
    let dir_names: Vec<&String> = dirs.iter().map(|(n, _)| n).collect();
    let mut entries = Vec::new();
    if has(&plain_names) {
        for (list, e) in &plain {
            let text = root.read(e, MAX_LIST_BYTES).map_err(|err| match err {
                botscope_os::Error::TooBig { .. } => {
                    bad(&e.path, 0, format!("over {MAX_LIST_BYTES} bytes"))
                }
                other => other.into(),
            })?;
            for (i, line) in text.split(|b| *b == b'\n').enumerate() {
                let line = String::from_utf8_lossy(line);
                let line = line.split('#').next().unwrap_or_default().trim();
                if line.is_empty() {
                    continue;
                }
                let range = IpRange::parse_any(line).map_err(|_| {
                    bad(
                        &e.path,
                        i + 1,
                        format!(
                            "`{}` is not an address or network",
                            botscope_text::field(line)
                        ),
                    )
                })?;
                entries.push((list.clone(), range));
            }
        }
        Ok(Lists::from_entries(entries, "plain"))
    } else if has(&dir_names) {
        for (list, e) in &dirs {
            let sub = root.subdir(e)?;
            for a in sub.entries()? {
                let name = a.name_lossy();
                if name.starts_with('.') {
                    continue;
                }
                let ip = name
                    .parse::<IpAddr>()
                    .map_err(|_| bad(&a.path, 0, "the file's name is not an address".to_owned()))?;
                entries.push((list.clone(), IpRange::single(ip)));
                if entries.len() > MAX_ENTRIES {
                    return Err(bad(dir, 0, format!("over {MAX_ENTRIES} addresses")));
                }
            }
        }
        Ok(Lists::from_entries(entries, "apache-dirs"))
    } else {
        Err(Error::NoLists {
            path: dir.to_path_buf(),
        })
    }
}

/// The robots.txt files of `--robots-dir`, by name without `.txt`
/// (`default`, `all-ok-bots`, `googlebot` …). `default.txt` is required.
/// A `*.txt` that is a symlink leading out of the directory (a link to a
/// secret file would be served to anyone), or not a regular file, is
/// refused.
pub fn read_robots(dir: &Path) -> Result<BTreeMap<String, Arc<[u8]>>, Error> {
    let root = Dir::open(dir)?;
    let mut out = BTreeMap::new();
    for e in root.entries()? {
        let name = e.name_lossy();
        let Some(stem) = name.strip_suffix(".txt").and_then(list_name) else {
            continue;
        };
        if e.kind == Kind::Dir {
            continue;
        }
        root.check(&e)?;
        let body = root.read(&e, MAX_ROBOTS_BYTES).map_err(|err| match err {
            botscope_os::Error::TooBig { .. } => bad(
                &e.path,
                0,
                format!(
                    "over the {} crawlers read",
                    botscope_text::size(MAX_ROBOTS_BYTES)
                ),
            ),
            other => other.into(),
        })?;
        out.insert(stem.to_owned(), Arc::from(body));
    }
    if !out.contains_key("default") {
        return Err(Error::NoDefault {
            path: dir.join("default.txt"),
        });
    }
    Ok(out)
}

/// Each entry's path, symlink target, size and modification time.
pub type Fingerprint = Vec<(PathBuf, Option<PathBuf>, Stamp)>;

/// What the file system says of one file: size, modification time, and
/// (on Unix) inode and change time, which a file replaced with the same
/// size and modification time (`cp -p`, `rsync -t`) does not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    changed: (i64, i64),
}

impl Stamp {
    fn of(m: Option<&std::fs::Metadata>) -> Stamp {
        let Some(m) = m else {
            return Stamp::default();
        };
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (m.ino(), (m.ctime(), m.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (inode, changed) = (0, (0, 0));
        Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
            changed,
        }
    }
}

/// What changes when a watched directory's content or a watched file
/// changes: the target of a symlink, a file's [`Stamp`], and each
/// directory entry's name and stamp (an apache-dirs generation is new as
/// a whole, so its list directories are not walked).
pub fn fingerprint(dirs: &[&Path]) -> Fingerprint {
    let mut out = Vec::new();
    for d in dirs {
        // A file (the policy): its own stamp.
        let meta = std::fs::metadata(d).ok().filter(std::fs::Metadata::is_file);
        out.push((
            d.to_path_buf(),
            std::fs::read_link(d).ok(),
            Stamp::of(meta.as_ref()),
        ));
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let m = std::fs::metadata(&p).ok();
            out.push((p, None, Stamp::of(m.as_ref())));
        }
    }
    out.sort();
    out
}

/// The robots.txt for a client: most specific first, `<bot>.txt`, then
/// its category's file, then `default.txt` ([`read_robots`] requires it;
/// without it, an empty file, which allows everything). Returns the
/// file's name (without `.txt`) and body.
pub fn choose<'a>(robots: &'a BTreeMap<String, Arc<[u8]>>, placed: &Placed) -> (&'a str, &'a [u8]) {
    let category = (placed.category != Category::None).then(|| placed.category.as_str());
    placed
        .bot
        .as_deref()
        .into_iter()
        .chain(category)
        .chain(["default"])
        .find_map(|c| robots.get_key_value(c))
        .map_or(("default", &[][..]), |(k, v)| (k.as_str(), &v[..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn the_most_severe_list_wins_and_bots_are_verified_only() {
        let r = |s: &str| IpRange::parse_any(s).expect("range");
        let l = Lists::from_entries(
            vec![
                ("all-ok-bots".into(), r("66.249.66.1")),
                ("googlebot".into(), r("66.249.66.1")),
                ("googlebot".into(), r("66.249.66.2")),
                ("suspect-bots".into(), r("66.249.66.2")),
                ("other-bots".into(), r("10.0.0.0/8")),
            ],
            "plain",
        );
        assert_eq!(
            l.place(ip("66.249.66.1")),
            Placed {
                category: Category::AllOk,
                bot: Some("googlebot".into())
            }
        );
        assert_eq!(
            l.place(ip("66.249.66.2")),
            Placed {
                category: Category::Suspect,
                bot: None
            }
        );
        assert_eq!(l.place(ip("10.1.2.3")).category, Category::Other);
        assert_eq!(l.place(ip("::ffff:10.1.2.3")).category, Category::Other);
        assert_eq!(l.place(ip("192.0.2.1")).category, Category::None);
        assert_eq!(l.total(), 5);
    }

    #[test]
    fn robots_files_most_specific_first() {
        let mut files: BTreeMap<String, Arc<[u8]>> = BTreeMap::new();
        for n in ["default", "all-ok-bots", "googlebot", "suspect-bots"] {
            files.insert(n.into(), Arc::from(n.as_bytes()));
        }
        let pick = |category, bot: Option<&str>| {
            choose(
                &files,
                &Placed {
                    category,
                    bot: bot.map(Arc::from),
                },
            )
            .0
            .to_owned()
        };
        assert_eq!(pick(Category::AllOk, Some("googlebot")), "googlebot");
        assert_eq!(pick(Category::AllOk, Some("bingbot")), "all-ok-bots");
        assert_eq!(pick(Category::Other, None), "default");
        assert_eq!(pick(Category::Suspect, None), "suspect-bots");
        assert_eq!(pick(Category::None, None), "default");
    }

    #[test]
    fn both_layouts_are_read_and_junk_is_refused() {
        let d = tempfile::tempdir().expect("tmp");
        let plain = d.path().join("plain");
        std::fs::create_dir(&plain).expect("dir");
        std::fs::write(
            plain.join("all-ok-bots.txt"),
            "66.249.66.1\n# note\n\n2001:db8::1\n",
        )
        .expect("w");
        std::fs::write(plain.join("googlebot.txt"), "66.249.66.1\n").expect("w");
        std::fs::write(plain.join("suspect-bots.txt"), "203.0.113.0/24\n").expect("w");
        let l = read(&plain).expect("plain");
        assert_eq!(l.layout, "plain");
        assert_eq!(l.place(ip("66.249.66.1")).bot.as_deref(), Some("googlebot"));
        assert_eq!(l.place(ip("203.0.113.9")).category, Category::Suspect);
        std::fs::write(
            plain.join("other-bots.txt"),
            "1.2.3.4\nnot an address\x1b[2J\n",
        )
        .expect("w");
        let e = read(&plain).expect_err("junk");
        let msg = e.to_string();
        assert!(msg.contains("other-bots.txt:2"), "{msg}");
        assert!(!msg.contains('\x1b'), "{msg}");

        let tree = d.path().join("tree");
        for (list, addr) in [
            ("all-ok-bots", "66.249.66.1"),
            ("googlebot", "66.249.66.1"),
            ("suspect-bots", "192.0.2.7"),
        ] {
            std::fs::create_dir_all(tree.join(list)).expect("dir");
            std::fs::write(tree.join(list).join(addr), b"").expect("w");
        }
        std::fs::write(tree.join(".botscope-generation"), b"x").expect("w");
        let link = d.path().join("crawlers");
        std::os::unix::fs::symlink(&tree, &link).expect("link");
        let l = read(&link).expect("dirs");
        assert_eq!(l.layout, "apache-dirs");
        assert_eq!(l.place(ip("192.0.2.7")).category, Category::Suspect);
        assert_eq!(l.place(ip("66.249.66.1")).bot.as_deref(), Some("googlebot"));

        // A file name that is not an address is named in the error with
        // its control characters escaped.
        std::fs::write(tree.join("suspect-bots").join("10.0.0.1\x1b[2J"), b"").expect("w");
        let msg = read(&link).expect_err("junk name").to_string();
        assert!(
            msg.contains("not an address") && msg.contains("\\x1b"),
            "{msg}"
        );
        assert!(!msg.contains('\x1b'), "{msg}");

        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).expect("dir");
        assert!(matches!(read(&empty), Err(Error::NoLists { .. })));
        assert!(matches!(read_robots(&empty), Err(Error::NoDefault { .. })));
    }

    /// Found: a symlink in `--robots-dir` to a secret file was served as
    /// `/robots.txt`, and one in `--lists` showed the secret's first line
    /// in the error `/healthz` reports.
    #[cfg(unix)]
    #[test]
    fn links_out_of_the_directories_are_refused() {
        let d = tempfile::tempdir().expect("tmp");
        let secret = d.path().join("secret");
        std::fs::write(&secret, "root:x:0:0:secret\n").expect("w");
        let robots = d.path().join("robots");
        let lists = d.path().join("lists");
        std::fs::create_dir(&robots).expect("dir");
        std::fs::create_dir(&lists).expect("dir");
        std::os::unix::fs::symlink(&secret, robots.join("default.txt")).expect("link");
        std::os::unix::fs::symlink(&secret, lists.join("suspect-bots.txt")).expect("link");
        for e in [
            read_robots(&robots).expect_err("robots"),
            read(&lists).expect_err("lists"),
        ] {
            let msg = e.to_string();
            assert!(msg.contains("leads out of"), "{msg}");
            assert!(!msg.contains("root:x"), "{msg}");
        }
        // A link that stays inside is read.
        std::fs::remove_file(robots.join("default.txt")).expect("rm");
        std::fs::write(robots.join("all.txt"), "User-agent: *\n").expect("w");
        std::os::unix::fs::symlink("all.txt", robots.join("default.txt")).expect("link");
        let r = read_robots(&robots).expect("inside");
        assert_eq!(&*r["default"], b"User-agent: *\n");
    }
}
