//! A fault-injecting TCP proxy, in process, scripted step by step by tests.
//!
//! Put it between engines and Redis (or MySQL) and change its behaviour at will:
//!
//! - [`Fault::PassThrough`]: bytes flow both ways untouched.
//! - [`Fault::Refuse`]: the listening port is closed, so new connections are refused by the
//!   kernel (a real `ECONNREFUSED`, not an accept-then-close); existing ones carry on.
//! - [`Fault::Latency`]: every chunk, each way, is held back this long.
//! - [`Fault::Blackhole`]: connections stay open and accepted, but nothing is forwarded:
//!   requests vanish and no answer ever comes (the timeout case).
//! - [`FaultProxy::cut`]: every existing connection is dropped at once.
//!
//! It is a [`Link`] of the fault-proxy service, driven by these few words instead of
//! Toxiproxy's: one proxy implementation for tests, drills and staging.

use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use super::link::Link;
use super::toxics::{Kind, Stream, Toxic};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    PassThrough,
    Refuse,
    Latency(Duration),
    Blackhole,
}

impl Fault {
    /// The toxics that do this, on both streams.
    fn toxics(self) -> Vec<Toxic> {
        let kind = match self {
            Self::PassThrough | Self::Refuse => return Vec::new(),
            Self::Latency(d) => Kind::Latency { latency: d.as_millis() as u64, jitter: 0 },
            Self::Blackhole => Kind::Timeout { timeout: 0 },
        };
        [Stream::Upstream, Stream::Downstream]
            .map(|stream| Toxic {
                name: format!("{}_{}", kind.type_name(), stream.as_str()),
                kind: kind.clone(),
                stream,
                toxicity: 1.0,
            })
            .into()
    }
}

/// A running proxy; stops when dropped.
pub struct FaultProxy {
    link: Link,
    fault: Mutex<Fault>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let link = Link::start("127.0.0.1:0", upstream.to_string(), true).await?;
        Ok(Self { link, fault: Mutex::new(Fault::PassThrough) })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.link.listen()
    }

    pub fn fault(&self) -> Fault {
        *self.fault.lock().unwrap()
    }

    /// Changes the behaviour for new and existing connections.
    pub fn set(&self, fault: Fault) {
        *self.fault.lock().unwrap() = fault;
        self.link.set_toxics(fault.toxics());
        self.link.set_listening(fault != Fault::Refuse);
    }

    /// Drops every connection open now.
    pub fn cut(&self) {
        self.link.cut();
    }
}
