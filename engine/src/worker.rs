//! A named thread beside the rayon pool that handles requests one at a time, in the order they
//! are handed over, and hands each result back in that order: the run's helpers that overlap a
//! tick (the usage rows read ahead, `replay/usage_ahead.rs`; output parts written,
//! `output/part_writer.rs`). Nothing depends on timing: results come back in request order.
//!
//! Invariants: at most `held` requests wait for the thread (a hand-over beyond waits); the thread
//! ends when its [`Worker`] is dropped, after the requests it holds (the drop waits for it), or
//! if handling a request panics (then hand-overs give their request back and no result comes).

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// The run's end of a worker thread (module doc).
pub struct Worker<Q, R> {
    requests: Option<SyncSender<Q>>,
    results: Receiver<R>,
    thread: Option<JoinHandle<()>>,
}

impl<Q: Send + 'static, R: Send + 'static> Worker<Q, R> {
    /// Starts thread `name` handling each request with `handle`, `held` of them waiting at most;
    /// `None` if the system would not start a thread.
    pub fn spawn(
        name: &str,
        held: usize,
        mut handle: impl FnMut(Q) -> R + Send + 'static,
    ) -> Option<Worker<Q, R>> {
        let (requests, todo) = sync_channel::<Q>(held);
        let (done, results) = std::sync::mpsc::channel();
        let work = move || {
            for request in todo {
                if done.send(handle(request)).is_err() {
                    return;
                }
            }
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(work)
            .ok()?;
        Some(Worker {
            requests: Some(requests),
            results,
            thread: Some(thread),
        })
    }

    /// Hands `request` over (waiting while `held` wait); gives it back if the thread is gone.
    pub fn send(&self, request: Q) -> Result<(), Q> {
        match &self.requests {
            Some(requests) => requests.send(request).map_err(|e| e.0),
            None => Err(request),
        }
    }

    /// The next result, waiting for it; `None` if the thread is gone without it.
    pub fn recv(&self) -> Option<R> {
        self.results.recv().ok()
    }

    /// The next result if it is ready.
    pub fn try_recv(&self) -> Option<R> {
        self.results.try_recv().ok()
    }
}

impl<Q, R> Drop for Worker<Q, R> {
    /// Lets the thread finish the requests it holds and end.
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in request order, more requests than are held included; a drop waits
    /// for the requests held.
    #[test]
    fn results_come_back_in_order() {
        let worker = Worker::spawn("test-worker", 2, |k: u64| k * k).unwrap();
        for k in 0..5 {
            worker.send(k).unwrap();
            if k == 2 {
                assert_eq!(worker.recv(), Some(0));
            }
        }
        let rest: Vec<u64> = (0..4).map_while(|_| worker.recv()).collect();
        assert_eq!(rest, [1, 4, 9, 16]);
        assert_eq!(worker.try_recv(), None);
        let (sent, seen) = std::sync::mpsc::channel();
        let worker = Worker::spawn("test-worker", 4, move |k: u64| sent.send(k).unwrap()).unwrap();
        (0..3).for_each(|k| worker.send(k).unwrap());
        drop(worker);
        assert_eq!(seen.try_iter().collect::<Vec<_>>(), [0, 1, 2]);
    }

    /// A request whose handling panics ends the thread: its result never comes, and the next
    /// hand-over gives its request back.
    #[test]
    fn a_panicking_request_ends_the_thread() {
        let worker = Worker::spawn("test-worker", 1, |k: u64| {
            assert!(k < 10, "request {k}");
            k
        })
        .unwrap();
        worker.send(1).unwrap();
        assert_eq!(worker.recv(), Some(1));
        worker.send(10).unwrap();
        assert_eq!(worker.recv(), None);
        assert_eq!(worker.send(2), Err(2));
    }
}
