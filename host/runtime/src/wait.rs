//! Waiting for a future up to a bound of real time, on the runtime's own timer, so it serves
//! on any executor (no tokio timer is needed of the caller's).

use std::time::Duration;

/// `future`'s output if it finishes within `limit` of real time; `None` when the time ran out
/// first (the future is left unfinished).
pub(crate) async fn within<T>(future: impl Future<Output = T>, limit: Duration) -> Option<T> {
    // A timer's instant must be representable: a year is as good as never to one call.
    const NEVER: Duration = Duration::from_secs(365 * 24 * 60 * 60);
    let mut future = std::pin::pin!(future);
    let mut timer = std::pin::pin!(futures_timer::Delay::new(limit.min(NEVER)));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(output));
        }
        timer.as_mut().poll(cx).map(|()| None)
    })
    .await
}
