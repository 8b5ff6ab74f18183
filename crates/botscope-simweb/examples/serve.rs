//! Serves a simulated web until stdin closes or the process is killed, for
//! benches: `serve --hosts 100000 --addresses 256 --dir DIR [--corpus DIR]`
//! writes DIR/hosts.txt and DIR/ca.pem and prints the DNS address and the
//! ports as `dns=… http=… https=…`.

use std::io::Read;
use std::path::PathBuf;

use botscope_simweb::{Config, Sim, bulk};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut hosts = 1000usize;
    let mut addresses = 64usize;
    let mut dir = PathBuf::from(".");
    let mut corpus_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        match a.as_str() {
            "--hosts" => hosts = v.parse()?,
            "--addresses" => addresses = v.parse()?,
            "--dir" => dir = v.into(),
            "--corpus" => corpus_dir = v.into(),
            _ => return Err(format!("unknown option {a}").into()),
        }
    }
    let corpus = botscope_simweb::read_corpus(&corpus_dir);
    if corpus.is_empty() {
        return Err(format!("no files in {}", corpus_dir.display()).into());
    }
    let sites = bulk(hosts, corpus.len());
    std::fs::create_dir_all(&dir)?;
    let list: String = sites.iter().map(|s| format!("{}\n", s.name)).collect();
    std::fs::write(dir.join("hosts.txt"), list)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let sim = Sim::start(Config {
            sites,
            addresses,
            corpus,
        })
        .await?;
        std::fs::write(dir.join("ca.pem"), &sim.ca_pem)?;
        println!(
            "dns={} http={} https={}",
            sim.dns, sim.http_port, sim.https_port
        );
        // Until stdin closes.
        tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        })
        .await?;
        drop(sim);
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok(())
}
