//! The tray icon: how many alerts fire unacknowledged (a red badge on the icon and the count
//! beside it), and a menu that lists them; picking one brings the window up on its product.
//! On Linux the icon is a StatusNotifierItem (libayatana-appindicator), so a desktop without
//! a tray shows none, and the window still says everything.

use std::sync::OnceLock;

use stockguard_core::alerts::Alert;
use stockguard_core::lang::Lang;
use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::AppHandle;

use crate::alert_words::describe;
use crate::window::open_product;

pub const TRAY_ID: &str = "stockguard";
/// The menu lists this many alerts, then says how many more.
const MENU_ALERTS: usize = 9;

/// The product of a firing alert, by its key (`None`: it no longer fires, or it is about the
/// whole sale): what picking its menu entry opens.
pub type ProductOf = fn(&AppHandle, &str) -> Option<stockguard_core::ProductId>;

/// Puts the icon in the tray, quiet; a picked alert opens the product `product_of` names.
pub fn build(app: &AppHandle, product_of: ProductOf) -> tauri::Result<()> {
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(quiet_icon().clone())
        .tooltip("Stockguard")
        .menu(&menu(app, &[], Lang::En)?)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| on_menu(app, event, product_of))
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
        let (title, _) = describe(alert, lang);
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

fn on_menu(app: &AppHandle, event: MenuEvent, product_of: ProductOf) {
    match event.id.as_ref() {
        "quit" => app.exit(0),
        id => {
            let product = id.strip_prefix("alert:").and_then(|key| product_of(app, key));
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
