//! A desktop session bus of the test's own, for what the app tells the desktop rather than
//! its window: a private `dbus-daemon`, a notification server (`org.freedesktop.Notifications`,
//! the one every Linux desktop runs) that records each notification and can click it, and a
//! status-notifier watcher (`org.kde.StatusNotifierWatcher`, what a panel runs) that the app's
//! tray icon registers with, so the test reads the tray as a panel would. Xvfb has neither.
//! The app reaches them through `DBUS_SESSION_BUS_ADDRESS`, as on a real desktop.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use zbus::object_server::SignalEmitter;
use zbus::OwnedVariant as OwnedValue;

/// One notification the app showed.
#[derive(Debug, Clone)]
pub struct Note {
    pub id: u32,
    pub summary: String,
    pub body: String,
    pub actions: Vec<String>,
    pub at: SystemTime,
}

struct Notifications {
    notes: Arc<Mutex<Vec<Note>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into(), "actions".into()]
    }

    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut notes = self.notes.lock().unwrap();
        let id = notes.len() as u32 + 1;
        notes.push(Note { id, summary, body, actions, at: SystemTime::now() });
        id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_server_information(&self) -> (String, String, String, String) {
        ("stockguard-e2e".into(), "stockguard".into(), "1".into(), "1.2".into())
    }

    #[zbus(signal)]
    async fn action_invoked(emitter: &SignalEmitter<'_>, id: u32, action_key: &str) -> zbus::Result<()>;
}

/// Where each registered tray item lives: its bus name and object path.
type Items = Arc<Mutex<Vec<(String, String)>>>;

struct Watcher {
    items: Items,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    /// libayatana-appindicator passes its object path; other items pass a bus name.
    fn register_status_notifier_item(&self, service: String, #[zbus(header)] header: zbus::message::Header<'_>) {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let item =
            if service.starts_with('/') { (sender, service) } else { (service, "/StatusNotifierItem".to_string()) };
        self.items.lock().unwrap().push(item);
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items.lock().unwrap().iter().map(|(bus, path)| format!("{bus}{path}")).collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

/// The private bus and the two desktop services on it; the bus stops on drop.
pub struct DesktopBus {
    daemon: Child,
    pub address: String,
    conn: zbus::Connection,
    notes: Arc<Mutex<Vec<Note>>>,
    items: Items,
}

impl DesktopBus {
    pub async fn start() -> Self {
        let binary = super::support::which("dbus-daemon")
            .unwrap_or_else(|| panic!("dbus-daemon is not installed: run `make deps` (Debian package dbus-daemon)"));
        let mut daemon = Command::new(binary)
            .args(["--session", "--nofork", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dbus-daemon starts");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap()).read_line(&mut address).expect("dbus-daemon prints its address");
        let address = address.trim().to_string();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        let notes = Arc::new(Mutex::new(Vec::new()));
        let items: Items = Arc::new(Mutex::new(Vec::new()));
        let conn = zbus::connection::Builder::address(address.as_str())
            .name("org.freedesktop.Notifications")
            .name("org.kde.StatusNotifierWatcher")
            .serve_at("/org/freedesktop/Notifications", Notifications { notes: notes.clone() })
            .serve_at("/StatusNotifierWatcher", Watcher { items: items.clone() })
            .build()
            .await
            .expect("the desktop services take their names on the private bus");
        Self { daemon, address, conn, notes, items }
    }

    /// The notifications shown so far.
    pub fn notes(&self) -> Vec<Note> {
        self.notes.lock().unwrap().clone()
    }

    /// Clicks notification `id`: the desktop sends its default action, as a click does.
    pub async fn click(&self, id: u32) {
        let emitter = SignalEmitter::new(&self.conn, "/org/freedesktop/Notifications").unwrap();
        Notifications::action_invoked(&emitter, id, "default").await.expect("the click is sent");
    }

    /// A property of the app's tray item (`org.kde.StatusNotifierItem`), as a panel reads
    /// it; `None` while no item registered.
    pub async fn tray_property(&self, name: &str) -> Option<OwnedValue> {
        let (bus, path) = self.items.lock().unwrap().last().cloned()?;
        let props = zbus::fdo::PropertiesProxy::builder(&self.conn).destination(bus).path(path).build().await.ok()?;
        let iface = zbus::names::InterfaceName::from_static_str_unchecked("org.kde.StatusNotifierItem");
        props.get(iface, name).await.ok()
    }

    /// The text beside the tray icon (the count of unacknowledged alerts), `""` when none.
    pub async fn tray_label(&self) -> Option<String> {
        let value = self.tray_property("XAyatanaLabel").await?;
        String::try_from(value).ok()
    }
}

impl Drop for DesktopBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
