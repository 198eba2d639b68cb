//! A RabbitMQ queue as an in-flight source: what AMQP shows of it at once (the messages ready
//! and the consumers subscribed, by a passive declare that creates nothing), and what only the
//! management HTTP API shows (the messages consumers hold unacknowledged).
//!
//! A consumer with no prefetch limit takes the whole backlog: the queue then shows 0 ready while
//! every accepted order waits in the consumer's hands, in Redis and in no row. Those messages are
//! in flight, and a reading that cannot see them is never a drift verdict.
//!
//! The management API's figures are RabbitMQ's statistics, not the queue as it is now: the queue
//! reports them every `collect_statistics_interval` (5 s by default, and only once it is awake:
//! an idle queue's timer starts when a message wakes it), and the management collector takes
//! them in every interval again. A figure read at time `t` can describe the queue as it was two
//! intervals earlier (seen here: held messages first shown 6.9 to 9.95 s after a quiet queue took
//! them; about 2 s on a busy one). A drift is a verdict only on figures read at least
//! [`figures_age`] after the reading's first pass began (see [`super::reading`]).

use serde::Deserialize;

use super::missing::Missing;
use super::AdapterError;

/// What one look at the queue found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLook {
    /// Messages ready (not delivered), as AMQP counts them now.
    pub ready: i64,
    /// Consumers subscribed now.
    pub consumers: i64,
    /// Messages held unacknowledged by the consumers, by the management API's statistics.
    pub held: HeldFigure,
}

/// What the management API says of the messages consumers hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldFigure {
    /// No management URL is named.
    NotNamed,
    /// The statistics do not describe the queue yet (a queue just declared, a server just
    /// started: RabbitMQ gathers them every few seconds).
    NotYet,
    /// Held messages, as the statistics last described the queue.
    Count(i64),
}

/// How long after a reading's first pass began the management API's figures must be read for
/// them to describe a moment after it: two statistics intervals (the queue's report, then the
/// collector's), and two seconds for the timers' own delays.
pub fn figures_age(stats_interval_ms: Option<u64>) -> std::time::Duration {
    let interval = stats_interval_ms.unwrap_or(super::file::DEFAULT_STATS_INTERVAL_MS);
    std::time::Duration::from_millis(2 * interval + 2_000)
}

/// Looks at the queue: AMQP for what is ready and who consumes, then (when named) the
/// management API for what is held.
pub async fn look(url: &str, queue: &str, management_url: Option<&str>) -> Result<QueueLook, AdapterError> {
    let (ready, consumers) = declare_passive(url, queue).await?;
    let held = match management_url {
        Some(m) => held_by_consumers(m, url, queue).await?,
        None => HeldFigure::NotNamed,
    };
    Ok(QueueLook { ready: i64::from(ready), consumers: i64::from(consumers), held })
}

/// The number of ready messages in a queue, by a passive declare (which creates nothing).
pub async fn depth(url: &str, queue: &str) -> Result<u32, AdapterError> {
    Ok(declare_passive(url, queue).await?.0)
}

/// Ready messages and consumers, by a passive declare.
async fn declare_passive(url: &str, queue: &str) -> Result<(u32, u32), AdapterError> {
    use lapin::options::QueueDeclareOptions;
    use lapin::types::FieldTable;
    let step = |step: &'static str| move |source| AdapterError::Amqp { step, source };
    let conn = lapin::Connection::connect(url, lapin::ConnectionProperties::default())
        .await
        .map_err(step("connect to RabbitMQ"))?;
    let channel = conn.create_channel().await.map_err(step("open a channel"))?;
    let declared = channel
        .queue_declare(queue.into(), QueueDeclareOptions { passive: true, ..Default::default() }, FieldTable::default())
        .await;
    let _ = conn.close(200, "".into()).await;
    match declared {
        Ok(q) => Ok((q.message_count(), q.consumer_count())),
        Err(e) if is_not_found(&e) => Err(AdapterError::Missing(Missing::RabbitQueue { queue: queue.to_string() })),
        Err(source) => Err(AdapterError::Amqp { step: "read the queue's depth", source }),
    }
}

/// The server's 404 (a passive declare of a queue that does not exist), by its kind.
fn is_not_found(e: &lapin::Error) -> bool {
    use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
    matches!(e.kind(), lapin::ErrorKind::ProtocolError(p) if matches!(p.kind(), AMQPErrorKind::Soft(AMQPSoftError::NOTFOUND)))
}

/// What the management API's queue object says (the fields read; the rest ignored).
#[derive(Debug, Deserialize)]
struct QueueStats {
    /// Absent until RabbitMQ's statistics first describe the queue.
    messages_unacknowledged: Option<i64>,
}

/// The messages the queue's consumers hold unacknowledged, by the management API.
async fn held_by_consumers(management_url: &str, amqp_url: &str, queue: &str) -> Result<HeldFigure, AdapterError> {
    let shown = crate::profile::redact(management_url);
    let refused = |detail: String| AdapterError::Management { url: shown.clone(), detail };
    let endpoint = queue_endpoint(management_url, amqp_url, queue).map_err(refused)?;
    let base = url::Url::parse(management_url).map_err(|e| refused(format!("not a URL: {e}")))?;
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| refused(format!("cannot build an HTTP client: {e}")))?;
    let mut request = client.get(endpoint);
    if !base.username().is_empty() {
        let user = percent_encoding::percent_decode_str(base.username()).decode_utf8_lossy().into_owned();
        let password =
            base.password().map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned());
        request = request.basic_auth(user, password);
    }
    let response = request.send().await.map_err(|e| refused(format!("cannot read the queue: {e}")))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| refused(format!("cannot read the answer: {e}")))?;
    match status.as_u16() {
        200 => {}
        401 => return Err(refused("the user or password was refused (401)".into())),
        404 => return Err(AdapterError::Missing(Missing::RabbitQueue { queue: queue.to_string() })),
        code => return Err(refused(format!("answered {code}"))),
    }
    let stats: QueueStats =
        serde_json::from_slice(&body).map_err(|e| refused(format!("the answer is not a queue: {e}")))?;
    Ok(stats.messages_unacknowledged.map_or(HeldFigure::NotYet, HeldFigure::Count))
}

/// `<management>/api/queues/<vhost>/<queue>`, the virtual host taken from the AMQP URL (`/` when
/// it names none), both percent-encoded as one path segment each.
fn queue_endpoint(management_url: &str, amqp_url: &str, queue: &str) -> Result<String, String> {
    use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    /// One path segment: everything but the unreserved characters encoded (`/` too).
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    let amqp = url::Url::parse(amqp_url).map_err(|e| format!("the AMQP URL is not a URL: {e}"))?;
    let vhost = match amqp.path().strip_prefix('/').unwrap_or("") {
        "" => "/".to_string(),
        raw => percent_decode_str(raw).decode_utf8_lossy().into_owned(),
    };
    let mut base = url::Url::parse(management_url).map_err(|e| format!("not a URL: {e}"))?;
    let _ = base.set_username("");
    let _ = base.set_password(None);
    let root = base.as_str().trim_end_matches('/');
    Ok(format!("{root}/api/queues/{}/{}", utf8_percent_encode(&vhost, SEGMENT), utf8_percent_encode(queue, SEGMENT)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_endpoint_takes_the_virtual_host_from_the_amqp_url_and_no_credentials() {
        let e = queue_endpoint("http://u:p@rabbit:15672", "amqp://g:g@rabbit:5672/%2f", "orders.q").unwrap();
        assert_eq!(e, "http://rabbit:15672/api/queues/%2F/orders.q");
        let e = queue_endpoint("http://rabbit:15672/", "amqp://rabbit", "q").unwrap();
        assert_eq!(e, "http://rabbit:15672/api/queues/%2F/q");
        let e = queue_endpoint("http://rabbit:15672", "amqp://rabbit/sale%20one", "q").unwrap();
        assert_eq!(e, "http://rabbit:15672/api/queues/sale%20one/q");
    }
}
