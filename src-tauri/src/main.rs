//! The Stockguard desktop console: a thin Tauri shell over the `stockguard` core.
//!
//! - `state.rs`: the open connection (from a profile, the environment overrides or the local
//!   `sandbox` profile), its replica, and the drift sampler running for it.
//! - `board_feed.rs`: the sampler's ticks forwarded to the window as one event per tick.
//! - `drill_feed.rs`: the drill run the window watches, read from the database and forwarded
//!   as one event a second (the runner is a `stockguard` process the app never talks to).
//! - `commands/`: the commands the window may invoke, by screen, each a few lines over the core.
//! - `alert_desk.rs`: each tick's alerts (the core's verdict), acknowledgements closed when
//!   their alert clears, and who hears of it: the window, `tray.rs` (a badge and a menu) and
//!   `notify.rs` (a desktop notification whose click opens the product). Calls go one way:
//!   `alert_desk.rs` calls the tray and the notifications, which call neither it nor each
//!   other; they share `alert_words.rs` (what an alert says, in the window's language) and
//!   `window.rs` (the window brought up on a product).
//! - `error.rs`: the typed error the window receives (`{ kind, code, params, message }`).
//! - `logs.rs`: the app's log file, one a day in the OS log folder.
//! - `page_watch.rs`: the window's page, loaded again (and the reason said) when WebKit's
//!   process that draws it dies.
//! - `window.rs`: one window (a second launch focuses the first), where the user left it, and
//!   brought up on a product when a notification or a tray entry asks.
//! - `types.rs`: the TypeScript declarations of everything above, generated into `ui/types.d.ts`.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod alert_desk;
mod alert_words;
mod board_feed;
mod commands;
mod drill_feed;
mod error;
mod logs;
mod notify;
mod page_watch;
mod state;
mod tray;
#[cfg(test)]
mod types;
mod window;

use tauri::Manager as _;

fn main() {
    let profile = state::profile_from_args(std::env::args());
    tauri::Builder::default()
        // First, so that a second launch exits before it sets anything up.
        .plugin(window::single_instance())
        .plugin(window::remembered_place())
        .manage(state::AppState::new(profile))
        .manage(alert_desk::AlertDesk::default())
        .setup(|app| {
            match logs::init(app.handle()) {
                Ok(log) => {
                    tracing::info!(version = env!("CARGO_PKG_VERSION"), dir = %log.dir.display(), "Stockguard desktop started");
                    app.manage(log);
                }
                Err(why) => eprintln!("stockguard-desktop: no log file: {why}"),
            }
            // Without a tray (a desktop that has none) alerts still reach the window.
            if let Err(e) = tray::build(app.handle(), alert_desk::firing_product) {
                tracing::warn!(error = %e, "no tray icon");
            }
            page_watch::watch(app.handle(), "main");
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::connection::connection_info,
            commands::connection::connection_rights,
            commands::connection::connect,
            commands::profiles::list_profiles,
            commands::profiles::save_profile,
            commands::profiles::delete_profile,
            commands::profiles::test_profile,
            commands::attach::attach_propose,
            commands::attach::attach_preview,
            commands::attach::attach_save,
            commands::board::drift_chart,
            commands::board::export_drift_png,
            commands::reconcile::run_ledger,
            commands::rewrite::rewrite_products,
            commands::audit::audit_log,
            commands::timeline::timeline_read,
            commands::alerts::alerts_current,
            commands::alerts::alert_acknowledge,
            commands::alerts::set_language,
            commands::compensation::compensation_list,
            commands::compensation::compensation_show,
            commands::compensation::compensation_open,
            commands::compensation::compensation_plan,
            commands::compensation::compensation_step,
            commands::compensation::compensation_execute,
            commands::compensation::compensation_export,
            commands::degrade::degrade_status,
            commands::degrade::degrade_on,
            commands::degrade::degrade_exit,
            commands::drills::drill_catalog,
            commands::drills::drill_start,
            commands::drills::drill_watch,
            commands::drills::drill_halt,
            commands::drills::drill_runs,
            commands::drills::drill_report,
            commands::drills::drill_compare,
            commands::drills::drill_timeline,
            commands::overview::burndown_chart,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"))
        .expect("the Stockguard window could not start");
}
