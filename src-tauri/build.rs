/// The commands the window may call. Each gets an `allow-<command>` permission, and the
/// window's capability (`tauri.conf.json`) grants exactly these: with an app manifest, a
/// command not granted there is refused at the IPC boundary.
const COMMANDS: &[&str] = &[
    "connection_info",
    "connection_rights",
    "connect",
    "list_profiles",
    "save_profile",
    "delete_profile",
    "test_profile",
    "attach_propose",
    "attach_preview",
    "attach_save",
    "drift_chart",
    "export_drift_png",
    "run_ledger",
    "rewrite_products",
    "audit_log",
    "timeline_read",
    "alerts_current",
    "alert_acknowledge",
    "set_language",
    "compensation_list",
    "compensation_show",
    "compensation_open",
    "compensation_plan",
    "compensation_step",
    "compensation_execute",
    "compensation_export",
    "degrade_status",
    "degrade_on",
    "degrade_exit",
    "drill_catalog",
    "drill_start",
    "drill_watch",
    "drill_halt",
    "drill_runs",
    "drill_report",
    "drill_compare",
    "drill_timeline",
    "burndown_chart",
];

fn main() {
    // The config lives at the workspace root, beside the front end it points at.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("../tauri.conf.json")
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script failed");
}
