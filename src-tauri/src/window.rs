//! One window, where the user left it: a second launch of the app focuses the running one and
//! exits (`tauri-plugin-single-instance`, over D-Bus on Linux), and the window's size, place and
//! maximized state come back at the next start (`tauri-plugin-window-state`). Both work on the
//! Rust side only: the window calls neither, so its capability grants them nothing.
//!
//! And the window brought up on a product ([`open_product`]) when a desktop notification
//! (`notify.rs`) or a tray entry (`tray.rs`) is picked.

use serde::Serialize;
use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Emitter as _, Manager as _, Wry};
use tauri_plugin_window_state::StateFlags;

/// tauri.conf.json's `identifier`, the D-Bus name the single instance claims (a test below
/// keeps the two equal).
const IDENTIFIER: &str = "dev.stockguard.console";

/// Sent to the window when a notification or a tray entry asks for a product.
pub const OPEN_EVENT: &str = "open-product";

/// What [`OPEN_EVENT`] carries.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct OpenProduct {
    /// `None`: just the window (an alert about the whole sale).
    pub product_id: Option<stockguard_core::ProductId>,
}

/// Brings the window up and asks it to open `product`.
pub fn open_product(app: &AppHandle, product: Option<stockguard_core::ProductId>) {
    bring_forward(app);
    let _ = app.emit(OPEN_EVENT, OpenProduct { product_id: product });
}

/// The window shown, out of the taskbar if minimized, and focused.
fn bring_forward(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// A second launch hands its arguments to the first one, which brings its window forward (out
/// of the taskbar if minimized); the second process then exits. Without a D-Bus session bus
/// (a bare Xvfb, say) the plugin cannot claim its name and each launch runs on its own.
pub fn single_instance() -> TauriPlugin<Wry> {
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(dbus_id(std::env::var_os("STOCKGUARD_CONFIG_DIR").as_deref()))
        .callback(|app, _args, _cwd| {
            tracing::info!("a second launch: bringing the window forward");
            bring_forward(app);
        })
        .build()
}

/// One instance per session and config folder: the identifier, and with `STOCKGUARD_CONFIG_DIR`
/// set a name of that folder's own. So the apps the tests start (each test its own folder,
/// `make test` on a desktop uses its D-Bus) neither exit in favour of the user's open console
/// nor of one another, while two launches on the same folder still meet.
fn dbus_id(config_dir: Option<&std::ffi::OsStr>) -> String {
    match config_dir {
        None => IDENTIFIER.to_string(),
        // FNV-1a: a hash that is the same in every build, so two builds on one folder meet too.
        Some(dir) => {
            let hash = dir
                .as_encoded_bytes()
                .iter()
                .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
            format!("{IDENTIFIER}.config_{hash:016x}")
        }
    }
}

/// Size, place and maximized state, saved when the app exits. Not visibility: whether the
/// window shows is the app's own business (a tray may hide it), and a window saved hidden would
/// start hidden. With `STOCKGUARD_CONFIG_DIR` set (the tests set it) the file lives there, beside
/// the profiles, so a test never starts from the place a user left their own window, nor moves it.
pub fn remembered_place() -> TauriPlugin<Wry> {
    let mut state = tauri_plugin_window_state::Builder::new()
        .with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED);
    if let Some(dir) = std::env::var_os("STOCKGUARD_CONFIG_DIR") {
        // The plugin joins the name to the app's config folder; an absolute path replaces it.
        let file = std::path::Path::new(&dir).join("window-state.json");
        state = state.with_filename(file.to_string_lossy());
    }
    state.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_single_instance_name_is_the_app_identifier_and_one_per_config_folder() {
        let config: serde_json::Value = serde_json::from_str(include_str!("../../tauri.conf.json")).unwrap();
        assert_eq!(config["identifier"], IDENTIFIER);
        assert_eq!(dbus_id(None), IDENTIFIER);
        let a = dbus_id(Some("/tmp/a".as_ref()));
        assert_eq!(a, dbus_id(Some("/tmp/a".as_ref())), "two launches on one folder meet");
        assert_ne!(a, dbus_id(Some("/tmp/b".as_ref())), "another folder, another instance");
        assert!(a.starts_with("dev.stockguard.console.config_"), "{a}");
    }
}
