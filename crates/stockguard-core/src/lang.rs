//! The two languages Stockguard speaks (Chinese and English): the window's, a drill report's,
//! a notification's. A leaf: the reports, the alerts' words, the tray and the notifications
//! all read it, and it reads none of them.

use serde::Serialize;

/// A language of the window, the reports and the notifications (the data, names and notes
/// are shown as written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Lang {
    Zh,
    En,
}

impl Lang {
    pub const ALL: [Self; 2] = [Self::Zh, Self::En];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Zh => "zh",
            Self::En => "en",
        }
    }
}
