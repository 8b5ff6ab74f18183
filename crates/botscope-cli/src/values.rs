//! The value parsers of flags whose values are more than a word: sizes,
//! durations, dates, crawl names, prices, headers; each error names the
//! value and what would do.

pub(crate) fn price_arg(s: &str) -> Result<botscope_terms::Price, String> {
    botscope_terms::Price::parse_header(s).map_err(|e| e.to_string())
}

/// An application's URL: http or https, a host, no query.
pub(crate) fn upstream_arg(s: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(s).map_err(|e| format!("`{s}` is not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "`{s}`: give the application's http:// or https:// URL (such as http://127.0.0.1:3000)"
        ));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(format!("`{s}`: the URL takes no query or fragment"));
    }
    Ok(u)
}

/// An HTTP header name (RFC 9110 token), lower-cased.
pub(crate) fn header_name_arg(s: &str) -> Result<String, String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if s.is_empty() || !s.chars().all(token) {
        return Err(format!("`{s}` is not a header name (such as X-Real-IP)"));
    }
    Ok(s.to_ascii_lowercase())
}

/// `512MiB`, `10MB`, `1GiB`, or bytes.
pub(crate) fn size_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{s}` is not a size (such as 256MiB)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "`{s}`: the unit is one of B, KB, KiB, MB, MiB, GB, GiB"
            ));
        }
    };
    n.checked_mul(mult)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{s}` is not a usable size"))
}

/// `30s`, `500ms`, `15m`, `12h`, `7d`, `1h 30m`, or seconds; at most ten
/// years (longer ones would overflow the clock's arithmetic).
pub(crate) fn any_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let d = match t.parse::<u64>() {
        Ok(n) => std::time::Duration::from_secs(n),
        Err(_) => humantime::parse_duration(t).map_err(|e| {
            format!("`{s}` is not a duration (such as 30s, 500ms, 15m, 12h, 7d): {e}")
        })?,
    };
    if d > std::time::Duration::from_secs(10 * 366 * 86_400) {
        return Err(format!(
            "`{s}` is not a duration botscope takes (at most 10 years)"
        ));
    }
    Ok(d)
}

/// A canary period: a second to a year.
pub(crate) fn period_arg(s: &str) -> Result<std::time::Duration, String> {
    let d = any_duration_arg(s)?;
    if d.is_zero() || d > std::time::Duration::from_secs(366 * 86_400) {
        return Err(format!("`{s}`: give a period above 0 and at most a year"));
    }
    Ok(d)
}

/// A server's timeout: a duration above 0 and at most a day.
pub(crate) fn duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let d = any_duration_arg(s)?;
    if d.is_zero() || d > std::time::Duration::from_secs(86_400) {
        return Err(format!("`{s}`: give a duration above 0 and at most a day"));
    }
    Ok(d)
}

/// A crawl's name: no control characters.
pub(crate) fn crawl_name(s: &str) -> Result<String, botscope_store::BadCrawlName> {
    botscope_store::check_crawl_name(s).map(|()| s.to_owned())
}

/// A crawl named as Common Crawl names them, `CC-MAIN-YYYY-WW`.
pub(crate) fn cc_crawl_name(s: &str) -> Result<String, String> {
    match botscope_store::synth::crawl_start(s) {
        Some(_) => Ok(s.to_owned()),
        None => Err(format!(
            "`{}` is not a Common Crawl crawl name such as CC-MAIN-2024-10 (year and ISO week)",
            s.escape_debug()
        )),
    }
}

/// A time: 2007-03-01, 2007-03 or RFC 3339.
pub(crate) fn time_arg(s: &str) -> Result<i64, String> {
    botscope_store::parse_time_arg(s).map_err(|e| e.to_string())
}

/// A time to check at: RFC 3339, a date, or Unix seconds.
pub(crate) fn at_arg(s: &str) -> Result<i64, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => time_arg(s),
    }
}

/// A signature's longest validity: a duration above 0, at most 1000 years.
pub(crate) fn validity_arg(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let d = match t.parse::<u64>() {
        Ok(n) => std::time::Duration::from_secs(n),
        Err(_) => humantime::parse_duration(t)
            .map_err(|e| format!("`{s}` is not a duration (such as 300s, 24h, 100y): {e}"))?,
    };
    let secs = d.as_secs();
    if secs == 0 || secs > 1000 * 366 * 86_400 {
        return Err(format!(
            "`{s}`: give a duration above 0 and at most 1000 years"
        ));
    }
    i64::try_from(secs).map_err(|e| e.to_string())
}

/// A time, or a duration before now (`7d`, `24h`).
pub(crate) fn since_arg(s: &str) -> Result<i64, String> {
    if let Ok(t) = time_arg(s) {
        return Ok(t);
    }
    match any_duration_arg(s) {
        Ok(d) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |n| n.as_secs());
            Ok(i64::try_from(now.saturating_sub(d.as_secs())).unwrap_or(0))
        }
        Err(_) => Err(format!(
            "`{}`: give a date (2026-11-20), RFC 3339, or a duration ago (7d, 24h)",
            s.escape_debug()
        )),
    }
}

/// A `--usage` statement: a structured-field dictionary of the vocabulary's
/// categories to `y` or `n`, every entry understood.
pub(crate) fn usage_arg(s: &str) -> Result<botscope_robotstxt::Usage, String> {
    let p = botscope_robotstxt::parse_preference(s).map_err(|e| e.to_string())?;
    if let Some(problem) = p.problems.first() {
        return Err(problem.clone());
    }
    if p.usage.is_empty() {
        return Err("no preference (write such as `train-ai=n, search=y`)".into());
    }
    Ok(p.usage)
}

pub(crate) fn category_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        botscope_botid::Category::ALL.iter().map(|(name, _)| *name),
    )
}

/// A log format: a preset name, an Apache or an nginx format string.
pub(crate) fn log_format_arg(s: &str) -> Result<botscope_accesslog::LogFormat, String> {
    botscope_accesslog::LogFormat::from_spec(s).map_err(|e| e.to_string())
}
