//! `botscope keys`: a crawler's Web Bot Auth signing key.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;

use anyhow::{Context, Result, bail};
use botscope_httpsig::{Directory, SigningKey};

use crate::cli::{Format, KeysGenerateArgs, KeysSignArgs};
use crate::exit::ExitStatus;

/// The private key's file name in `--out`.
pub const KEY_FILE: &str = "signing-key.jwk";
/// The public key directory's file name in `--out` (its name on the web,
/// under `/.well-known/`).
pub const DIRECTORY_FILE: &str = "http-message-signatures-directory";

/// `keys generate`: a new key and its directory, neither file overwritten.
pub fn generate(a: &KeysGenerateArgs) -> Result<ExitStatus> {
    let key_path = a.out.join(KEY_FILE);
    let dir_path = a.out.join(DIRECTORY_FILE);
    for p in [&key_path, &dir_path] {
        if p.symlink_metadata().is_ok() {
            bail!(
                "{} exists: not overwriting a key (move it away, or choose another --out)",
                p.display()
            );
        }
    }
    botscope_os::ensure_dir(&a.out).with_context(|| format!("cannot make {}", a.out.display()))?;
    let key = SigningKey::generate()?;
    let directory = Directory {
        keys: vec![(key.keyid(), key.public())],
        ..Directory::default()
    };
    // The private key: created here, readable by its owner only, never
    // replacing a file that appeared meanwhile.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&key_path)
        .with_context(|| format!("cannot create {}", key_path.display()))?;
    f.write_all(key.to_private_jwk().as_bytes())
        .and_then(|()| f.write_all(b"\n"))
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", key_path.display()))?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&dir_path)
        .and_then(|mut f| f.write_all(format!("{}\n", directory.to_json()).as_bytes()));
    if let Err(e) = written {
        // A key without its directory is of no use: leave nothing behind.
        let _ = std::fs::remove_file(&key_path);
        return Err(e).with_context(|| format!("cannot write {}", dir_path.display()));
    }
    let keyid = key.keyid();
    match a.format {
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "keyid": keyid,
                "private_key": key_path,
                "directory": dir_path,
            })
        ),
        Format::Text => {
            println!("keyid      {keyid}");
            println!("private    {} (keep it secret; 0600)", key_path.display());
            println!("directory  {}", dir_path.display());
            println!(
                "publish the directory at https://AGENT/.well-known/{DIRECTORY_FILE} \
                 as application/http-message-signatures-directory+json (or at any https URL \
                 as application/jwk-set+json, and name that URL in Signature-Agent)"
            );
        }
    }
    Ok(ExitStatus::Success)
}

/// The signer `--signing-key FILE --signature-agent URL` name: the key
/// read, the agent an absolute https URL (draft-ietf-webbotauth-httpsig-protocol-01).
pub fn signer(
    file: &std::path::Path,
    agent: &str,
    validity: std::time::Duration,
) -> Result<botscope_harvest::Signer> {
    let text = botscope_os::read_capped(file, 64 * 1024)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .with_context(|| format!("cannot read {}", file.display()))?;
    let key = SigningKey::parse(&text).with_context(|| format!("{}", file.display()))?;
    if let Err(e) = botscope_httpsig::agent::resolve(agent) {
        bail!("{}", botscope_text::field(&e));
    }
    Ok(botscope_harvest::Signer {
        key: std::sync::Arc::new(key),
        agent: agent.to_owned(),
        validity,
    })
}

/// `keys sign`: a signed request head for the URL, on standard output.
pub fn sign(a: &KeysSignArgs) -> Result<ExitStatus> {
    let signer = signer(&a.key, &a.agent, a.validity)?;
    let url = url::Url::parse(&a.url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .with_context(|| format!("{} is not an http(s) URL", botscope_text::field(&a.url)))?;
    anyhow::ensure!(
        !a.user_agent.contains(['\r', '\n']),
        "--user-agent holds a line break"
    );
    let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let fields = signer.headers(&url, authority);
    anyhow::ensure!(!fields.is_empty(), "the system's random source failed");
    let mut head = format!(
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {}\r\n",
        a.user_agent
    );
    for (n, v) in fields {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = std::io::stdout().lock();
    out.write_all(head.as_bytes())?;
    out.flush()?;
    Ok(ExitStatus::Success)
}
