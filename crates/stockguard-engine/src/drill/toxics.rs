//! Toxics: what a fault proxy does to the bytes of one direction of a connection, in the words
//! and JSON of Toxiproxy's HTTP API, so that its clients can drive our proxy and our runner
//! can drive a real Toxiproxy.
//!
//! The subset a drill needs:
//!
//! - `latency` (`latency`, `jitter` in ms): every chunk waits `latency ± jitter` before it goes
//!   on.
//! - `bandwidth` (`rate` in KB/s): chunks go on no faster than that.
//! - `timeout` (`timeout` in ms): nothing gets through; after `timeout` the connection is
//!   closed (with 0, it stays open and silent until the toxic is removed): the black hole.
//! - `reset_peer` (`timeout` in ms): after `timeout`, the connection is reset (TCP RST), the
//!   "connection reset by peer" of a crashed server.
//!
//! A toxic acts on one `stream`: `upstream` (client to server) or `downstream` (server to
//! client, Toxiproxy's default). `toxicity` is the chance that it applies to a connection.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which way the bytes flow, as Toxiproxy names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Client to server.
    Upstream,
    /// Server to client.
    #[default]
    Downstream,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Upstream => "upstream",
            Self::Downstream => "downstream",
        }
    }
}

/// One toxic's kind and attributes. Serialized as Toxiproxy does: `type` beside
/// `attributes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "attributes", rename_all = "snake_case")]
pub enum Kind {
    Latency {
        #[serde(default)]
        latency: u64,
        #[serde(default)]
        jitter: u64,
    },
    Bandwidth {
        /// KB/s.
        #[serde(default)]
        rate: u64,
    },
    Timeout {
        #[serde(default)]
        timeout: u64,
    },
    ResetPeer {
        #[serde(default)]
        timeout: u64,
    },
}

impl Kind {
    /// The name Toxiproxy gives an unnamed toxic: `<type>_<stream>`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Latency { .. } => "latency",
            Self::Bandwidth { .. } => "bandwidth",
            Self::Timeout { .. } => "timeout",
            Self::ResetPeer { .. } => "reset_peer",
        }
    }
}

/// A toxic on a proxy, as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Toxic {
    pub name: String,
    #[serde(flatten)]
    pub kind: Kind,
    pub stream: Stream,
    pub toxicity: f32,
}

/// A toxic as a client asks for it: name, stream and toxicity may be left out.
#[derive(Debug, Clone, Deserialize)]
pub struct NewToxic {
    pub name: Option<String>,
    #[serde(flatten)]
    pub kind: Kind,
    #[serde(default)]
    pub stream: Stream,
    pub toxicity: Option<f32>,
}

impl NewToxic {
    /// The toxic this asks for, with Toxiproxy's defaults; an error names what is wrong.
    pub fn into_toxic(self) -> Result<Toxic, String> {
        let toxicity = self.toxicity.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&toxicity) {
            return Err(format!("toxicity must be between 0 and 1, not {toxicity}"));
        }
        let name = self.name.unwrap_or_else(|| format!("{}_{}", self.kind.type_name(), self.stream.as_str()));
        if name.is_empty() || name.contains('/') {
            return Err(format!("a toxic's name may not be empty nor hold '/': {name:?}"));
        }
        Ok(Toxic { name, kind: self.kind, stream: self.stream, toxicity })
    }
}

/// What the toxics of one direction of one connection do to it, combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effects {
    /// Added before each chunk goes on (the latency; jitter drawn per chunk).
    pub latency: Duration,
    pub jitter: Duration,
    /// The slowest rate, in bytes per second.
    pub bytes_per_second: Option<u64>,
    /// Nothing goes through; `Some(after)` closes the connection `after` the toxic came.
    pub silence: Option<Option<Duration>>,
    /// The connection is reset this long after the toxic came.
    pub reset_after: Option<Duration>,
}

impl Effects {
    /// The effects of `toxics` that apply to `stream` and were drawn for this connection
    /// (`applies`, by name: a toxic of toxicity below 1 applies to some connections only).
    pub fn of<'a>(
        toxics: impl IntoIterator<Item = &'a Toxic>,
        stream: Stream,
        applies: impl Fn(&Toxic) -> bool,
    ) -> Self {
        let mut effects = Self::default();
        for toxic in toxics.into_iter().filter(|t| t.stream == stream && applies(t)) {
            match toxic.kind {
                Kind::Latency { latency, jitter } => {
                    effects.latency += Duration::from_millis(latency);
                    effects.jitter += Duration::from_millis(jitter);
                }
                Kind::Bandwidth { rate } => {
                    let bytes = rate.saturating_mul(1000);
                    effects.bytes_per_second = Some(effects.bytes_per_second.map_or(bytes, |b| b.min(bytes)));
                }
                Kind::Timeout { timeout } => {
                    let close = (timeout > 0).then(|| Duration::from_millis(timeout));
                    // Two timeouts: the first to close wins; one that never closes loses.
                    effects.silence = Some(match (effects.silence.flatten(), close) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    });
                }
                Kind::ResetPeer { timeout } => {
                    let after = Duration::from_millis(timeout);
                    effects.reset_after = Some(effects.reset_after.map_or(after, |a| a.min(after)));
                }
            }
        }
        effects
    }

    /// How long a chunk of `bytes` waits under the bandwidth limit.
    pub fn pace(&self, bytes: usize) -> Duration {
        match self.bytes_per_second {
            Some(0) => Duration::MAX,
            Some(rate) => Duration::from_secs_f64(bytes as f64 / rate as f64),
            None => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Toxic {
        serde_json::from_str::<NewToxic>(json).unwrap().into_toxic().unwrap()
    }

    #[test]
    fn an_unnamed_toxic_is_named_by_type_and_stream_and_applies_downstream_to_every_connection() {
        let toxic = parse(r#"{"type":"latency","attributes":{"latency":300,"jitter":10}}"#);
        assert_eq!(toxic.name, "latency_downstream");
        assert_eq!((toxic.stream, toxic.toxicity), (Stream::Downstream, 1.0));
        assert_eq!(toxic.kind, Kind::Latency { latency: 300, jitter: 10 });
    }

    #[test]
    fn a_toxic_is_shown_as_toxiproxy_shows_it() {
        let toxic = parse(r#"{"name":"slow","type":"reset_peer","stream":"upstream","attributes":{"timeout":5}}"#);
        let shown = serde_json::to_value(&toxic).unwrap();
        assert_eq!(
            shown,
            serde_json::json!({"name":"slow","type":"reset_peer","stream":"upstream","toxicity":1.0,"attributes":{"timeout":5}})
        );
    }

    #[test]
    fn a_toxicity_outside_zero_to_one_and_an_unknown_type_are_refused() {
        let odd: NewToxic = serde_json::from_str(r#"{"type":"timeout","toxicity":1.5,"attributes":{}}"#).unwrap();
        assert!(odd.into_toxic().unwrap_err().contains("toxicity"));
        assert!(serde_json::from_str::<NewToxic>(r#"{"type":"slicer","attributes":{}}"#).is_err());
    }

    #[test]
    fn effects_add_latencies_keep_the_slowest_rate_and_the_first_timeout_to_close() {
        let toxics = [
            parse(r#"{"name":"a","type":"latency","attributes":{"latency":100}}"#),
            parse(r#"{"name":"b","type":"latency","attributes":{"latency":50,"jitter":5}}"#),
            parse(r#"{"name":"c","type":"bandwidth","attributes":{"rate":10}}"#),
            parse(r#"{"name":"d","type":"bandwidth","attributes":{"rate":2}}"#),
            parse(r#"{"name":"e","type":"timeout","attributes":{"timeout":0}}"#),
            parse(r#"{"name":"f","type":"timeout","attributes":{"timeout":700}}"#),
            parse(r#"{"name":"up","type":"latency","stream":"upstream","attributes":{"latency":9}}"#),
        ];
        let down = Effects::of(&toxics, Stream::Downstream, |_| true);
        assert_eq!((down.latency, down.jitter), (Duration::from_millis(150), Duration::from_millis(5)));
        assert_eq!(down.bytes_per_second, Some(2000));
        assert_eq!(down.silence, Some(Some(Duration::from_millis(700))));
        assert_eq!(down.pace(1000), Duration::from_millis(500));
        let up = Effects::of(&toxics, Stream::Upstream, |_| true);
        assert_eq!(up, Effects { latency: Duration::from_millis(9), ..Effects::default() });
    }

    #[test]
    fn a_toxic_not_drawn_for_a_connection_does_nothing_to_it() {
        let toxics = [parse(r#"{"name":"a","type":"timeout","attributes":{"timeout":0}}"#)];
        assert_eq!(Effects::of(&toxics, Stream::Downstream, |t| t.name != "a"), Effects::default());
    }
}
