//! Progress on a person's terminal: a spinner while the mesh works on a long wait (a build,
//! a push), cleared by whatever is shown next. Off a terminal the wait is a line instead,
//! since a spinner in a log file is only noise.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::human::{Shown, clock};
use super::stdout::emit;

/// The spinner shown, if any, and whether there is a terminal to show one on.
pub struct Progress {
    /// Whether stdout is a terminal, learnt once when the output opens.
    terminal: bool,
    /// The spinner of the wait under way; the lock also keeps a line from being written
    /// between a spinner's clearing and its replacement.
    spinner: Mutex<Option<ProgressBar>>,
}

impl Progress {
    /// Progress for this process's stdout.
    pub fn new() -> Progress {
        Progress { terminal: std::io::stdout().is_terminal(), spinner: Mutex::new(None) }
    }

    /// Clears the spinner, then shows `shown`: its lines, or a long wait as a spinner on a
    /// terminal and as a line stamped with the mesh's clock elsewhere.
    pub fn show(&self, shown: Shown) {
        let mut spinner = self.spinner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = spinner.take() {
            bar.finish_and_clear();
        }
        let line = match shown {
            Shown::Lines(text) => text,
            Shown::Wait { what, .. } if self.terminal => {
                let bar = ProgressBar::new_spinner().with_message(what);
                bar.set_style(
                    ProgressStyle::with_template("{spinner}     {msg} {elapsed}")
                        .unwrap_or(ProgressStyle::default_spinner()),
                );
                bar.enable_steady_tick(Duration::from_millis(120));
                *spinner = Some(bar);
                return;
            }
            Shown::Wait { what, at } => format!("{} {what}", clock(at)),
            Shown::Nothing => return,
        };
        emit(&line);
    }

    /// Clears the spinner, if one is shown, before a line of the host's own.
    pub fn clear(&self) {
        if let Some(bar) = self.spinner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}
