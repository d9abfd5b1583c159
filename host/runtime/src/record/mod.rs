//! What a run leaves behind: the events it records as it goes, the stream they are written
//! as (`--json`, `--record`, an embedder's sink), and how a plugin's text is shown safely.

pub mod line_bound;
pub mod screen;
pub mod stream;
pub mod transcript;
