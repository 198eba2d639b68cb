//! When each alert began firing: the first reading it was seen in, kept by its `key` while it
//! fires. An alert that clears and fires again begins again, so its age is the incident's
//! now, not the first one's.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::conditions::Alert;
use super::state::AlertState;

/// The first reading each firing alert was seen in. A loop keeps one across its readings (the
/// desktop's alert desk); a one-off command sees each alert in its one reading
/// ([`Onsets::once`]).
#[derive(Debug, Clone, Default)]
pub struct Onsets {
    began: HashMap<String, DateTime<Utc>>,
}

impl Onsets {
    /// The onsets of the alerts `firing` in a single reading made `at`.
    pub fn once(firing: &[Alert], at: DateTime<Utc>) -> Self {
        let mut onsets = Self::default();
        onsets.observe(firing, at);
        onsets
    }

    /// Takes the alerts `firing` in the reading made `at`: one already firing keeps its time,
    /// a new one begins at `at`, and one no longer firing is forgotten.
    pub fn observe(&mut self, firing: &[Alert], at: DateTime<Utc>) {
        let began = firing.iter().map(|a| (a.key.clone(), self.began.get(&a.key).copied().unwrap_or(at))).collect();
        self.began = began;
    }

    /// When `alert` began firing. One these onsets have not seen is seen first now.
    pub fn since(&self, alert: &Alert) -> DateTime<Utc> {
        self.began.get(&alert.key).copied().unwrap_or_else(Utc::now)
    }

    /// The alerts `firing`, each with when it began and no acknowledgement: what shows where
    /// the acknowledgements cannot be read.
    pub fn unacknowledged(&self, firing: &[Alert]) -> Vec<AlertState> {
        firing
            .iter()
            .map(|alert| AlertState { alert: alert.clone(), since: self.since(alert), acknowledged: None })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::AlertKind;

    fn drift(product: u64) -> Alert {
        Alert {
            key: format!("drift:{product}"),
            kind: AlertKind::DriftConfirmed,
            product_id: Some(product.into()),
            value: Some(3),
        }
    }

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn an_alert_seen_in_two_readings_keeps_its_first_time() {
        let mut onsets = Onsets::default();
        onsets.observe(&[drift(1)], at(0));
        onsets.observe(&[drift(1), drift(2)], at(5));
        assert_eq!(onsets.since(&drift(1)), at(0), "still firing: it began at the first reading");
        assert_eq!(onsets.since(&drift(2)), at(5), "new in the second reading");
    }

    #[test]
    fn an_alert_that_clears_and_fires_again_begins_again() {
        let mut onsets = Onsets::default();
        onsets.observe(&[drift(1)], at(0));
        onsets.observe(&[], at(5));
        onsets.observe(&[drift(1)], at(10));
        assert_eq!(onsets.since(&drift(1)), at(10));
    }

    #[test]
    fn the_states_without_acknowledgements_carry_when_each_began() {
        let onsets = Onsets::once(&[drift(1)], at(0));
        let states = onsets.unacknowledged(&[drift(1)]);
        assert_eq!((states[0].since, states[0].acknowledged.is_none()), (at(0), true));
    }
}
