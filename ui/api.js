// The one wrapper around Tauri's invoke: every call to Rust goes through here.
export function invoke(command, args = {}) {
  if (!window.__TAURI__) {
    return Promise.reject({ kind: "connect", message: "not running inside the Stockguard app" });
  }
  return window.__TAURI__.core.invoke(command, args);
}
