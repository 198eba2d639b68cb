//! One keep-alive HTTP/1.1 connection per load worker: hyper's client connection, with no
//! pool, no URL parsing and no header map per request. The generator shares the machine with
//! the engine it measures, so what it spends per request is taken from the engine: with
//! reqwest's pooled client the generator spent 18.5 us of CPU per order here, with this 10
//! (`scripts/cpu-per-order.sh`).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// Why a request got no HTTP answer.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, std::io::Error),
    /// The connection or the exchange on it failed (hyper's words are the cause).
    #[error("the HTTP exchange with the engine failed")]
    Http(#[from] hyper::Error),
    #[error("the HTTP request could not be built")]
    Request(#[from] hyper::http::Error),
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
}

/// A connection to `host:port`, opened on first use and again after any failure.
pub struct Conn {
    /// `host:port`, also sent as the `Host` header.
    authority: String,
    timeout: Duration,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    pub fn new(authority: String, timeout: Duration) -> Self {
        Self { authority, timeout, sender: None }
    }

    async fn open(&self) -> Result<SendRequest<Full<Bytes>>, ConnError> {
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| ConnError::Connect(self.authority.clone(), e))?;
        // Small requests one at a time: Nagle would hold each for the previous one's ACK.
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            // Ends when the engine closes the connection or the sender is dropped; the next
            // request then sees the error and reconnects.
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// `POST path` with a JSON body: the status and the whole answer body.
    pub async fn post_json(&mut self, path: &str, body: String) -> Result<(u16, Bytes), ConnError> {
        let result = tokio::time::timeout(self.timeout, self.exchange(path, body)).await;
        let result = result.unwrap_or(Err(ConnError::TimedOut(self.timeout)));
        if result.is_err() {
            // Whatever state the connection is in, the next request starts on a fresh one.
            self.sender = None;
        }
        result
    }

    async fn exchange(&mut self, path: &str, body: String) -> Result<(u16, Bytes), ConnError> {
        let mut request = hyper::Request::post(path)
            .header(hyper::header::HOST, self.authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))?;
        // One retry, and only of a request the old connection never sent (the engine closed
        // it while it was idle, e.g. a restart between two requests): such a request did
        // not reach the engine, so it is not a failed order.
        let mut retried = false;
        loop {
            let sender = match &mut self.sender {
                Some(s) if !s.is_closed() => s,
                _ => self.sender.insert(self.open().await?),
            };
            let sent = match sender.ready().await {
                Ok(()) => sender.try_send_request(request).await,
                Err(_) if !retried => {
                    (self.sender, retried) = (None, true);
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            match sent {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let body = response.into_body().collect().await?.to_bytes();
                    return Ok((status, body));
                }
                Err(mut e) => match e.take_message() {
                    Some(unsent) if !retried => {
                        (self.sender, retried) = (None, true);
                        request = unsent;
                    }
                    _ => return Err(e.into_error().into()),
                },
            }
        }
    }
}
