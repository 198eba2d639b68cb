//! A fault-injecting TCP proxy.
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
//! Why our own: the maintained options are either a separate server to run beside the tests
//! (toxiproxy, noxious) or simulated networks that cannot carry real MySQL and Redis
//! traffic; this is a hundred lines of tokio over real sockets, in-process, and a drill can
//! script it step by step.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    PassThrough,
    Refuse,
    Latency(Duration),
    Blackhole,
}

struct Shared {
    upstream: SocketAddr,
    fault: watch::Sender<Fault>,
    /// Bumped by [`FaultProxy::cut`]; each connection ends when it changes.
    cuts: watch::Sender<u64>,
}

/// A running proxy; stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared =
            Arc::new(Shared { upstream, fault: watch::channel(Fault::PassThrough).0, cuts: watch::channel(0).0 });
        let task = tokio::spawn(accept_loop(listener, addr, shared.clone()));
        Ok(Self { addr, shared, task })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn fault(&self) -> Fault {
        *self.shared.fault.borrow()
    }

    /// Changes the behaviour for new and existing connections.
    pub fn set(&self, fault: Fault) {
        self.shared.fault.send_replace(fault);
    }

    /// Drops every connection open now.
    pub fn cut(&self) {
        self.shared.cuts.send_modify(|n| *n += 1);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept_loop(listener: TcpListener, addr: SocketAddr, shared: Arc<Shared>) {
    let mut faults = shared.fault.subscribe();
    let mut listener = Some(listener);
    loop {
        let refusing = *faults.borrow_and_update() == Fault::Refuse;
        match (&listener, refusing) {
            (Some(_), true) => listener = None, // closing the port: the kernel refuses from now on
            (None, false) => match TcpListener::bind(addr).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!(error = %e, %addr, "fault proxy cannot reopen its port; retrying");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ => {}
        }
        let Some(l) = &listener else {
            if faults.changed().await.is_err() {
                return;
            }
            continue;
        };
        tokio::select! {
            accepted = l.accept() => {
                if let Ok((client, _)) = accepted {
                    tokio::spawn(connection(client, shared.clone()));
                }
            }
            changed = faults.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

async fn connection(client: TcpStream, shared: Arc<Shared>) {
    let Ok(server) = TcpStream::connect(shared.upstream).await else {
        return; // the client sees its connection closed, as with a dead upstream
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let mut cuts = shared.cuts.subscribe();
    cuts.borrow_and_update();
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let up = pump(client_read, server_write, shared.fault.subscribe());
    let down = pump(server_read, client_write, shared.fault.subscribe());
    tokio::select! {
        _ = async { tokio::join!(up, down) } => {}
        _ = cuts.changed() => {} // dropping both halves closes both sockets
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    faults: watch::Receiver<Fault>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let fault = *faults.borrow();
        match fault {
            Fault::Blackhole => continue,
            Fault::Latency(d) => tokio::time::sleep(d).await,
            Fault::PassThrough | Fault::Refuse => {}
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
