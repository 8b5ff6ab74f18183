//! Progress bars: drawn on standard error when it is a terminal, never
//! otherwise, never when asked not to.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::settings::Settings;

/// A bar of `len` (a spinner when 0) in `template`, or `None`.
pub fn bar(settings: &Settings, disabled: bool, len: u64, template: &str) -> Option<ProgressBar> {
    if disabled || !settings.terminal {
        return None;
    }
    let pb = if len > 0 {
        ProgressBar::new(len)
    } else {
        ProgressBar::new_spinner()
    };
    pb.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_draw_target(ProgressDrawTarget::stderr());
    Some(pb)
}
