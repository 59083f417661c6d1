//! Progress bars for long work, drawn on stderr only when it is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nodemaint_runtime::progress::{NoProgress, Progress};
use std::io::IsTerminal;
use std::sync::Arc;

struct Bar(ProgressBar);

impl Progress for Bar {
    fn begin(&self, label: &str, total: u64) {
        self.0.set_length(total);
        self.0.set_position(0);
        self.0.set_message(label.to_owned());
    }
    fn advance(&self, delta: u64) {
        self.0.inc(delta);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A bar on a terminal; nothing on a pipe, a file, or with `--quiet`.
pub fn bar(quiet: bool) -> Arc<dyn Progress> {
    if quiet || !std::io::stderr().is_terminal() {
        return Arc::new(NoProgress);
    }
    // Cleared when dropped too: an interrupted command leaves no half bar.
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        .with_finish(indicatif::ProgressFinish::AndClear);
    let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    Arc::new(Bar(bar))
}
