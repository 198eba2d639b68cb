//! Desktop notifications: one per alert that starts firing unacknowledged, in the window's
//! language, through the desktop's notification server (`org.freedesktop.Notifications` on
//! Linux, by `notify-rust`). Clicking it (its default action) brings the window up on the
//! product. Without a notification server the alert still shows in the window and the tray;
//! the log says why nothing popped up.

use notify_rust::{Notification, Urgency};
use stockguard_core::alerts::{Alert, AlertKind};
use stockguard_core::lang::Lang;
use tauri::AppHandle;

use crate::alert_words::describe;
use crate::window;

/// Shows `alert`; its click opens its product.
pub fn raise(app: &AppHandle, alert: &Alert, lang: Lang) {
    let (summary, body) = describe(alert, lang);
    let urgency = match alert.kind {
        // Money is at stake: the desktop keeps these until someone dismisses them.
        AlertKind::Oversold | AlertKind::LedgerMismatch => Urgency::Critical,
        _ => Urgency::Normal,
    };
    show(app, alert.key.clone(), summary, body, urgency, alert.product_id.clone(), lang);
}

/// Shows one notification for `n` new alerts; its click opens the window.
pub fn raise_many(app: &AppHandle, n: usize, lang: Lang) {
    let (summary, body) = match lang {
        Lang::En => (format!("{n} new alerts"), "Open Stockguard to see and acknowledge them.".to_string()),
        Lang::Zh => (format!("{n} 条新告警"), "打开 Stockguard 查看并确认。".to_string()),
    };
    show(app, format!("{n} alerts"), summary, body, Urgency::Critical, None, lang);
}

/// Shows a notification on a thread of its own, which then waits for the click.
fn show(
    app: &AppHandle,
    key: String,
    summary: String,
    body: String,
    urgency: Urgency,
    product: Option<stockguard_core::ProductId>,
    lang: Lang,
) {
    let open = match lang {
        Lang::En => "Open",
        Lang::Zh => "打开",
    };
    let app = app.clone();
    let spawned = std::thread::Builder::new().name("notification".into()).spawn(move || {
        let shown = Notification::new()
            .appname("Stockguard")
            .summary(&summary)
            .body(&body)
            .action("default", open)
            .urgency(urgency)
            .show();
        match shown {
            Ok(handle) => {
                tracing::info!(alert = %key, "notification shown");
                // Blocks this thread until the notification is clicked or closed.
                handle.wait_for_action(|action| {
                    if action == "default" {
                        tracing::info!(alert = %key, "notification clicked");
                        window::open_product(&app, product);
                    }
                });
            }
            Err(e) => tracing::warn!(alert = %key, error = %e, "no desktop notification (no notification server?)"),
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no thread for a notification");
    }
}
