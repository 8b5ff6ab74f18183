//! `botscope data`: the IP-owner databases of the data directory.

use anyhow::{Context, Result};
use botscope_ipdb::{DataDir, UpdateConfig};

use crate::cli::{DataStatusArgs, DataUpdateArgs, Format};
use crate::exit::ExitStatus;
use crate::settings::Settings;

fn dir(settings: &Settings) -> Result<DataDir> {
    let d = settings.data_dir.as_ref();
    Ok(DataDir::new(d.context(
        "no HOME or XDG_DATA_HOME: nowhere to keep the databases",
    )?))
}

/// `data update`: each database fetched, checked, then installed.
pub async fn update(a: &DataUpdateArgs, settings: &Settings) -> Result<ExitStatus> {
    let cfg = UpdateConfig {
        kinds: a.what.clone(),
        from: a.from.clone(),
        npm_registry: a.npm_registry.clone(),
        timeout: a.timeout,
        force: a.force,
        trust: crate::settings::trust(&a.tls)?,
    };
    botscope_ipdb::update(&dir(settings)?, &cfg, |i| println!("{}", i.describe())).await?;
    Ok(ExitStatus::Success)
}

/// `data status`.
pub fn status(a: &DataStatusArgs, settings: &Settings) -> Result<ExitStatus> {
    let st = dir(settings)?.status(&settings.registry(None)?);
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&st)?),
        Format::Text => print!("{}", st.text()),
    }
    Ok(ExitStatus::Success)
}
