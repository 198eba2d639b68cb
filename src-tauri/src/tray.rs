//! The tray icon: how many alerts fire unacknowledged (a red badge on the icon and the count
//! beside it), and a menu that lists them; picking one brings the window up on its product.
//! On Linux the icon is a StatusNotifierItem (libayatana-appindicator), so a desktop without
//! a tray shows none, and the window still says everything.

use std::sync::OnceLock;

use serde::Serialize;
use stockguard_core::alerts::Alert;
use stockguard_core::drills::report::Lang;
use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter as _, Manager as _};

use crate::alert_desk::AlertDesk;
use crate::notify;

pub const TRAY_ID: &str = "stockguard";
/// Sent to the window when a notification or a tray entry asks for a product.
pub const OPEN_EVENT: &str = "open-product";
/// The menu lists this many alerts, then says how many more.
const MENU_ALERTS: usize = 9;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct OpenProduct {
    /// `None`: just the window (an alert about the whole sale).
    pub product_id: Option<u64>,
}

/// Puts the icon in the tray, quiet.
pub fn build(app: &AppHandle) -> tauri::Result<()> {
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(quiet_icon().clone())
        .tooltip("Stockguard")
        .menu(&menu(app, &[], Lang::En)?)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu)
        .build(app)?;
    Ok(())
}

/// Shows `unacked` (the alerts nobody took): the badge, the count, the menu.
pub fn show(app: &AppHandle, unacked: &[Alert], lang: Lang) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let n = unacked.len();
    let icon = if n == 0 { quiet_icon() } else { badged_icon() };
    let shown = tray
        .set_icon(Some(icon.clone()))
        .and_then(|()| tray.set_title((n > 0).then(|| n.to_string())))
        .and_then(|()| tray.set_tooltip(Some(tooltip(n, lang))))
        .and_then(|()| tray.set_menu(Some(menu(app, unacked, lang)?)));
    if let Err(e) = shown {
        tracing::warn!(error = %e, "the tray icon could not be updated");
    }
}

/// Brings the window up and asks it to open `product`.
pub fn open_product(app: &AppHandle, product: Option<u64>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    let _ = app.emit(OPEN_EVENT, OpenProduct { product_id: product });
}

fn tooltip(n: usize, lang: Lang) -> String {
    match (n, lang) {
        (0, Lang::En) => "Stockguard: no alerts".into(),
        (0, Lang::Zh) => "Stockguard：无告警".into(),
        (n, Lang::En) => format!("Stockguard: {n} unacknowledged alerts"),
        (n, Lang::Zh) => format!("Stockguard：{n} 条未确认告警"),
    }
}

fn menu(app: &AppHandle, unacked: &[Alert], lang: Lang) -> tauri::Result<Menu<tauri::Wry>> {
    let (open, quit, more) = match lang {
        Lang::En => ("Open Stockguard", "Quit Stockguard", "more alerts in the window"),
        Lang::Zh => ("打开 Stockguard", "退出 Stockguard", "条告警，请在窗口中查看"),
    };
    let menu = Menu::new(app)?;
    menu.append(&MenuItem::with_id(app, "open", open, true, None::<&str>)?)?;
    if !unacked.is_empty() {
        menu.append(&PredefinedMenuItem::separator(app)?)?;
    }
    for alert in unacked.iter().take(MENU_ALERTS) {
        let (title, _) = notify::describe(alert, lang);
        menu.append(&MenuItem::with_id(app, format!("alert:{}", alert.key), title, true, None::<&str>)?)?;
    }
    if unacked.len() > MENU_ALERTS {
        let text = format!("+{} {more}", unacked.len() - MENU_ALERTS);
        menu.append(&MenuItem::with_id(app, "open-more", text, true, None::<&str>)?)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(app, "quit", quit, true, None::<&str>)?)?;
    Ok(menu)
}

fn on_menu(app: &AppHandle, event: MenuEvent) {
    match event.id.as_ref() {
        "quit" => app.exit(0),
        id => {
            let product = id.strip_prefix("alert:").and_then(|key| {
                app.state::<AlertDesk>().firing().into_iter().find(|a| a.key == key).and_then(|a| a.product_id)
            });
            open_product(app, product);
        }
    }
}

fn quiet_icon() -> &'static Image<'static> {
    static ICON: OnceLock<Image<'static>> = OnceLock::new();
    ICON.get_or_init(|| {
        Image::from_bytes(include_bytes!("../../icons/icon.png")).expect("the bundled icon is a valid PNG").to_owned()
    })
}

/// The icon with a red dot in its top right corner: the badge, where a tray shows no count.
fn badged_icon() -> &'static Image<'static> {
    static ICON: OnceLock<Image<'static>> = OnceLock::new();
    ICON.get_or_init(|| {
        let base = quiet_icon();
        let (w, h) = (base.width(), base.height());
        let mut rgba = base.rgba().to_vec();
        let r = w as f32 * 0.3;
        let (cx, cy) = (w as f32 - r - 1.0, r + 1.0);
        for y in 0..h {
            for x in 0..w {
                let d = ((x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2)).sqrt();
                let px = &mut rgba[((y * w + x) * 4) as usize..][..4];
                if d <= r - 2.0 {
                    px.copy_from_slice(&[220, 38, 38, 255]);
                } else if d <= r {
                    px.copy_from_slice(&[255, 255, 255, 255]);
                }
            }
        }
        Image::new_owned(rgba, w, h)
    })
}
