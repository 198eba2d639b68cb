//! The Stockguard desktop console: a thin Tauri shell over the `stockguard` core.
//!
//! - `state.rs`: how the app picks its connection (`--profile NAME`, or the environment
//!   overrides, or the local `sandbox` profile) and holds it once open.
//! - `commands.rs`: the commands the window may invoke, each a few lines over the core.
//! - `error.rs`: the typed error the window receives (`{ kind, message }`).

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod error;
mod state;

fn main() {
    let profile = state::profile_from_args(std::env::args());
    tauri::Builder::default()
        .manage(state::AppState::new(profile))
        .invoke_handler(tauri::generate_handler![commands::connection_info, commands::list_products])
        .run(tauri::generate_context!("../tauri.conf.json"))
        .expect("the Stockguard window could not start");
}
