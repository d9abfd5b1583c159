//! A plugin's standard output and error, kept in memory up to a cap for the stop report.

use std::sync::Arc;

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

/// A plugin's standard output or error, kept in memory up to a cap for the stop report;
/// what comes after the cap is dropped, not refused, so a chatty plugin keeps running.
#[derive(Clone)]
pub struct Captured {
    inner: Arc<std::sync::Mutex<CapturedBytes>>,
}

struct CapturedBytes {
    bytes: Vec<u8>,
    cap: usize,
    cut: bool,
}

impl Captured {
    pub fn new(cap: usize) -> Captured {
        Captured { inner: Arc::new(std::sync::Mutex::new(CapturedBytes { bytes: Vec::new(), cap, cut: false })) }
    }

    fn push(&self, bytes: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let room = inner.cap.saturating_sub(inner.bytes.len());
        if bytes.len() > room {
            inner.cut = true;
        }
        let take = bytes.len().min(room);
        inner.bytes.extend_from_slice(&bytes[..take]);
    }

    /// What was written, as text, with a note when the cap cut it. `redact` is given the
    /// text before the note, and whether the cap cut it (its end may then be what is left of
    /// a secret's value), so the note is never taken for the text it follows.
    pub fn text(&self, redact: impl FnOnce(String, bool) -> String) -> String {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let kept = String::from_utf8_lossy(&inner.bytes);
        // A cut text keeps its last characters as they came: they may be a value's beginning.
        // (less a character the cap split, which would hide how it ends).
        let kept = if inner.cut { kept.trim_start().trim_end_matches('\u{FFFD}') } else { kept.trim() };
        let mut text = redact(kept.to_string(), inner.cut);
        if inner.cut {
            text.push_str(&format!("\n… (cut at {} bytes)", inner.cap));
        }
        text
    }
}

impl IsTerminal for Captured {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Captured {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Writes are accepted in pieces this big at most.
const CAPTURE_PERMIT: usize = 64 << 10;

#[async_trait::async_trait]
impl OutputStream for Captured {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(CAPTURE_PERMIT)
    }
}

#[async_trait::async_trait]
impl Pollable for Captured {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for Captured {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_output_keeps_the_first_bytes_and_says_it_was_cut() {
        let out = Captured::new(5);
        out.push(b"hello world");
        assert_eq!(out.text(|text, _| text), "hello\n… (cut at 5 bytes)");
    }
}
