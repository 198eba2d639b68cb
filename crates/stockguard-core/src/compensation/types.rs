//! A case, its lines and its steps, as read from the database.

use serde::{Deserialize, Serialize};

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some(Self::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// Where a case is in its workflow.
    CaseStatus {
        Draft = "DRAFT",
        Proposed = "PROPOSED",
        Approved = "APPROVED",
        Executing = "EXECUTING",
        Executed = "EXECUTED",
        Closed = "CLOSED",
    }
);

text_enum!(
    /// Why an order is in a case.
    LineReason {
        /// A live order beyond stock.
        Oversold = "OVERSOLD",
        /// Accepted, then failed back (`order_failures`): the buyer has no order.
        Withdrawn = "WITHDRAWN",
    }
);

text_enum!(
    /// What a line's buyer gets.
    Action {
        /// The merchant sources the units: they are added to the sale (initial stock and stock
        /// raised together), and the order is served.
        Fulfil = "FULFIL",
        /// The order is cancelled (compare-and-set) and its price refunded.
        CancelRefund = "CANCEL_REFUND",
        /// A coupon of the line's amount.
        Coupon = "COUPON",
        /// Nothing is done but the note.
        Note = "NOTE",
    }
);

text_enum!(
    /// What execution did to a line.
    LineOutcome {
        Pending = "PENDING",
        Done = "DONE",
        /// Nothing to do any more (e.g. the order was already closed or cancelled).
        Skipped = "SKIPPED",
    }
);

impl Action {
    /// Whether a line of `reason` can take this action: a withdrawn acceptance has no order to
    /// fulfil or cancel.
    pub fn fits(self, reason: LineReason) -> bool {
        reason == LineReason::Oversold || matches!(self, Self::Coupon | Self::Note)
    }
}

/// One affected order and its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Line {
    pub order_no: String,
    pub user_id: u64,
    pub qty: i64,
    /// When the DB accepted the order (`orders.created_at`, or the failure's time).
    pub accepted_at: String,
    /// The unit price the order was sold at (`orders.price_cents`, set by the server).
    pub price_cents: i64,
    pub reason: LineReason,
    pub action: Option<Action>,
    pub amount_cents: i64,
    pub note: String,
    pub outcome: LineOutcome,
    pub outcome_detail: String,
    pub executed_by: Option<String>,
    /// Over an adapter: who recorded the order as read from the sale, when it is not the case's
    /// opener (a colleague's row the opening matched: a checker asks them). `None` on our own sale.
    pub read_by: Option<String>,
    /// Why an oversold line of our own sale is in the case: its first unit's place among the
    /// units sold, in acceptance order (the live orders' and this case's, accepted before it,
    /// plus one). Beyond [`Case::initial_stock`], it is a unit the sale never had. `None` over an
    /// adapter and for a withdrawn acceptance.
    pub sold_from: Option<i64>,
}

/// A step of the workflow: who (the server's word), what, when, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Step {
    pub step: String,
    pub actor: String,
    pub reason: String,
    pub at: String,
}

/// A case with its lines and steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Case {
    pub id: u64,
    /// The product as the sale keys it (a number; over an adapter keyed by text, a string).
    pub product_id: crate::product_id::ProductId,
    pub status: CaseStatus,
    pub oversold_units: i64,
    pub withdrawn_units: i64,
    pub opened_by: String,
    pub opened_at: String,
    pub maker: Option<String>,
    pub approvals_needed: u8,
    /// Above this total a proposal needs two checkers (`compensation_settings`; `None`: the row
    /// is missing, and every proposal needs two).
    pub two_checkers_above_cents: Option<i64>,
    /// Distinct checkers who approved the current proposal.
    pub approvals: Vec<String>,
    /// The units the product had on sale (`inventory.initial_stock`); `None` over an adapter.
    pub initial_stock: Option<i64>,
    /// The plan's total (sum of the lines' amounts).
    pub total_cents: i64,
    pub lines: Vec<Line>,
    pub steps: Vec<Step>,
}

impl Case {
    /// Totals per action: (action, lines, cents).
    pub fn totals_by_action(&self) -> Vec<(Action, usize, i64)> {
        let mut totals: Vec<(Action, usize, i64)> = Vec::new();
        for line in &self.lines {
            let Some(action) = line.action else { continue };
            match totals.iter_mut().find(|(a, _, _)| *a == action) {
                Some(t) => {
                    t.1 += 1;
                    t.2 += line.amount_cents;
                }
                None => totals.push((action, 1, line.amount_cents)),
            }
        }
        totals
    }
}
