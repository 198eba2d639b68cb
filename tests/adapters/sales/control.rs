//! Pausing and stopping a sale's consumer from a test. The consumer passes checkpoints where a
//! pause or a stop takes effect; `pause()` returns once the consumer says it is paused (it is
//! between orders and takes no more), so a test waits for that state, never for a time.

use std::future::Future;

use tokio::sync::{watch, Mutex};
use tokio::task::JoinHandle;

/// The test's side: pause, resume, stop.
pub struct ConsumerHandle {
    stop: watch::Sender<bool>,
    pause: watch::Sender<bool>,
    paused: watch::Receiver<bool>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// The consumer's side: where it looks whether to go on.
pub struct ConsumerSignals {
    stop: watch::Receiver<bool>,
    pause: watch::Receiver<bool>,
    paused: watch::Sender<bool>,
}

impl ConsumerHandle {
    /// Spawns `consumer` with its signals.
    pub fn spawn<F, Fut>(consumer: F) -> Self
    where
        F: FnOnce(ConsumerSignals) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (stop, stop_rx) = watch::channel(false);
        let (pause, pause_rx) = watch::channel(false);
        let (paused_tx, paused) = watch::channel(false);
        let task = tokio::spawn(consumer(ConsumerSignals { stop: stop_rx, pause: pause_rx, paused: paused_tx }));
        Self { stop, pause, paused, task: Mutex::new(Some(task)) }
    }

    /// Asks the consumer to pause and waits until it has: no order is being handled, none will be.
    pub async fn pause(&self) {
        self.pause.send_replace(true);
        let mut paused = self.paused.clone();
        paused.wait_for(|p| *p).await.expect("the consumer is running (it acknowledges the pause)");
    }

    /// Lets a paused consumer go on, and waits until it has.
    pub async fn resume(&self) {
        self.pause.send_replace(false);
        let mut paused = self.paused.clone();
        paused.wait_for(|p| !*p).await.expect("the consumer is running (it acknowledges the resume)");
    }

    /// Stops the consumer and waits for its task to end. Idempotent.
    pub async fn stop(&self) {
        self.stop.send_replace(true);
        if let Some(task) = self.task.lock().await.take() {
            task.await.expect("the consumer's task does not panic");
        }
    }
}

impl ConsumerSignals {
    /// The consumer's checkpoint between orders: false when it must stop; while a pause is
    /// asked, says it is paused and waits for a resume (or a stop).
    pub async fn go_on(&mut self) -> bool {
        if *self.stop.borrow() {
            return false;
        }
        if !*self.pause.borrow() {
            return true;
        }
        self.paused.send_replace(true);
        tokio::select! {
            _ = self.pause.wait_for(|p| !*p) => {}
            _ = self.stop.wait_for(|s| *s) => {}
        }
        self.paused.send_replace(false);
        !*self.stop.borrow()
    }

    /// Resolves once a pause or a stop is asked (for a consumer waiting on its queue).
    pub async fn interrupted(&mut self) {
        tokio::select! {
            _ = self.pause.wait_for(|p| *p) => {}
            _ = self.stop.wait_for(|s| *s) => {}
        }
    }
}
