//! One proxy of the fault-proxy service: a listening port that forwards to an upstream and
//! does to each connection what its toxics say ([`super::toxics`]).
//!
//! A disabled proxy closes its port (new connections are refused by the kernel, a real
//! `ECONNREFUSED`) and drops every open connection, as Toxiproxy's `enabled: false` does; the
//! in-process [`super::FaultProxy`] can also close the port alone, or drop the connections
//! alone. Toxics are read per chunk, so adding or removing one changes open connections at
//! once.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::toxics::{Effects, Stream, Toxic};

struct Shared {
    upstream: String,
    /// Whether the port is open (a disabled proxy's is closed).
    listening: watch::Sender<bool>,
    toxics: watch::Sender<Vec<Toxic>>,
    /// Bumped to drop every open connection.
    cuts: watch::Sender<u64>,
}

/// A running proxy; stops, and drops its connections, when dropped.
pub struct Link {
    listen: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

/// Binds `listen`. A proxy replaced on its own address (`/populate` with a new upstream)
/// finds the port still held for a moment: the old link's task drops its listener only when
/// the runtime next polls the aborted task. So an address in use is tried again briefly.
async fn bind(listen: &str) -> io::Result<TcpListener> {
    let mut tries = 0;
    loop {
        match TcpListener::bind(listen).await {
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && tries < 50 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

impl Link {
    /// Listens on `listen` (port 0 for a free one) and forwards to `upstream` (`host:port`).
    pub async fn start(listen: &str, upstream: String, enabled: bool) -> io::Result<Self> {
        let listener = bind(listen).await?;
        let listen = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            listening: watch::channel(enabled).0,
            toxics: watch::channel(Vec::new()).0,
            cuts: watch::channel(0).0,
        });
        let task = tokio::spawn(accept_loop(listener, listen, shared.clone()));
        Ok(Self { listen, shared, task })
    }

    /// Where clients connect.
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    pub fn upstream(&self) -> &str {
        &self.shared.upstream
    }

    pub fn enabled(&self) -> bool {
        *self.shared.listening.borrow()
    }

    /// Opens or closes the port; closing drops every open connection, as Toxiproxy does.
    pub fn set_enabled(&self, enabled: bool) {
        let was = self.set_listening(enabled);
        if was && !enabled {
            self.cut();
        }
    }

    /// Opens or closes the port only: open connections carry on. Says whether it was open.
    pub fn set_listening(&self, listening: bool) -> bool {
        self.shared.listening.send_replace(listening)
    }

    /// Drops every connection open now.
    pub fn cut(&self) {
        self.shared.cuts.send_modify(|n| *n += 1);
    }

    pub fn toxics(&self) -> Vec<Toxic> {
        self.shared.toxics.borrow().clone()
    }

    /// Replaces the toxics; open connections follow from their next chunk, and a chunk held
    /// by a latency is let go. Setting the same toxics again (a lease renewed) changes nothing
    /// and lets nothing go.
    pub fn set_toxics(&self, toxics: Vec<Toxic>) {
        self.shared.toxics.send_if_modified(|current| {
            let modified = *current != toxics;
            if modified {
                *current = toxics;
            }
            modified
        });
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept_loop(listener: TcpListener, addr: SocketAddr, shared: Arc<Shared>) {
    let mut enabled = shared.listening.subscribe();
    let mut listener = Some(listener);
    loop {
        let open = *enabled.borrow_and_update();
        match (&listener, open) {
            (Some(_), false) => listener = None, // the kernel refuses from now on
            (None, true) => match TcpListener::bind(addr).await {
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
            if enabled.changed().await.is_err() {
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
            changed = enabled.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// Per connection: whether each toxic applies to it (drawn once, by its toxicity) and when
/// the connection first saw it (a `timeout` or `reset_peer` counts from then).
#[derive(Default)]
struct Drawn {
    toxics: HashMap<String, (bool, Instant)>,
}

impl Drawn {
    fn see(&mut self, toxics: &[Toxic], now: Instant) {
        self.toxics.retain(|name, _| toxics.iter().any(|t| &t.name == name));
        for toxic in toxics {
            if !self.toxics.contains_key(&toxic.name) {
                let applies = toxic.toxicity >= 1.0 || rand::random::<f32>() < toxic.toxicity;
                self.toxics.insert(toxic.name.clone(), (applies, now));
            }
        }
    }

    fn applies(&self, toxic: &Toxic) -> bool {
        self.toxics.get(&toxic.name).is_some_and(|(applies, _)| *applies)
    }

    /// The earliest moment a `timeout` closes or a `reset_peer` resets this connection.
    fn deadline(&self, toxics: &[Toxic]) -> Option<(Instant, bool)> {
        [Stream::Upstream, Stream::Downstream]
            .into_iter()
            .flat_map(|stream| {
                toxics.iter().filter(move |t| t.stream == stream && self.applies(t)).filter_map(|t| {
                    let since = self.toxics.get(&t.name)?.1;
                    let effects = Effects::of([t], t.stream, |_| true);
                    let close = effects.silence.flatten().map(|after| (since + after, false));
                    let reset = effects.reset_after.map(|after| (since + after, true));
                    close.into_iter().chain(reset).min_by_key(|(at, _)| *at)
                })
            })
            .min_by_key(|(at, _)| *at)
    }
}

async fn connection(client: TcpStream, shared: Arc<Shared>) {
    let Ok(server) = TcpStream::connect(&shared.upstream).await else {
        return; // the client sees its connection closed, as with a dead upstream
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let mut cuts = shared.cuts.subscribe();
    cuts.borrow_and_update();
    let mut toxics = shared.toxics.subscribe();
    let drawn = Arc::new(Mutex::new(Drawn::default()));
    drawn.lock().unwrap().see(&toxics.borrow_and_update(), Instant::now());

    let (stop, stopped) = watch::channel(false);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let mut up = tokio::spawn(pump(
        client_read,
        server_write,
        Stream::Upstream,
        shared.toxics.subscribe(),
        drawn.clone(),
        stopped.clone(),
    ));
    let mut down = tokio::spawn(pump(
        server_read,
        client_write,
        Stream::Downstream,
        shared.toxics.subscribe(),
        drawn.clone(),
        stopped,
    ));

    // Waits for the pumps to end by themselves (both peers closed), a cut, or a toxic's
    // deadline; a pump that ended is not polled again.
    let (mut up_ended, mut down_ended) = (None, None);
    let mut reset = false;
    while up_ended.is_none() || down_ended.is_none() {
        let deadline = drawn.lock().unwrap().deadline(&toxics.borrow());
        let sleep_until = deadline.map_or_else(|| Instant::now() + Duration::from_secs(3600), |(at, _)| at);
        tokio::select! {
            _ = cuts.changed() => break,
            _ = tokio::time::sleep_until(sleep_until), if deadline.is_some() => {
                reset = deadline.is_some_and(|(_, is_reset)| is_reset);
                break;
            }
            changed = toxics.changed() => {
                if changed.is_err() {
                    break;
                }
                drawn.lock().unwrap().see(&toxics.borrow_and_update(), Instant::now());
            }
            ended = &mut up, if up_ended.is_none() => up_ended = Some(ended),
            ended = &mut down, if down_ended.is_none() => down_ended = Some(ended),
        }
    }
    let _ = stop.send(true);
    let up = match up_ended {
        Some(ended) => ended,
        None => up.await,
    };
    let down = match down_ended {
        Some(ended) => ended,
        None => down.await,
    };
    let (Ok(up), Ok(down)) = (up, down) else { return };
    let (Ok(client), Ok(server)) = (up.0.reunite(down.1), down.0.reunite(up.1)) else { return };
    if reset {
        // A zero linger makes the close a TCP RST: "connection reset by peer".
        let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
        let _ = socket2::SockRef::from(&server).set_linger(Some(Duration::ZERO));
    }
}

/// Copies one direction, applying its toxics to each chunk, until the peer closes or `stop`;
/// hands its halves back so that the connection can be reset.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    stream: Stream,
    mut toxics: watch::Receiver<Vec<Toxic>>,
    drawn: Arc<Mutex<Drawn>>,
    mut stop: watch::Receiver<bool>,
) -> (OwnedReadHalf, OwnedWriteHalf) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut open = true;
    // What this direction's toxics do, worked out again only when they change: a chunk costs
    // one atomic load, not a lock and a lookup per toxic.
    let mut effects = Effects::default();
    let mut woken = false;
    toxics.mark_changed();
    while open {
        let n = tokio::select! {
            _ = stop.changed() => break,
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
        };
        if std::mem::take(&mut woken) || toxics.has_changed().unwrap_or(false) {
            let toxics = toxics.borrow_and_update();
            let mut drawn = drawn.lock().unwrap();
            // A toxic added a moment ago is drawn here if the connection has not seen it yet.
            drawn.see(&toxics, Instant::now());
            effects = Effects::of(toxics.iter(), stream, |t| drawn.applies(t));
        }
        if effects.silence.is_some() {
            continue; // the black hole: read and dropped
        }
        let wait = delay(effects.latency, effects.jitter) + effects.pace(n);
        open = tokio::select! {
            _ = stop.changed() => false,
            written = async {
                if !wait.is_zero() {
                    // A toxic removed or changed ends the wait: the held chunk goes on now, as
                    // Toxiproxy's interrupted latency toxic forwards it, so a long stall ends
                    // with its fault. The next chunk works out the effects again.
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = toxics.changed() => woken = true,
                    }
                }
                to.write_all(&buf[..n]).await
            } => written.is_ok(),
        };
    }
    if !*stop.borrow() {
        let _ = to.shutdown().await;
    }
    (from, to)
}

/// `latency ± jitter`, drawn uniformly, never below zero.
fn delay(latency: Duration, jitter: Duration) -> Duration {
    if jitter.is_zero() {
        return latency;
    }
    (latency + jitter.mul_f64(2.0 * rand::random::<f64>())).saturating_sub(jitter)
}
