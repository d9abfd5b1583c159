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

/// Gives the executor a turn: pending once, having asked to be polled again, then ready. What
/// lets an embedder's cancel (a dropped future) stop a run between two steps even on a mesh
/// that answers at once, as the simulator does.
pub(crate) async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

/// Drives `future` to its end on the calling thread, parking it between polls: for what must
/// finish where nothing can await (a `Drop`), whatever executor, if any, the thread is on.
pub(crate) fn block_on<T>(future: impl Future<Output = T>) -> T {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::park();
    }
}
