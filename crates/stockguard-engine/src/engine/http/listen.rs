//! The engine's listening socket, with a backlog sized for a sale's opening burst.
//!
//! `tokio::net::TcpListener::bind` asks the kernel for a backlog of 128, as the standard
//! library does. A sale's buyers arrive at once: when more connections than that wait to be
//! accepted, Linux drops the next SYNs (`ListenOverflows` in `nstat`), and each of those
//! buyers waits out TCP's first retransmission, one second, before the engine even sees
//! them. `bench engine --vouching-clients 400` met it: 544 overflows in one run, and a p99
//! of about 1,030 ms in the runs with a stalled replica, 87-118 ms with this backlog
//! (BENCHMARKS.md, "What vouching costs", run 14). The kernel caps what is asked at
//! `net.core.somaxconn` (4,096 by default since Linux 5.4).

use std::io;

use tokio::net::{TcpListener, TcpSocket};

/// The backlog `engine serve` asks for unless told (`--listen-backlog`).
pub const DEFAULT_BACKLOG: u32 = 4096;

/// Listens on `addr` (`host:port`, the first of its addresses that binds) with room for
/// `backlog` connections not yet accepted.
pub async fn bind(addr: &str, backlog: u32) -> io::Result<TcpListener> {
    let mut last = None;
    for candidate in tokio::net::lookup_host(addr).await? {
        let socket = if candidate.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        // As tokio's own bind does: a restarted engine may listen again at once.
        socket.set_reuseaddr(true)?;
        match socket.bind(candidate).and_then(|()| socket.listen(backlog)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{addr} names no address"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of connections larger than the standard library's backlog of 128, none of them
    /// accepted yet: every one completes its handshake (with 128, those past it would wait
    /// for a SYN retransmission and this test would hang until its own timeout).
    #[tokio::test]
    async fn a_listener_holds_a_burst_of_connections_before_it_accepts_any() {
        let listener = bind("127.0.0.1:0", 1024).await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let burst = (0..400).map(|_| tokio::net::TcpStream::connect(addr));
        let connected =
            tokio::time::timeout(std::time::Duration::from_secs(30), futures_util::future::try_join_all(burst))
                .await
                .expect("every connection completed without a SYN retransmission's wait")
                .expect("connect");
        assert_eq!(connected.len(), 400);
        drop(listener);
    }

    #[tokio::test]
    async fn an_address_without_a_port_is_refused_as_invalid_input() {
        let err = bind("no port here", DEFAULT_BACKLOG).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }
}
