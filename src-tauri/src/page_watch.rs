//! When the window's page dies. WebKitGTK draws the window in a process of its own
//! (`WebKitWebProcess`); when that process crashes, is killed for its memory or stops
//! answering and is ended, the window is left blank and nothing says why. Here the app says
//! it, in its log and on standard error (where a test that drives the window reads its last
//! words), with WebKit's reason, and loads the page again: the window's state lives in the
//! app, so a reloaded page asks for it and the on-call engineer gets the console back.

use tauri::{Manager as _, Runtime};

/// Watches the page of the window `label`. Without that window, or on a platform whose web
/// view is not WebKitGTK, nothing is watched.
pub fn watch<R: Runtime>(app: &tauri::AppHandle<R>, label: &str) {
    let Some(window) = app.get_webview_window(label) else {
        tracing::warn!(label, "no window to watch the page of");
        return;
    };
    #[cfg(target_os = "linux")]
    if let Err(e) = window.with_webview(|webview| on_linux(&webview.inner())) {
        tracing::warn!(error = %e, "the window's page is not watched");
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

#[cfg(target_os = "linux")]
fn on_linux(view: &webkit2gtk::WebView) {
    use webkit2gtk::{WebProcessTerminationReason as Reason, WebViewExt as _};
    view.connect_web_process_terminated(|view, reason| {
        let reason = match reason {
            Reason::Crashed => "it crashed".to_string(),
            Reason::ExceededMemoryLimit => "it exceeded WebKit's memory limit".to_string(),
            Reason::TerminatedByApi => "it was ended on request".to_string(),
            other => format!("{other:?}"),
        };
        let said = format!("the window's page died ({reason}): loading it again");
        tracing::error!("{said}");
        eprintln!("stockguard-desktop: {said}");
        view.reload();
    });
}
