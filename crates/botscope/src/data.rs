//! `botscope data`: the IP-owner databases of the data directory.

use anyhow::{Context, Result};
use botscope_ipdb::{DataDir, Kind, UpdateConfig};

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
        kinds: a.what.iter().filter_map(|w| Kind::from_name(w)).collect(),
        from: a.from.clone(),
        npm_registry: a.npm_registry.clone(),
        timeout: std::time::Duration::try_from_secs_f64(a.timeout.clamp(1.0, 86_400.0))
            .context("--timeout")?,
        force: a.force,
        trust: crate::harvest::trust(&a.tls)?,
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
