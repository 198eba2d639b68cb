fn main() {
    // The config lives at the workspace root, beside the front end it points at.
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri build script failed");
}
