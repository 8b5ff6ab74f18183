//! `botscope keys`: a crawler's Web Bot Auth signing key.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;

use anyhow::{Context, Result, bail};
use botscope_httpsig::{Directory, SigningKey};

use crate::cli::{Format, KeysGenerateArgs};
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
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot make {}", a.out.display()))?;
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
                 as application/http-message-signatures-directory+json"
            );
        }
    }
    Ok(ExitStatus::Success)
}
